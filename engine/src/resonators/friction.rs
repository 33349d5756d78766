//! The sound of one sliding contact: seed 003 (Nakatsuka & Morishima, friction sounds),
//! with Phya's stick-slip (seed 004 §6.2.4).
//!
//! The model, as this module reads the seed (`003_d64fac26a5e2af76.txt`):
//! - The contact slides at speed `u`. Junctions (actual contact points, §3.1) form and break
//!   as it slides: one per asperity spacing slid, so their rate is proportional to the
//!   speed (§3.1). The distance between two junctions is drawn from an exponential
//!   distribution around the pair's mean spacing.
//! - Each junction sets a micro-rectangle (patch) ringing, on one of the two surfaces (drawn
//!   with the share of the contact's elastic energy each stores, `FrictionPairData::share_a`).
//!   Its sides follow the speed, `1/a = alpha u`, `1/b = beta u` (eq. 8), drawn from normal
//!   distributions whose spread is the roughness (§4.1).
//! - The patch rings as a simply supported plate (eq. 17–18, appendix A); only its odd
//!   modes radiate (eq. 14–15: an even mode's net volume velocity is zero), each as a point
//!   source (eq. 19–21); the sound is the sum over all patches (eq. 22).
//! - The patch's energy: a share of the friction work done since the last junction,
//!   `kappa mu_d W s` (seed 003 §3.1: the energy dissipated by the local stick-slips is the
//!   work of the friction force), in the modes of the patch released from the deflection
//!   the junction's force held it in (`patch_amplitudes_m`, where eq. 13 is discussed).
//! - Stick-slip (Phya §6.2.4) where `mu_s > mu_d`: the sliding body sits on the lateral
//!   spring of its contact, sticks until the spring's force reaches `mu_s W`, then slips
//!   against `mu_d W` until it comes to rest. The slip speed, not the driving speed, is the
//!   `u` above: the sound comes in bursts at the stick-slip rate (seed 003 §5.1, "fluctuating
//!   power of the sound denotes stick-slip"). Where `mu_s <= mu_d`, the contact slides at the
//!   driving speed.
//!
//! Output: acoustic pressure, Pa, at `REFERENCE_DISTANCE_M` from the contact, free field
//! (eq. 19's point source: the caller scales by `REFERENCE_DISTANCE_M / r` and delays by
//! `r / c` for a listener at `r`). Pressure rather than force because the patches radiate
//! themselves (eq. 19–22); the force that drives a cup's modes is `tangential_force_n`.

use crate::base::materials::{Elastic, FrictionPairData, PatchSurface, AIR_DENSITY, GRAVITY};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp1, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::f32::consts::PI;

/// Distance at which `Friction::render` gives the pressure, m.
pub const REFERENCE_DISTANCE_M: f32 = 1.0;
/// Mode orders m and n of a patch: the odd ones (seed 003 eq. 14–15) up to 5.
pub const MODE_ORDERS: [u32; 3] = [1, 3, 5];
/// Modes of one patch: every (m, n) of `MODE_ORDERS`.
pub const MODES_PER_PATCH: usize = MODE_ORDERS.len() * MODE_ORDERS.len();
/// Ringing modes one contact holds at most (about 56 patches); a junction that finds no
/// room is not heard (`FrictionStats::dropped`).
pub const MAX_MODES: usize = 512;
/// Highest mode frequency rendered, Hz (and at most 0.45 times the sample rate): above it
/// a mode is inaudible, and leaving it out keeps the output the same at every rate.
pub const MAX_FREQ_HZ: f32 = 20_000.0;
/// Modes are dropped when 60 dB below their start, checked every this many samples
/// (counted from `new`/`reset`, so whatever the blocks).
pub const PRUNE_EVERY: u64 = 64;
const PRUNE_RATIO_SQ: f32 = 1e-6;
/// Junctions one sample may start at most (a very fast slide over fine asperities).
const MAX_JUNCTIONS_PER_SAMPLE: usize = 4;
/// Inputs above these are taken as these.
pub const MAX_SPEED_M_S: f32 = 100.0;
pub const MAX_LOAD_N: f32 = 1e4;
/// Sides are drawn within this factor of their mean (the normal distribution's tails cut:
/// a side is never negative).
const SIDE_CLAMP: f32 = 4.0;

/// Seed 003 (`003_d64fac26a5e2af76.txt`) eq. 8: the patch's mean sides at speed `speed_m_s`, `a = 1/(alpha v)`,
/// `b = 1/(beta v)`, m. (`alpha`, `beta` in s/m^2.)
pub fn patch_sides(alpha_s_m2: f32, beta_s_m2: f32, speed_m_s: f32) -> (f32, f32) {
    (1.0 / (alpha_s_m2 * speed_m_s), 1.0 / (beta_s_m2 * speed_m_s))
}

/// Seed 003 (`003_d64fac26a5e2af76.txt`) eq. 18, the natural frequency of mode (m, n) of a simply supported plate of
/// sides `a`, `b` and thickness `h` (m), in Hz:
/// `omega_mn = pi^2 (m^2/a^2 + n^2/b^2) sqrt(D / (rho h))`, `D = E h^3 / (12 (1 - nu^2))`.
///
/// The extracted eq. 18 reads `sqrt(E h^3 / (12 rho (1 - nu^2)))` with rho "per unit
/// volume": that has units m^(1/2)/s after the `1/a^2`, not 1/s. Appendix A's eq. 33,
/// `sqrt(D / rho)`, is right only with rho the mass per area (as §5 calls it); with rho per
/// volume the mass per area is `rho h`, and eq. 18 becomes
/// `pi^2 (m^2/a^2 + n^2/b^2) h sqrt(E / (12 rho (1 - nu^2)))` (Leissa, *Vibration of
/// plates*, eq. 4.26), which is what this computes.
pub fn plate_mode_hz(m: u32, n: u32, a_m: f32, b_m: f32, thickness_m: f32, e: Elastic) -> f32 {
    let (m, n) = (m as f32, n as f32);
    let c = (e.youngs_pa / (12.0 * e.density * (1.0 - e.poisson * e.poisson))).sqrt();
    let omega = PI * PI * ((m / a_m).powi(2) + (n / b_m).powi(2)) * thickness_m * c;
    omega / (2.0 * PI)
}

/// Net volume displaced by mode (m, n) of unit amplitude, m^2: the integral of seed 003
/// (`003_d64fac26a5e2af76.txt`) eq. 17's
/// mode shape over the patch, `4 a b / (pi^2 m n)` for odd m and n (zero for even: why
/// eq. 14–15 keep only the odd orders).
pub fn mode_area_m2(m: u32, n: u32, a_m: f32, b_m: f32) -> f32 {
    4.0 * a_m * b_m / (PI * PI * (m * n) as f32)
}

/// Seed 003 (`003_d64fac26a5e2af76.txt`) eq. 19–21: peak pressure at distance `r_m` of mode (m, n) ringing with
/// displacement amplitude `amplitude_m` at angular frequency `omega`, Pa.
///
/// Eq. 19, `p = i rho c k V0 / (4 pi r)`, has units of pressure only if V0 is a volume
/// velocity (m^3/s; appendix B builds it from `U0 = 4 pi a^2 V0`, a surface times a
/// velocity): it is the monopole `p = rho omega Q / (4 pi r)`. Eq. 20's `V0 = i A omega`
/// is the mode's surface velocity; times the mode's net area (`mode_area_m2`) it is Q.
/// The sign of the displacement (eq. 21's alpha_mn, `mode_sign`) is in `amplitude_m`.
pub fn mode_pressure_pa(amplitude_m: f32, omega: f32, area_m2: f32, r_m: f32) -> f32 {
    AIR_DENSITY * omega * omega * amplitude_m * area_m2 / (4.0 * PI * r_m)
}

/// Seed 003 (`003_d64fac26a5e2af76.txt`) eq. 21, read: the sign of mode (m, n) at the patch's centre, where its junction
/// is (eq. 16 centres the patch on the contact point), `sin(m pi/2) sin(n pi/2)`.
///
/// As extracted, eq. 21 gives +1 when m + n is even and -1 when odd; with m and n odd (eq.
/// 14–15) that is always +1. Indexed by k and l of eq. 14–15 (`m = 2k + 1`, `n = 2l + 1`)
/// it is +1 when k + l is even and -1 when odd: the sign of eq. 17's mode shape at the
/// centre, which is what this returns.
pub fn mode_sign(m: u32, n: u32) -> f32 {
    debug_assert!(
        !m.is_multiple_of(2) && !n.is_multiple_of(2),
        "odd modes only (eq. 14-15)"
    );
    if ((m - 1) / 2 + (n - 1) / 2).is_multiple_of(2) {
        1.0
    } else {
        -1.0
    }
}

/// The displacement amplitudes of a patch's modes, m, given `energy_j` of vibration (seed
/// 003, `003_d64fac26a5e2af76.txt`, eq. 13 and 17, as concluded here). Eq. 13 divides the displacement equally among the
/// modes; taken literally, the monopole's omega^2 (eq. 19–20) then makes the (5,5) mode 25
/// times the (1,1) in pressure, so every patch would sound as its highest mode below the
/// band's edge and the spectrum would not follow the speed (eq. 8). This takes instead the
/// patch released from the deflection a point force `F` at its centre (the junction) holds
/// it in while it sticks: `A_mn = F alpha_mn / (M_mn omega_mn^2)`, the modal mass
/// `M_mn = M / 4` of a simply supported mode (`M = rho a b h`), alpha_mn its sign at the
/// centre (`mode_sign`). Each mode's energy is `(1/2) M_mn omega^2 A^2 = 2 F^2 / (M omega^2)`;
/// `F` makes them add up to `energy_j`.
pub fn patch_amplitudes_m(energy_j: f32, mass_kg: f32, omegas: &[f32], signs: &[f32], out: &mut [f32]) {
    let compliance: f32 = omegas.iter().map(|w| 1.0 / (w * w)).sum();
    if energy_j <= 0.0 || mass_kg <= 0.0 || !(compliance > 0.0 && compliance.is_finite()) {
        out.iter_mut().for_each(|a| *a = 0.0);
        return;
    }
    let force = (energy_j * mass_kg / (2.0 * compliance)).sqrt();
    for ((a, w), s) in out.iter_mut().zip(omegas).zip(signs) {
        *a = 4.0 * force * s / (mass_kg * w * w);
    }
}

/// One mode of one patch as it starts: frequency, Hz, and pressure at
/// `REFERENCE_DISTANCE_M` at its start, Pa (a patch released from its displaced, stuck
/// position accelerates back, `w = A cos(omega t)`: the pressure starts at its peak).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PatchMode {
    pub m: u32,
    pub n: u32,
    pub freq_hz: f32,
    pub start_pa: f32,
}

/// One patch: its sides, thickness, energy, and its modes (seed 003, `003_d64fac26a5e2af76.txt`, eq. 17–22).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Patch {
    pub a_m: f32,
    pub b_m: f32,
    pub thickness_m: f32,
    pub energy_j: f32,
    pub modes: [PatchMode; MODES_PER_PATCH],
}

impl Patch {
    /// A patch of sides `a`, `b` on `surface`, given `energy_j` of vibration.
    pub fn new(surface: &PatchSurface, a_m: f32, b_m: f32, energy_j: f32) -> Self {
        let h = surface.thickness_m;
        let mut modes = [PatchMode {
            m: 0,
            n: 0,
            freq_hz: 0.0,
            start_pa: 0.0,
        }; MODES_PER_PATCH];
        let mut omegas = [0.0f32; MODES_PER_PATCH];
        let mut signs = [0.0f32; MODES_PER_PATCH];
        for (i, mode) in modes.iter_mut().enumerate() {
            let (m, n) = (MODE_ORDERS[i / MODE_ORDERS.len()], MODE_ORDERS[i % MODE_ORDERS.len()]);
            mode.m = m;
            mode.n = n;
            mode.freq_hz = plate_mode_hz(m, n, a_m, b_m, h, surface.elastic);
            omegas[i] = 2.0 * PI * mode.freq_hz;
            signs[i] = mode_sign(m, n);
        }
        let mass = surface.elastic.density * a_m * b_m * h;
        let mut amps = [0.0f32; MODES_PER_PATCH];
        patch_amplitudes_m(energy_j, mass, &omegas, &signs, &mut amps);
        for ((mode, &w), &amp) in modes.iter_mut().zip(&omegas).zip(&amps) {
            let area = mode_area_m2(mode.m, mode.n, a_m, b_m);
            // released from a deflection: w = A cos(omega t), pressure from -omega^2 A
            mode.start_pa = -mode_pressure_pa(amp, w, area, REFERENCE_DISTANCE_M);
        }
        Patch {
            a_m,
            b_m,
            thickness_m: h,
            energy_j,
            modes,
        }
    }

    /// The patch's pressure `t` seconds after its junction, with loss factor `eta`, Pa:
    /// seed 003 (`003_d64fac26a5e2af76.txt`) eq. 22's sum over its modes of `start_pa cos(omega t) exp(-eta omega t / 2)`, for the
    /// modes below `max_hz`. The closed form `Friction` renders by recursion.
    pub fn pressure_at(&self, t: f64, eta: f32, max_hz: f32) -> f64 {
        self.modes
            .iter()
            .filter(|m| m.freq_hz < max_hz)
            .map(|m| {
                let w = 2.0 * std::f64::consts::PI * m.freq_hz as f64;
                m.start_pa as f64 * (w * t).cos() * (-(eta as f64) * w * t / 2.0).exp()
            })
            .sum()
    }
}

/// Phya (seed 004, `004_677753a92f4ac560.txt`) §6.2.4 stick-slip: the sliding body (mass `m = W / g`, the load being its weight)
/// on the lateral spring of its contact (stiffness `k = m omega0^2`), the spring's far end
/// driven at speed `v`. In the spring's force over the load, `phi = F / W`:
/// stick: `phi' = (omega0^2 / g) v` until `phi >= mu_s`; slip: `u' = g (phi - mu_d)`,
/// `phi' = (omega0^2 / g) (v - u)`, until the slip speed `u` falls back to 0. The load
/// cancels: the motion depends on speed, g, omega0 and the coefficients only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StickSlip {
    mu_s: f32,
    mu_d: f32,
    /// `omega0^2 / g`, 1/m.
    stiffness: f32,
    dt: f32,
    enabled: bool,
    slipping: bool,
    /// Slip speed u, m/s.
    u: f32,
    /// Spring force over load.
    phi: f32,
}

impl StickSlip {
    pub fn new(mu_static: f32, mu_dynamic: f32, natural_hz: f32, sample_rate: f32) -> Self {
        let w0 = 2.0 * PI * natural_hz;
        debug_assert!(
            w0 / sample_rate < 1.0,
            "the stick-slip oscillator must be far below the rate"
        );
        StickSlip {
            mu_s: mu_static,
            mu_d: mu_dynamic,
            stiffness: w0 * w0 / GRAVITY,
            dt: 1.0 / sample_rate,
            enabled: mu_static > mu_dynamic,
            slipping: false,
            u: 0.0,
            phi: 0.0,
        }
    }

    /// Back at rest, the spring relaxed.
    pub fn reset(&mut self) {
        self.slipping = false;
        self.u = 0.0;
        self.phi = 0.0;
    }

    /// Whether the contact sticks and slips at all (`mu_s > mu_d`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// One sample at driving speed `v` (m/s, finite and >= 0): the slip speed, m/s, and
    /// whether a slip started. Semi-implicit Euler (the speed first, the force from it).
    #[inline]
    pub fn step(&mut self, v: f32) -> (f32, bool) {
        if !self.enabled {
            self.u = v;
            self.phi = self.mu_d;
            return (v, false);
        }
        let mut started = false;
        if !self.slipping {
            self.phi += self.stiffness * v * self.dt;
            if self.phi >= self.mu_s {
                self.slipping = true;
                started = true;
            }
        }
        if self.slipping {
            self.u += GRAVITY * (self.phi - self.mu_d) * self.dt;
            if self.u <= 0.0 {
                self.u = 0.0;
                self.slipping = false;
            }
            self.phi += self.stiffness * (v - self.u) * self.dt;
        }
        (self.u, started)
    }

    /// The spring's force over the load (the friction force over the load while sliding).
    pub fn force_ratio(&self) -> f32 {
        self.phi
    }
}

/// What a contact did since `Friction::new`, `reset` or `reset_stats`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrictionStats {
    pub samples: u64,
    /// Junctions (patches started, heard or not).
    pub patches: u64,
    /// Junctions not heard: no room left in `MAX_MODES`.
    pub dropped: u64,
    /// Slips begun (stick-slip; zero where `mu_s <= mu_d`).
    pub slips: u64,
    pub sum_a: f64,
    pub sum_a2: f64,
    pub sum_b: f64,
    pub sum_b2: f64,
    /// Lowest and highest mode frequency of the patches, Hz (heard or not).
    pub min_hz: f32,
    pub max_hz: f32,
    /// Modes above the highest rendered frequency (ultrasonic), not heard.
    pub modes_above: u64,
}

impl FrictionStats {
    fn side(sum: f64, sum2: f64, n: u64) -> (f64, f64) {
        if n == 0 {
            return (0.0, 0.0);
        }
        let mean = sum / n as f64;
        (mean, (sum2 / n as f64 - mean * mean).max(0.0).sqrt())
    }
    /// Mean and standard deviation of side a (along the slide), m.
    pub fn side_a(&self) -> (f64, f64) {
        Self::side(self.sum_a, self.sum_a2, self.patches)
    }
    /// Mean and standard deviation of side b (across the slide), m.
    pub fn side_b(&self) -> (f64, f64) {
        Self::side(self.sum_b, self.sum_b2, self.patches)
    }
    fn per_second(&self, count: u64, sample_rate: f32) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            count as f64 * sample_rate as f64 / self.samples as f64
        }
    }
    /// Junctions per second.
    pub fn patches_per_s(&self, sample_rate: f32) -> f64 {
        self.per_second(self.patches, sample_rate)
    }
    /// Slips per second: the stick-slip rate.
    pub fn slips_per_s(&self, sample_rate: f32) -> f64 {
        self.per_second(self.slips, sample_rate)
    }
}

/// One ringing mode: `z` the analytic pressure (Pa), turned by `c` every sample.
#[derive(Debug, Clone, Copy)]
struct Ringing {
    re: f32,
    im: f32,
    c_re: f32,
    c_im: f32,
    /// |z|^2 below which the mode is dropped.
    floor_sq: f32,
}

/// The friction sound of one sliding contact. Allocates in `new` only.
#[derive(Debug, Clone)]
pub struct Friction {
    pair: FrictionPairData,
    sample_rate: f32,
    dt: f32,
    seed: u64,
    rng: Xoshiro256PlusPlus,
    stick: StickSlip,
    modes: Vec<Ringing>,
    max_hz: f32,
    /// Distance still to slide before the next junction, m.
    to_next_m: f32,
    /// The distance between the last junction and the next, m.
    spacing_m: f32,
    sample: u64,
    load_n: f32,
    stats: FrictionStats,
}

/// Speeds and loads that are not finite and positive are 0.
fn sanitize(x: f32, max: f32) -> f32 {
    if x.is_finite() && x > 0.0 {
        x.min(max)
    } else {
        0.0
    }
}

impl Friction {
    /// A contact of `pair` at `sample_rate` (Hz); `seed` draws its junctions.
    pub fn new(sample_rate: f32, seed: u64, pair: FrictionPairData) -> Self {
        let mut f = Friction {
            pair,
            sample_rate,
            dt: 1.0 / sample_rate,
            seed,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            stick: StickSlip::new(pair.mu_static, pair.mu_dynamic, pair.stick_slip_hz, sample_rate),
            modes: Vec::with_capacity(MAX_MODES),
            max_hz: MAX_FREQ_HZ.min(0.45 * sample_rate),
            to_next_m: 0.0,
            spacing_m: 0.0,
            sample: 0,
            load_n: 0.0,
            stats: FrictionStats::default(),
        };
        f.reset();
        f
    }

    /// Silent, at rest, the random stream back at its seed.
    pub fn reset(&mut self) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        self.stick.reset();
        self.modes.clear();
        self.sample = 0;
        self.spacing_m = self.draw_spacing();
        self.to_next_m = self.spacing_m;
        self.stats = FrictionStats::default();
    }

    /// `reset`, with the junctions drawn from `seed` from now on.
    pub fn reseed(&mut self, seed: u64) {
        self.seed = seed;
        self.reset();
    }

    pub fn pair(&self) -> &FrictionPairData {
        &self.pair
    }

    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Highest mode frequency rendered, Hz.
    pub fn max_freq_hz(&self) -> f32 {
        self.max_hz
    }

    pub fn stats(&self) -> &FrictionStats {
        &self.stats
    }

    pub fn reset_stats(&mut self) {
        self.stats = FrictionStats::default();
    }

    /// Modes ringing now.
    pub fn ringing_modes(&self) -> usize {
        self.modes.len()
    }

    /// The friction force on the contact, N, as of the last sample rendered: the lateral
    /// spring's (Phya §6.2.4) where it sticks and slips, `mu_d W` otherwise. What drives a
    /// cup's modes.
    pub fn tangential_force_n(&self) -> f32 {
        self.stick.force_ratio() * self.load_n
    }

    /// Current slip speed of the contact, m/s.
    pub fn slip_speed_m_s(&self) -> f32 {
        self.stick.u
    }

    fn draw_spacing(&mut self) -> f32 {
        let e: f32 = Exp1.sample(&mut self.rng);
        // never zero: at most `MAX_JUNCTIONS_PER_SAMPLE` junctions per sample anyway
        self.pair.asperity_spacing_m * e.max(1e-3)
    }

    /// Adds the friction sound of the contact sliding at `speed_m_s` under the normal load
    /// `load_n` into `out`: pressure, Pa, at `REFERENCE_DISTANCE_M`. Speed and load hold
    /// for the whole call; NaN, infinite and negative values count as 0 (silence, though
    /// patches already ringing ring on). No allocation, lock or I/O; the samples are the
    /// same however the calls split a run.
    pub fn render(&mut self, speed_m_s: f32, load_n: f32, out: &mut [f32]) {
        self.render_with_force(speed_m_s, load_n, out, None);
    }

    /// A new pair of materials for the contact from the next sample on (the stick-slip
    /// spring relaxed; patches already ringing ring on). No allocation.
    pub fn set_pair(&mut self, pair: FrictionPairData) {
        if pair != self.pair {
            self.pair = pair;
            self.stick = StickSlip::new(pair.mu_static, pair.mu_dynamic, pair.stick_slip_hz, self.sample_rate);
        }
    }

    /// Nothing ringing or sliding: rendering at speed 0 adds nothing.
    pub fn is_silent(&self) -> bool {
        self.modes.is_empty() && self.stick.u == 0.0
    }

    /// `render`, also adding the friction force on the contact, N, sample by sample into
    /// `force` (when given; as long as `out`): `tangential_force_n` at every sample.
    pub fn render_with_force(&mut self, speed_m_s: f32, load_n: f32, out: &mut [f32], mut force: Option<&mut [f32]>) {
        let v = sanitize(speed_m_s, MAX_SPEED_M_S);
        let w = sanitize(load_n, MAX_LOAD_N);
        self.load_n = w;
        for (i, o) in out.iter_mut().enumerate() {
            let (u, started) = self.stick.step(v);
            self.stats.slips += started as u64;
            if u > 0.0 && w > 0.0 {
                self.to_next_m -= u * self.dt;
                let mut n = 0;
                while self.to_next_m <= 0.0 && n < MAX_JUNCTIONS_PER_SAMPLE {
                    self.junction(u, w);
                    self.spacing_m = self.draw_spacing();
                    self.to_next_m += self.spacing_m;
                    n += 1;
                }
                if self.to_next_m <= 0.0 {
                    self.to_next_m = self.spacing_m;
                }
            }
            let mut p = 0.0f32;
            for m in self.modes.iter_mut() {
                p += m.re;
                let re = m.re * m.c_re - m.im * m.c_im;
                m.im = m.re * m.c_im + m.im * m.c_re;
                m.re = re;
            }
            *o += p;
            if let Some(f) = force.as_deref_mut() {
                if let Some(f) = f.get_mut(i) {
                    *f += self.stick.force_ratio() * w;
                }
            }
            self.sample += 1;
            if self.sample.is_multiple_of(PRUNE_EVERY) {
                self.modes.retain(|m| m.re * m.re + m.im * m.im >= m.floor_sq);
            }
        }
        self.stats.samples += out.len() as u64;
    }

    /// One junction at slip speed `u` under load `w`: a patch drawn (sides by eq. 8 and the
    /// roughness, at most the surface's `max_side_m`; surface by the energy share), its energy the share `kappa` of the work
    /// `mu_d W s` done over the distance `s` slid since the last junction, its modes started.
    fn junction(&mut self, u: f32, w: f32) {
        let side = if self.rng.random::<f32>() < self.pair.share_a {
            0
        } else {
            1
        };
        let surface = self.pair.sides[side];
        let (a_mean, b_mean) = patch_sides(surface.alpha_s_m2, surface.beta_s_m2, u);
        let na: f32 = StandardNormal.sample(&mut self.rng);
        let nb: f32 = StandardNormal.sample(&mut self.rng);
        let draw = |mean: f32, spread: f32, z: f32| {
            let side = (mean * (1.0 + spread * z)).clamp(mean / SIDE_CLAMP, mean * SIDE_CLAMP);
            side.min(surface.max_side_m)
        };
        let a = draw(a_mean, surface.spread_a, na);
        let b = draw(b_mean, surface.spread_b, nb);
        let energy = self.pair.vibration_share * self.pair.mu_dynamic * w * self.spacing_m;
        let patch = Patch::new(&surface, a, b, energy);

        let s = &mut self.stats;
        s.patches += 1;
        s.sum_a += a as f64;
        s.sum_a2 += (a as f64).powi(2);
        s.sum_b += b as f64;
        s.sum_b2 += (b as f64).powi(2);
        let lowest = patch.modes[0].freq_hz;
        let highest = patch.modes.iter().fold(0.0f32, |x, m| x.max(m.freq_hz));
        s.min_hz = if s.patches == 1 { lowest } else { s.min_hz.min(lowest) };
        s.max_hz = s.max_hz.max(highest);

        let heard = patch.modes.iter().filter(|m| m.freq_hz < self.max_hz).count();
        s.modes_above += (MODES_PER_PATCH - heard) as u64;
        if heard == 0 {
            return;
        }
        if self.modes.len() + heard > MAX_MODES {
            s.dropped += 1;
            return;
        }
        let eta = self.pair.patch_loss_factor;
        for m in patch.modes.iter().filter(|m| m.freq_hz < self.max_hz) {
            let omega = 2.0 * PI * m.freq_hz;
            let r = (-eta * omega / 2.0 * self.dt).exp();
            let (sin, cos) = (omega * self.dt).sin_cos();
            self.modes.push(Ringing {
                re: m.start_pa,
                im: 0.0,
                c_re: r * cos,
                c_im: r * sin,
                floor_sq: m.start_pa * m.start_pa * PRUNE_RATIO_SQ,
            });
        }
    }
}

/// Spectral centroid of `x`, Hz: the power-weighted mean frequency of its spectrum (one
/// FFT of the whole signal, Hann window, DC left out). For analysis: allocates.
pub fn spectral_centroid_hz(x: &[f32], sample_rate: f32) -> f64 {
    let n = x.len();
    if n < 4 {
        return 0.0;
    }
    let fft = crate::fft::forward(n);
    let mut input: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, &s)| s as f64 * (0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / n as f64).cos()))
        .collect();
    let mut spectrum = fft.make_output_vec();
    if fft.process(&mut input, &mut spectrum).is_err() {
        return 0.0;
    }
    let (mut num, mut den) = (0.0, 0.0);
    for (k, c) in spectrum.iter().enumerate().skip(1) {
        let power = c.norm_sqr();
        num += power * k as f64 * sample_rate as f64 / n as f64;
        den += power;
    }
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Sound pressure level of `x` (Pa), dB re 20 µPa, from its RMS; -inf for silence.
pub fn level_db_spl(x: &[f32]) -> f64 {
    if x.is_empty() {
        return f64::NEG_INFINITY;
    }
    let ms = x.iter().map(|&s| (s as f64).powi(2)).sum::<f64>() / x.len() as f64;
    10.0 * (ms / 4e-10).log10()
}
