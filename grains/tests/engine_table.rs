//! The engine's shape table (`engine/src/shape_table.rs`) is what `moments::engine_table`
//! makes of the committed assets, and the reduction reads like the physics: a translating
//! grain's near and far dipoles are the dipole measured in the solver run (`dipole_m3`), a
//! sphere's rotations are silent, and a spinning rice grain radiates the quadrupole of its
//! long axis.

#![allow(clippy::needless_range_loop)] // axes index the matrices

use granary_grains::asset::{file_name, Asset};
use granary_grains::moments::{engine_table, Reduced};
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
    let norm = |m: &[[f64; 3]; 3]| m.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    // a sphere's quadrupole per rad/s^2 against rice's, both per d^5
    let d5 = |k: ShapeKind| k.reference_diameter().powi(5);
    for f in 3..6 {
        let s = norm(&sphere.quad[f]) / d5(ShapeKind::Sphere);
        assert!(
            s < 1e-7 * norm(&rice.quad[4]) / d5(ShapeKind::Rice),
            "sphere R{f}: {s:e}"
        );
    }
    // rice (long axis x) spun about y pushes air along xz: the quadrupole r_x r_z, and no
    // net dipole (the body is centrally symmetric)
    let q = rice.quad[4];
    assert!(q[0][2].abs() > 100.0 * q[0][0].abs().max(q[1][1].abs()).max(q[2][2].abs()));
    assert!(rice.far[4].iter().all(|x| x.abs() < 1e-9 * rice.far[0][0]));
    // spinning about its own long axis is silent
    assert!(norm(&rice.quad[3]) < 1e-6 * norm(&q), "{:e}", norm(&rice.quad[3]));
}
