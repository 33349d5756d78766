//! The engine's shape table (`engine/src/shape_table.rs`) is what `moments::engine_table`
//! makes of the committed assets, and the reduction reads like the physics: a translating
//! grain's near and far dipoles are the dipole measured in the solver run (`dipole_m3`), a
//! sphere's rotations are silent, and a spinning rice grain radiates the quadrupole of its
//! long axis.

#![allow(clippy::needless_range_loop)] // axes index the matrices

use granary_grains::asset::{file_name, Asset};
use granary_grains::moments::{engine_table, quadratic_basis, Reduced};
use granary_grains::shape::ShapeKind;
use granary_grains::{AIR_DENSITY, SPEED_OF_SOUND};
use std::path::PathBuf;

fn assets() -> Vec<(ShapeKind, Asset)> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/grains"));
    ShapeKind::ALL
        .into_iter()
        .map(|k| (k, Asset::read(&dir.join(file_name(k))).expect("committed asset")))
        .collect()
}

#[test]
fn committed_engine_table_is_the_assets_reduction() {
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../engine/src/shape_table.rs"))
        .expect("engine/src/shape_table.rs");
    let fresh = engine_table(&assets());
    assert!(
        committed == fresh,
        "engine/src/shape_table.rs is stale: run `cargo run --release -p granary-grains -- --engine-table engine/src/shape_table.rs`"
    );
}

#[test]
fn reduction_of_translations_is_the_measured_dipole() {
    for (kind, asset) in assets() {
        let r = Reduced::of(&asset);
        let d = asset.header.dipole_m3;
        for axis in 0..3 {
            let want = d[axis][axis];
            let near = r.near[axis][axis] / AIR_DENSITY;
            let far = r.far[axis][axis] * SPEED_OF_SOUND / AIR_DENSITY;
            println!(
                "{kind:?} T{axis}: near {:+.2} %, far {:+.2} % of D, fit residuals {:.3} {:.3}",
                100.0 * (near / want - 1.0),
                100.0 * (far / want - 1.0),
                r.residual[axis][0],
                r.residual[axis][1]
            );
            // the near field's mean is the static flow (the sphere rule's D); the far field's
            // first moment its time derivative over c: both the same dipole
            assert!((near / want - 1.0).abs() < 0.01, "{kind:?} near {axis}");
            assert!((far / want - 1.0).abs() < 0.01, "{kind:?} far {axis}");
        }
    }
}

#[test]
fn sphere_rotations_are_silent_and_rice_spins_as_a_quadrupole() {
    let all = assets();
    let reduced = |k: ShapeKind| Reduced::of(&all.iter().find(|(kind, _)| *kind == k).unwrap().1);
    let sphere = reduced(ShapeKind::Sphere);
    let rice = reduced(ShapeKind::Rice);
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    // a sphere's quadrupole per rad/s^2 against rice's, both per d^5
    let d5 = |k: ShapeKind| k.reference_diameter().powi(5);
    for f in 3..6 {
        let s = norm(&sphere.quad[f]) / d5(ShapeKind::Sphere);
        assert!(s < 1e-6 * norm(&rice.quad[4]) / d5(ShapeKind::Rice), "sphere R{f}: {s:e}");
    }
    // rice (long axis x) spun about y pushes air along xz: the quadrupole r_x r_z (basis
    // index 7), and no net dipole (the body is centrally symmetric)
    let q = rice.quad[4];
    let xz = q[7].abs();
    assert!(q.iter().enumerate().all(|(i, v)| i == 7 || v.abs() < 0.05 * xz), "{q:?}");
    assert!(rice.far[4].iter().all(|x| x.abs() < 1e-6 * rice.far[0][0]));
    // spinning about its own long axis is silent
    assert!(norm(&rice.quad[3]) < 1e-4 * xz, "{:e}", norm(&rice.quad[3]));
}

/// The pressure of `asset`'s field `f` at body-frame point `x` for the acceleration `a(t)`
/// (per unit), as PAN eq. 18–19 compose it: `a(t) ≈ Σ_j a(j h) ψ(t − j h; h)`, each pulse's
/// field by `Asset::pressure`.
fn asset_response(asset: &Asset, f: usize, x: [f64; 3], a: &dyn Fn(f64) -> f64, span: f64, t: f64) -> f64 {
    let h = asset.header.pulse_h_s;
    let (lo, hi) = ((-2.0 * h / h).floor() as i64, ((span + 2.0 * h) / h).ceil() as i64);
    (lo..=hi).map(|j| a(j as f64 * h) * asset.pressure(f, x, t - j as f64 * h)).sum()
}

#[test]
fn the_engine_terms_reproduce_the_assets_for_other_contacts_distances_and_directions() {
    // A raised-cosine acceleration of 40 and 150 us (a rice grain's contact and a soft bean's)
    // in each degree of freedom, heard at 0.1 and 1 m in directions between the asset's grid
    // nodes: the engine's four terms (N a/R^2 + N1 a'/R^2 + F a'/R + Q a''/R) against the
    // asset's whole series (eq. 18-20, 22, interpolated over direction), as the rms of the
    // difference over that of the field (the field's largest over the directions: a
    // direction where a field vanishes by symmetry is not divided by its zero)
    let all = assets();
    let c = SPEED_OF_SOUND;
    let dirs = [[0.96, 0.1, 0.26], [0.1, 0.6, 0.79], [0.6, 0.1, 0.79], [0.48, 0.6, 0.64], [-0.3, 0.9, -0.3]]
        .map(|d: [f64; 3]| {
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            d.map(|x| x / n)
        });
    let dot = |v: &[f64], d: &[f64]| v.iter().zip(d).map(|(a, b)| a * b).sum::<f64>();
    let mut worst = [0.0f64; 2];
    for kind in [ShapeKind::Rice, ShapeKind::Lentil, ShapeKind::Disc, ShapeKind::Bean, ShapeKind::Stone] {
        let asset = &all.iter().find(|(k, _)| *k == kind).unwrap().1;
        let red = Reduced::of(asset);
        for tau in [40e-6, 150e-6] {
            let w = std::f64::consts::PI / tau;
            let a = move |t: f64| if (0.0..=tau).contains(&t) { (w * t).sin().powi(2) } else { 0.0 };
            let da = move |t: f64| if (0.0..=tau).contains(&t) { w * (2.0 * w * t).sin() } else { 0.0 };
            let dda = move |t: f64| if (0.0..=tau).contains(&t) { 2.0 * w * w * (2.0 * w * t).cos() } else { 0.0 };
            for r in [0.1, 1.0] {
                for field in 0..6 {
                    let (mut errs, mut scale) = (vec![], 0.0f64);
                    for d in dirs {
                        let x = d.map(|v| v * r);
                        let n = 300;
                        let dt = (tau + 60e-6) / n as f64;
                        let (mut err, mut norm) = (0.0, 0.0);
                        for i in 0..n {
                            let t = r / c - 20e-6 + i as f64 * dt;
                            let want = asset_response(asset, field, x, &a, tau, t);
                            let tr = t - r / c;
                            let b = quadratic_basis(d);
                            let got = dot(&red.near[field], &d) * a(tr) / (r * r)
                                + dot(&red.near_d[field], &b) * da(tr) / (r * r)
                                + dot(&red.far[field], &d) * da(tr) / r
                                + dot(&red.quad[field], &b) * dda(tr) / r;
                            err += (got - want).powi(2);
                            norm += want * want;
                        }
                        errs.push(err);
                        scale = scale.max(norm);
                    }
                    let rel = errs.iter().fold(0.0f64, |m, e| m.max(*e)).sqrt() / scale.sqrt();
                    eprintln!(
                        "{kind:?} {} us, {r} m, field {field}: the engine's terms against the asset {:.1} % rms",
                        tau * 1e6,
                        100.0 * rel
                    );
                    let k = usize::from(field >= 3);
                    worst[k] = worst[k].max(rel);
                }
            }
        }
    }
    eprintln!("worst: translations {:.1} %, rotations {:.1} %", 100.0 * worst[0], 100.0 * worst[1]);
    assert!(worst[0] < 0.15 && worst[1] < 0.3, "{worst:?}");
}
