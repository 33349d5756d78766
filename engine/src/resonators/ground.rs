//! The ground's own sound: an elastic half-space struck by a grain (seed 002, Qu & James,
//! *On the Impact of Ground Sound*).
//!
//! Three steps, each a seed equation:
//! 1. **Lamb's problem** (§2.1–2.2, eq. 2–4): the vertical surface displacement of a
//!    half-space under a unit normal force held from t = 0 (a "push"),
//!    `u_n(r, t) = (1 - nu) / (2 pi mu r) U(c_s t / r)`, with the dimensionless shape `U`
//!    (`Lamb::shape`) built from the roots of the Rayleigh equation (eq. 2).
//! 2. **Temporal regularisation** (§3, eq. 5–9; §4.1, eq. 10–11): the impulse `J` arrives as
//!    the force `J f_eps(t)`, `f_eps = 2 g_eps - g_2eps` with the Lorentzian `g_eps` of
//!    half-width `eps / c_s = t_c / 4` in time (eq. 8–9, 11). The surface acceleration is
//!    `a_eps = J d^3/dt^3 (f_eps * u_n)` (eq. 5–7).
//! 3. **Radiation** (§4.2, eq. 12): the Rayleigh integral
//!    `p = rho0 / (2 pi) ∫ a_eps(r', t - R'/c0) / R' dA`.
//!
//! How it is evaluated — the issue leaves the choice open ("the paper's polynomial
//! regularisation, or a numerical convolution of eq. 3"); this is the numerical convolution:
//! - Every operation after eq. 3 is linear and time-invariant, so the order can change:
//!   first the Rayleigh integral of the *push* response, `G(t) = ∫ u_n(r', t - R'/c0) / R'
//!   dA` (m²/N; `rayleigh_push`, a plain quadrature of eq. 3 over the plane), then
//!   `p = rho0 J / (2 pi) d^3/dt^3 (f_eps * G)`, done in the frequency domain where eq. 9 is
//!   exact: the Fourier transform of the Lorentzian `g_eps` is `exp(-|w| eps / c_s)`, so
//!   `F_eps(w) = 2 exp(-|w| t_c / 4) - exp(-|w| t_c / 2)`.
//! - Why not appendix A's closed form (eq. 18–28): it crosses a branch cut for
//!   `nu > 0.2631` (§3, §6.1), which is steel, granite, plastic and wax of Table 2; and the
//!   polynomial kernel of §6.1 cancels catastrophically for small `eps`, which every grain
//!   has (contact times of microseconds). Eq. 3 itself is fine for every `nu`: with complex
//!   roots `kappa_2,3` (a conjugate pair) the sum over `j` is real, and `U` is bounded but
//!   for the Rayleigh front's `(gamma - tau)^(-1/2)`, which the quadrature takes care of
//!   (`quad_segment`). The tests check `U`'s continuity at the P and S fronts for `nu` from
//!   0 to 0.49 and the volume displacement (§5.1).
//! - The ball's own sound for comparison (§5.2.2, eq. 16–17): a compact translating sphere
//!   (dipole) plus its image in the ground, driven by the same force profile.
//!
//! Everything here is f64 and plain: it runs when a surface material, listener or sample
//! rate changes (and in `granary inspect ground`), never per collision.

use crate::base::materials::{Elastic, AIR_DENSITY, GRAVITY, SPEED_OF_SOUND};
use crate::fft::Complex64 as C;
use std::f64::consts::PI;

/// Air density and speed of sound, f64.
const RHO0: f64 = AIR_DENSITY as f64;
const C0: f64 = SPEED_OF_SOUND as f64;

/// An elastic half-space: the ground.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HalfSpace {
    /// Young's modulus, Pa.
    pub youngs_pa: f64,
    /// Poisson's ratio.
    pub poisson: f64,
    /// Density, kg/m³.
    pub density: f64,
}

impl HalfSpace {
    pub fn from_elastic(e: Elastic) -> Self {
        HalfSpace {
            youngs_pa: e.youngs_pa as f64,
            poisson: e.poisson as f64,
            density: e.density as f64,
        }
    }

    /// Shear modulus mu = E / (2 (1 + nu)), Pa.
    pub fn shear_modulus(&self) -> f64 {
        self.youngs_pa / (2.0 * (1.0 + self.poisson))
    }

    /// Shear (S) wave speed c_s = sqrt(mu / rho), m/s.
    pub fn shear_speed(&self) -> f64 {
        (self.shear_modulus() / self.density).sqrt()
    }

    /// Compression (P) wave speed c_p = c_s / a (seed 002 §2.2), m/s.
    pub fn pressure_speed(&self) -> f64 {
        self.shear_speed() / Lamb::speed_ratio(self.poisson)
    }

    /// Rayleigh (R) wave speed c_r = c_s / gamma (seed 002 §2.2), m/s.
    pub fn rayleigh_speed(&self) -> f64 {
        self.shear_speed() / Lamb::new(self.poisson).gamma
    }
}

/// Lamb's problem for Poisson's ratio `nu` in dimensionless form (seed 002 eq. 2–4).
#[derive(Debug, Clone, Copy)]
pub struct Lamb {
    pub nu: f64,
    /// a = c_s / c_p = sqrt((1 - 2 nu) / (2 - 2 nu)).
    pub a: f64,
    /// kappa_j² (j = 1, 2, 3), the roots of the Rayleigh equation (eq. 2); kappa_1² =
    /// gamma², the largest real root.
    pub kappa_sq: [C; 3],
    /// gamma = c_s / c_r.
    pub gamma: f64,
    /// A_j of §2.2.
    pub coef: [C; 3],
    /// kappa_2² and kappa_3² are a complex conjugate pair (nu > 0.2631), made exactly
    /// conjugate here.
    pub pair: bool,
}

impl Lamb {
    /// a = c_s / c_p (seed 002 §2.2).
    pub fn speed_ratio(nu: f64) -> f64 {
        ((1.0 - 2.0 * nu) / (2.0 - 2.0 * nu)).sqrt()
    }

    /// The roots of the Rayleigh equation, seed 002 eq. 2:
    /// 16 (1 - a²) k⁶ - 8 (3 - 2a²) k⁴ + 8 k² - 1 = 0 (a cubic in x = k²), and the
    /// coefficients A_j = (k_j² - 1/2)² sqrt(a² - k_j²) / ((k_j² - k_i²)(k_j² - k_k²)).
    /// `nu` is clamped to [0, 0.499].
    pub fn new(nu: f64) -> Self {
        let nu = nu.clamp(0.0, 0.499);
        let a = Self::speed_ratio(nu);
        let a2 = a * a;
        let mut roots = cubic_roots([16.0 * (1.0 - a2), -8.0 * (3.0 - 2.0 * a2), 8.0, -1.0]);
        // kappa_1² = gamma²: the largest real root (there is always one above 1, as the
        // Rayleigh wave is slower than the shear wave)
        let real = |z: &C| z.im.abs() <= 1e-9 * z.norm().max(1e-12);
        let first = (0..3)
            .filter(|&j| real(&roots[j]))
            .max_by(|&i, &j| roots[i].re.total_cmp(&roots[j].re))
            .expect("a cubic with real coefficients has a real root");
        roots.swap(0, first);
        for z in roots.iter_mut().filter(|z| real(z)) {
            z.im = 0.0;
        }
        let pair = roots[1].im != 0.0;
        if pair {
            // the cubic's coefficients are real: its complex roots are conjugates
            roots[2] = roots[1].conj();
        }
        let gamma = roots[0].re.sqrt();
        let coef = std::array::from_fn(|j| {
            let (i, k) = ((j + 1) % 3, (j + 2) % 3);
            let kj = roots[j];
            (kj - 0.5) * (kj - 0.5) * (C::from(a2) - kj).sqrt() / ((kj - roots[i]) * (kj - roots[k]))
        });
        Lamb {
            nu,
            a,
            kappa_sq: roots,
            gamma,
            coef,
            pair,
        }
    }

    /// The push response's shape, seed 002 eq. 3 with tau = c_s t / r (eq. 4):
    /// `u_n(r, t) = (1 - nu) / (2 pi mu r) * shape(tau)`. 0 before the P wave (tau <= a),
    /// 1 after the Rayleigh wave (the static Boussinesq displacement), and between them
    /// 1/2 (1 - sum_j A_j / sqrt(tau² - k_j²)) (a < tau < 1) or 1 - A_1 / sqrt(tau² -
    /// gamma²) (1 <= tau < gamma). The square roots are complex (principal branch): for the
    /// j = 1 terms both numerator and denominator are imaginary (the paper's note on
    /// flipping signs), and complex k_2,3 (nu > 0.2631) come as a conjugate pair, so the
    /// sums are real; the imaginary rounding is dropped.
    ///
    /// Evaluated as those real sums (the radiation filter's build calls it millions of
    /// times): with k_1² = gamma² > tau², sqrt(tau² - gamma²) = i sqrt(gamma² - tau²) and
    /// A_1 / (i s) has the real part Im(A_1) / s; a conjugate pair's two terms are each
    /// other's conjugates, so their sum is twice the real part of one.
    pub fn shape(&self, tau: f64) -> f64 {
        if tau <= self.a {
            0.0
        } else if tau < 1.0 {
            let t2 = tau * tau;
            let first = self.coef[0].im / (self.gamma * self.gamma - t2).sqrt();
            let rest = if self.pair {
                2.0 * re_div(self.coef[1], principal_sqrt(C::from(t2) - self.kappa_sq[1]))
            } else {
                (1..3)
                    .map(|j| re_div(self.coef[j], principal_sqrt(C::from(t2) - self.kappa_sq[j])))
                    .sum()
            };
            0.5 * (1.0 - first - rest)
        } else if tau < self.gamma {
            1.0 - self.coef[0].im / (self.gamma * self.gamma - tau * tau).sqrt()
        } else {
            1.0
        }
    }
}

/// The principal square root of `z` (branch cut on the negative real axis, the sign of a
/// zero imaginary part choosing the side, as `Complex::sqrt`), in closed form: with r = |z|,
/// sqrt(z) = sqrt((r + x) / 2) + i sign(y) sqrt((r - x) / 2), the smaller part taken as
/// y / (2 × the larger) so that nothing cancels (Kahan, "Branch cuts for complex elementary
/// functions", 1987, §6). `Complex::sqrt` goes through polar form, an atan2 and a sincos:
/// the radiation filter's build spent most of its time there. |z| is taken as
/// sqrt(x² + y²): the arguments here are of order one.
#[inline]
fn principal_sqrt(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        return if x >= 0.0 {
            C::new(x.sqrt(), y)
        } else {
            C::new(0.0, (-x).sqrt().copysign(y))
        };
    }
    let r = (x * x + y * y).sqrt();
    if x >= 0.0 {
        let u = (0.5 * (r + x)).sqrt();
        C::new(u, 0.5 * y / u)
    } else {
        let v = (0.5 * (r - x)).sqrt().copysign(y);
        C::new(0.5 * y / v, v)
    }
}

/// Re(a / b), without the imaginary part: Re(a conj(b)) / |b|².
#[inline]
fn re_div(a: C, b: C) -> f64 {
    (a.re * b.re + a.im * b.im) / (b.re * b.re + b.im * b.im)
}

/// The three roots of c3 x³ + c2 x² + c1 x + c0 (c3 != 0): Durand–Kerner iteration, then
/// Newton polishing. Plain and robust for a cubic with well-separated roots.
fn cubic_roots(c: [f64; 4]) -> [C; 3] {
    let p = |x: C| ((C::from(c[0]) * x + c[1]) * x + c[2]) * x + c[3];
    let dp = |x: C| (C::from(3.0 * c[0]) * x + 2.0 * c[1]) * x + c[2];
    let seed = C::new(0.4, 0.9);
    let mut z = [C::from(1.0), seed, seed * seed];
    for _ in 0..500 {
        let prev = z;
        for i in 0..3 {
            let mut den = C::from(c[0]);
            for j in 0..3 {
                if j != i {
                    den *= z[i] - z[j];
                }
            }
            z[i] -= p(z[i]) / den;
        }
        if (0..3).all(|i| (z[i] - prev[i]).norm() < 1e-15 * z[i].norm().max(1.0)) {
            break;
        }
    }
    for zi in z.iter_mut() {
        for _ in 0..3 {
            let d = dp(*zi);
            if d.norm() > 0.0 {
                *zi -= p(*zi) / d;
            }
        }
    }
    z
}

/// Gauss–Legendre nodes and weights on [0, 1] (Newton on the Legendre recurrence).
fn gauss_legendre<const N: usize>() -> [(f64, f64); N] {
    let n = N;
    std::array::from_fn(|i| {
        let mut x = (PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-15 {
                break;
            }
        }
        let w = 2.0 / ((1.0 - x * x) * dp * dp);
        (0.5 * (1.0 - x), 0.5 * w)
    })
}

/// Where the listener is, relative to the impact point: `horizontal_m` along the ground and
/// `height_m` above it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Listener {
    pub horizontal_m: f64,
    pub height_m: f64,
}

impl Listener {
    /// From a point (x, y, z) relative to the impact point (z up).
    pub fn at(p: [f64; 3]) -> Self {
        Listener {
            horizontal_m: (p[0] * p[0] + p[1] * p[1]).sqrt(),
            height_m: p[2].max(1e-4),
        }
    }

    /// Distance to the impact point, m.
    pub fn distance_m(&self) -> f64 {
        self.horizontal_m.hypot(self.height_m)
    }
}

/// Most azimuths of `RayleighPush`'s quadrature over the plane.
pub const MAX_AZIMUTHS: usize = 48;
/// Gauss–Legendre points per segment of its radial quadrature.
const RADIAL_NODES: usize = 16;

/// The Rayleigh integral of the push response, `G(t) = ∫ u_n(r', t - R'/c0) / R' dA`
/// (m²/N): seed 002 eq. 12 applied to eq. 3 (the `rho0 / (2 pi)` and the time derivatives
/// come later, `ground_pressure`). A plain quadrature, one evaluation per time. Building
/// and evaluating it never allocates (the engine builds one on the audio thread,
/// `surface::Radiation`).
#[derive(Debug, Clone, Copy)]
pub struct RayleighPush {
    lamb: Lamb,
    /// (1 - nu) / (2 pi mu), m/N.
    scale: f64,
    cs: f64,
    listener: Listener,
    /// Azimuths of the quadrature over the plane (one if the listener is overhead) and
    /// their weights (sum 2 pi); `count` of them are used.
    azimuths: [(f64, f64); MAX_AZIMUTHS + 1],
    count: usize,
    /// The radial quadrature's nodes on [0, 1] after the substitution s -> 3s² - 2s³, and
    /// their weights times its derivative 6 s (1 - s) (`quad_segment`).
    node_at: [f64; RADIAL_NODES],
    node_weight: [f64; RADIAL_NODES],
}

impl RayleighPush {
    /// With `MAX_AZIMUTHS` azimuths over the half plane (the inspection's and the tests'
    /// accuracy).
    pub fn new(ground: &HalfSpace, listener: Listener) -> Self {
        Self::with_azimuths(ground, listener, MAX_AZIMUTHS)
    }

    /// With `n` (at most `MAX_AZIMUTHS`) intervals of the trapezoid rule over the azimuth.
    pub fn with_azimuths(ground: &HalfSpace, listener: Listener, n: usize) -> Self {
        let lamb = Lamb::new(ground.poisson);
        let overhead = listener.horizontal_m < 1e-6 * listener.height_m;
        let n = n.clamp(2, MAX_AZIMUTHS);
        // the integrand is symmetric in phi: [0, pi] with the trapezoid rule (spectrally
        // accurate for a smooth periodic integrand), weights summing to 2 pi
        let mut azimuths = [(0.0, 0.0); MAX_AZIMUTHS + 1];
        let count = if overhead {
            azimuths[0] = (0.0, 2.0 * PI);
            1
        } else {
            for (i, a) in azimuths.iter_mut().enumerate().take(n + 1) {
                let w = if i == 0 || i == n { 0.5 } else { 1.0 };
                *a = (PI * i as f64 / n as f64, 2.0 * PI / n as f64 * w);
            }
            n + 1
        };
        let nodes: [(f64, f64); RADIAL_NODES] = gauss_legendre();
        RayleighPush {
            lamb,
            scale: (1.0 - lamb.nu) / (2.0 * PI * ground.shear_modulus()),
            cs: ground.shear_speed(),
            listener,
            azimuths,
            count,
            node_at: nodes.map(|(s, _)| s * s * (3.0 - 2.0 * s)),
            node_weight: nodes.map(|(s, w)| w * 6.0 * s * (1.0 - s)),
        }
    }

    /// G(t), m²/N (t in s from the impact).
    pub fn at(&self, t: f64) -> f64 {
        let Listener {
            horizontal_m: rho,
            height_m: z,
        } = self.listener;
        let sum: f64 = self.azimuths[..self.count]
            .iter()
            .map(|&(phi, w)| w * self.radial(t, rho * phi.cos(), rho * rho + z * z))
            .sum();
        self.scale * sum
    }

    /// ∫_0^∞ U(tau(r)) / R'(r) dr along one azimuth, where R'(r)² = r² - 2 b r + d² and
    /// tau(r) = c_s (t - R'(r)/c0) / r (eq. 4 at the retarded time of eq. 12).
    fn radial(&self, t: f64, b: f64, d2: f64) -> f64 {
        let cs = self.cs;
        let e2 = (d2 - b * b).max(1e-12);
        let big_r = |r: f64| (r * r - 2.0 * b * r + d2).max(0.0).sqrt();
        let tau = |r: f64| cs * (t - big_r(r) / C0) / r;
        // breakpoints: where tau crosses a, 1, gamma (the P, S and R fronts) or 0 (nothing
        // has arrived beyond): c0 (t - T r / c_s) = R'(r), squared, a quadratic in r
        let mut cuts: [f64; 10] = [0.0; 10];
        let mut n = 1;
        for level in [0.0, self.lamb.a, 1.0, self.lamb.gamma] {
            let q = C0 * level / cs;
            let qa = 1.0 - q * q;
            let qb = -2.0 * (b - C0 * q * t);
            let qc = d2 - C0 * C0 * t * t;
            let roots = if qa.abs() < 1e-12 {
                [-qc / qb, f64::NAN]
            } else {
                let disc = qb * qb - 4.0 * qa * qc;
                if disc < 0.0 {
                    [f64::NAN; 2]
                } else {
                    let s = disc.sqrt();
                    // numerically stable pair
                    let m = -0.5 * (qb + qb.signum() * s);
                    [m / qa, if m != 0.0 { qc / m } else { f64::NAN }]
                }
            };
            for r in roots {
                if r.is_finite() && r > 0.0 && t - level * r / cs >= -1e-15 {
                    cuts[n] = r;
                    n += 1;
                }
            }
        }
        let cuts = &mut cuts[..n];
        cuts.sort_by(f64::total_cmp);
        let mut total = 0.0;
        for k in 0..n {
            let r0 = cuts[k];
            // past the last cut tau < 0 (nothing has arrived)
            let Some(&r1) = cuts.get(k + 1) else { break };
            if r1 - r0 <= 1e-15 {
                continue;
            }
            let mid = tau(0.5 * (r0 + r1));
            if mid <= self.lamb.a {
                continue;
            }
            if mid >= self.lamb.gamma {
                // U = 1: ∫ dr / R' = asinh((r - b) / e) in closed form
                let e = e2.sqrt();
                total += ((r1 - b) / e).asinh() - ((r0 - b) / e).asinh();
            } else {
                total += self.quad_segment(r0, r1, t, b, d2, mid < 1.0);
            }
        }
        total
    }

    /// ∫ U(tau(r)) / R'(r) dr over [r0, r1], a segment between two fronts where tau lies
    /// between a and 1 (`before_shear`) or between 1 and gamma: Gauss–Legendre after the
    /// substitution r = r0 + L (3s² - 2s³), whose derivative vanishes at both ends, so that
    /// the Rayleigh front's (gamma - tau)^(-1/2) and the fronts' square-root kinks become
    /// smooth.
    ///
    /// The nodes are evaluated side by side, each step a loop over all of them (the
    /// compiler's vector code), with the segment's branch of `Lamb::shape` in closed real
    /// arithmetic (`Lamb::shape` explains the reductions); a node that rounding put past
    /// the segment's fronts gets `Lamb::shape` itself. The sum is taken in node order.
    fn quad_segment(&self, r0: f64, r1: f64, t: f64, b: f64, d2: f64, before_shear: bool) -> f64 {
        const N: usize = RADIAL_NODES;
        let lamb = &self.lamb;
        let len = r1 - r0;
        let mut tau = [0.0; N];
        let mut inv_r = [0.0; N];
        for k in 0..N {
            let r = r0 + len * self.node_at[k];
            let big_r = (r * r - 2.0 * b * r + d2).max(0.0).sqrt();
            tau[k] = self.cs * (t - big_r / C0) / r;
            inv_r[k] = 1.0 / big_r.max(1e-12);
        }
        let g2 = lamb.gamma * lamb.gamma;
        let a1 = lamb.coef[0].im;
        let mut u = [0.0; N];
        if !before_shear {
            for k in 0..N {
                u[k] = 1.0 - a1 / (g2 - tau[k] * tau[k]).sqrt();
            }
        } else if lamb.pair {
            // A_2 / sqrt(z) + conj: 2 Re(A_2 conj(sqrt z)) / |z|, z = tau² - kappa_2²,
            // whose imaginary part y is never zero; sqrt z as in `principal_sqrt`
            let (kx, y, c) = (lamb.kappa_sq[1].re, -lamb.kappa_sq[1].im, lamb.coef[1]);
            for k in 0..N {
                let t2 = tau[k] * tau[k];
                let x = t2 - kx;
                let m = (x * x + y * y).sqrt();
                let q = (0.5 * (m + x.abs())).sqrt();
                let (re, im) = if x >= 0.0 {
                    (q, 0.5 * y / q)
                } else {
                    (0.5 * y.abs() / q, q.copysign(y))
                };
                let rest = 2.0 * (c.re * re + c.im * im) / m;
                u[k] = 0.5 * (1.0 - a1 / (g2 - t2).sqrt() - rest);
            }
        } else {
            // real kappa_2², kappa_3²: sqrt(tau² - k²) is real (A_j real part) or +i times
            // sqrt(k² - tau²) (A_j imaginary part), as in `principal_sqrt` with y = +0
            let k2 = [lamb.kappa_sq[1].re, lamb.kappa_sq[2].re];
            let c = [lamb.coef[1], lamb.coef[2]];
            for k in 0..N {
                let t2 = tau[k] * tau[k];
                let mut rest = 0.0;
                for j in 0..2 {
                    let x = t2 - k2[j];
                    rest += if x >= 0.0 { c[j].re } else { c[j].im } / x.abs().sqrt();
                }
                u[k] = 0.5 * (1.0 - a1 / (g2 - t2).sqrt() - rest);
            }
        }
        let mut sum = 0.0;
        for k in 0..N {
            let inside = if before_shear {
                tau[k] > lamb.a && tau[k] < 1.0
            } else {
                tau[k] >= 1.0 && tau[k] < lamb.gamma
            };
            let shape = if inside { u[k] } else { lamb.shape(tau[k]) };
            sum += self.node_weight[k] * shape * inv_r[k];
        }
        sum * len
    }
}

/// The Fourier transform of the regularised force profile of unit area, seed 002 eq. 8–9
/// with eps / c_s = t_c / 4 (eq. 11): F(w) = 2 exp(-|w| t_c / 4) - exp(-|w| t_c / 2).
pub fn force_spectrum(omega: f64, contact_s: f64) -> f64 {
    let x = (omega.abs() * contact_s * 0.25).min(700.0);
    2.0 * (-x).exp() - (-2.0 * x).exp()
}

/// The regularised force profile of unit area itself, f_eps(t) = 2 g_eps(t) - g_2eps(t)
/// (seed 002 eq. 8–9, in time: g has half-width s = t_c / 4), 1/s.
pub fn force_profile(t: f64, contact_s: f64) -> f64 {
    let g = |s: f64| s / (PI * (t * t + s * s));
    let s = 0.25 * contact_s;
    2.0 * g(s) - g(2.0 * s)
}

/// d f_eps / dt, 1/s².
pub fn force_profile_rate(t: f64, contact_s: f64) -> f64 {
    let g = |s: f64| -2.0 * t * s / (PI * (t * t + s * s).powi(2));
    let s = 0.25 * contact_s;
    2.0 * g(s) - g(2.0 * s)
}

/// A pressure waveform sampled every `dt` seconds from `t0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Waveform {
    pub t0: f64,
    pub dt: f64,
    /// Pa.
    pub samples: Vec<f64>,
}

impl Waveform {
    /// Largest |p|, Pa.
    pub fn peak(&self) -> f64 {
        self.samples.iter().fold(0.0, |m, x| m.max(x.abs()))
    }

    /// ∫ p² dt, Pa² s.
    pub fn energy(&self) -> f64 {
        self.samples.iter().map(|x| x * x).sum::<f64>() * self.dt
    }
}

/// The time grid of a ground response: step `dt`, from `t0`, `n` samples (a power of two).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    pub t0: f64,
    pub dt: f64,
    pub n: usize,
}

impl Grid {
    /// A grid for contact time `contact_s`: `per_contact` steps per contact time (at most
    /// `max_dt`), from 8 contact times before the sound can first arrive (the regularised
    /// force has Lorentzian tails) to well after the Rayleigh wave has passed under the
    /// listener.
    pub fn for_contact(ground: &HalfSpace, listener: Listener, contact_s: f64, per_contact: f64, max_dt: f64) -> Self {
        let dt = (contact_s / per_contact).min(max_dt);
        let t0 = earliest_arrival(ground, listener) - 8.0 * contact_s;
        let span =
            8.0 * contact_s + 30.0 * contact_s + (6e-3f64).max(3.0 * listener.distance_m() / ground.rayleigh_speed());
        let n = ((span / dt).ceil() as usize).next_power_of_two().max(64);
        Grid { t0, dt, n }
    }
}

/// When the ground's sound can first reach the listener, s: through the air from the impact
/// (distance / c0), or sooner through the ground for a listener off to the side: the P wave
/// to a point on the way, then the air (Fermat: the least of r / c_p + R'(r) / c0 along the
/// line beneath the listener).
pub fn earliest_arrival(ground: &HalfSpace, listener: Listener) -> f64 {
    let (rho, z) = (listener.horizontal_m, listener.height_m);
    let cp = ground.pressure_speed();
    (0..=256)
        .map(|i| {
            let r = rho * i as f64 / 256.0;
            r / cp + (rho - r).hypot(z) / C0
        })
        .fold(f64::INFINITY, f64::min)
}

/// The ground's sound pressure at the listener for an impulse `impulse_ns` (N s) pressing
/// the ground down, whose contact lasts `contact_s` (seed 002 eq. 12 with eq. 3–11):
/// `-rho0 J / (2 pi) d³/dt³ (f_eps * G)` (eq. 1's unit force points up, out of the ground;
/// a grain pushes it down, hence the sign). G is sampled on `grid`; its steps are G' averaged over each sample; the
/// third derivative and eq. 9's kernel are applied in the frequency domain (`F(w) (i w)²`
/// on G'). G' falls off as 1/t late on (the static region keeps growing), so its last
/// fifth is tapered to zero (a half Hann window) before the transform.
pub fn ground_pressure(push: &RayleighPush, impulse_ns: f64, contact_s: f64, grid: Grid) -> Waveform {
    let Grid { t0, dt, n } = grid;
    let g: Vec<f64> = (0..=n).map(|k| push.at(t0 + k as f64 * dt)).collect();
    let mut dg: Vec<f64> = g.windows(2).map(|w| (w[1] - w[0]) / dt).collect();
    taper_tail(&mut dg, 0.2);
    let scale = -RHO0 * impulse_ns / (2.0 * PI);
    let samples = filter(&dg, dt, |w| C::from(-w * w * force_spectrum(w, contact_s) * scale));
    // sample k is G' over [t0 + k dt, t0 + (k + 1) dt]: its centre
    Waveform {
        t0: t0 + 0.5 * dt,
        dt,
        samples,
    }
}

/// Multiplies the samples by a half Hann window over their last `fraction`.
fn taper_tail(x: &mut [f64], fraction: f64) {
    let n = x.len();
    let m = ((n as f64 * fraction) as usize).max(1);
    for i in 0..m {
        let w = 0.5 * (1.0 + (PI * (i as f64 + 0.5) / m as f64).cos());
        x[n - m + i] *= w;
    }
}

/// Applies the continuous-time frequency response `h(w)` (w in rad/s) to samples `x` at step
/// `dt` (circularly, through a real FFT).
fn filter(x: &[f64], dt: f64, h: impl Fn(f64) -> C) -> Vec<f64> {
    let n = x.len();
    let (fwd, inv) = crate::fft::pair(n);
    let mut input = x.to_vec();
    let mut spectrum = fwd.make_output_vec();
    fwd.process(&mut input, &mut spectrum).expect("FFT sizes match");
    for (m, s) in spectrum.iter_mut().enumerate() {
        *s *= h(2.0 * PI * m as f64 / (n as f64 * dt)) / n as f64;
    }
    // the Nyquist bin of a real signal must stay real
    if let Some(last) = spectrum.last_mut() {
        last.im = 0.0;
    }
    spectrum[0].im = 0.0;
    let mut out = inv.make_output_vec();
    inv.process(&mut spectrum, &mut out).expect("FFT sizes match");
    out
}

/// The sound of the ball itself for comparison, seed 002 eq. 16–17: a compact sphere of
/// radius `radius_m` whose centre is `radius_m` above the ground, accelerating upwards
/// with `a(t) = J f_eps(t) / m` (eq. 17; the direction is the physical one, away from the
/// ground), radiating as a dipole
/// `p = rho0 a0³ cos(theta) / 2 (a(t') / r² + a'(t') / (c0 r))`, `t' = t - (r - a0)/c0`,
/// plus its image below the ground (perfect reflection: the mirrored dipole, accelerating
/// downwards). The extracted eq. 16 has a minus on the near-field term; the linear
/// acoustics of a translating sphere (the potential -a0³ U cos(theta) / (2 r²) and its
/// retarded form; `accel_noise` and thesis eq. 4.1) give the same sign to both terms, as
/// used here: the fluid ahead of an accelerating sphere is compressed.
pub fn ball_pressure(
    radius_m: f64,
    mass_kg: f64,
    impulse_ns: f64,
    contact_s: f64,
    listener: [f64; 3],
    grid: Grid,
) -> Waveform {
    let dv = impulse_ns / mass_kg;
    let dipole = |t: f64, centre_z: f64, dir: f64| {
        let d = [listener[0], listener[1], listener[2] - centre_z];
        let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt().max(1.01 * radius_m);
        let cos_th = dir * d[2] / r;
        let tr = t - (r - radius_m) / C0;
        let acc = dv * force_profile(tr, contact_s);
        let jerk = dv * force_profile_rate(tr, contact_s);
        0.5 * RHO0 * radius_m.powi(3) * cos_th * (acc / (r * r) + jerk / (C0 * r))
    };
    let samples = (0..grid.n)
        .map(|k| {
            let t = grid.t0 + (k as f64 + 0.5) * grid.dt;
            dipole(t, radius_m, 1.0) + dipole(t, -radius_m, -1.0)
        })
        .collect();
    Waveform {
        t0: grid.t0 + 0.5 * grid.dt,
        dt: grid.dt,
        samples,
    }
}

/// One ball dropped on the ground: the set-up of seed 002 Table 1 by default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BallDrop {
    pub ball: HalfSpace,
    pub ground: HalfSpace,
    pub diameter_m: f64,
    pub drop_height_m: f64,
    pub restitution: f64,
    /// Listener relative to the impact point, m (z up).
    pub listener: [f64; 3],
    /// The contact time, s; `None`: Hertz (PAN eq. 7, `contact::hertz_duration`).
    pub contact_s: Option<f64>,
}

/// What `BallDrop::run` finds.
#[derive(Debug, Clone, PartialEq)]
pub struct BallDropSound {
    pub contact_s: f64,
    pub impact_speed_m_s: f64,
    pub impulse_ns: f64,
    pub ground: Waveform,
    pub ball: Waveform,
}

impl BallDropSound {
    /// Ground over ball, dB of the sounds' intensities integrated over time, 10 log10 of
    /// ∫ p_ground² dt / ∫ p_ball² dt: seed 002 Table 3's "relative intensity". (The ratio of
    /// peak pressures squared lies within 1.5 dB of it; the integrated ratio reproduces
    /// every cell of Table 3 within 0.5 dB, `tests/ground.rs`.)
    pub fn ground_to_ball_db(&self) -> f64 {
        10.0 * (self.ground.energy() / self.ball.energy()).log10()
    }
}

impl BallDrop {
    /// Seed 002 Table 1: a 2 cm stainless-steel ball dropped 15 cm onto MDF, restitution
    /// 0.5, listener 20 cm above the impact.
    pub fn table1(ball: HalfSpace, ground: HalfSpace) -> Self {
        BallDrop {
            ball,
            ground,
            diameter_m: 0.02,
            drop_height_m: 0.15,
            restitution: 0.5,
            listener: [0.0, 0.0, 0.2],
            contact_s: None,
        }
    }

    pub fn mass_kg(&self) -> f64 {
        self.ball.density * PI / 6.0 * self.diameter_m.powi(3)
    }

    /// Impact speed sqrt(2 g h), m/s.
    pub fn impact_speed(&self) -> f64 {
        (2.0 * GRAVITY as f64 * self.drop_height_m).sqrt()
    }

    /// Hertz contact time of the ball on the ground (PAN eq. 7; seed 002 eq. 11), s.
    pub fn hertz_contact_s(&self) -> f64 {
        let e = |h: &HalfSpace| (1.0 - h.poisson * h.poisson) / h.youngs_pa;
        let e_star = 1.0 / (e(&self.ball) + e(&self.ground));
        let m = self.mass_kg();
        2.87 * (m * m / (0.5 * self.diameter_m * e_star * e_star * self.impact_speed())).powf(0.2)
    }

    /// The grid `run(per_contact)` computes both sounds on (`Grid::for_contact` at the
    /// drop's contact time): its `n` is the cost of a run, known before running it.
    pub fn grid(&self, per_contact: f64) -> Grid {
        let contact_s = self.contact_s.unwrap_or_else(|| self.hertz_contact_s());
        Grid::for_contact(&self.ground, Listener::at(self.listener), contact_s, per_contact, 1.0)
    }

    /// Both sounds, on one grid of `per_contact` steps per contact time.
    pub fn run(&self, per_contact: f64) -> BallDropSound {
        let contact_s = self.contact_s.unwrap_or_else(|| self.hertz_contact_s());
        let v = self.impact_speed();
        // seed 002 §5.2.2: "we simply use (1 + kappa) m v_n as the impulse"
        let impulse = (1.0 + self.restitution) * self.mass_kg() * v;
        let listener = Listener::at(self.listener);
        let grid = self.grid(per_contact);
        let push = RayleighPush::new(&self.ground, listener);
        BallDropSound {
            contact_s,
            impact_speed_m_s: v,
            impulse_ns: impulse,
            ground: ground_pressure(&push, impulse, contact_s, grid),
            ball: ball_pressure(
                0.5 * self.diameter_m,
                self.mass_kg(),
                impulse,
                contact_s,
                self.listener,
                grid,
            ),
        }
    }
}

/// Seed 002 eq. 15 for the unregularised push (eq. 3): the volume displacement
/// D(t) = ∫ u_n dA = (1 - nu) / mu ∫_0^∞ U(c_s t / r) dr = (1 - nu) c_s t / mu ∫_a^∞ U(tau)
/// / tau² dtau (r = c_s t / tau), m³/N: it grows linearly (self-similarity), the static
/// region inside the Rayleigh front contributing (1 - nu) c_r t / mu.
pub fn push_volume(ground: &HalfSpace, t: f64) -> f64 {
    let lamb = Lamb::new(ground.poisson);
    let nodes = gauss_legendre::<48>();
    let seg = |t0: f64, t1: f64| -> f64 {
        let len = t1 - t0;
        nodes
            .iter()
            .map(|&(s, w)| {
                let tau = t0 + len * s * s * (3.0 - 2.0 * s);
                w * lamb.shape(tau) / (tau * tau) * len * 6.0 * s * (1.0 - s)
            })
            .sum()
    };
    let integral = seg(lamb.a, 1.0) + seg(1.0, lamb.gamma) + 1.0 / lamb.gamma;
    (1.0 - lamb.nu) / ground.shear_modulus() * ground.shear_speed() * t.max(0.0) * integral
}

/// The same volume displacement under the regularised push `f_eps * theta` (seed 002 eq. 5
/// and 15, eps / c_s = t_c / 4): eq. 9's kernel applied to `push_volume` in the frequency
/// domain, as `ground_pressure` applies it to the Rayleigh integral. On `grid`.
pub fn regularized_push_volume(ground: &HalfSpace, contact_s: f64, grid: Grid) -> Waveform {
    // D is a ramp: its derivative, a step, goes through the filter (a ramp itself would
    // wrap around the circular transform); the step is tapered at the end and summed back
    let slope = push_volume(ground, 1.0);
    let mut rate: Vec<f64> = (0..grid.n)
        .map(|k| {
            if grid.t0 + (k as f64 + 0.5) * grid.dt > 0.0 {
                slope
            } else {
                0.0
            }
        })
        .collect();
    taper_tail(&mut rate, 0.2);
    let smooth = filter(&rate, grid.dt, |w| C::from(force_spectrum(w, contact_s)));
    let mut acc = 0.0;
    let samples = smooth
        .iter()
        .map(|r| {
            acc += r * grid.dt;
            acc
        })
        .collect();
    Waveform {
        t0: grid.t0 + grid.dt,
        dt: grid.dt,
        samples,
    }
}

/// The regularised push response at distance `r_m` (seed 002 eq. 5, Fig. 2):
/// u_eps = f_eps * u_n with eps / c_s = t_c / 4, m/N, on `grid`; `None` for the
/// unregularised eq. 3. Each sample of u_n is its average over the sample (16 points),
/// which keeps the Rayleigh front's integrable singularity finite.
pub fn push_displacement(ground: &HalfSpace, r_m: f64, contact_s: Option<f64>, grid: Grid) -> Waveform {
    let lamb = Lamb::new(ground.poisson);
    let scale = (1.0 - lamb.nu) / (2.0 * PI * ground.shear_modulus() * r_m);
    let cs = ground.shear_speed();
    let sub = 16;
    let u: Vec<f64> = (0..grid.n)
        .map(|k| {
            (0..sub)
                .map(|j| {
                    let t = grid.t0 + (k as f64 + (j as f64 + 0.5) / sub as f64) * grid.dt;
                    lamb.shape(cs * t / r_m)
                })
                .sum::<f64>()
                * scale
                / sub as f64
        })
        .collect();
    let samples = match contact_s {
        None => u,
        Some(tc) => {
            // u_n tends to its static value: filter its steps (as for the volume)
            let mut du: Vec<f64> = std::iter::once(u[0]).chain(u.windows(2).map(|w| w[1] - w[0])).collect();
            taper_tail(&mut du, 0.1);
            let smooth = filter(&du, grid.dt, |w| C::from(force_spectrum(w, tc)));
            let mut acc = 0.0;
            smooth
                .iter()
                .map(|d| {
                    acc += d;
                    acc
                })
                .collect()
        }
    };
    Waveform {
        t0: grid.t0 + 0.5 * grid.dt,
        dt: grid.dt,
        samples,
    }
}

/// Seed 002 Table 3 as published: the ground's sound over the ball's, dB ("relative
/// intensity"), for the Table 1 drop (t_c = 1.63e-4 s, the ground's Poisson ratio 0.25);
/// the ball's material by row and the ground's by column, both in Table 2's order (steel,
/// ceramic, granite, concrete, wood, plastic, soil, wax: `SurfaceMaterial::HALF_SPACES`).
#[rustfmt::skip]
pub const TABLE_3_PUBLISHED: [[f64; 8]; 8] = [
    [-30.25, -21.30, -18.94, -11.83, -6.12, 4.15, 19.06, 19.58],
    [-39.63, -30.69, -28.33, -21.22, -15.51, -5.23, 9.68, 10.19],
    [-39.73, -30.78, -28.43, -21.32, -15.60, -5.33, 9.58, 10.10],
    [-41.21, -32.27, -29.91, -22.80, -17.09, -6.81, 8.09, 8.61],
    [-50.76, -41.81, -39.46, -32.34, -26.63, -16.36, -1.45, -0.93],
    [-47.67, -38.73, -36.37, -29.26, -23.55, -13.27, 1.64, 2.15],
    [-45.65, -36.71, -34.35, -27.24, -21.53, -11.25, 3.65, 4.17],
    [-50.35, -41.41, -39.05, -31.94, -26.22, -15.95, -1.04, -0.53],
];

/// Seed 002 Table 3 as Granary computes it: ground over ball, dB (`ground_to_ball_db`), ball
/// material by row and ground by column, both in `SurfaceMaterial::HALF_SPACES`' order, for Table
/// 1's drop with the paper's conventions for the table: t_c = 1.63e-4 s and the ground's
/// Poisson ratio 0.25 throughout (only the ball's density and the ground's E and rho vary).
pub fn table_3() -> [[f64; 8]; 8] {
    use crate::base::materials::SurfaceMaterial;
    SurfaceMaterial::HALF_SPACES.map(|ball| {
        SurfaceMaterial::HALF_SPACES.map(|ground| {
            let mut g = HalfSpace::from_elastic(ground.data().elastic);
            g.poisson = 0.25;
            let mut drop = BallDrop::table1(HalfSpace::from_elastic(ball.data().elastic), g);
            drop.contact_s = Some(1.633e-4);
            drop.run(16.0).ground_to_ball_db()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::SurfaceMaterial;

    /// Seed 002 eq. 3 as written: the three complex terms, each through `Complex::sqrt`.
    fn shape_as_written(l: &Lamb, tau: f64) -> f64 {
        if tau <= l.a {
            0.0
        } else if tau < 1.0 {
            let t2 = C::from(tau * tau);
            let sum: C = (0..3).map(|j| l.coef[j] / (t2 - l.kappa_sq[j]).sqrt()).sum();
            0.5 * (1.0 - sum.re)
        } else if tau < l.gamma {
            1.0 - (l.coef[0] / C::from(tau * tau - l.gamma * l.gamma).sqrt()).re
        } else {
            1.0
        }
    }

    /// `RayleighPush::at` with every node through `shape_as_written`, one at a time.
    fn at_as_written(p: &RayleighPush, t: f64) -> f64 {
        let Listener {
            horizontal_m: rho,
            height_m: z,
        } = p.listener;
        let mut total = 0.0;
        for &(phi, w) in &p.azimuths[..p.count] {
            let (b, d2) = (rho * phi.cos(), rho * rho + z * z);
            let big_r = |r: f64| (r * r - 2.0 * b * r + d2).max(0.0).sqrt();
            let tau = |r: f64| p.cs * (t - big_r(r) / C0) / r;
            // the same cuts as `radial`: through it with a quadrature that calls back here
            let mut cuts = vec![0.0];
            for level in [0.0, p.lamb.a, 1.0, p.lamb.gamma] {
                let q = C0 * level / p.cs;
                let (qa, qb, qc) = (1.0 - q * q, -2.0 * (b - C0 * q * t), d2 - C0 * C0 * t * t);
                let disc = qb * qb - 4.0 * qa * qc;
                if disc >= 0.0 {
                    let m = -0.5 * (qb + qb.signum() * disc.sqrt());
                    for r in [m / qa, qc / m] {
                        if r.is_finite() && r > 0.0 && t - level * r / p.cs >= -1e-15 {
                            cuts.push(r);
                        }
                    }
                }
            }
            cuts.sort_by(f64::total_cmp);
            let mut sum = 0.0;
            for pair in cuts.windows(2) {
                let (r0, r1) = (pair[0], pair[1]);
                let mid = tau(0.5 * (r0 + r1));
                if r1 - r0 <= 1e-15 || mid <= p.lamb.a {
                    continue;
                }
                if mid >= p.lamb.gamma {
                    let e = (d2 - b * b).max(1e-12).sqrt();
                    sum += ((r1 - b) / e).asinh() - ((r0 - b) / e).asinh();
                    continue;
                }
                let len = r1 - r0;
                for k in 0..RADIAL_NODES {
                    let r = r0 + len * p.node_at[k];
                    sum += p.node_weight[k] * shape_as_written(&p.lamb, tau(r)) / big_r(r).max(1e-12) * len;
                }
            }
            total += w * sum;
        }
        p.scale * total
    }

    #[test]
    fn the_shape_in_real_arithmetic_is_the_papers_complex_sum() {
        for m in SurfaceMaterial::ALL {
            let l = Lamb::new(HalfSpace::from_elastic(m.data().elastic).poisson);
            for i in 0..=4000 {
                let tau = l.a * 0.9 + (l.gamma * 1.1 - l.a * 0.9) * i as f64 / 4000.0;
                let (fast, written) = (l.shape(tau), shape_as_written(&l, tau));
                assert!(
                    (fast - written).abs() <= 1e-12 * written.abs().max(1.0),
                    "{m:?} (pair {}) tau {tau}: {fast} vs {written}",
                    l.pair
                );
            }
        }
    }

    #[test]
    fn the_rayleigh_integral_side_by_side_is_the_integral_node_by_node() {
        // every surface (conjugate pairs and real roots), a listener overhead and one aside,
        // from before the first arrival to well after the Rayleigh wave has passed
        for m in SurfaceMaterial::ALL {
            let ground = HalfSpace::from_elastic(m.data().elastic);
            for listener in [[0.0, 0.0, 0.3], [0.25, 0.1, 0.4]] {
                let push = RayleighPush::with_azimuths(&ground, Listener::at(listener), 12);
                let mut nonzero = 0;
                for i in 0..60 {
                    let t = 0.5e-3 + 0.2e-3 * i as f64;
                    let (fast, written) = (push.at(t), at_as_written(&push, t));
                    assert!(
                        (fast - written).abs() <= 1e-11 * written.abs().max(1e-30),
                        "{m:?} at {listener:?}, t = {t}: {fast} vs {written}"
                    );
                    nonzero += (written != 0.0) as usize;
                }
                assert!(nonzero > 30, "{m:?}: the times must reach the sound");
            }
        }
    }
}
