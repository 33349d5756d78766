//! The seeds' published numbers that Granary reproduces, and the engine's values beside them.

use super::contact::{ContactSetup, Partner};
use granary_engine::base::materials::{Elastic, GRAVITY};
use granary_engine::impact::contact::{effective, hertz_duration, Body};
use serde::Serialize;

/// Thesis (seed 000) Table 6.1: collision speed v0 (m/s) and the maximal acoustic pressure
/// (Pa) of the acceleration noise of one glass sphere (rho = 2520 kg/m^3, E = 72 GPa,
/// nu = 0.22, a = 1 mm), listener at r = 0.15 m, theta = 0. (The row printed as 0.00010 Pa
/// at 0.0009479 m/s has lost its digits in the source and is left out.)
pub const TABLE_6_1: [(f64, f64); 18] = [
    (1e-5, 1.913e-7),
    (6.2105e-5, 2.3763e-6),
    (0.0001142, 5.5211e-6),
    (0.0001663, 9.24631e-6),
    (0.0002184, 1.33821e-5),
    (0.0002705, 1.81913e-5),
    (0.0003226, 2.32380e-5),
    (0.0003747, 2.84454e-5),
    (0.0004268, 3.36448e-5),
    (0.0004789, 3.99788e-5),
    (0.0005311, 4.58131e-5),
    (0.0005832, 5.23089e-5),
    (0.0006353, 5.84084e-5),
    (0.0006874, 6.58677e-5),
    (0.0007395, 7.14722e-5),
    (0.0007916, 7.93963e-5),
    (0.0008437, 8.72381e-5),
    (0.001, 1.09960e-4),
];

/// The Table 6.1 glass.
pub const TABLE_6_1_GLASS: Elastic = Elastic {
    youngs_pa: 72e9,
    poisson: 0.22,
    density: 2520.0,
};

/// The Table 6.1 scene at speed `v0`: two identical glass spheres, a = 1 mm, elastic
/// collision, listener 0.15 m from sphere A on its normal.
pub fn table_6_1_setup(v0: f64) -> ContactSetup {
    ContactSetup {
        a: TABLE_6_1_GLASS,
        a_radius_m: 1e-3,
        b: Partner::Sphere {
            elastic: TABLE_6_1_GLASS,
            radius_m: 1e-3,
        },
        v0,
        restitution: 1.0,
        distance_m: 0.15,
        angle_rad: 0.0,
        shape: granary_engine::control::choices::Shape::Sphere,
    }
}

/// One row of Table 6.1 beside Granary's value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PressureRow {
    pub v0_m_s: f64,
    pub thesis_pa: f64,
    /// The engine's convention: half-sine peak acceleration `pi j / (2 tau m)` (PAN eq. 10).
    pub granary_pa: f64,
    /// The thesis's convention: peak acceleration `f_max / m` from the Hertz force law
    /// (PAN eq. 5), same half-sine shape and duration.
    pub granary_hertz_peak_pa: f64,
}

/// Table 6.1 recomputed with the engine's definition of a collision (`engine::collision`,
/// through `ContactSetup`).
pub fn table_6_1() -> Vec<PressureRow> {
    TABLE_6_1
        .iter()
        .map(|&(v0, thesis_pa)| {
            let setup = table_6_1_setup(v0);
            let mut hertz = setup.source_a();
            hertz.peak_accel = setup.hertz_peak_force() / setup.body_a().mass_kg as f64;
            PressureRow {
                v0_m_s: v0,
                thesis_pa,
                granary_pa: setup.report().peak_pressure_pa,
                granary_hertz_peak_pa: hertz.peak_pressure(),
            }
        })
        .collect()
}

/// Least-squares slope of log(y) against log(x).
pub fn loglog_slope(points: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let pts: Vec<(f64, f64)> = points.into_iter().map(|(x, y)| (x.ln(), y.ln())).collect();
    let n = pts.len() as f64;
    let (mx, my) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = pts.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    sxy / sxx
}

/// PAN (seed 001) Table 1's ball bearing: a copper-alloy sphere of radius 7.5 mm (§5,
/// "Ball bearing"; E = 123.4 GPa, nu = 0.34, rho = 8940 kg/m^3) against an infinitely stiff,
/// massive plane at V = 5 m/s (§4.3); the table's pulse time scale h = tau/5 = 7.3264 us.
pub fn pan_ball_bearing_time_scale_s() -> f64 {
    let steel = Elastic {
        youngs_pa: 123.4e9,
        poisson: 0.34,
        density: 8940.0,
    };
    let sphere = Body::sphere(steel, 7.5e-3);
    let (m, r, e) = effective(&sphere, &Body::rigid());
    hertz_duration(m, r, e, 5.0) as f64 / 5.0
}

/// PAN Table 1's published h of the ball bearing, s.
pub const PAN_BALL_BEARING_H_S: f64 = 7.3264e-6;

/// Seed 002 (ground sound) Table 1: a stainless-steel ball (Table 2: E = 196.5 GPa,
/// nu = 0.27, rho = 7955 kg/m^3) of diameter 2 cm dropped 15 cm onto medium-density
/// fiberboard (Table 2 "wood": E = 11 GPa, nu = 0.25), a half-space; contact time
/// t_c = 1.633e-4 s.
pub fn ground_ball_drop() -> ContactSetup {
    let steel = Elastic {
        youngs_pa: 1.965e11,
        poisson: 0.27,
        density: 7955.0,
    };
    let wood = Elastic {
        youngs_pa: 1.1e10,
        poisson: 0.25,
        density: 750.0,
    };
    ContactSetup {
        a: steel,
        a_radius_m: 0.01,
        b: Partner::Plane { elastic: wood },
        v0: (2.0 * GRAVITY as f64 * 0.15).sqrt(),
        restitution: 0.5,
        distance_m: 0.2,
        angle_rad: 0.0,
        shape: granary_engine::control::choices::Shape::Sphere,
    }
}

/// Seed 002 Table 1's published contact time, s.
pub const GROUND_BALL_DROP_TC_S: f64 = 1.633e-4;
