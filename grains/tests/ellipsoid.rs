//! The low-frequency dipole coefficients of the spheroids (rice, lentil) against Lamb's
//! closed form for a translating ellipsoid (grains/src/reference.rs `ellipsoid_dipole`), and
//! their static spin quadrupoles against the rotating ellipsoid (Lamb §115, derived in
//! `ellipsoid_spin_quadrupole`).
//!
//! Equivalent diameter 4 mm, cells of 0.2 mm (the rice grain's short semi-axis is 6.6
//! cells, the lentil's 5.1), pulse `h = R / c` (R the bounding radius), dipole measured on a
//! sphere of radius 1.2 R.

#![allow(clippy::needless_range_loop)] // axes index the matrices

use granary_grains::fdtd::{dipole_coefficients, spin_quadrupoles, GridSpec, Solver};
use granary_grains::reference::{ellipsoid_dipole, ellipsoid_spin_quadrupole};
use granary_grains::shape::{Shape, ShapeKind};
use granary_grains::SPEED_OF_SOUND;

fn check(kind: ShapeKind, axes: [f64; 3], dx: f64) -> [f64; 3] {
    let shape = Shape::new(kind, 4e-3);
    let r = shape.bounding_radius();
    assert!((r / axes[0].max(axes[2]) - 1.0).abs() < 1e-3, "{kind:?}: {r}");
    let solver = Solver::new(&shape, GridSpec::around(dx, 1.2 * r + 2.0 * dx, 8));
    let h = r / SPEED_OF_SOUND;
    let d = dipole_coefficients(&solver, h, 1.2 * r, 4.0 * h + 16.0 * r / SPEED_OF_SOUND);
    let mut err = [0.0; 3];
    for i in 0..3 {
        let want = ellipsoid_dipole(axes, i);
        err[i] = d[i][i] / want - 1.0;
        println!(
            "{kind:?} axis {i}: D = {:.4e} m^3, Lamb {want:.4e} m^3, error {:+.2} %",
            d[i][i],
            100.0 * err[i]
        );
        for j in 0..3 {
            if j != i {
                assert!(d[i][j].abs() < 1e-3 * d[i][i], "{kind:?} D[{i}][{j}] = {}", d[i][j]);
            }
        }
    }
    err
}

#[test]
fn spheroid_dipoles_match_lamb() {
    let v = std::f64::consts::PI * 4e-3f64.powi(3) / 6.0;
    // rice: prolate 3.5 along x
    let b = (3.0 * v / (4.0 * std::f64::consts::PI * 3.5)).cbrt();
    for e in check(ShapeKind::Rice, [3.5 * b, b, b], 0.2e-3) {
        assert!(e.abs() < 0.05, "rice {e}");
    }
    // lentil: oblate, diameter/thickness 2.75, short axis z
    let c = (3.0 * v / (4.0 * std::f64::consts::PI * 2.75 * 2.75)).cbrt();
    for e in check(ShapeKind::Lentil, [2.75 * c, 2.75 * c, c], 0.2e-3) {
        assert!(e.abs() < 0.05, "lentil {e}");
    }
}

/// The spin quadrupoles of `kind` (equivalent diameter 4 mm, cells `dx`) against Lamb's:
/// the relative errors of `M_jk` for the rotations about the axes `spun` (the others are a
/// body of revolution turning about its own axis: silent to `1e-3` of the loudest).
fn check_spins(kind: ShapeKind, axes: [f64; 3], dx: f64, spun: &[usize]) -> Vec<f64> {
    let shape = Shape::new(kind, 4e-3);
    let r = shape.bounding_radius();
    let solver = Solver::new(&shape, GridSpec::around(dx, 1.2 * r + 2.0 * dx, 8));
    let h = r / SPEED_OF_SOUND;
    let m = spin_quadrupoles(&solver, h, 1.2 * r, 4.0 * h + 16.0 * r / SPEED_OF_SOUND);
    let loudest = m.iter().flatten().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
    let mut err = Vec::new();
    for i in 0..3 {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        let want = ellipsoid_spin_quadrupole(axes, i);
        println!(
            "{kind:?} spin {i}: M_{j}{k} = {:.4e} m^5, Lamb {want:.4e} m^5, largest other {:.1e}",
            m[i][j][k],
            m[i].iter()
                .flatten()
                .enumerate()
                .filter(|(n, _)| *n != 3 * j + k && *n != 3 * k + j)
                .fold(0.0f64, |a, (_, x)| a.max(x.abs()))
        );
        // symmetric, and nothing but the (j, k) pair
        for a in 0..3 {
            for b in 0..3 {
                assert!(
                    (m[i][a][b] - m[i][b][a]).abs() < 1e-9 * loudest,
                    "{kind:?} {i} not symmetric"
                );
                if !((a, b) == (j, k) || (a, b) == (k, j)) {
                    assert!(
                        m[i][a][b].abs() < 1e-3 * loudest,
                        "{kind:?} spin {i}: M[{a}][{b}] = {:e}",
                        m[i][a][b]
                    );
                }
            }
        }
        if spun.contains(&i) {
            let e = m[i][j][k] / want - 1.0;
            println!("  error {:+.2} %", 100.0 * e);
            err.push(e);
        } else {
            assert!(
                m[i][j][k].abs() < 1e-3 * loudest,
                "{kind:?} spin {i} about its axis: {:e}",
                m[i][j][k]
            );
        }
    }
    err
}

#[test]
fn spheroid_spin_quadrupoles_match_lamb() {
    let v = std::f64::consts::PI * 4e-3f64.powi(3) / 6.0;
    let b = (3.0 * v / (4.0 * std::f64::consts::PI * 3.5)).cbrt();
    for e in check_spins(ShapeKind::Rice, [3.5 * b, b, b], 0.2e-3, &[1, 2]) {
        assert!(e.abs() < 0.05, "rice {e}");
    }
    let c = (3.0 * v / (4.0 * std::f64::consts::PI * 2.75 * 2.75)).cbrt();
    for e in check_spins(ShapeKind::Lentil, [2.75 * c, 2.75 * c, c], 0.2e-3, &[0, 1]) {
        assert!(e.abs() < 0.05, "lentil {e}");
    }
}
