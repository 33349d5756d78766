//! Hertz contact between two bodies (PAN = seed 001, §3, eq. 5–10).
//!
//! A collision at normal speed `V` between bodies with effective mass `m`, effective
//! radius `r` and effective modulus `E*` has a half-sine force (eq. 6) of duration
//! `tau = 2.87 (m^2 / (r E*^2 V))^(1/5)` (eq. 7) whose integral equals the impulse `j`
//! (eq. 10), so its peak is `gamma = pi j / (2 tau)`.

use crate::base::materials::Elastic;

/// One body of a contact. `None` fields mean "infinite" (a rigid or immovable plane).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// Mass, kg (`f32::INFINITY` for an immovable body).
    pub mass_kg: f32,
    /// Radius of curvature at the contact, m (`f32::INFINITY` for a plane).
    pub radius_m: f32,
    /// Young's modulus, Pa (`f32::INFINITY` for a rigid body).
    pub youngs_pa: f32,
    pub poisson: f32,
}

impl Body {
    /// A solid sphere of the given material and radius.
    pub fn sphere(material: Elastic, radius_m: f32) -> Self {
        let volume = 4.0 / 3.0 * std::f32::consts::PI * radius_m.powi(3);
        Body {
            mass_kg: material.density * volume,
            radius_m,
            youngs_pa: material.youngs_pa,
            poisson: material.poisson,
        }
    }

    /// An infinitely massive flat half-space of the given material.
    pub fn plane(material: Elastic) -> Self {
        Body {
            mass_kg: f32::INFINITY,
            radius_m: f32::INFINITY,
            youngs_pa: material.youngs_pa,
            poisson: material.poisson,
        }
    }

    /// An infinitely stiff, infinitely massive plane.
    pub fn rigid() -> Self {
        Body {
            mass_kg: f32::INFINITY,
            radius_m: f32::INFINITY,
            youngs_pa: f32::INFINITY,
            poisson: 0.0,
        }
    }
}

/// Everything the renderer needs about one contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Contact duration tau, s (PAN eq. 7).
    pub duration_s: f32,
    /// Impulse magnitude |j|, N s.
    pub impulse_ns: f32,
    /// Peak of the half-sine force gamma, N (PAN eq. 10).
    pub peak_force_n: f32,
}

/// Effective pair quantities of PAN eq. 8–9: 1/r = 1/r1 + 1/r2, 1/E* = (1-nu1^2)/E1 +
/// (1-nu2^2)/E2, 1/m = 1/m1 + 1/m2. Infinite members drop out of the sums.
pub fn effective(a: &Body, b: &Body) -> (f32, f32, f32) {
    let inv = |x: f32| if x.is_finite() { 1.0 / x } else { 0.0 };
    let m = 1.0 / (inv(a.mass_kg) + inv(b.mass_kg));
    let r = 1.0 / (inv(a.radius_m) + inv(b.radius_m));
    let compliance = |body: &Body| {
        if body.youngs_pa.is_finite() {
            (1.0 - body.poisson * body.poisson) / body.youngs_pa
        } else {
            0.0
        }
    };
    let e_star = 1.0 / (compliance(a) + compliance(b));
    (m, r, e_star)
}

/// Hertz contact duration, PAN eq. 7: tau = 2.87 (m^2 / (r E*^2 V))^(1/5).
/// Units: (kg^2 / (m Pa^2 m/s))^(1/5) = (kg^2 s / (m^2 kg^2 m^-2 s^-4))^(1/5) = s. Checked.
pub fn hertz_duration(m_eff: f32, r_eff: f32, e_star: f32, speed: f32) -> f32 {
    let x = (m_eff as f64).powi(2) / (r_eff as f64 * (e_star as f64).powi(2) * speed as f64);
    (2.87 * x.powf(0.2)) as f32
}

/// Peak of the Hertz contact force itself (PAN eq. 5, `f = K d^1.5`, `K = (4/3) sqrt(r) E*`):
/// the kinetic energy `m V^2 / 2` of the approach is stored as `(2/5) K d^2.5` at the deepest
/// penetration, so `d_max = (5 m V^2 / (4 K))^(2/5)` and `f_max = K d_max^1.5`. N.
///
/// The engine does not render with this: its half-sine has the peak `pi j / (2 tau)` of PAN
/// eq. 10, so that its area is the impulse. For an elastic collision `f_max` is 17 % higher
/// than that (the true Hertz pulse is fuller than a half-sine of the same duration); the
/// thesis's Table 6.1 uses `f_max / m` as the peak acceleration (see `inspect::table`).
pub fn hertz_peak_force(m_eff: f32, r_eff: f32, e_star: f32, speed: f32) -> f64 {
    let (m, r, e, v) = (m_eff as f64, r_eff as f64, e_star as f64, speed as f64);
    let k = 4.0 / 3.0 * r.sqrt() * e;
    let d_max = (5.0 * m * v * v / (4.0 * k)).powf(0.4);
    k * d_max.powf(1.5)
}

/// The contact of body `a` hitting `b` at normal speed `speed` (m/s) with restitution `e`:
/// impulse j = m_eff (1 + e) V (seed 002 §4, "we simply use (1 + kappa) m v_n"),
/// duration from eq. 7, peak force gamma = pi j / (2 tau) (PAN eq. 10).
pub fn contact(a: &Body, b: &Body, speed: f32, restitution: f32) -> Contact {
    let (m, r, e_star) = effective(a, b);
    let speed = speed.max(1e-9);
    let duration_s = hertz_duration(m, r, e_star, speed);
    let impulse_ns = m * (1.0 + restitution) * speed;
    let peak_force_n = std::f32::consts::PI * impulse_ns / (2.0 * duration_s);
    Contact {
        duration_s,
        impulse_ns,
        peak_force_n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::GrainMaterial;

    #[test]
    fn impulse_is_integral_of_half_sine() {
        let glass = GrainMaterial::GlassBeads1.data().elastic;
        let a = Body::sphere(glass, 1e-3);
        let c = contact(&a, &a, 1.0, 1.0);
        // integral of gamma sin(pi t / tau) over [0, tau] = 2 gamma tau / pi
        let integral = 2.0 * c.peak_force_n * c.duration_s / std::f32::consts::PI;
        assert!((integral / c.impulse_ns - 1.0).abs() < 1e-5);
    }

    #[test]
    fn duration_scales_as_minus_one_fifth_power_of_speed() {
        let glass = GrainMaterial::GlassBeads1.data().elastic;
        let a = Body::sphere(glass, 1e-3);
        let t1 = contact(&a, &Body::rigid(), 1.0, 1.0).duration_s;
        let t32 = contact(&a, &Body::rigid(), 32.0, 1.0).duration_s;
        assert!((t1 / t32 - 2.0).abs() < 1e-4, "{t1} {t32}");
    }

    #[test]
    fn glass_pair_duration_is_tens_of_microseconds() {
        // Thesis Table 6.1 scene: glass spheres a = 1 mm, v0 = 1 mm/s.
        let glass = GrainMaterial::GlassBeads1.data().elastic;
        let a = Body::sphere(glass, 1e-3);
        let c = contact(&a, &a, 1e-3, 1.0);
        assert!(c.duration_s > 15e-6 && c.duration_s < 35e-6, "{}", c.duration_s);
    }
}
