//! The low-frequency reduction of an asset: what the engine evaluates per collision.
//!
//! A grain's contact lasts tens of microseconds; the asset's pulse `h` is a few microseconds
//! and its series `q_k(τ)` (seed 001 eq. 20 and 22) last about the time sound takes to cross
//! the grain. At audio frequencies the response to a contact's acceleration `a(t)` is then
//! given by the first time moments of the series. With seed 001 eq. 18–19 (an acceleration is
//! a sum of pulses ψ(t − jh; h), each of area `h`), the pressure at distance `R` in body-frame
//! direction `r̂` is
//!
//! ```text
//! p(t) = (1/h) Σ_k (1/R^k) ∫ q_k(r̂, τ) a(t' − τ) dτ,            t' = t − R/c
//!      ≈ (1/h) Σ_k (1/R^k) [M0 a(t') − M1 a'(t') + (M2/2) a''(t') − …]
//! ```
//!
//! with `Mn[q] = ∫ τ^n q(τ) dτ`. For a rigid body the `1/R` term has no mean (`M0[q_1] = 0`,
//! the fit's constraint; `fit`), so at the listener's distances (`R` ≫ the grain) three terms
//! carry the sound:
//!
//! - near field: `N(r̂) a(t')/R²`, `N = M0[q_2]/h` (Pa m² per m/s²: the incompressible flow's
//!   dipole, `ρ0 D cosθ` for a translating sphere, seed 002 eq. 16);
//! - dipole far field: `F(r̂) a'(t')/R`, `F = −M1[q_1]/h` (`ρ0 D cosθ / c` for the sphere);
//! - quadrupole far field: `Q(r̂) a''(t')/R`, `Q = M2[q_1]/(2h)`: a spinning grain that is
//!   centrally symmetric (an ellipsoid, a disc, a cube) pushes no net dipole, its far field is
//!   this term.
//!
//! Per degree of freedom, `N` and `F` are dipole patterns (`r̂ · vector`: the l = 1 part of a
//! potential flow's far expansion) and `Q` is a quadratic form `r̂ᵀ S r̂` (l = 0 and 2); each
//! is fitted by least squares over the asset's direction grid with solid-angle weights, and
//! `Reduced::residual` says how much of each pattern the fit leaves out.
//!
//! The moments about `τ = 0` (the pulse centre at the retarded time `t − R/c` measured from the
//! centre of mass). `M2` of a translation also holds the dipole's delay (a dipole pattern);
//! the quadratic fit keeps only its l = 0, 2 parts, as it should.

use crate::asset::{direction, Asset};
use crate::pulse::psi;

/// The reduction of one asset: per degree of freedom (`shape::Motion::ALL`: Tx, Ty, Tz, Rx,
/// Ry, Rz), the near and dipole far-field vectors and the quadrupole tensor, in the body frame.
/// Translations per m/s², rotations per rad/s².
#[derive(Debug, Clone, PartialEq)]
pub struct Reduced {
    /// `N(r̂) = r̂ · near[f]`, Pa m² per unit acceleration (translations: Pa m² s²/m).
    pub near: [[f64; 3]; 6],
    /// `F(r̂) = r̂ · far[f]`, Pa m s per unit acceleration.
    pub far: [[f64; 3]; 6],
    /// `Q(r̂) = r̂ᵀ quad[f] r̂` (symmetric), Pa m s² per unit acceleration.
    pub quad: [[[f64; 3]; 3]; 6],
    /// Weighted rms of what each fit leaves out over its pattern's rms: near, far, quad.
    pub residual: [[f64; 3]; 6],
}

/// `∫ x² ψ(x; 1) dx` (seed 001 eq. 17): the pulse's own second moment in units of its width.
pub fn psi_second_moment() -> f64 {
    // Simpson over [-2, 2], the support; psi is a piecewise cubic, so this is exact to
    // rounding with breakpoints on the nodes
    let n = 4000;
    let step = 4.0 / n as f64;
    let mut sum = 0.0;
    for i in 0..=n {
        let x = -2.0 + i as f64 * step;
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        sum += w * x * x * psi(x, 1.0);
    }
    sum * step / 3.0
}

/// Moments `M0, M1, M2` (s, s², s³ times the coefficients' unit) of `q(τ) = Σ_j c_j ψ(τ − τ_j;
/// Δt)` with `τ_j = (first + j) Δt` (seed 001 eq. 22): `∫ψ(·; Δt) = Δt`, its mean is its centre,
/// its variance `σ² Δt²`.
pub fn series_moments(c: &[f32], first: i64, dt: f64, sigma2: f64) -> [f64; 3] {
    let mut m = [0.0; 3];
    for (j, &cj) in c.iter().enumerate() {
        let tau = (first + j as i64) as f64 * dt;
        let cj = cj as f64 * dt;
        m[0] += cj;
        m[1] += cj * tau;
        m[2] += cj * (tau * tau + sigma2 * dt * dt);
    }
    m
}

/// Solid-angle weights of the asset's grid directions: a band of `dθ` round each θ node (half
/// bands at the poles, whose nodes repeat over φ), split evenly over φ. They sum to 4π.
fn weights(n_theta: usize, n_phi: usize) -> Vec<f64> {
    let dth = std::f64::consts::PI / (n_theta - 1) as f64;
    let mut w = Vec::with_capacity(n_theta * n_phi);
    for i in 0..n_theta {
        let lo = (i as f64 - 0.5).max(0.0) * dth;
        let hi = ((i as f64 + 0.5) * dth).min(std::f64::consts::PI);
        let band = 2.0 * std::f64::consts::PI * (lo.cos() - hi.cos());
        for _ in 0..n_phi {
            w.push(band / n_phi as f64);
        }
    }
    w
}

/// Weighted least squares `min Σ w (y − Σ_b x_b basis_b)²` by the normal equations (at most 6
/// unknowns, well conditioned on the sphere); returns the coefficients and the relative rms
/// residual.
fn fit(basis: &[Vec<f64>], y: &[f64], w: &[f64]) -> (Vec<f64>, f64) {
    let nb = basis.len();
    let mut a = vec![vec![0.0; nb + 1]; nb];
    for r in 0..nb {
        for c in 0..nb {
            a[r][c] = (0..y.len()).map(|i| w[i] * basis[r][i] * basis[c][i]).sum();
        }
        a[r][nb] = (0..y.len()).map(|i| w[i] * basis[r][i] * y[i]).sum();
    }
    // Gauss–Jordan with partial pivoting
    for col in 0..nb {
        let p = (col..nb)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap();
        a.swap(col, p);
        let d = a[col][col];
        for c in col..=nb {
            a[col][c] /= d;
        }
        for r in 0..nb {
            if r != col {
                let f = a[r][col];
                for c in col..=nb {
                    a[r][c] -= f * a[col][c];
                }
            }
        }
    }
    let x: Vec<f64> = (0..nb).map(|r| a[r][nb]).collect();
    let (mut res, mut tot) = (0.0, 0.0);
    for i in 0..y.len() {
        let model: f64 = (0..nb).map(|b| x[b] * basis[b][i]).sum();
        res += w[i] * (y[i] - model).powi(2);
        tot += w[i] * y[i] * y[i];
    }
    let rel = if tot > 0.0 { (res / tot).sqrt() } else { 0.0 };
    (x, rel)
}

impl Reduced {
    /// The reduction of `asset` (module doc).
    pub fn of(asset: &Asset) -> Reduced {
        let h = &asset.header;
        let sigma2 = psi_second_moment();
        let (nt, np) = (h.n_theta, h.n_phi);
        let w = weights(nt, np);
        let dirs: Vec<[f64; 3]> = (0..nt)
            .flat_map(|i| (0..np).map(move |j| direction(i, j, nt, np)))
            .collect();
        let linear: Vec<Vec<f64>> = (0..3).map(|a| dirs.iter().map(|d| d[a]).collect()).collect();
        // r̂ᵀ S r̂ with S symmetric: xx, yy, zz, 2xy, 2xz, 2yz
        let pairs = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];
        let quadratic: Vec<Vec<f64>> = pairs
            .iter()
            .map(|&(a, b)| {
                let f = if a == b { 1.0 } else { 2.0 };
                dirs.iter().map(|d| f * d[a] * d[b]).collect()
            })
            .collect();
        let mut out = Reduced {
            near: [[0.0; 3]; 6],
            far: [[0.0; 3]; 6],
            quad: [[[0.0; 3]; 3]; 6],
            residual: [[0.0; 3]; 6],
        };
        for f in 0..6 {
            let mut near = Vec::with_capacity(dirs.len());
            let mut far = Vec::with_capacity(dirs.len());
            let mut quad = Vec::with_capacity(dirs.len());
            for i in 0..nt {
                for j in 0..np {
                    let m1 = series_moments(asset.coefficients(f, i, j, 0), h.first, h.dt_s, sigma2);
                    let m2 = series_moments(asset.coefficients(f, i, j, 1), h.first, h.dt_s, sigma2);
                    near.push(m2[0] / h.pulse_h_s);
                    far.push(-m1[1] / h.pulse_h_s);
                    quad.push(m1[2] / (2.0 * h.pulse_h_s));
                }
            }
            let (n, rn) = fit(&linear, &near, &w);
            let (fa, rf) = fit(&linear, &far, &w);
            let (q, rq) = fit(&quadratic, &quad, &w);
            out.near[f] = [n[0], n[1], n[2]];
            out.far[f] = [fa[0], fa[1], fa[2]];
            for (p, &(a, b)) in pairs.iter().enumerate() {
                out.quad[f][a][b] = q[p];
                out.quad[f][b][a] = q[p];
            }
            out.residual[f] = [rn, rf, rq];
        }
        out
    }
}

/// The engine's shape table (`engine/src/shape_table.rs`), generated from the assets: per
/// shape, the asset's mass properties and its `Reduced` fields, each divided by the power of
/// the equivalent-volume diameter `d` it scales with (module `asset`'s scaling law: a grain `s`
/// times larger has `s³` times the translational near and dipole far fields, `s⁴` the
/// rotational ones and `s⁵` the rotational quadrupole), so the engine scales them to any grain
/// size. `assets` lists `(kind, asset)` in the engine's order (`ShapeKind::ALL`).
pub fn engine_table(assets: &[(crate::shape::ShapeKind, Asset)]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let v3 = |v: [f64; 3], k: f64| format!("[{:?}, {:?}, {:?}]", v[0] / k, v[1] / k, v[2] / k);
    let m3 = |m: [[f64; 3]; 3], k: f64| format!("[{}, {}, {}]", v3(m[0], k), v3(m[1], k), v3(m[2], k));
    writeln!(
        s,
        "// Generated from assets/grains/*.grain by `cargo run --release -p granary-grains -- \
         --engine-table engine/src/shape_table.rs`\n// (granary_grains::moments::engine_table); \
         do not edit. grains/tests/engine_table.rs checks it against the assets.\n\n\
         use crate::shape::ShapeData;\n\n/// The shapes, in `Shape::ALL`'s order.\n\
         pub const SHAPES: [ShapeData; {}] = [",
        assets.len()
    )
    .unwrap();
    for (kind, asset) in assets {
        let h = &asset.header;
        let r = Reduced::of(asset);
        let d = h.diameter_m;
        let (d3, d4, d5) = (d.powi(3), d.powi(4), d.powi(5));
        writeln!(s, "    ShapeData {{").unwrap();
        writeln!(s, "        name: {:?},", kind.name()).unwrap();
        writeln!(s, "        volume_per_d3: {:?},", h.mass.volume_m3 / d3).unwrap();
        writeln!(s, "        inertia_per_d5: {},", m3(h.mass.inertia_m5, d5)).unwrap();
        writeln!(s, "        dipole_per_d3: {},", m3(h.dipole_m3, d3)).unwrap();
        let rows = |x: &[[f64; 3]; 6], lo: usize, k: f64| m3([x[lo], x[lo + 1], x[lo + 2]], k);
        writeln!(s, "        near_t: {},", rows(&r.near, 0, d3)).unwrap();
        writeln!(s, "        near_r: {},", rows(&r.near, 3, d4)).unwrap();
        writeln!(s, "        far_t: {},", rows(&r.far, 0, d3)).unwrap();
        writeln!(s, "        far_r: {},", rows(&r.far, 3, d4)).unwrap();
        writeln!(
            s,
            "        quad_r: [{}, {}, {}],",
            m3(r.quad[3], d5),
            m3(r.quad[4], d5),
            m3(r.quad[5], d5)
        )
        .unwrap();
        writeln!(s, "    }},").unwrap();
    }
    writeln!(s, "];").unwrap();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_cover_the_sphere() {
        let w = weights(11, 20);
        let total: f64 = w.iter().sum();
        assert!((total - 4.0 * std::f64::consts::PI).abs() < 1e-12, "{total}");
    }

    #[test]
    fn psi_moments() {
        // the Mitchell–Netravali cubic B = 2/3, C = 1/6: variance B/2... checked numerically
        // against a fine midpoint sum
        let n = 400_000;
        let step = 4.0 / n as f64;
        let mid: f64 = (0..n)
            .map(|i| {
                let x = -2.0 + (i as f64 + 0.5) * step;
                x * x * psi(x, 1.0) * step
            })
            .sum();
        assert!(
            (psi_second_moment() - mid).abs() < 1e-9,
            "{} {mid}",
            psi_second_moment()
        );
    }

    #[test]
    fn moments_of_a_single_pulse() {
        // one coefficient of 1 at tau = 3 dt: area dt, mean 3 dt, second moment (9 + s2) dt^3
        let s2 = psi_second_moment();
        let m = series_moments(&[0.0, 0.0, 1.0], 1, 0.5, s2);
        assert!((m[0] - 0.5).abs() < 1e-15);
        assert!((m[1] - 0.5 * 1.5).abs() < 1e-15);
        assert!((m[2] - 0.5 * (2.25 + s2 * 0.25)).abs() < 1e-15);
    }
}
