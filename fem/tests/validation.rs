//! The finite-element modal analysis against closed forms: a free-free beam's
//! bending frequencies (Euler–Bernoulli), a thin ring's in-plane bending modes n = 2..4
//! (Rayleigh), and convergence under mesh refinement.

use granary_fem::{lowest_modes, EigenOptions, Material, Mesh, System};
use std::f64::consts::PI;

const STEEL: Material = Material {
    youngs_pa: 2.0e11,
    poisson: 0.3,
    density: 7800.0,
};

fn modes(mesh: &Mesh, count: usize) -> granary_fem::Modes {
    let sys = System::assemble(mesh, &STEEL);
    lowest_modes(mesh, &sys, count, EigenOptions::default()).expect("eigensolver")
}

/// Free-free Euler–Bernoulli beam: f = (beta L)^2 / (2 pi L^2) sqrt(E I / (rho A)),
/// beta L = 4.7300, 7.8532, 10.9956 (Blevins, *Formulas for Natural Frequency*, table 8-1).
fn beam_closed_form(length: f64, side: f64, k: usize) -> f64 {
    let bl = [4.730_040_7, 7.853_204_6, 10.995_607_8][k];
    let i = side.powi(4) / 12.0;
    let a = side * side;
    bl * bl / (2.0 * PI * length * length) * (STEEL.youngs_pa * i / (STEEL.density * a)).sqrt()
}

#[test]
fn free_free_beam_bending_frequencies() {
    let (l, h) = (0.3, 0.01);
    let mesh = Mesh::block([l, h, h], (24, 2, 2));
    let m = modes(&mesh, 6);
    // square section: every bending mode is a pair (y and z)
    for k in 0..3 {
        let expected = beam_closed_form(l, h, k);
        for f in &m.freqs_hz[2 * k..2 * k + 2] {
            let err = f / expected - 1.0;
            eprintln!(
                "beam mode {}: {f:.1} Hz, Euler-Bernoulli {expected:.1} Hz ({:+.2} %)",
                k + 1,
                100.0 * err
            );
            // Euler–Bernoulli neglects shear and rotary inertia (Timoshenko): FEM is a
            // little lower for the higher modes of a beam 30 sides long
            assert!(err.abs() < 0.03, "mode {k}: {f} vs {expected}");
        }
    }
    // modes are mass-normalised
    let sys = System::assemble(&mesh, &STEEL);
    let mut mx = vec![0.0; m.shapes[0].len()];
    sys.m.mul(&m.shapes[0], &mut mx);
    let norm: f64 = m.shapes[0].iter().zip(&mx).map(|(a, b)| a * b).sum();
    assert!((norm - 1.0).abs() < 1e-9, "{norm}");
}

/// In-plane bending of a thin ring (Rayleigh; Soedel, *Vibrations of Shells and Plates*
/// eq. 5.5.12): w_n^2 = E I / (rho A R^4) n^2 (n^2 - 1)^2 / (n^2 + 1).
#[test]
fn thin_ring_in_plane_modes() {
    let (r, h, b) = (0.05, 0.003, 0.006);
    let segments = 48;
    let profile: Vec<Vec<[f64; 2]>> = (0..=2)
        .map(|i| {
            let rr = r - h / 2.0 + h * i as f64 / 2.0;
            (0..=2).map(|j| [rr, b * j as f64 / 2.0]).collect()
        })
        .collect();
    let (mesh, _) = Mesh::revolve(&profile, segments);
    let m = modes(&mesh, 14);
    let i_area = b * h.powi(3) / 12.0;
    let a = b * h;
    let base = STEEL.youngs_pa * i_area / (STEEL.density * a * r.powi(4));
    // in-plane modes: little axial (z) motion
    let in_plane: Vec<f64> = m
        .freqs_hz
        .iter()
        .zip(&m.shapes)
        .filter(|(_, s)| {
            let total: f64 = s.iter().map(|x| x * x).sum();
            let axial: f64 = s.iter().skip(2).step_by(3).map(|x| x * x).sum();
            axial < 0.1 * total
        })
        .map(|(f, _)| *f)
        .collect();
    assert!(in_plane.len() >= 6, "{:?}", m.freqs_hz);
    for n in 2..=4usize {
        let nf = n as f64;
        let expected = (base * nf * nf * (nf * nf - 1.0).powi(2) / (nf * nf + 1.0)).sqrt() / (2.0 * PI);
        for f in &in_plane[2 * (n - 2)..2 * (n - 2) + 2] {
            let err = f / expected - 1.0;
            eprintln!(
                "ring n={n}: {f:.1} Hz, thin ring {expected:.1} Hz ({:+.2} %)",
                100.0 * err
            );
            assert!(err.abs() < 0.03, "n={n}: {f} vs {expected}");
        }
    }
}

#[test]
fn beam_converges_under_refinement() {
    let (l, h) = (0.3, 0.01);
    let expected = beam_closed_form(l, h, 0);
    let errors: Vec<f64> = [3, 6, 12]
        .iter()
        .map(|&n| {
            let m = modes(&Mesh::block([l, h, h], (n, 1, 1)), 2);
            let e = (m.freqs_hz[0] / expected - 1.0).abs();
            eprintln!("{n} cells: f1 = {:.2} Hz ({:.3} %)", m.freqs_hz[0], 100.0 * e);
            e
        })
        .collect();
    assert!(errors[0] > errors[1] && errors[1] > errors[2], "{errors:?}");
    assert!(errors[2] < 0.01, "{errors:?}");
}
