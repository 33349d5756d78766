//! The committed `assets/grains/*.grain` are what `cargo run --release -p granary-grains --
//! assets/grains` computes. Every committed file is read and checked (version, size, mass
//! properties, finite coefficients, dipole against the closed forms where they exist); the
//! sphere, cube and lentil are recomputed at a lower resolution (16 and 12 cells per
//! diameter instead of 20; same pulse, same sampling) and compared in the far field and at the
//! innermost radius, within what the two resolutions' own errors explain (the sphere's dipole
//! is 3-4 % high at these resolutions, tests/sphere.rs).

use granary_grains::asset::{file_name, precompute, Asset, Settings, FORMAT_VERSION};
use granary_grains::reference::{ellipsoid_dipole, ellipsoid_spin_quadrupole, sphere_pressure};
use granary_grains::shape::{Shape, ShapeKind};
use std::path::PathBuf;

fn path(kind: ShapeKind) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/grains")).join(file_name(kind))
}

fn peak(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

#[test]
fn committed_assets_are_versioned_compact_and_consistent() {
    let mut found = 0;
    for kind in ShapeKind::ALL {
        let p = path(kind);
        if !p.exists() {
            continue;
        }
        found += 1;
        let bytes = std::fs::metadata(&p).unwrap().len();
        assert!(bytes < 2_000_000, "{kind:?}: {bytes} bytes");
        let asset = Asset::read(&p).expect("asset reads");
        let h = &asset.header;
        assert_eq!(h.format_version, FORMAT_VERSION);
        assert_eq!(h.shape, kind);
        assert_eq!(h.settings, Settings::ASSET);
        let shape = Shape::reference(kind);
        // JSON keeps f64 to within an ulp or so (serde_json without float_roundtrip)
        let m = shape.mass_properties();
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-30);
        assert!(near(h.mass.volume_m3, m.volume_m3), "{kind:?} volume");
        for i in 0..3 {
            assert!((h.mass.centre_m[i] - m.centre_m[i]).abs() < 1e-15, "{kind:?} centre");
            for j in 0..3 {
                assert!(
                    (h.mass.inertia_m5[i][j] - m.inertia_m5[i][j]).abs() <= 1e-12 * m.inertia_m5[i][i].abs(),
                    "{kind:?} inertia"
                );
            }
        }
        assert!(asset.q.iter().all(|x| x.is_finite()));
        assert!(
            h.fit_residual[..3].iter().all(|&r| r < 0.03),
            "{kind:?}: {:?}",
            h.fit_residual
        );
        for i in 0..3 {
            assert!(h.dipole_m3[i][i] > 0.0);
        }
        // closed forms: the sphere's a^3/2, the spheroids' Lamb values (staircase error of a few %)
        let v = shape.mass_properties().volume_m3;
        let pi = std::f64::consts::PI;
        let axes = match kind {
            ShapeKind::Sphere => Some([shape.diameter_m / 2.0; 3]),
            ShapeKind::Rice => {
                let b = (3.0 * v / (4.0 * pi * 3.5)).cbrt();
                Some([3.5 * b, b, b])
            }
            ShapeKind::Lentil => {
                let c = (3.0 * v / (4.0 * pi * 2.75 * 2.75)).cbrt();
                Some([2.75 * c, 2.75 * c, c])
            }
            _ => None,
        };
        if let Some(axes) = axes {
            for i in 0..3 {
                let e = h.dipole_m3[i][i] / ellipsoid_dipole(axes, i) - 1.0;
                println!("{kind:?} axis {i}: D vs closed form {:+.2} %", 100.0 * e);
                assert!(e.abs() < 0.06, "{kind:?} axis {i}: {e}");
            }
            // the spin quadrupoles against the rotating ellipsoid (Lamb §115): M_jk, (i, j, k)
            // cyclic; a spin about an axis of symmetry is silent
            // (scale: the dipole times the bounding radius squared, m^5)
            let scale = h.dipole_m3[0][0] * h.bounding_radius_m.powi(2);
            for i in 0..3 {
                let (j, k) = ((i + 1) % 3, (i + 2) % 3);
                let want = ellipsoid_spin_quadrupole(axes, i);
                let got = h.spin_quadrupole_m5[i][j][k];
                if want.abs() > 1e-4 * scale {
                    let e = got / want - 1.0;
                    println!("{kind:?} spin {i}: M vs closed form {:+.2} %", 100.0 * e);
                    assert!(e.abs() < 0.06, "{kind:?} spin {i}: {e}");
                } else {
                    let all = h.spin_quadrupole_m5[i]
                        .iter()
                        .flatten()
                        .fold(0.0f64, |m, x| m.max(x.abs()));
                    assert!(all < 1e-4 * scale, "{kind:?} spin {i}: {all:e}");
                }
            }
        }
    }
    assert!(found >= 1, "no committed grain assets");
}

/// Energy below `f_max` (Hz) of `x` sampled every `dt` (s): direct DFT, zero-padded 4x.
fn band_energy(x: &[f64], dt: f64, f_max: f64) -> f64 {
    let n = 4 * x.len();
    let bins = (f_max * n as f64 * dt).floor() as usize;
    (0..=bins)
        .map(|b| {
            let w = 2.0 * std::f64::consts::PI * b as f64 / n as f64;
            let (re, im) = x.iter().enumerate().fold((0.0, 0.0), |(re, im), (i, &v)| {
                (re + v * (w * i as f64).cos(), im - v * (w * i as f64).sin())
            });
            re * re + im * im
        })
        .sum()
}

/// Differences between two assets of one shape for the translations in a few directions,
/// at radius `r`: the largest peak difference and waveform difference (relative to the
/// committed peak, or to a third of the field's on-axis peak where a direction is near the
/// field's node) and the largest band-energy difference below 20 kHz (dB).
fn compare(committed: &Asset, fresh: &Asset, r: f64) -> (f64, f64, f64) {
    let h = &committed.header;
    let (mut worst_peak, mut worst_wave, mut worst_db) = (0.0f64, 0.0f64, 0.0f64);
    for field in 0..3 {
        for dir in [
            [1.0, 0.0, 0.0],
            [0.3, -0.5, 0.81],
            [-0.6, 0.64, -0.48],
            [0.0, 0.2, -0.98],
        ] {
            let n: f64 = dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2];
            let x = dir.map(|c| c / n.sqrt() * r);
            let t0 = r / h.speed_of_sound - 4.0 * h.pulse_h_s;
            let dt = h.dt_s / 3.0;
            // 200 us at least, so the band below 20 kHz is resolved whatever the grain's size
            let n = ((200e-6 / dt).ceil() as usize).max(400);
            let times: Vec<f64> = (0..n).map(|i| t0 + i as f64 * dt).collect();
            let a: Vec<f64> = times.iter().map(|&t| committed.pressure(field, x, t)).collect();
            let b: Vec<f64> = times.iter().map(|&t| fresh.pressure(field, x, t)).collect();
            let scale = peak(&a).max(0.3 * dipole_scale(committed, field, r));
            worst_peak = worst_peak.max((peak(&b) - peak(&a)).abs() / scale);
            let wave = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max) / scale;
            worst_wave = worst_wave.max(wave);
            if peak(&a) > 0.3 * dipole_scale(committed, field, r) {
                let db = 10.0 * (band_energy(&b, dt, 20e3) / band_energy(&a, dt, 20e3)).log10();
                worst_db = worst_db.max(db.abs());
            }
        }
    }
    (worst_peak, worst_wave, worst_db)
}

/// Largest peak of a translation field at radius `r` along its own axis (either sign).
fn dipole_scale(asset: &Asset, field: usize, r: f64) -> f64 {
    let h = &asset.header;
    let mut x = [0.0; 3];
    x[field] = r;
    let t0 = r / h.speed_of_sound - 4.0 * h.pulse_h_s;
    (0..400)
        .map(|i| asset.pressure(field, x, t0 + i as f64 * h.dt_s / 3.0).abs())
        .fold(0.0, f64::max)
}

/// Tolerances of a low-resolution comparison.
struct Tolerance {
    /// Dipole coefficients, relative.
    dipole: f64,
    /// At the innermost radius: peaks (relative), band energy below 20 kHz (dB), waveforms
    /// (relative to the peak; mostly the coarser grid's dispersion delay).
    near_peak: f64,
    near_db: f64,
    near_wave: f64,
    /// At 0.1 m: peaks (relative). The far field is the time derivative of the near field's
    /// 1/R^2 part and weighs the highest frequencies most, which converge slowest.
    far_peak: f64,
}

/// Recomputes `kind` at `cells_per_diameter` (same pulse, sampling, radii and directions) and
/// compares with the committed asset.
fn check_against_low_resolution(kind: ShapeKind, cells_per_diameter: f64, tol: Tolerance) {
    let committed = Asset::read(&path(kind)).expect("committed asset");
    let settings = Settings {
        cells_per_diameter,
        ..Settings::ASSET
    };
    let fresh = precompute(&Shape::reference(kind), settings).expect("precompute");
    let (hc, hf) = (&committed.header, &fresh.header);
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs();
    assert!(near(hc.pulse_h_s, hf.pulse_h_s) && near(hc.dt_s, hf.dt_s));
    assert!(hc.radii_m.iter().zip(&hf.radii_m).all(|(&a, &b)| near(a, b)));
    for i in 0..3 {
        let e = hf.dipole_m3[i][i] / hc.dipole_m3[i][i] - 1.0;
        println!("{kind:?}: D[{i}][{i}] fresh / committed {:+.2} %", 100.0 * e);
        assert!(e.abs() < tol.dipole, "{kind:?} D[{i}]: {e}");
    }
    let (p, w, db) = compare(&committed, &fresh, hc.radii_m[0]);
    let (pf, wf, _) = compare(&committed, &fresh, 0.1);
    println!(
        "{kind:?} at {cells_per_diameter} cells per diameter: at R1 peaks differ by up to {:.2} %, band energy by {:.3} dB, waveforms by {:.2} % of peak; at 0.1 m peaks by {:.2} %, waveforms by {:.2} %",
        100.0 * p,
        db,
        100.0 * w,
        100.0 * pf,
        100.0 * wf
    );
    assert!(p < tol.near_peak, "{kind:?} peak {p}");
    assert!(db < tol.near_db, "{kind:?} band energy {db} dB");
    assert!(w < tol.near_wave, "{kind:?} waveform {w}");
    assert!(pf < tol.far_peak, "{kind:?} far peak {pf}");
}

#[test]
fn committed_sphere_matches_a_fresh_low_resolution_run_and_the_exact_solution() {
    // the sphere at 16 and 20 cells per diameter is within 1.5 % of the exact peak (docs/grains.md)
    let tol = Tolerance {
        dipole: 0.03,
        near_peak: 0.03,
        near_db: 0.3,
        near_wave: 0.08,
        far_peak: 0.04,
    };
    check_against_low_resolution(ShapeKind::Sphere, 16.0, tol);
    // and the committed sphere against the exact solution at 0.1 m, on the x axis
    let asset = Asset::read(&path(ShapeKind::Sphere)).unwrap();
    let h = &asset.header;
    let a = h.diameter_m / 2.0;
    let r = 0.1;
    let t0 = r / h.speed_of_sound - 4.0 * h.pulse_h_s;
    let dt = h.dt_s / 3.0;
    let exact = sphere_pressure(a, r, 1.0, h.pulse_h_s, t0, dt, 300);
    let got: Vec<f64> = (0..300)
        .map(|i| asset.pressure(0, [r, 0.0, 0.0], t0 + i as f64 * dt))
        .collect();
    let e = peak(&got) / peak(&exact) - 1.0;
    println!("sphere asset at 0.1 m: peak {:+.2} % vs exact", 100.0 * e);
    assert!(e.abs() < 0.05, "{e}");
    // the series extrapolated from R1..R5 (2a..4a) to 2 cm, 10 cm and 1 m: band energy below
    // 20 kHz against the exact solution, over a window long enough for the whole pulse
    for r in [0.02, 0.1, 1.0] {
        let t0 = r / h.speed_of_sound - 6.0 * h.pulse_h_s;
        let dt = h.dt_s / 2.0;
        let n = 2000;
        let got: Vec<f64> = (0..n)
            .map(|i| asset.pressure(0, [r, 0.0, 0.0], t0 + i as f64 * dt))
            .collect();
        let exact = sphere_pressure(a, r, 1.0, h.pulse_h_s, t0, dt, n);
        let db = 10.0 * (band_energy(&got, dt, 20e3) / band_energy(&exact, dt, 20e3)).log10();
        println!("sphere asset at {r} m: band energy below 20 kHz {db:+.3} dB vs exact");
        assert!(db.abs() < 0.5, "{r} m: {db} dB");
    }
    // directions between the grid's (theta every 22.5 deg, phi every 22.5 deg): the linear
    // interpolation of a cos(theta) pattern, at 0.1 m, against the exact solution
    for (theta, phi) in [(50.0f64, 33.0f64), (101.0, 200.0), (12.0, 290.0)] {
        let (t, p) = (theta.to_radians(), phi.to_radians());
        // the asset's polar axis is z; the sphere's response is along its x translation
        let u = [t.sin() * p.cos(), t.sin() * p.sin(), t.cos()];
        let exact = sphere_pressure(a, r, u[0], h.pulse_h_s, t0, dt, 300);
        let got: Vec<f64> = (0..300)
            .map(|i| asset.pressure(0, u.map(|x| x * r), t0 + i as f64 * dt))
            .collect();
        let on_axis = sphere_pressure(a, r, 1.0, h.pulse_h_s, t0, dt, 300);
        let e = (peak(&got) - peak(&exact)) / peak(&on_axis);
        println!(
            "sphere asset at 0.1 m, theta {theta} phi {phi}: peak {:+.2} % of the on-axis peak vs exact",
            100.0 * e
        );
        assert!(e.abs() < 0.04, "{theta} {phi}: {e}");
    }
    // rotations of the sphere are silent
    let rot = (0..300)
        .map(|i| asset.pressure(3 + (i % 3), [0.0, r, 0.0], t0 + i as f64 * dt).abs())
        .fold(0.0, f64::max);
    assert!(rot < 1e-6 * peak(&exact) * a, "{rot}");
}

#[test]
fn committed_cube_matches_a_fresh_low_resolution_run() {
    // the cube's dipole changes by about 1 % per cell of side at these resolutions, the
    // lentil's short axis (5 cells at 10 per diameter) by about 3 %
    // The cube's dipole goes 8.78, 8.73, 8.67, 8.63 e-12 m^3 and its peak at R1 on a face axis
    // 3.96, 4.10, 4.16, 4.19 e-5 Pa at 12, 16, 20, 24 cells per diameter
    // (`cube_converges_with_the_grid`), its far field on that axis 1.69, 1.79, 2.09, 2.13 e-7 Pa:
    // a face's normal radiation is the slowest to converge, and 12 cells per diameter leaves it
    // 19 % below the asset.
    let tol = Tolerance {
        dipole: 0.03,
        near_peak: 0.06,
        near_db: 0.3,
        near_wave: 0.15,
        far_peak: 0.22,
    };
    check_against_low_resolution(ShapeKind::Cube, 12.0, tol);
}

#[test]
fn committed_lentil_matches_a_fresh_low_resolution_run() {
    // the lentil's half-thickness is 3 cells at 12 cells per diameter
    let tol = Tolerance {
        dipole: 0.03,
        near_peak: 0.08,
        near_db: 0.3,
        near_wave: 0.15,
        far_peak: 0.22,
    };
    check_against_low_resolution(ShapeKind::Lentil, 12.0, tol);
}

/// The cube's convergence with the grid (release: `cargo test --release -p granary-grains
/// --test assets -- --ignored --nocapture`, about 2 minutes): dipole and peaks at 12, 16, 20,
/// 24 cells per diameter. The dipole and the peak at R1 must converge monotonically.
#[test]
#[ignore]
fn cube_converges_with_the_grid() {
    let mut dipoles = Vec::new();
    let mut near_peaks = Vec::new();
    for cpd in [12.0, 16.0, 20.0, 24.0] {
        let a = precompute(
            &Shape::reference(ShapeKind::Cube),
            Settings {
                cells_per_diameter: cpd,
                ..Settings::ASSET
            },
        )
        .unwrap();
        let h = &a.header;
        let mut line = format!("cpd {cpd}: D {:.4e}", h.dipole_m3[0][0]);
        dipoles.push(h.dipole_m3[0][0]);
        for r in [h.radii_m[0], 0.1] {
            let t0 = r / h.speed_of_sound - 4.0 * h.pulse_h_s;
            let v: Vec<f64> = (0..400)
                .map(|i| a.pressure(0, [r, 0.0, 0.0], t0 + i as f64 * h.dt_s / 3.0))
                .collect();
            let w: Vec<f64> = (0..400)
                .map(|i| a.pressure(0, [r * 0.6, r * 0.64, -r * 0.48], t0 + i as f64 * h.dt_s / 3.0))
                .collect();
            line += &format!(" | r {r:.4}: axis peak {:.4e}, oblique peak {:.4e}", peak(&v), peak(&w));
            if r < 0.1 {
                near_peaks.push(peak(&v));
            }
        }
        println!("{line}");
    }
    assert!(dipoles.windows(2).all(|w| w[1] < w[0]), "{dipoles:?}");
    assert!(near_peaks.windows(2).all(|w| w[1] > w[0]), "{near_peaks:?}");
    let steps: Vec<f64> = near_peaks.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(steps.windows(2).all(|w| w[1] < w[0]), "{steps:?}");
}

/// PAN eq. 18: the response to an acceleration `a(t)` from the response `p` to the pulse
/// psi(t; h), `p_a(t) = sum_k a(k h) p(t - k h)`, for series sampled every `h / 2`.
fn superpose(p: &[f64], accel: &[f64]) -> Vec<f64> {
    (0..p.len())
        .map(|l| {
            accel
                .iter()
                .enumerate()
                .filter(|(k, _)| 2 * k <= l)
                .map(|(k, a)| a * p[l - 2 * k])
                .sum()
        })
        .collect()
}

/// The precomputation path end to end on a shape without symmetry tricks: the rice grain at 8
/// cells per diameter, evaluated through `Asset::pressure` between the grid directions and
/// radii, against a direct run of the solver with probes there (same grid, same pulse). This
/// checks the direction conventions of every field, the angular interpolation and the radial
/// series at once (PAN §5 validates the same way). Compared for a contact: a half-sine
/// acceleration (PAN eq. 6) of 10 h (20 us, of the order of a rice-on-rice contact), built from the pulse
/// responses by eq. 18. The raw pulse responses differ more (18 % of the peak with 22.5 deg
/// between directions, the first grid tried): the pulse reaches a direction near the grain's
/// tip up to 2 h before its broadside neighbour, and linear interpolation between the two
/// misaligned pulses lowers the peak; a contact, many h long, is insensitive to that.
#[test]
fn rice_asset_matches_a_direct_run_between_grid_directions() {
    use granary_grains::fdtd::{GridSpec, Motion, Solver};
    let shape = Shape::reference(ShapeKind::Rice);
    let settings = Settings {
        cells_per_diameter: 8.0,
        ..Settings::ASSET
    };
    let asset = precompute(&shape, settings).expect("precompute");
    let h = &asset.header;
    let solver = Solver::new(&shape, h.grid);
    assert_eq!(
        h.grid,
        GridSpec::around(h.grid.dx, h.radii_m[4] + 2.0 * h.grid.dx, settings.pml)
    );
    let r = 0.5 * (h.radii_m[2] + h.radii_m[3]);
    let dirs: [[f64; 3]; 4] = [
        [0.8, 0.3, 0.52],
        [-0.2, 0.9, -0.39],
        [0.45, -0.55, 0.7],
        [-0.9, -0.1, -0.42],
    ];
    let mut probes: Vec<[f64; 3]> = dirs
        .iter()
        .map(|d| {
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            d.map(|x| x / n * r)
        })
        .collect();
    // and four grid directions, where only the radial series is between asset and direct run
    let off_grid = probes.len();
    for (i, j) in [(3, 2), (4, 3), (6, 11), (8, 17)] {
        probes.push(granary_grains::asset::direction(i, j, settings.n_theta, settings.n_phi).map(|x| x * r));
    }
    let duration = 4.0 * h.pulse_h_s + (h.radii_m[4] + settings.tail_radii * h.bounding_radius_m) / h.speed_of_sound;
    // PAN eq. 6, sampled at k h
    let contact: Vec<f64> = (0..=10)
        .map(|k| (std::f64::consts::PI * k as f64 / 10.0).sin())
        .collect();
    let mut rotation_scales = Vec::new();
    for (field, motion) in Motion::ALL.into_iter().enumerate() {
        let rec = solver.run(motion, h.pulse_h_s, duration, h.dt_s, 0.9, &probes);
        let last = rec.pressure[0].len() - 1 - ((h.radii_m[4] - r) / h.speed_of_sound / h.dt_s).ceil() as usize - 3;
        let direct: Vec<Vec<f64>> = rec.pressure.iter().map(|p| superpose(&p[..last], &contact)).collect();
        let fitted: Vec<Vec<f64>> = probes
            .iter()
            .map(|x| {
                let p: Vec<f64> = (0..last)
                    .map(|l| asset.pressure(field, *x, rec.t0 + l as f64 * h.dt_s))
                    .collect();
                superpose(&p, &contact)
            })
            .collect();
        // the field's scale at this radius: its largest peak over the probes
        let scale = direct.iter().map(|p| peak(p)).fold(0.0, f64::max);
        if let Motion::Rotation(axis) = motion {
            rotation_scales.push(scale);
            if axis == 0 {
                // spinning about its axis of symmetry the spheroid pushes no air (eq. 16 gives
                // a_n = 0 on every face): both are rounding noise, judged after the other two
                continue;
            }
        }
        for i in 0..probes.len() {
            let dp = (peak(&fitted[i]) - peak(&direct[i])).abs() / scale;
            let dw = fitted[i]
                .iter()
                .zip(&direct[i])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / scale;
            let kind = if i >= off_grid { "grid" } else { "between" };
            println!(
                "{motion:?} probe {i} ({kind}): contact peak differs by {:.2} %, waveform by {:.2} % of the field's peak",
                100.0 * dp,
                100.0 * dw
            );
            // At grid directions only the series' fit error (about 2 %). Between them, linear
            // interpolation 18 deg apart misses the curvature of the angular pattern by up to
            // Delta^2 l^2 / 8: 1.2 % for a translation's l = 1, 4.9 % and 11 % for the l = 2 and
            // 3 parts of an elongated grain's rotational field (measured: up to 6.5 %).
            let (tol_peak, tol_wave) = if i >= off_grid {
                (0.03, 0.05)
            } else if matches!(motion, Motion::Translation(_)) {
                (0.05, 0.08)
            } else {
                (0.12, 0.14)
            };
            assert!(dp < tol_peak && dw < tol_wave, "{motion:?} probe {i}: {dp} {dw}");
        }
    }
    let spin = rotation_scales[0] / rotation_scales[1].max(rotation_scales[2]);
    println!("rotation about the long axis: {spin:.1e} of the others");
    assert!(spin < 1e-6, "{rotation_scales:?}");
}

#[test]
fn far_field_mean_is_the_static_dipole() {
    // The time integral of the pressure far away is that of the static flow, rho0 D h cos / R^2
    // (q_1 has no mean): the asset's q_2 must carry the dipole that the sphere-rule measurement
    // of the same run gives (`dipole_m3`), up to the higher multipoles the two terms fold in.
    // The window starts with the first coefficient's pulse (2 dt before it): since q_1's first
    // moment is fixed (`FitSpec::fit_with_first_moments`), the first coefficients carry the
    // constraints' balance, and a window starting at the first coefficient's centre cut half
    // of it (rice end-on read -28 %).
    for kind in ShapeKind::ALL {
        let Ok(asset) = Asset::read(&path(kind)) else { continue };
        let h = &asset.header;
        let r = 1.0;
        let dt = h.dt_s / 2.0;
        let t0 = r / h.speed_of_sound + (h.first - 3) as f64 * h.dt_s;
        let n = ((400e-6 / dt).ceil()) as usize;
        for axis in 0..3 {
            let mut x = [0.0; 3];
            x[axis] = r;
            let integral: f64 = (0..n).map(|i| asset.pressure(axis, x, t0 + i as f64 * dt)).sum::<f64>() * dt;
            let want = h.air_density * h.dipole_m3[axis][axis] * h.pulse_h_s / (r * r);
            let e = integral / want - 1.0;
            println!(
                "{kind:?} axis {axis}: far-field mean / static dipole {:+.2} %",
                100.0 * e
            );
            assert!(e.abs() < 0.2, "{kind:?} axis {axis}: {e}");
        }
    }
}
