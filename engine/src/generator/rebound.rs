//! Where a grain's rebounds reach the cup's wall: the hand model's wall hits (`cell_pdf`,
//! `Cell::WallRing`), from where the grains land and how far they rebound.
//!
//! A grain lands on the bare floor (or the pile top) at a point ρR from the axis of a wall of
//! radius R and rebounds; its k-th rebound leaves at e^k v (e the restitution, v the impact
//! speed) and reaches, in a random horizontal direction θ, about ℓ_k = κ (e^k v)² / g before
//! it lands again — a ballistic range v²/g at 45°, taken down by κ for the energy a landing
//! on grains and their friction take. It hits the wall if the wall is nearer, d(θ) from the
//! landing point along θ, with the chance exp(−d(θ)/ℓ_k); so a grain landing there makes
//!
//!   W = Σ_k (1/π) ∫₀^π exp(−d(θ)/ℓ_k) dθ,   d(θ) = R (−ρ cos θ + √(1 − ρ² sin² θ)),
//!
//! wall hits (the chord from an inner point of a circle to its edge), over the landing disc,
//! at heights above the bed spread exponentially with the scale η ℓ_k.
//!
//! κ and η are fitted to the collision databank (`assets/bank/bank.json`, 2 mm grains:
//! `granary-dem`'s rigid-body pours, docs/dem.md) and not taken from a paper: κ = 0.15 at the
//! grains' friction 0.45, going as 1/μ² (rice, μ = 0.35, fits κ = 0.25; glass beads, 0.4,
//! κ = 0.2 — a grain that slides more easily runs on to the wall, docs/dem.md "Friction"),
//! and η = 0.35. Against the bank's 75 empty cups (five shapes, sugar, rice and glass beads,
//! falls of 8–40 cm: 0.04 to 3.1 wall hits a grain), W is within 1.2 dB rms (74 within
//! 3 dB), where the constant share it replaces (0.35 of a bare floor's arrivals, spread
//! evenly over the rings) was 5.6 dB off. On the bank's beds (225 scenes, bed at 0.3 to 0.9)
//! W would be 3.0 dB rms off, over by 1.8 dB at the median (a bed of fixed grains takes more
//! of the rebound than the floor), the pile's constant share (`PILE_WALL_SHARE`, which stays)
//! 7.7 dB. And the aim: the same 2 mm sugar poured into an empty mug at the wall instead of
//! the axis hits the wall 5.2 times as often in the simulation, 3.8 times by W.

use crate::base::fastmath;
use crate::base::materials::GRAVITY;
use crate::derived::cups::{Cup, WALL_RINGS};

/// κ at the friction `REACH_FRICTION` (the module's fit).
pub const REACH: f32 = 0.15;
/// The friction at which κ = `REACH`; κ goes as (REACH_FRICTION / μ)².
pub const REACH_FRICTION: f32 = 0.45;
/// Height scale of the wall hits above the bed over the rebound's reach ℓ_k.
pub const HEIGHT: f32 = 0.35;
/// Rebounds summed at most (e = 0.85 brings ℓ_k down 30-fold in 11).
pub const MAX_REBOUNDS: usize = 16;

/// The table's landing points, ρ = 0, 1/(RHO_N − 1), …, 1.
const RHO_N: usize = 21;
/// Its reaches over the wall's radius, λ = ℓ/R, log-spaced from `LAMBDA_MIN` to
/// `LAMBDA_MIN · 2^(12)`: below it no landing point of the generator's (at most 0.9 R
/// from the axis, `FLOOR_HIT_SHARE`) reaches the wall (below e^−25), above it every rebound
/// does (λ = 16: 94 %).
const LAMBDA_N: usize = 49;
const LAMBDA_MIN: f32 = 1.0 / 256.0;
const LN_LAMBDA_STEP: f32 = 12.0 * std::f32::consts::LN_2 / (LAMBDA_N - 1) as f32;
/// Directions θ in the table's quadrature (midpoints over [0, π]).
const THETA_N: usize = 512;

/// The angular means of one landing point, as a table over (ρ, ln λ), built once
/// (`Shapes::new`, control side): the chance that a rebound of reach λR from ρR reaches the
/// wall, M(ρ, λ) = (1/π) ∫₀^π exp(−d(θ)/(λR)) dθ, as its logarithm (linear in ρ where M is
/// an exponential), and the share of those hits on the wall within π/4 of the landing point's
/// own azimuth (the near wall).
#[derive(Clone)]
pub struct ReachTable {
    ln_m: [[f32; LAMBDA_N]; RHO_N],
    near: [[f32; LAMBDA_N]; RHO_N],
    /// ln `LAMBDA_MIN`, and 1 / (1 − e^(−`LN_LAMBDA_STEP`)) (`at`'s interpolation).
    ln_lambda_min: f32,
    inv_step_span: f32,
}

impl ReachTable {
    pub fn new() -> ReachTable {
        let mut ln_m = [[0.0; LAMBDA_N]; RHO_N];
        let mut near = [[0.0; LAMBDA_N]; RHO_N];
        for (i, (ln_row, near_row)) in ln_m.iter_mut().zip(&mut near).enumerate() {
            let rho = (i as f64 / (RHO_N - 1) as f64).min(1.0);
            // the chords along the directions, and whether each ends on the near wall
            let chords: Vec<(f64, bool)> = (0..THETA_N)
                .map(|j| {
                    let th = std::f64::consts::PI * (j as f64 + 0.5) / THETA_N as f64;
                    let d = -rho * th.cos() + (1.0 - (rho * th.sin()).powi(2)).max(0.0).sqrt();
                    let (x, y) = (rho + d * th.cos(), d * th.sin());
                    (d, y.atan2(x).abs() < std::f64::consts::FRAC_PI_4)
                })
                .collect();
            for (k, (ln, nr)) in ln_row.iter_mut().zip(near_row.iter_mut()).enumerate() {
                let lambda = LAMBDA_MIN as f64 * (LN_LAMBDA_STEP as f64 * k as f64).exp();
                let (mut all, mut at_near) = (0.0f64, 0.0f64);
                for &(d, is_near) in &chords {
                    let p = (-d / lambda).exp();
                    all += p;
                    if is_near {
                        at_near += p;
                    }
                }
                *ln = (all / THETA_N as f64).ln().max(-80.0) as f32;
                *nr = if all > 0.0 { (at_near / all) as f32 } else { 0.25 };
            }
        }
        ReachTable {
            ln_m,
            near,
            ln_lambda_min: LAMBDA_MIN.ln(),
            inv_step_span: 1.0 / (1.0 - (-LN_LAMBDA_STEP).exp()),
        }
    }

    /// M(ρ, λ) and its near-wall share (bilinear in ρ and ln λ; 0 below the table's reaches,
    /// its last column above them).
    #[inline]
    fn at(&self, rho: f32, ln_lambda: f32) -> (f32, f32) {
        let x = (ln_lambda - self.ln_lambda_min) / LN_LAMBDA_STEP;
        if x.is_nan() || x < 0.0 {
            return (0.0, 0.25);
        }
        let x = x.min((LAMBDA_N - 1) as f32);
        let y = rho.clamp(0.0, 1.0) * (RHO_N - 1) as f32;
        let (i, k) = ((y as usize).min(RHO_N - 2), (x as usize).min(LAMBDA_N - 2));
        // linear in 1/λ between the columns, where ln M is: −(1 − ρ)/λ for a short reach,
        // exactly −1/λ on the axis
        let fy = y - i as f32;
        let fx = (1.0 - fastmath::exp(-(x - k as f32) * LN_LAMBDA_STEP)) * self.inv_step_span;
        let lerp2 = |t: &[[f32; LAMBDA_N]; RHO_N]| {
            let a = t[i][k] + fx * (t[i][k + 1] - t[i][k]);
            let b = t[i + 1][k] + fx * (t[i + 1][k + 1] - t[i + 1][k]);
            a + fy * (b - a)
        };
        (fastmath::exp(lerp2(&self.ln_m)), lerp2(&self.near))
    }
}

impl Default for ReachTable {
    fn default() -> Self {
        ReachTable::new()
    }
}

/// Where a landing zone's grains land and rebound from.
#[derive(Debug, Clone, Copy)]
pub struct Landing {
    /// The zone's centre, m from the cup's axis, and its radius, m (grains land uniformly
    /// over the disc).
    pub centre_m: f32,
    pub radius_m: f32,
    /// The bed's height above the floor, m (0: the bare floor).
    pub bed_m: f32,
    /// Impact speed, m/s, and the grains' restitution and friction (grain on grain).
    pub speed_m_s: f32,
    pub restitution: f32,
    pub friction: f32,
}

/// Wall hits a second on each ring per grain landing (`Landing`) and the share of them on
/// the near wall's sector beyond an even spread (the generator's `aimed`: 0 for a landing on
/// the axis, 1 when all strike the wall within π/4 of the landing's azimuth). The
/// module's W, with each rebound's hits spread over the rings' exposed heights above the bed
/// (what rises above the rim counted on the top ring, as the databank counts it).
pub fn wall_hits(table: &ReachTable, cup: &Cup, l: &Landing) -> ([f32; WALL_RINGS], f32) {
    let mut rings = [0.0f32; WALL_RINGS];
    let radius = cup.radius_at(l.bed_m).max(1e-4);
    let mu = l.friction.max(0.05);
    let kappa = REACH * (REACH_FRICTION / mu).powi(2);
    let e = l.restitution.clamp(0.0, 0.99);
    let v = l.speed_m_s.max(0.0);
    if !(v > 0.0 && e > 0.0 && kappa.is_finite()) {
        return (rings, 0.0);
    }
    // the landing disc by a 7-point rule (the centre 1/4, six points at r sqrt(2/3), 1/8
    // each: exact for the disc's polynomials of degree 3), mirrored about the aim: 5 points
    let a = l.radius_m.max(0.0) * (2.0f32 / 3.0).sqrt();
    let c = l.centre_m.max(0.0);
    let h = 0.5 * 3f32.sqrt() * a;
    let points: [(f32, f32); 5] = [
        (c / radius, 0.25),
        ((c + a) / radius, 0.125),
        ((c + 0.5 * a).hypot(h) / radius, 0.25),
        ((c - 0.5 * a).hypot(h) / radius, 0.25),
        ((c - a).abs() / radius, 0.125),
    ];
    // the rings' exposed spans above the bed, m (the top ring open above)
    let spans: [(f32, f32); WALL_RINGS] = std::array::from_fn(|k| {
        let lo = (cup.ring_edges[k] - l.bed_m).max(0.0);
        let hi = if k + 1 == WALL_RINGS {
            f32::INFINITY
        } else {
            cup.ring_edges[k + 1] - l.bed_m
        };
        (lo, hi)
    });
    let ln_reach_1 = fastmath::ln(kappa * (e * v).powi(2) / GRAVITY / radius);
    let ln_step = 2.0 * fastmath::ln(e);
    let (mut total, mut near) = (0.0f32, 0.0f32);
    for k in 0..MAX_REBOUNDS {
        let ln_lambda = ln_reach_1 + k as f32 * ln_step;
        // the near wall's share from the zone's centre: the other points' own near walls are
        // in other directions
        let (m_centre, near_centre) = table.at(points[0].0, ln_lambda);
        let mut p = points[0].1 * m_centre;
        for &(rho, w) in &points[1..] {
            p += w * table.at(rho, ln_lambda).0;
        }
        let p_near = p * near_centre;
        if p < 1e-6 * total.max(1e-3) {
            break;
        }
        total += p;
        near += p_near;
        let height = HEIGHT * radius * fastmath::exp(ln_lambda);
        for (r, &(lo, hi)) in rings.iter_mut().zip(&spans) {
            if hi > lo {
                let upper = if hi.is_finite() {
                    fastmath::exp(-hi / height)
                } else {
                    0.0
                };
                *r += p * (fastmath::exp(-lo / height) - upper);
            }
        }
    }
    let aimed = if total > 0.0 {
        ((near / total - 0.25) / 0.75).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (rings, aimed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::choices::CupShape;

    /// M(ρ, λ) by a fine quadrature, directly.
    fn direct(rho: f64, lambda: f64) -> f64 {
        let n = 20_000;
        (0..n)
            .map(|j| {
                let th = std::f64::consts::PI * (j as f64 + 0.5) / n as f64;
                let d = -rho * th.cos() + (1.0 - (rho * th.sin()).powi(2)).sqrt();
                (-d / lambda).exp()
            })
            .sum::<f64>()
            / n as f64
    }

    #[test]
    fn the_table_holds_the_angular_mean_and_its_limits() {
        let t = ReachTable::new();
        // at the axis every direction is R away: exp(−1/λ)
        for lambda in [0.11f32, 0.3, 1.0, 4.0] {
            let (m, near) = t.at(0.0, lambda.ln());
            let exact = (-1.0 / lambda).exp();
            assert!((m / exact - 1.0).abs() < 0.02, "λ {lambda}: {m} against {exact}");
            assert!((near - 0.25).abs() < 0.01, "λ {lambda}: near share {near}");
        }
        // between the table's points, against the direct quadrature: within 3 % where a
        // rebound reaches the wall at all (M > 1e-4)
        for rho in [0.13f64, 0.42, 0.77, 0.88] {
            for lambda in [0.021f64, 0.11, 0.37, 1.9] {
                let exact = direct(rho, lambda);
                if exact < 1e-4 {
                    continue;
                }
                let (m, _) = t.at(rho as f32, (lambda as f32).ln());
                assert!(
                    (m as f64 / exact - 1.0).abs() < 0.03,
                    "ρ {rho}, λ {lambda}: {m} against {exact}"
                );
            }
        }
        // near the wall most hits are on the near wall; the mean grows towards it
        let (m_mid, _) = t.at(0.5, 0.1f32.ln());
        let (m_edge, near_edge) = t.at(0.9, 0.1f32.ln());
        assert!(m_edge > 2.0 * m_mid && near_edge > 0.8, "{m_mid} {m_edge} {near_edge}");
        // short reaches and NaN reach nothing
        assert_eq!(t.at(0.5, (1e-4f32).ln()).0, 0.0);
        assert_eq!(t.at(0.5, f32::NAN).0, 0.0);
    }

    fn landing(centre_m: f32, speed_m_s: f32, restitution: f32, friction: f32) -> Landing {
        Landing {
            centre_m,
            radius_m: 0.008,
            bed_m: 0.0,
            speed_m_s,
            restitution,
            friction,
        }
    }

    #[test]
    fn the_wall_hits_follow_the_simulated_pours_into_an_empty_mug() {
        // the databank's empty mug (2 mm grains on the axis, 1,000 a run, docs/dem.md): wall
        // hits a grain poured at its fall heights' impact speeds, all rings
        let (t, cup) = (ReachTable::new(), Cup::new(CupShape::Mug, 1.0));
        let banked = [
            // (grain's restitution, friction, impact speed m/s, bank's wall hits a grain)
            (0.5, 0.45, 1.82, 0.051),
            (0.5, 0.45, 2.46, 0.207),
            (0.5, 0.45, 3.10, 0.517),
            (0.5, 0.35, 2.17, 0.276),
            (0.5, 0.35, 3.10, 0.725),
            (0.85, 0.4, 1.82, 1.462),
            (0.85, 0.4, 3.10, 2.634),
        ];
        for (e, mu, v, bank) in banked {
            let (rings, aimed) = wall_hits(&t, &cup, &landing(0.0, v, e, mu));
            let w: f32 = rings.iter().sum();
            let db = 10.0 * (w / bank).log10();
            assert!(
                db.abs() < 3.0,
                "e {e}, μ {mu}, {v} m/s: {w:.3} a grain against {bank} ({db:+.1} dB)"
            );
            // most at the bed's height (the bank: 82–96 % of a sugar's in ring 0, 69–85 % of a bead's)
            assert!(rings[0] > 0.6 * w, "{rings:?}");
            assert!(aimed < 0.05, "on the axis: {aimed}");
        }
        // aimed at the wall as `granary-dem` aims (the spout's edge over the wall: its 8 mm
        // landing zone 32 mm from the axis), the same sugar hits the wall several times as
        // often, on the near side (simulated: 5.2 times, 0.066 → 0.345 a grain)
        let v = 2.17;
        let axis: f32 = wall_hits(&t, &cup, &landing(0.0, v, 0.5, 0.45)).0.iter().sum();
        let (rings, aimed) = wall_hits(&t, &cup, &landing(0.032, v, 0.5, 0.45));
        let at_wall: f32 = rings.iter().sum();
        assert!(
            at_wall > 3.0 * axis && aimed > 0.3,
            "{axis} -> {at_wall}, aimed {aimed}"
        );
        // a bed buries the rings below it; no speed, no restitution: no hits
        let bed = Landing {
            bed_m: 0.5 * cup.depth,
            ..landing(0.0, v, 0.5, 0.45)
        };
        assert_eq!(wall_hits(&t, &cup, &bed).0[0], 0.0);
        assert_eq!(wall_hits(&t, &cup, &landing(0.0, 0.0, 0.5, 0.45)).0, [0.0; WALL_RINGS]);
        assert_eq!(wall_hits(&t, &cup, &landing(0.0, v, 0.0, 0.45)).0, [0.0; WALL_RINGS]);
        assert_eq!(
            wall_hits(&t, &cup, &landing(0.0, f32::NAN, 0.5, 0.45)).0,
            [0.0; WALL_RINGS]
        );
    }
}
