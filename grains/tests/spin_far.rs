//! Beyond the fitted radii: rice at 8 cells per diameter, the asset's series and the engine's
//! terms extrapolated to twice R5 (26 mm), against a direct solver run there (six grid
//! directions, so only the radial series is between them), for raised-cosine contacts of 150,
//! 80 and 40 us built from the pulse responses (PAN eq. 18). Ignored (about 3 minutes in
//! release): `cargo test --release -p granary-grains --test spin_far -- --ignored --nocapture`.
//! The engine's terms are checked with and without a spin's near field in 1/r^3, `N3 alpha /
//! r^3 = -rho0 r^T M r alpha / r^3` (M the measured static quadrupole; `Reduced::near3`).
use granary_grains::asset::{direction, precompute, Settings};
use granary_grains::fdtd::{GridSpec, Motion, Solver};
use granary_grains::moments::{asset_pressure, RaisedCosine, Reduced};
use granary_grains::shape::{Shape, ShapeKind};
use granary_grains::SPEED_OF_SOUND;

#[test]
#[ignore]
fn rice_series_and_terms_hold_beyond_the_fitted_radii() {
    let kind = ShapeKind::Rice;
    let far = 2.0;
    let shape = Shape::reference(kind);
    let settings = Settings {
        cells_per_diameter: 8.0,
        ..Settings::ASSET
    };
    let asset = precompute(&shape, settings).unwrap();
    let h = asset.header.clone();
    let red = Reduced::of(&asset);
    let without = Reduced {
        near3: [[0.0; 9]; 6],
        ..red.clone()
    };
    let r_far = far * h.radii_m[4];
    let spec = GridSpec::around(h.grid.dx, r_far + 2.0 * h.grid.dx, settings.pml);
    println!("grid {} cells, r_far {:.1} mm", spec.cells, r_far * 1e3);
    let solver = Solver::new(&shape, spec);
    let gd = [(3, 2), (4, 3), (6, 11), (8, 17), (5, 5), (2, 7)];
    let dirs: Vec<[f64; 3]> = gd.iter().map(|&(i, j)| direction(i, j, h.n_theta, h.n_phi)).collect();
    let probes: Vec<[f64; 3]> = dirs.iter().map(|d| d.map(|x| x * r_far)).collect();
    let c = SPEED_OF_SOUND;
    let duration = 4.0 * h.pulse_h_s + (r_far + 8.0 * h.bounding_radius_m) / c;
    for (field, motion) in [
        (4usize, Motion::Rotation(1)),
        (5, Motion::Rotation(2)),
        (1, Motion::Translation(1)),
    ] {
        let rec = solver.run(motion, h.pulse_h_s, duration, h.dt_s, 0.9, &probes);
        for tau in [150e-6, 80e-6, 40e-6] {
            let contact = RaisedCosine { duration_s: tau };
            let (mut e_asset, mut e_eng, mut e_eng3, mut tot) = (0.0, 0.0, 0.0, 0.0);
            for (k, d) in dirs.iter().enumerate() {
                let x = probes[k];
                let n = 400;
                let dt = (tau + 60e-6) / n as f64;
                for i in 0..n {
                    let t = r_far / c - 20e-6 + i as f64 * dt;
                    // direct: sum_j a(jh) p(t - jh)
                    let last = ((tau + 2.0 * h.pulse_h_s) / h.pulse_h_s).ceil() as i64;
                    let direct: f64 = (-2..=last)
                        .map(|j| {
                            let tt = t - j as f64 * h.pulse_h_s;
                            let s = (tt - rec.t0) / rec.dt;
                            let l = s.floor();
                            let f = s - l;
                            let at = |q: i64| {
                                if q >= 0 && (q as usize) < rec.pressure[k].len() {
                                    rec.pressure[k][q as usize]
                                } else {
                                    0.0
                                }
                            };
                            contact.derivatives(j as f64 * h.pulse_h_s)[0]
                                * ((1.0 - f) * at(l as i64) + f * at(l as i64 + 1))
                        })
                        .sum();
                    let fitted = asset_pressure(&asset, field, x, &contact, t);
                    let a = contact.derivatives(t - r_far / c);
                    let eng = without.pressure(field, *d, r_far, a);
                    let eng3 = red.pressure(field, *d, r_far, a);
                    e_asset += (fitted - direct).powi(2);
                    e_eng += (eng - direct).powi(2);
                    e_eng3 += (eng3 - direct).powi(2);
                    tot += direct * direct;
                }
            }
            let (ea, ee, e3) = ((e_asset / tot).sqrt(), (e_eng / tot).sqrt(), (e_eng3 / tot).sqrt());
            println!(
                "{motion:?} {:>3.0} us at {:.0} mm: asset {:5.1} %, terms without N3 {:5.1} %, with {:5.1} % (rms over 6 grid directions, of the direct run's)",
                tau * 1e6,
                r_far * 1e3,
                100.0 * ea,
                100.0 * ee,
                100.0 * e3
            );
            // seen (docs/grains.md): spins' asset 19-20 %, 8 %, 2.5 % for 150, 80, 40 us; the
            // terms with the near field 11 %, 17 %, 28 % (ka: rice's 6.5 mm reach 1 at 17 kHz);
            // translations' asset (two terms) 3.9 %, 2.9 %, 1.9 %; terms 1 %, 3 %, 10 %
            let (asset_limit, terms_limit) = match (field >= 3, (tau * 1e6).round() as i64) {
                (true, 150) => (0.25, 0.15),
                (true, 80) => (0.11, 0.22),
                (true, _) => (0.04, 0.33),
                (false, 150) => (0.06, 0.02),
                (false, 80) => (0.06, 0.04),
                (false, _) => (0.06, 0.13),
            };
            assert!(ea < asset_limit && e3 < terms_limit, "{motion:?} {tau}: {ea} {e3}");
        }
    }
}
