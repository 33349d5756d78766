//! The radial series (seed 001 eq. 20–25) on the translating sphere: a held-out radius is
//! reproduced, and the series extrapolates to the far field (0.1 m, 50 radii) in agreement with
//! the exact solution, i.e. with the dipole coefficient `D = a^3/2`.

use granary_grains::fdtd::{GridSpec, Motion, Solver};
use granary_grains::fit::FitSpec;
use granary_grains::reference::sphere_pressure;
use granary_grains::shape::{Shape, ShapeKind};
use granary_grains::SPEED_OF_SOUND;

const A: f64 = 2e-3;

fn peak(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |m, v| m.max(v.abs()))
}

#[test]
fn sphere_series_reproduces_a_held_out_radius_and_the_far_field() {
    let h = A / SPEED_OF_SOUND;
    let dt = h / 4.0;
    let dx = A / 8.0;
    let radii: Vec<f64> = (0..5).map(|i| 2.0 * A * 2f64.powf(i as f64 / 4.0)).collect();
    let shape = Shape::new(ShapeKind::Sphere, 2.0 * A);
    let solver = Solver::new(&shape, GridSpec::around(dx, radii[4] + 2.0 * dx, 10));
    // directions (theta from x, phi about x), degrees
    let dirs: [(f64, f64); 4] = [(0.0, 0.0), (35.0, 20.0), (80.0, 150.0), (120.0, 260.0)];
    let unit = |(t, p): (f64, f64)| {
        let (t, p) = (f64::to_radians(t), f64::to_radians(p));
        [t.cos(), t.sin() * p.cos(), t.sin() * p.sin()]
    };
    let probes: Vec<[f64; 3]> = dirs
        .iter()
        .flat_map(|&d| radii.iter().map(move |&r| unit(d).map(|x| x * r)))
        .collect();
    let duration = 4.0 * h + (radii[4] + 12.0 * A) / SPEED_OF_SOUND;
    let rec = solver.run(Motion::Translation(0), h, duration, dt, 0.9, &probes);
    let samples = rec.pressure[0].len();
    let held_out = 2;
    let fit_radii: Vec<f64> = radii
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != held_out)
        .map(|(_, &r)| r)
        .collect();
    let spec = FitSpec {
        terms: 2,
        radii: fit_radii,
        dt,
        first_sample: (rec.t0 / dt).round() as i64,
        samples,
        body_radius: A,
        truncation: 1e-8,
    };
    let series: Vec<Vec<Vec<f64>>> = (0..dirs.len())
        .map(|d| {
            (0..5)
                .filter(|&i| i != held_out)
                .map(|i| rec.pressure[d * 5 + i].clone())
                .collect()
        })
        .collect();
    let fit = spec.fit(&series).expect("fit");
    println!("rank {} of {}", fit.rank, fit.columns);
    for (d, &(theta, _)) in dirs.iter().enumerate() {
        // held-out radius, over the samples the fit covers (retarded time within its range)
        let recorded = &rec.pressure[d * 5 + held_out];
        let r = radii[held_out];
        let last = samples - 1 - ((radii[4] - r) / SPEED_OF_SOUND / dt).ceil() as usize - 2;
        let fitted: Vec<f64> = (0..last).map(|l| fit.eval(d, r, rec.t0 + l as f64 * dt)).collect();
        let err = fitted
            .iter()
            .zip(recorded)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
            / peak(recorded);
        // far field, 0.1 m: against the exact solution
        let far = 0.1;
        let t0 = far / SPEED_OF_SOUND - 3.0 * h;
        let n = 400;
        let fitted_far: Vec<f64> = (0..n).map(|i| fit.eval(d, far, t0 + i as f64 * dt / 4.0)).collect();
        let exact_far = sphere_pressure(A, far, theta.to_radians().cos(), h, t0, dt / 4.0, n);
        let far_err = peak(&fitted_far) / peak(&exact_far) - 1.0;
        let shape_err = fitted_far
            .iter()
            .zip(&exact_far)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
            / peak(&exact_far);
        println!(
            "theta {theta}: held-out R3 max error {:.2} % of peak; 0.1 m peak {:+.2} %, max waveform error {:.2} % of peak",
            100.0 * err,
            100.0 * far_err,
            100.0 * shape_err
        );
        assert!(err < 0.03, "theta {theta}: held-out error {err}");
        assert!(far_err.abs() < 0.05, "theta {theta}: far-field peak {far_err}");
        assert!(shape_err < 0.08, "theta {theta}: far-field waveform {shape_err}");
    }
}
