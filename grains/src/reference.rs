//! Closed forms the solver is validated against: the rigid sphere translating with any
//! acceleration (the engine's `accel_noise` transfer function, evaluated here in the time
//! domain by our own code), and the dipole coefficient of a translating ellipsoid (Lamb).
//!
//! Rigid sphere of radius `a`, acceleration `A(s)` along the polar axis (Laplace variable `s`),
//! from the dipole solution `p = C cos(theta) (1 + s r/c) e^{-s r/c} / r^2` and `dp/dr =
//! -rho0 s v_r` with `v_r = U cos(theta)` at `r = a` (engine/src/impact/accel_noise.rs, re-derived):
//!
//! ```text
//! p(r, theta, s) = rho0 a^3 cos(theta) / (2 r^2) * (1 + s r / c) * B(s) A(s) * exp(-s (r - a) / c)
//! B(s) = 2 l^2 / (s^2 + 2 l s + 2 l^2),  l = c / a
//! ```
//!
//! so with `u = B * A` (the state-space ODE `u'' + 2 l u' + 2 l^2 u = 2 l^2 A`) the pressure is
//! `p(t) = rho0 a^3 cos(theta) / (2 r^2) (u + (r/c) u')(t - (r - a)/c)`, exact at every `ka`.
//! Its far field is `rho0 D cos(theta) u'(t - r/c + a/c) / (c r)` with `D = a^3 / 2` (seed 002
//! eq. 16), its near field `rho0 D cos(theta) A / r^2`.

use crate::pulse::psi;
use crate::{AIR_DENSITY, SPEED_OF_SOUND};

/// Pressure (Pa) at distance `r` (m, at least `a`) and polar angle `acos(cos_theta)` from a
/// rigid sphere of radius `a` (m) whose acceleration along the axis is `psi(t; h)` (m/s^2,
/// seed 001 eq. 17), at times `t0 + i dt` (s, t = 0 the pulse centre) for `i in 0..n`.
/// Integrates the ODE for `u` by RK4 with at least 200 steps per `h` and per `a/c` from the
/// start of the pulse and interpolates the fine series with a cubic (Catmull-Rom) kernel.
pub fn sphere_pressure(a: f64, r: f64, cos_theta: f64, h: f64, t0: f64, dt: f64, n: usize) -> Vec<f64> {
    let c = SPEED_OF_SOUND;
    let l = c / a;
    let k = AIR_DENSITY * a.powi(3) * cos_theta / (2.0 * r * r);
    let step = (h / 200.0).min(1.0 / l / 200.0);
    let start = -2.0 * h;
    let delay = (r - a) / c;
    // up to the last time asked for, t0 + (n - 1) dt (the interpolation's neighbours are the
    // 4 fine steps added below)
    let t_end = t0 + dt * n.saturating_sub(1) as f64 - delay;
    let fine = ((t_end - start) / step).ceil().max(0.0) as usize + 4;
    let deriv = |t: f64, u: f64, v: f64| (v, 2.0 * l * l * (psi(t, h) - u) - 2.0 * l * v);
    let mut q = Vec::with_capacity(fine);
    let (mut u, mut v) = (0.0f64, 0.0f64);
    for j in 0..fine {
        q.push(k * (u + r / c * v));
        let t = start + j as f64 * step;
        let (k1u, k1v) = deriv(t, u, v);
        let (k2u, k2v) = deriv(t + step / 2.0, u + step / 2.0 * k1u, v + step / 2.0 * k1v);
        let (k3u, k3v) = deriv(t + step / 2.0, u + step / 2.0 * k2u, v + step / 2.0 * k2v);
        let (k4u, k4v) = deriv(t + step, u + step * k3u, v + step * k3v);
        u += step / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u);
        v += step / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    (0..n)
        .map(|i| {
            let x = (t0 + i as f64 * dt - delay - start) / step;
            if x <= 0.0 {
                return 0.0;
            }
            let j = x.floor() as usize;
            let f = x - j as f64;
            let at = |m: isize| q.get((j as isize + m).max(0) as usize).copied().unwrap_or(0.0);
            let (p0, p1, p2, p3) = (at(-1), at(0), at(1), at(2));
            // Catmull-Rom
            p1 + 0.5 * f * (p2 - p0 + f * (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3 + f * (3.0 * (p1 - p2) + p3 - p0)))
        })
        .collect()
}

/// Lamb's integrals `alpha0, beta0, gamma0` of an ellipsoid with semi-axes `(a, b, c)`
/// (Lamb, *Hydrodynamics*, §114): `alpha0 = a b c int_0^inf dl / ((a^2 + l) Delta)`, `Delta =
/// sqrt((a^2+l)(b^2+l)(c^2+l))`, and likewise with `b`, `c`. Their sum is 2; a sphere has 2/3
/// each. Evaluated by 64-point Gauss–Legendre in `w = 1/sqrt(1 + l / m^2)` over (0, 1] (`m` the
/// largest semi-axis), in which the integrand is smooth and bounded.
pub fn lamb_integrals(axes: [f64; 3]) -> [f64; 3] {
    let m = axes[0].max(axes[1]).max(axes[2]);
    // l = m^2 (1/w^2 - 1), dl = -2 m^2 / w^3 dw, w from 1 (l = 0) to 0 (l = inf)
    let mut out = [0.0; 3];
    let abc = axes[0] * axes[1] * axes[2];
    for (x, weight) in crate::fdtd::gauss_legendre(64) {
        // Gauss–Legendre in w over (0, 1)
        let w = 0.5 * (x + 1.0);
        let l = m * m * (1.0 / (w * w) - 1.0);
        let dl = 2.0 * m * m / (w * w * w) * 0.5 * weight;
        let e = axes.map(|x| x * x + l);
        let delta = (e[0] * e[1] * e[2]).sqrt();
        for d in 0..3 {
            out[d] += abc * dl / (e[d] * delta);
        }
    }
    out
}

/// Low-frequency dipole coefficient `D` (m^3) of an ellipsoid translating along its semi-axis
/// `axis` (0, 1, 2): far field `p = rho0 D cos(theta) (da/dt)(t - r/c) / (c r)`, near field
/// `rho0 D cos(theta) a / r^2`.
///
/// The incompressible flow outside a translating body has the far potential `phi = -D U
/// cos(theta) / r^2`; Landau & Lifshitz (*Fluid Mechanics* §11) relate its dipole moment to
/// the added mass `m'`: `4 pi rho0 D = m' + rho0 V`. With Lamb's (§115) `m' = alpha0 / (2 -
/// alpha0) rho0 V` along x: `D = V / (4 pi) (alpha0 / (2 - alpha0) + 1) = V / (2 pi (2 -
/// alpha0))`. A sphere (`alpha0 = 2/3`, `V = 4/3 pi a^3`) gives `D = a^3 / 2`, seed 002 eq. 16.
pub fn ellipsoid_dipole(axes: [f64; 3], axis: usize) -> f64 {
    let alpha = lamb_integrals(axes)[axis];
    let v = 4.0 / 3.0 * std::f64::consts::PI * axes[0] * axes[1] * axes[2];
    v / (2.0 * std::f64::consts::PI * (2.0 - alpha))
}

/// `chi(lambda) = int_lambda^inf du / ((a_j^2 + u) (a_k^2 + u) Delta(u))` (m^-5) of an
/// ellipsoid with semi-axes `axes`, `Delta = sqrt((a^2+u)(b^2+u)(c^2+u))`: the ellipsoidal
/// harmonic of Lamb, *Hydrodynamics* §115, that multiplies `x_j x_k` in the potential of a
/// rotating ellipsoid. 64-point Gauss–Legendre in `w = 1/sqrt(1 + (u - lambda) / m^2)`, `m^2 =
/// lambda + ` the largest squared semi-axis, as `lamb_integrals`.
pub fn ellipsoid_chi(axes: [f64; 3], j: usize, k: usize, lambda: f64) -> f64 {
    let m2 = lambda + axes.iter().fold(0.0f64, |m, x| m.max(x * x));
    let mut out = 0.0;
    for (x, weight) in crate::fdtd::gauss_legendre(64) {
        let w = 0.5 * (x + 1.0);
        let u = lambda + m2 * (1.0 / (w * w) - 1.0);
        let du = 2.0 * m2 / (w * w * w) * 0.5 * weight;
        let e = axes.map(|x| x * x + u);
        out += du / (e[j] * e[k] * (e[0] * e[1] * e[2]).sqrt());
    }
    out
}

/// The constant `C` (m^5 per rad/s) of the incompressible flow round an ellipsoid with
/// semi-axes `axes` rotating about its semi-axis `axis` (i) at unit angular velocity:
/// `phi = C x_j x_k chi(lambda)` with `(i, j, k)` cyclic, `chi` as `ellipsoid_chi` and
/// `lambda` the confocal coordinate of the point.
///
/// Derived here (the rotating case of Lamb, *Hydrodynamics* §115, which prints it as
/// `-(b^2 - c^2)^2 abc / (2 (b^2 - c^2) + (b^2 + c^2)(beta0 - gamma0))`): `x_j x_k chi` is
/// harmonic outside the ellipsoid; on its surface (`lambda = 0`, outward normal `N = (x/a^2,
/// y/b^2, z/c^2)`, `grad lambda . N = 2`, `chi'(0) = -1/(a_j^2 a_k^2 abc)`) the normal
/// derivative is `C x_j x_k (chi(0) (a_j^2 + a_k^2) - 2/(abc)) / (a_j^2 a_k^2)`; the rigid
/// rotation's normal velocity is `(e_i x r) . N = x_j x_k (a_j^2 - a_k^2) / (a_j^2 a_k^2)`;
/// equal when `C = (a_j^2 - a_k^2) / (chi(0) (a_j^2 + a_k^2) - 2/(abc))`. (With `chi(0) =
/// (gamma0 - beta0) / (abc (b^2 - c^2))` for i = x this is Lamb's form.) A body of revolution
/// spun about its axis (`a_j = a_k`) has `C = 0`: it moves no air.
pub fn ellipsoid_rotation_constant(axes: [f64; 3], axis: usize) -> f64 {
    let (j, k) = ((axis + 1) % 3, (axis + 2) % 3);
    let (aj2, ak2) = (axes[j] * axes[j], axes[k] * axes[k]);
    let abc = axes[0] * axes[1] * axes[2];
    (aj2 - ak2) / (ellipsoid_chi(axes, j, k, 0.0) * (aj2 + ak2) - 2.0 / abc)
}

/// Static spin quadrupole `M` (m^5) of an ellipsoid rotating about its semi-axis `axis` (i):
/// the far potential per unit angular velocity is `phi = r^T M r / r^5` with `M` symmetric,
/// traceless, and here only `M_jk = M_kj` non-zero (`(i, j, k)` cyclic); returns `M_jk`.
/// From `ellipsoid_rotation_constant`: `chi(lambda) -> (2/5) r^-5` far away (`lambda -> r^2`),
/// so `phi -> (2C/5) x_j x_k / r^5` and `M_jk = C/5`. The pressure follows as for the dipole:
/// `p = -rho0 dphi/dt`, near field `-rho0 r^T M r alpha(t) / r^5` (alpha the angular
/// acceleration; `fdtd::spin_quadrupoles` measures it so).
pub fn ellipsoid_spin_quadrupole(axes: [f64; 3], axis: usize) -> f64 {
    ellipsoid_rotation_constant(axes, axis) / 5.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lamb_integrals_of_a_sphere_and_their_sum() {
        let s = lamb_integrals([1e-3; 3]);
        for x in s {
            assert!((x - 2.0 / 3.0).abs() < 1e-5, "{x}");
        }
        assert!((ellipsoid_dipole([2e-3; 3], 0) / 4e-9 - 1.0).abs() < 1e-5);
        let e = lamb_integrals([4e-3, 1.5e-3, 1e-3]);
        assert!((e.iter().sum::<f64>() - 2.0).abs() < 1e-4, "{e:?}");
        // prolate spheroid, closed form (Lamb §105): alpha0 = 2 (1 - e^2)/e^3 (atanh e - e)
        let (a, b) = (3.5, 1.0);
        let ecc = (1.0f64 - b * b / (a * a)).sqrt();
        let want = 2.0 * (1.0 - ecc * ecc) / ecc.powi(3) * (ecc.atanh() - ecc);
        let got = lamb_integrals([a, b, b])[0];
        assert!((got / want - 1.0).abs() < 1e-4, "{got} {want}");
    }

    #[test]
    fn sphere_pressure_has_the_near_field_limit() {
        // a long pulse (h >> a/c): p -> rho0 a^3 cos(theta) psi / (2 r^2) at the near field
        let (a, r, h) = (1e-3, 2e-3, 200e-6);
        let p = sphere_pressure(a, r, 0.5, h, 0.0, 1.0, 1);
        let want = AIR_DENSITY * a.powi(3) * 0.5 * psi(0.0, h) / (2.0 * r * r);
        assert!((p[0] / want - 1.0).abs() < 0.01, "{} {want}", p[0]);
    }

    #[test]
    fn rotating_ellipsoid_potential_meets_the_boundary_condition() {
        // the derivation of `ellipsoid_rotation_constant`, checked numerically: on the surface
        // of a triaxial ellipsoid the normal derivative of phi = C x_j x_k chi(lambda(x))
        // (central differences across the surface) equals the rigid rotation's (e_i x r) . n
        let axes = [3e-3, 1.6e-3, 1.1e-3];
        let lambda_of = |x: [f64; 3]| {
            // sum x^2 / (a^2 + lambda) = 1, decreasing in lambda: bisection
            let f = |l: f64| (0..3).map(|m| x[m] * x[m] / (axes[m] * axes[m] + l)).sum::<f64>() - 1.0;
            let (mut lo, mut hi) = (-axes[2] * axes[2] * 0.999, 1.0);
            for _ in 0..200 {
                let mid = 0.5 * (lo + hi);
                if f(mid) > 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            0.5 * (lo + hi)
        };
        for axis in 0..3 {
            let (j, k) = ((axis + 1) % 3, (axis + 2) % 3);
            let c = ellipsoid_rotation_constant(axes, axis);
            let phi = |x: [f64; 3]| c * x[j] * x[k] * ellipsoid_chi(axes, j, k, lambda_of(x));
            for (th, ph) in [(0.7f64, 0.4f64), (1.2, 2.0), (2.2, -0.9), (1.0, 4.0)] {
                let u = [th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()];
                let x = [axes[0] * u[0], axes[1] * u[1], axes[2] * u[2]];
                let g = [
                    x[0] / (axes[0] * axes[0]),
                    x[1] / (axes[1] * axes[1]),
                    x[2] / (axes[2] * axes[2]),
                ];
                let gn = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
                let n = g.map(|v| v / gn);
                // one-sided difference outward (the potential lives outside), second order
                let e = 1e-6;
                let at = |s: f64| phi([x[0] + s * n[0], x[1] + s * n[1], x[2] + s * n[2]]);
                let dphi = (-3.0 * at(0.0) + 4.0 * at(e) - at(2.0 * e)) / (2.0 * e);
                let v = crate::fdtd::Motion::Rotation(axis).normal_acceleration(x, n);
                assert!(
                    (dphi - v).abs() < 1e-4 * v.abs().max(1e-4),
                    "axis {axis}: {dphi} vs {v}"
                );
            }
        }
        // a body of revolution spun about its axis moves no air; a sphere not at all
        assert!(ellipsoid_spin_quadrupole([3e-3, 1e-3, 1e-3], 0).abs() < 1e-30);
        assert!(ellipsoid_spin_quadrupole([1e-3; 3], 2).abs() < 1e-30);
    }
}
