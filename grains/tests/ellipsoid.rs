//! The low-frequency dipole coefficients of the spheroids (rice, lentil) against Lamb's
//! closed form for a translating ellipsoid (grains/src/reference.rs `ellipsoid_dipole`).
//!
//! Equivalent diameter 4 mm, cells of 0.2 mm (the rice grain's short semi-axis is 6.6
//! cells, the lentil's 5.1), pulse `h = R / c` (R the bounding radius), dipole measured on a
//! sphere of radius 1.2 R.

use granary_grains::fdtd::{dipole_coefficients, GridSpec, Solver};
use granary_grains::reference::ellipsoid_dipole;
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
