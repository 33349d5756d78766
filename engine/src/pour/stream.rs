//! The unsteady stream (`flow_variation`): what makes a real pour waver (DESIGN "Pour
//! scene"). Every time scale comes from the spout, the fall or the material:
//!
//! - **The spout.** A hand-held container pours through its lip as grains flow out of an
//!   orifice; Beverloo's law, Q = C rho_b sqrt(g) (D - k d)^(5/2) (Beverloo, Leniger & van
//!   de Velde 1961; Nedderman, *Statics and Kinematics of Granular Materials*, 1992, ch. 10;
//!   C = 0.58, k = 1.5), read backwards gives the width D of the opening that passes the
//!   commanded flow: about 1 cm at 20 g/s. Orifice flows fluctuate on the time a grain takes
//!   to cross the opening, tau_s = sqrt(D / g) (about 30 ms; intermittent orifice flow:
//!   Janda, Zuriguel, Garcimartín et al., EPL 84 (2008) 44002). The hand that tilts the
//!   container corrects it more slowly (`HAND_TIME_S`). Both are log-normal
//!   Ornstein–Uhlenbeck processes of mean 1 that multiply the flow.
//! - **Cohesion.** A material whose Bond number Bo (cohesion over weight,
//!   `GrainMaterialData::bond_number`) is near or above 1 leaves in clumps: a share
//!   Bo / (1 + Bo) of the flow goes in clumps of diameter d_c = D Bo / (1 + Bo) (a clump is
//!   held by the grains around it, and cannot be wider than the opening), leaving as a
//!   Poisson process. A clump holds together as it falls, so it lands as a burst as long as
//!   it takes to pass, d_c / v (a few milliseconds), where free grains spread into a curtain:
//!   grains that leave with speeds spread by du land spread by du / g (t = (sqrt(u^2 +
//!   2 g h) - u) / g, so dt/du is -1/g for a slow exit, whatever the height), about 8 ms for du of a
//!   quarter of the exit speed sqrt(g D): far shorter than the spout's time scale, so the
//!   wavering lands as it leaves. Fine sand (Bo about 4) pours in clumps, sugar and salt
//!   (about 1) partly, rice, beads and shot (far below 1) grain by grain.
//! - **Start and end.** When the container tips past the angle of repose, the wedge of grains
//!   at its lip slides off at once: a surge, decaying over the time an avalanche takes to
//!   run the lip, sqrt(2 L / (g sin theta_r)) (`LIP_LENGTH_M`). When it is tipped back the
//!   stream ends with a trickle of the last grains on the lip, which lasts the tip-back time
//!   (`TIP_BACK_S`) times (1 + Bo): cohesive grains hang on and drop late. It ends when it
//!   is down to 1 % of its start (`TRICKLE_END`): the lip is empty.
//!
//! - **Fits.** Above `flow_variation` 0.5 (`FITS_FROM`) the hand pours in fits. A container
//!   tipped slowly lets its grains go as a heap at its angle of repose does: in discrete
//!   avalanches, each taking the surface from the angle where it lets go to
//!   `AVALANCHE_SPAN_DEG` below (Jaeger, Liu & Nagel, "Relaxation at the angle of repose",
//!   PRL 62 (1989) 40); a slowly turned drum flows in separate avalanches and only above a
//!   critical rate continuously (Rajchenbach, "Flow in powders: from discrete avalanches to
//!   continuous regime", PRL 65 (1990) 2221). At the lip of a container of radius R
//!   (`CONTAINER_RADIUS_M`, a jar or a bag's mouth) each avalanche moves the wedge the surface
//!   turns by the span, `(2/3) R^3 tan(span)` (as a tilted cup's, `gesture`), over the lip's
//!   avalanche time (the surge's), as a half sine; the hand tips the container on at the
//!   rate of the flow, so a slab lets go each time the lip has gathered one. When that takes
//!   longer than an avalanche lasts (a slow pour: about 7.6 g of sugar every 0.38 s at
//!   20 g/s, each over 0.13 s) the stream comes in spurts with gaps between; a fast pour's
//!   avalanches overlap into a continuous flow, as Rajchenbach's drum does. The share of the
//!   flow that leaves in fits rises from 0 at 0.5 to all of it at 1.
//!
//! With `flow_variation` = 0 none of this acts and the stream is steady (the factor is
//! exactly 1 and draws no random number); 1 is a shaky hand and a crumbly material. Up to 0.5
//! the fits do not act either (what a render of the factory presets, at 0.3 to 0.5, was
//! before them).
//! Everything runs per generator window; its random numbers come from their own stream,
//! seeded from the pour's seed, so the generator's draws do not change with it.

use crate::base::materials::{GrainMaterialData, AVALANCHE_SPAN_DEG, GRAVITY, PACKING_FRACTION};
use rand::SeedableRng;
use rand_distr::{Distribution, Poisson, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Beverloo's discharge coefficient C and empty-annulus coefficient k (Nedderman 1992).
pub const BEVERLOO_C: f32 = 0.58;
pub const BEVERLOO_K: f32 = 1.5;
/// Correction time of the pouring hand, s: slow tilt corrections of about 0.3 Hz (a
/// modelling value; physiological tremor, at 8–12 Hz, moves a container by far less).
pub const HAND_TIME_S: f32 = 0.5;
/// Log-spread (sigma of ln flow) of the spout's and the hand's fluctuations at
/// `flow_variation` = 1 (modelling values: a flow that wavers by about ±30 % and ±25 %).
pub const SPOUT_SIGMA: f32 = 0.3;
pub const HAND_SIGMA: f32 = 0.25;
/// Length of a hand-held container's lip over which the surge's avalanche runs, m.
pub const LIP_LENGTH_M: f32 = 0.05;
/// The surge's extra flow at its start, as a share of the commanded flow, at
/// `flow_variation` = 1.
pub const SURGE_SHARE: f32 = 1.0;
/// Time a hand takes to tip a container back, s (a modelling value).
pub const TIP_BACK_S: f32 = 0.25;
/// The trickle's flow at its start, as a share of the flow before note-off, at
/// `flow_variation` = 1.
pub const TRICKLE_SHARE: f32 = 0.15;
/// The trickle ends (the lip is empty) when it is down to this share of its start: after
/// ln(100) = 4.6 of its decay times.
pub const TRICKLE_END: f32 = 0.01;
/// `flow_variation` above which the hand pours in fits (the module doc).
pub const FITS_FROM: f32 = 0.5;
/// Radius of the container a hand pours from, m (a jar, a bag's mouth): its lip's avalanche
/// slab is `(2/3) R^3 tan(AVALANCHE_SPAN_DEG)`.
pub const CONTAINER_RADIUS_M: f32 = 0.07;
/// Avalanches in flight at most (a fast pour's overlap: 16 of them pass 200 g/s of the
/// lightest grains).
const FITS_IN_FLIGHT: usize = 16;
/// Seed offset of the stream's random numbers from the pour's seed.
const SEED_SALT: u64 = 0x5eed_f10e_57ea_0001;

/// The stream's time scales and shares for one material, flow and `flow_variation`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StreamParams {
    /// 0 (steady) .. 1.
    pub variation: f32,
    /// Width of the opening that passes the flow (Beverloo), m.
    pub spout_m: f32,
    /// sqrt(D / g), s.
    pub spout_time_s: f32,
    /// The material's Bond number.
    pub bond: f32,
    /// Share of the flow that leaves in clumps.
    pub clump_share: f32,
    /// Diameter of one clump, m, and its mass, kg.
    pub clump_m: f32,
    pub clump_kg: f32,
    /// Seconds of the flow one clump carries (clump_kg / Q).
    pub clump_s: f32,
    /// The surge's decay time, s.
    pub surge_time_s: f32,
    /// The trickle's decay time, s.
    pub trickle_time_s: f32,
    /// One grain's mass, kg (the trickle ends, at the latest, when less than a grain a second
    /// is left).
    pub grain_kg: f32,
    /// Share of the flow that leaves in fits (0 up to `FITS_FROM`), the mass of one fit's
    /// slab, kg, how long it flows, s, and the commanded flow, kg/s.
    pub fits: f32,
    pub fit_kg: f32,
    pub fit_s: f32,
    pub flow_kg_s: f32,
    /// One fit's peak, as a share of the flow (its half sine's `pi/2` times its mean).
    pub fit_peak: f32,
}

impl StreamParams {
    /// For a flow of `flow_kg_s` (the commanded one; at least a gram a second is assumed),
    /// grains of `grain` with radius `radius_m` and density `density` (kg/m^3).
    pub fn new(variation: f32, flow_kg_s: f32, grain: &GrainMaterialData, radius_m: f32, density: f32) -> Self {
        let variation = if variation.is_finite() {
            variation.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let bulk = PACKING_FRACTION * density;
        let q = flow_kg_s.max(1e-3);
        // Beverloo's law solved for D: D = (Q / (C rho_b sqrt g))^(2/5) + k d
        let spout_m = (q / (BEVERLOO_C * bulk * GRAVITY.sqrt())).powf(0.4) + BEVERLOO_K * 2.0 * radius_m;
        let spout_time_s = (spout_m / GRAVITY).sqrt();
        let bond = grain.bond_number(radius_m, density);
        let cohesive = bond / (1.0 + bond);
        let clump_d = spout_m * cohesive;
        let clump_kg = bulk * std::f32::consts::PI / 6.0 * clump_d.powi(3);
        let theta = grain.repose_deg.to_radians();
        let surge_time_s = (2.0 * LIP_LENGTH_M / (GRAVITY * theta.sin())).sqrt();
        let fit_kg = 2.0 / 3.0 * CONTAINER_RADIUS_M.powi(3) * AVALANCHE_SPAN_DEG.to_radians().tan() * bulk;
        StreamParams {
            variation,
            spout_m,
            spout_time_s,
            bond,
            clump_share: variation * cohesive,
            clump_m: clump_d,
            clump_kg,
            clump_s: clump_kg / q,
            surge_time_s,
            trickle_time_s: TIP_BACK_S * (1.0 + bond),
            grain_kg: density * 4.0 / 3.0 * std::f32::consts::PI * radius_m.powi(3),
            fits: ((variation - FITS_FROM) / (1.0 - FITS_FROM)).clamp(0.0, 1.0),
            fit_kg,
            fit_s: surge_time_s,
            flow_kg_s: q,
            fit_peak: fit_kg * std::f32::consts::FRAC_PI_2 / surge_time_s.max(1e-4) / q,
        }
    }
}

/// The random part of the stream: the factor (mean 1) that multiplies the arriving flow.
#[derive(Debug, Clone)]
pub struct Unsteady {
    rng: Xoshiro256PlusPlus,
    /// The spout's and the hand's Ornstein–Uhlenbeck states (ln flow, unit variance).
    spout: f32,
    hand: f32,
    /// The clumps arriving now, as a share of the mean flow.
    clumps: f32,
    /// The factor at the last window boundary.
    factor: f32,
    /// Grains gathered at the lip, kg (`None` before the first fit: the first slab goes at
    /// once), and the avalanches in flight: seconds since each started (`None`: a free slot).
    lip_kg: Option<f32>,
    fits: [Option<f32>; FITS_IN_FLIGHT],
}

impl Unsteady {
    pub fn new(seed: u64) -> Self {
        Unsteady {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT),
            spout: 0.0,
            hand: 0.0,
            clumps: 0.0,
            factor: 1.0,
            lip_kg: None,
            fits: [None; FITS_IN_FLIGHT],
        }
    }

    /// Back to a steady stream with the random numbers restarted from `seed`.
    pub fn reset(&mut self, seed: u64) {
        *self = Unsteady::new(seed);
    }

    /// The factor at the last boundary.
    pub fn factor(&self) -> f32 {
        self.factor
    }

    /// Advances `dt` seconds and returns the factor there: exp(sigma_s x_s + sigma_h x_h -
    /// (sigma_s^2 + sigma_h^2) / 2) times the share not in clumps, plus the clumps' share
    /// now, for grains landing at `impact_speed` (m/s). Mean 1. Exactly 1, with no draw, at
    /// `variation` 0.
    pub fn step(&mut self, p: &StreamParams, dt: f32, impact_speed: f32) -> f32 {
        if p.variation <= 0.0 {
            self.spout = 0.0;
            self.hand = 0.0;
            self.clumps = 0.0;
            self.factor = 1.0;
            return 1.0;
        }
        // exact Ornstein–Uhlenbeck steps of unit variance: x <- a x + sqrt(1 - a^2) N(0, 1)
        let ou = |x: f32, tau: f32, rng: &mut Xoshiro256PlusPlus| {
            let a = (-dt / tau.max(1e-4)).exp();
            let n: f32 = StandardNormal.sample(rng);
            a * x + (1.0 - a * a).max(0.0).sqrt() * n
        };
        self.spout = ou(self.spout, p.spout_time_s, &mut self.rng);
        self.hand = ou(self.hand, HAND_TIME_S, &mut self.rng);
        let (ss, sh) = (SPOUT_SIGMA * p.variation, HAND_SIGMA * p.variation);
        let wavering = (ss * self.spout + sh * self.hand - 0.5 * (ss * ss + sh * sh)).exp();
        // clumps: shot noise of mean `clump_share` in units of the mean flow Q. A clump
        // carries clump_s = clump_kg / Q seconds of the mean flow and arrives as an
        // exponential burst of time constant tau_c = d_c / v; clumps leave at clump_share / clump_s a
        // second (so their mean is clump_share). Each adds clump_s (1 - decay) / dt at the
        // boundary it leaves in and decays by `decay` a window: the discrete burst carries
        // exactly clump_s.
        let clump_time_s = p.clump_m / impact_speed.max(0.05);
        let decay = (-dt / clump_time_s.max(1e-5)).exp();
        self.clumps *= decay;
        if p.clump_share > 0.0 && p.clump_s > 0.0 {
            let rate = p.clump_share / p.clump_s;
            let n = match Poisson::new((rate * dt) as f64) {
                Ok(d) => d.sample(&mut self.rng) as f32,
                Err(_) => 0.0,
            };
            self.clumps += n * p.clump_s * (1.0 - decay) / dt;
        }
        let factor = (1.0 - p.clump_share) * wavering + self.clumps;
        self.factor = if p.fits > 0.0 {
            (1.0 - p.fits) * factor + p.fits * self.fits(p, dt, wavering)
        } else {
            factor
        };
        self.factor
    }

    /// The flow of the fits at the window's end, as a share of the mean flow: the lip gathers
    /// the flow (as the hand wavers), a slab lets go whenever it holds one, and each flows over
    /// `fit_s` as a half sine, carrying exactly its mass.
    fn fits(&mut self, p: &StreamParams, dt: f32, wavering: f32) -> f32 {
        let slab = p.fit_kg.max(1e-9);
        let lip = self.lip_kg.get_or_insert(slab);
        *lip += p.flow_kg_s * wavering * dt;
        for f in self.fits.iter_mut() {
            if let Some(t) = f {
                *t += dt;
                if *t >= p.fit_s {
                    *f = None;
                }
            }
        }
        while *lip >= slab {
            *lip -= slab;
            // a free slot, or (a pour beyond what the slots follow) the oldest
            let slot = match self.fits.iter().position(Option::is_none) {
                Some(i) => i,
                None => (0..FITS_IN_FLIGHT)
                    .max_by(|&a, &b| self.fits[a].unwrap_or(0.0).total_cmp(&self.fits[b].unwrap_or(0.0)))
                    .unwrap_or(0),
            };
            self.fits[slot] = Some(0.0);
        }
        self.fits
            .iter()
            .flatten()
            .map(|t| p.fit_peak * (std::f32::consts::PI * t / p.fit_s.max(1e-4)).sin())
            .sum()
    }
}
