//! The audio-band reduction of an asset: what the engine evaluates per collision.
//!
//! A grain's contact lasts tens of microseconds; the asset's pulse `h` is a few microseconds
//! and its series `q_k(τ)` (seed 001 eq. 20 and 22) last about the time sound takes to cross
//! the grain. With seed 001 eq. 18–19 (an acceleration is a sum of pulses ψ(t − jh; h), each
//! of area `h`), the pressure at distance `R` in body-frame direction `r̂` for an acceleration
//! `a(t)` smooth on the scale of `h` is
//!
//! ```text
//! p(t) = (1/h) Σ_k (1/R^k) ∫ q_k(r̂, τ) a(t' − τ) dτ,     t' = t − R/c (R from the centre of mass)
//! ```
//!
//! and each convolution, for a contact whose spectrum lies in the audio band, is a short
//! Taylor series in the derivatives of `a`. The engine keeps four terms per degree of freedom
//! (and a fifth per rotation, below):
//!
//! - near field `N(r̂) a(t')/R²` (the incompressible flow's dipole: `ρ0 D cosθ` for a
//!   translating sphere, seed 002 eq. 16);
//! - its derivative `N1(r̂) a'(t')/R²` (a spin's intermediate field, the dipole's delay);
//! - the dipole far field `F(r̂) a'(t')/R` (`ρ0 D cosθ / c` for the sphere);
//! - the second-order far field `Q(r̂) a''(t')/R`: a spinning, centrally symmetric grain's
//!   quadrupole, and a translating grain's own extent (its near side is heard first).
//!
//! They are not the raw moments `∫ τ^n q(τ) dτ`: the fitted series carry a faint tail over
//! tens of microseconds, which the second moment weights by τ² (a spin's quadrupole came out
//! three times too large that way). Instead, per direction, the series are driven by a
//! reference contact (a raised cosine of `REFERENCE_CONTACT_S`, whose spectrum fills the audio
//! band) and the terms fitted to the response by least squares in time (`y_1 ≈ F a' + Q a''`,
//! `y_2 ≈ N a + N1 a'`); then over directions, `N` and `F` as dipole patterns `r̂ · v` (a
//! potential flow's far expansion), `N1` and `Q` as the general quadratic
//! `v · (x, y, z, x², y², z², xy, xz, yz)` (l ≤ 2), with solid-angle weights.
//!
//! A fifth term carries the assets' third radial term `q_3` for the spins: a spin's static
//! near field `N3(r̂) a(t')/R³` with `N3 = −ρ0 r̂ᵀ M r̂` (`M` the header's
//! `spin_quadrupole_m5`, measured in the solver, `fdtd::spin_quadrupoles`; Lamb's rotating
//! ellipsoid, `reference::ellipsoid_spin_quadrupole`: the flow's potential `Ω r̂ᵀMr̂/r³`, its
//! pressure `−ρ0 ∂φ/∂t`). It is taken from `M`, not fitted: `N1` and `Q` are the same `M`
//! radiated as an l = 2 wave (`−ρ0 r̂ᵀMr̂/c` and `/(3c²)`, grains/tests/engine_table.rs), and
//! at 0.1 m this term equals the spin's far field at 950 Hz (docs/grains.md, "At run time").
//! A translation's `q_3` (a non-symmetric grain's static quadrupole under a push) has no
//! term. `Reduced::residual` says what each fit leaves out; grains/tests/engine_table.rs
//! checks the result against the assets' own series for other contacts, distances and
//! directions.

use crate::asset::{direction, Asset};

/// Duration of the reference contact the terms are fitted to, s: a raised cosine whose main
/// lobe reaches 25 kHz (rice's contacts last 15–33 µs, a coffee bean's up to 100 µs).
pub const REFERENCE_CONTACT_S: f64 = 80e-6;

/// A smooth contact's acceleration: `sin²(π t/τ)` on `[0, τ]` (unit peak), zero outside.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RaisedCosine {
    /// τ, s.
    pub duration_s: f64,
}

impl RaisedCosine {
    /// `[a(t), a'(t), a''(t)]` (per s⁰, s⁻¹, s⁻²).
    pub fn derivatives(&self, t: f64) -> [f64; 3] {
        let tau = self.duration_s;
        if !(0.0..=tau).contains(&t) {
            return [0.0; 3];
        }
        let w = std::f64::consts::PI / tau;
        [
            (w * t).sin().powi(2),
            w * (2.0 * w * t).sin(),
            2.0 * w * w * (2.0 * w * t).cos(),
        ]
    }
}

/// The asset's own pressure (Pa per unit acceleration) of field `f` at body-frame point `x`
/// and time `t` for the acceleration `contact` (PAN eq. 18–19: `a(t) ≈ Σ_j a(j h) ψ(t − j h;
/// h)`, each pulse's field by `Asset::pressure`, eq. 20 and 22).
pub fn asset_pressure(asset: &Asset, f: usize, x: [f64; 3], contact: &RaisedCosine, t: f64) -> f64 {
    let h = asset.header.pulse_h_s;
    let last = ((contact.duration_s + 2.0 * h) / h).ceil() as i64;
    (-2..=last)
        .map(|j| contact.derivatives(j as f64 * h)[0] * asset.pressure(f, x, t - j as f64 * h))
        .sum()
}

/// The basis of the quadratic patterns: `(x, y, z, x², y², z², xy, xz, yz)` of the unit
/// direction (l = 0 through the trace, 1 and 2).
pub fn quadratic_basis(d: [f64; 3]) -> [f64; 9] {
    [
        d[0],
        d[1],
        d[2],
        d[0] * d[0],
        d[1] * d[1],
        d[2] * d[2],
        d[0] * d[1],
        d[0] * d[2],
        d[1] * d[2],
    ]
}

/// The reduction of one asset: per degree of freedom (`shape::Motion::ALL`: Tx, Ty, Tz, Rx,
/// Ry, Rz), body frame. Translations per m/s², rotations per rad/s².
#[derive(Debug, Clone, PartialEq)]
pub struct Reduced {
    /// `N(r̂) = r̂ · near[f]`, Pa m² per unit acceleration.
    pub near: [[f64; 3]; 6],
    /// `N1(r̂) = quadratic_basis(r̂) · near_d[f]`, Pa m² s.
    pub near_d: [[f64; 9]; 6],
    /// `F(r̂) = r̂ · far[f]`, Pa m s.
    pub far: [[f64; 3]; 6],
    /// `Q(r̂) = quadratic_basis(r̂) · quad[f]`, Pa m s².
    pub quad: [[f64; 9]; 6],
    /// A spin's static near field `N3(r̂) = quadratic_basis(r̂) · near3[f] = −ρ0 r̂ᵀ M r̂`
    /// (`M` the header's `spin_quadrupole_m5`), Pa m³ per rad/s²; zero for the translations.
    pub near3: [[f64; 9]; 6],
    /// Relative rms of what the fits leave out, over the directions (solid-angle weights):
    /// in time (far, near), then over directions (N, N1, F, Q).
    pub residual: [[f64; 6]; 6],
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
    /// The engine's pressure (Pa per unit acceleration) of field `f` at distance `r` (m) in
    /// body-frame direction `d` (unit), for an acceleration whose value and derivatives at the
    /// retarded time `t − r/c` are `a` (`[a, a', a'']`): the module doc's five terms.
    pub fn pressure(&self, f: usize, d: [f64; 3], r: f64, a: [f64; 3]) -> f64 {
        let dot = |v: &[f64], w: &[f64]| v.iter().zip(w).map(|(p, q)| p * q).sum::<f64>();
        let b = quadratic_basis(d);
        dot(&self.near3[f], &b) * a[0] / (r * r * r)
            + dot(&self.near[f], &d) * a[0] / (r * r)
            + dot(&self.near_d[f], &b) * a[1] / (r * r)
            + dot(&self.far[f], &d) * a[1] / r
            + dot(&self.quad[f], &b) * a[2] / r
    }

    /// The reduction of `asset` (module doc).
    pub fn of(asset: &Asset) -> Reduced {
        let h = &asset.header;
        let (nt, np) = (h.n_theta, h.n_phi);
        let w = weights(nt, np);
        let dirs: Vec<[f64; 3]> = (0..nt)
            .flat_map(|i| (0..np).map(move |j| direction(i, j, nt, np)))
            .collect();
        let linear: Vec<Vec<f64>> = (0..3).map(|a| dirs.iter().map(|d| d[a]).collect()).collect();
        let quadratic: Vec<Vec<f64>> = (0..9)
            .map(|b| dirs.iter().map(|d| quadratic_basis(*d)[b]).collect())
            .collect();
        // the reference contact
        let contact = RaisedCosine {
            duration_s: REFERENCE_CONTACT_S,
        };
        let tau = contact.duration_s;
        let a = |t: f64| contact.derivatives(t)[0];
        let da = |t: f64| contact.derivatives(t)[1];
        let dda = |t: f64| contact.derivatives(t)[2];
        // the response's times: from the series' first coefficient to the contact's end
        // plus the series' length, every quarter coefficient interval
        let first = h.first as f64 * h.dt_s;
        let last = (h.first + h.coefficients as i64) as f64 * h.dt_s;
        let step = 0.25 * h.dt_s;
        let times: Vec<f64> = (0..)
            .map(|i| first + i as f64 * step)
            .take_while(|t| *t <= tau + last)
            .collect();
        let taus: Vec<f64> = (0..h.coefficients)
            .map(|j| (h.first + j as i64) as f64 * h.dt_s)
            .collect();
        // y = (dt/h) Σ_j c_j a(t - tau_j): each coefficient's psi(.; dt) is narrow against a
        let response = |c: &[f32]| -> Vec<f64> {
            times
                .iter()
                .map(|t| c.iter().zip(&taus).map(|(cj, tj)| *cj as f64 * a(t - tj)).sum::<f64>() * h.dt_s / h.pulse_h_s)
                .collect()
        };
        let basis_of = |f: &dyn Fn(f64) -> f64| -> Vec<f64> { times.iter().map(|t| f(*t)).collect() };
        let (ba, bda, bdda) = (basis_of(&a), basis_of(&da), basis_of(&dda));
        let unit = vec![1.0; times.len()];
        let mut out = Reduced {
            near: [[0.0; 3]; 6],
            near_d: [[0.0; 9]; 6],
            far: [[0.0; 3]; 6],
            quad: [[0.0; 9]; 6],
            near3: [[0.0; 9]; 6],
            residual: [[0.0; 6]; 6],
        };
        for (m, row) in h.spin_quadrupole_m5.iter().zip(&mut out.near3[3..]) {
            *row = near3_of(m);
        }
        for f in 0..6 {
            let (mut n0, mut n1, mut f1, mut q2) = (vec![], vec![], vec![], vec![]);
            let (mut res_far, mut res_near, mut tot_far, mut tot_near) = (0.0, 0.0, 0.0, 0.0);
            for i in 0..nt {
                for j in 0..np {
                    let wd = w[i * np + j];
                    let y1 = response(asset.coefficients(f, i, j, 0));
                    let y2 = response(asset.coefficients(f, i, j, 1));
                    let (c1, r1) = fit(&[bda.clone(), bdda.clone()], &y1, &unit);
                    let (c2, r2) = fit(&[ba.clone(), bda.clone()], &y2, &unit);
                    let e1: f64 = y1.iter().map(|y| y * y).sum();
                    let e2: f64 = y2.iter().map(|y| y * y).sum();
                    res_far += wd * r1 * r1 * e1;
                    tot_far += wd * e1;
                    res_near += wd * r2 * r2 * e2;
                    tot_near += wd * e2;
                    f1.push(c1[0]);
                    q2.push(c1[1]);
                    n0.push(c2[0]);
                    n1.push(c2[1]);
                }
            }
            let rel = |r: f64, t: f64| if t > 0.0 { (r / t).sqrt() } else { 0.0 };
            let (n, rn) = fit(&linear, &n0, &w);
            let (nd, rnd) = fit(&quadratic, &n1, &w);
            let (fa, rf) = fit(&linear, &f1, &w);
            let (q, rq) = fit(&quadratic, &q2, &w);
            out.near[f] = [n[0], n[1], n[2]];
            out.far[f] = [fa[0], fa[1], fa[2]];
            out.near_d[f] = std::array::from_fn(|b| nd[b]);
            out.quad[f] = std::array::from_fn(|b| q[b]);
            out.residual[f] = [rel(res_far, tot_far), rel(res_near, tot_near), rn, rnd, rf, rq];
        }
        out
    }
}

/// `N3` of a static spin quadrupole `M` (m⁵, symmetric) in the basis `quadratic_basis`:
/// `−ρ0 r̂ᵀ M r̂ = −ρ0 (M_xx x² + M_yy y² + M_zz z² + 2 M_xy xy + 2 M_xz xz + 2 M_yz yz)`.
pub fn near3_of(m: &[[f64; 3]; 3]) -> [f64; 9] {
    let k = -crate::AIR_DENSITY;
    [
        0.0,
        0.0,
        0.0,
        k * m[0][0],
        k * m[1][1],
        k * m[2][2],
        k * (m[0][1] + m[1][0]),
        k * (m[0][2] + m[2][0]),
        k * (m[1][2] + m[2][1]),
    ]
}

/// The engine's shape table (`engine/src/derived/shape/table.rs`), generated from the assets: per
/// shape, the asset's mass properties and its `Reduced` fields, each divided by the power of
/// the equivalent-volume diameter `d` it scales with (module `asset`'s scaling law: a grain `s`
/// times larger, driven `s` times longer, has `s` times the pressure at `s` times the distance
/// per m/s², `s²` per rad/s²; so `N` and `F` scale as `d³` for a translation and `d⁴` for a
/// rotation, `N1` and `Q`, one derivative more, as `d⁴` and `d⁵`, and a spin's `N3`, one power
/// of `R` more, as `d⁵` like `M`), so the engine scales them to any grain size. `assets` lists `(kind, asset)` in the engine's order (`ShapeKind::ALL`).
pub fn engine_table(assets: &[(crate::shape::ShapeKind, Asset)]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let v3 = |v: [f64; 3], k: f64| format!("[{:?}, {:?}, {:?}]", v[0] / k, v[1] / k, v[2] / k);
    let m3 = |m: [[f64; 3]; 3], k: f64| format!("[{}, {}, {}]", v3(m[0], k), v3(m[1], k), v3(m[2], k));
    writeln!(
        s,
        "// Generated from assets/grains/*.grain by `cargo run --release -p granary-grains -- \
         --engine-table engine/src/derived/shape/table.rs`\n// (granary_grains::moments::engine_table); \
         do not edit. grains/tests/engine_table.rs checks it against the assets.\n\n\
         use super::ShapeData;\n\n/// The shapes, in `Shape::ALL`'s order.\n\
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
        let v9 = |v: [f64; 9], k: f64| format!("[{}]", v.map(|x| format!("{:?}", x / k)).join(", "));
        let rows9 = |x: &[[f64; 9]; 6], lo: usize, k: f64| {
            format!("[{}, {}, {}]", v9(x[lo], k), v9(x[lo + 1], k), v9(x[lo + 2], k))
        };
        writeln!(s, "        near_t: {},", rows(&r.near, 0, d3)).unwrap();
        writeln!(s, "        near_r: {},", rows(&r.near, 3, d4)).unwrap();
        writeln!(s, "        near_d_t: {},", rows9(&r.near_d, 0, d4)).unwrap();
        writeln!(s, "        near_d_r: {},", rows9(&r.near_d, 3, d5)).unwrap();
        writeln!(s, "        far_t: {},", rows(&r.far, 0, d3)).unwrap();
        writeln!(s, "        far_r: {},", rows(&r.far, 3, d4)).unwrap();
        writeln!(s, "        quad_t: {},", rows9(&r.quad, 0, d4)).unwrap();
        writeln!(s, "        quad_r: {},", rows9(&r.quad, 3, d5)).unwrap();
        writeln!(s, "        near3_r: {},", rows9(&r.near3, 3, d5)).unwrap();
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
}
