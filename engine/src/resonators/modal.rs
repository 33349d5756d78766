//! The cup: a modal resonator bank (thesis ch. 3) driven by grain–cup contact forces.
//!
//! Each mode is a complex one-multiply oscillator (thesis eq. 3.15): its state `y` is the
//! analytic signal of the mode's surface *velocity* (eq. 3.18: pressure depends on surface
//! velocity, so the bank integrates forces into velocity). A force `f` (N) applied at a
//! point where the mode shape has value `phi` adds `phi f dt / M` to `y` (eq. 3.13–3.16:
//! impulses add linearly to the oscillator state), `M` the modal mass. Radiated pressure
//! follows from the radiated power of a vibrating surface, `W = rho0 c sigma S <v^2>`
//! (Cremer & Heckl), spread over a sphere: `p = rho0 c sqrt(A / (4 pi)) v / r` with the
//! effective radiating area `A = sigma S <psi^2>` (radiation efficiency x surface x mean
//! square of the mode shape) and `v` the mode's peak surface velocity.
//!
//! The modes come from the finite-element analysis of the cup's shape (`cups`, assets made
//! by `cargo xtask modal`), scaled to the material and size (`cups` module doc). Each
//! grain–cup collision reaches the bank as the band-limited half-sine force of its Hertz
//! contact (`kernels`): a mode at `f` receives the force spectrum's value there, so hard,
//! short contacts excite the high modes and soft, long ones do not (Phya 4.7).
//!
//! Damping: thesis eq. 3.10 decouples the modes with the modal damping coefficient
//! `c_i = alpha1 lambda_i + alpha2` (Rayleigh, eq. 3.6); measured cup materials are closer to
//! a constant loss factor eta (Cremer & Heckl; the table in `materials`), i.e.
//! `c_i = eta w_i`, a decay rate `delta_i = c_i / 2 = eta w_i / 2`. Grains resting on the
//! surface add the loss `GRAIN_CONTACT_LOSS` in proportion to the share of the mode's
//! surface motion they touch (thesis 7.1, recordings 41/42; Phya 4.6), and their added mass
//! lowers the frequencies a little.

use crate::derived::cups::{floor_coverage, wall_bus, CupState, CUP_BUSES, FLOOR_BUS, RIM_BUS, WALL_RINGS};

use crate::base::materials::{AIR_DENSITY, PACKING_FRACTION, SPEED_OF_SOUND};
use crate::base::simd::{all_zero, madd, Isa, Kernel, Target};
use crate::resonators::diffuse::{coincidence_frequency, plate_modal_density, DiffuseParams};
use crate::resonators::nonlinear::{buzz_force, coupling_force, coupling_gain, glide, stretch, Nonlinear};
use std::f64::consts::PI;

/// Maximum number of modes (fixed capacity; the assets hold 48 per cup).
pub const MAX_MODES: usize = 48;

/// Loss factor added by grains in contact with a surface (granular damping). Chosen so
/// that a full steel cup rings for well under a second, as recordings 41/42 of the thesis
/// (MetalFull vs MetalEmpty) show; Phya 4.6 models the same effect as contact damping.
pub const GRAIN_CONTACT_LOSS: f64 = 0.06;
/// Fraction of the grains' mass that moves with the wall (added mass).
const ADDED_MASS_FRACTION: f64 = 0.1;
/// Largest added mass relative to the cup's: loose grains couple to the wall only through
/// the layer against it, so even a light cup full of heavy grains drops its modes by at
/// most 1 - 1/sqrt(1.25) = 11 %.
const MAX_ADDED_MASS_RATIO: f64 = 0.25;
/// Half the angle between the listener's ears as seen from the cup at full stereo width, rad.
const EAR_HALF_ANGLE: f64 = 0.35;

/// One mode as used at runtime.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mode {
    pub freq_hz: f32,
    /// Decay rate, 1/s (T60 = ln(1000) / delta).
    pub decay_per_s: f32,
    /// Mode-shape value at each bus, relative to the shape's peak normal displacement.
    pub shape: [f32; CUP_BUSES],
    /// RMS shape over the floor, the wall rings and the rim, relative to the peak.
    pub location: [f32; 2 + WALL_RINGS],
    /// Modal mass, kg (1 / peak^2 of the mass-normalised shape).
    pub mass_kg: f32,
    /// Effective radiating area sigma S <psi^2>, m^2.
    pub radiating_area_m2: f32,
    /// Azimuthal order and orientation (rad) of the pattern cos(order (theta - orientation)).
    pub order: u32,
    pub orientation: f32,
}

impl Mode {
    pub const ZERO: Mode = Mode {
        freq_hz: 0.0,
        decay_per_s: 1.0,
        shape: [0.0; CUP_BUSES],
        location: [0.0; 2 + WALL_RINGS],
        mass_kg: 1.0,
        radiating_area_m2: 0.0,
        order: 0,
        orientation: 0.0,
    };

    pub fn t60_s(&self) -> f32 {
        1000f32.ln() / self.decay_per_s
    }

    /// Velocity gain of a unit impulse at each place (floor, rings, rim), m/s per N s at the
    /// point of peak motion: the mass-normalised shape there, 1/sqrt(kg), times the peak.
    pub fn impulse_gains(&self) -> [f32; 2 + WALL_RINGS] {
        let peak = 1.0 / self.mass_kg.max(1e-12).sqrt();
        self.location.map(|g| g * peak)
    }

    /// Far-field directivity toward azimuth `theta` (0 = the listener's side), relative to
    /// the mean: `sqrt(2) cos(order (theta - orientation))`, 1 for axisymmetric modes.
    pub fn directivity(&self, theta: f64) -> f64 {
        if self.order == 0 {
            1.0
        } else {
            std::f64::consts::SQRT_2 * (self.order as f64 * (theta - self.orientation as f64)).cos()
        }
    }
}

/// Radiation efficiency of an order-`n` multipole of size `radius` at wavenumber k,
/// `sigma = x^(2n) / (1 + x^(2n))`, x = k R / n: small below the coincidence of the lobe
/// size with the wavelength, 1 above (a smooth fit of the cylindrical multipole law).
fn radiation_efficiency(k: f64, radius: f64, order: u32) -> f64 {
    let n = order.max(1) as f64;
    let x2n = (k * radius / n).powf(2.0 * n).min(1e30);
    x2n / (1.0 + x2n)
}

/// Wetted share of each place (floor, rings, rim) for a fill level, and the pile height
/// above the inner floor, m.
fn wetness(cup: &CupState) -> ([f64; 2 + WALL_RINGS], f64) {
    let c = &cup.cup;
    let fill = cup.fill.clamp(0.0, 1.0) as f64;
    let pile = fill * c.depth as f64;
    let mut wet = [0.0; 2 + WALL_RINGS];
    wet[0] = floor_coverage(pile, cup.grain_diameter_m as f64);
    for r in 0..WALL_RINGS {
        let (lo, hi) = (c.ring_edges[r] as f64, c.ring_edges[r + 1] as f64);
        wet[1 + r] = ((pile - lo) / (hi - lo)).clamp(0.0, 1.0);
    }
    wet[1 + WALL_RINGS] = if fill >= 1.0 { 1.0 } else { 0.0 };
    (wet, pile)
}

/// The highest mode frequency the engine keeps at `sample_rate`, Hz: below Nyquist with a
/// margin (the oscillators alias near it), and no higher than hearing.
pub fn max_mode_freq_hz(sample_rate: f32) -> f32 {
    (0.45 * sample_rate).min(20_000.0)
}

/// Builds the mode set of the cup (module doc). Modes above `max_freq_hz` are dropped.
/// Returns the number written to `out`. Never allocates.
pub fn build_modes(cup: &CupState, max_freq_hz: f32, out: &mut [Mode; MAX_MODES]) -> usize {
    let m = cup.cup.model();
    let md = cup.material.data();
    let el = md.elastic;
    let (e, rho) = (el.youngs_pa as f64, el.density as f64);
    let s = cup.cup.size as f64;
    let rho_ratio = rho / m.reference_material.density;
    let speed = m.speed_ratio(e, rho);
    let (wet, pile) = wetness(cup);
    let cup_mass = m.mass_kg * rho_ratio * s.powi(3);
    // the pile fills the cup's real inner volume up to its height
    let pile_volume = cup.cup.volume_below(pile as f32) as f64;
    let grain_mass = PACKING_FRACTION as f64 * cup.grain_density.max(0.0) as f64 * pile_volume;
    let added = (ADDED_MASS_FRACTION * grain_mass / cup_mass).min(MAX_ADDED_MASS_RATIO);
    let freq_scale = speed / s / (1.0 + added).sqrt();
    let a = &m.areas_m2;
    let area = [a.floor, a.wall[0], a.wall[1], a.wall[2], a.rim];
    let mut count = 0;
    for rec in m.modes.iter().take(MAX_MODES) {
        let freq = rec.freq_hz * freq_scale;
        if freq >= max_freq_hz as f64 {
            break;
        }
        let g = &rec.gains;
        let rms = [g.floor, g.wall[0], g.wall[1], g.wall[2], g.rim];
        // share of the mode's surface motion (area x mean square) that grains touch
        let (mut touched, mut total) = (0.0, 0.0);
        for i in 0..rms.len() {
            let w = area[i] * rms[i] * rms[i];
            touched += w * wet[i];
            total += w;
        }
        let share = if total > 0.0 { touched / total } else { 0.0 };
        let eta = md.loss_factor as f64 + GRAIN_CONTACT_LOSS * share;
        let w = 2.0 * PI * freq;
        let mut shape = [0f32; CUP_BUSES];
        shape[FLOOR_BUS] = (g.floor / rec.peak) as f32;
        for r in 0..WALL_RINGS {
            for sector in 0..crate::derived::cups::SECTORS {
                shape[wall_bus(r, sector)] = (rec.sectors[r][sector] / rec.peak) as f32;
            }
        }
        shape[RIM_BUS] = (g.rim / rec.peak) as f32;
        let k = w / SPEED_OF_SOUND as f64;
        let sigma = radiation_efficiency(k, cup.cup.rim_radius as f64, rec.order as u32);
        out[count] = Mode {
            freq_hz: freq as f32,
            decay_per_s: (eta * w / 2.0) as f32,
            shape,
            location: rms.map(|x| (x / rec.peak) as f32),
            // mass-normalised shapes scale as 1 / sqrt(rho L^3): M = rho / rho_ref s^3 / peak^2
            mass_kg: (rho_ratio * s.powi(3) / (rec.peak * rec.peak)) as f32,
            radiating_area_m2: (sigma * rec.radiating_area_m2 * s * s) as f32,
            order: rec.order as u32,
            orientation: rec.orientation_rad as f32,
        };
        count += 1;
    }
    count
}

/// Parameters of the diffuse resonator (Phya 7.2, `diffuse`) for a cup whose modal part is
/// `modes`: it starts above the highest mode, with the material's loss (plus the wetted
/// share of the surface) in every band.
pub fn diffuse_params(cup: &CupState, modes: &[Mode], distance_m: f32) -> DiffuseParams {
    let m = cup.cup.model();
    let md = cup.material.data();
    let el = md.elastic;
    let s = cup.cup.size as f64;
    let (e, rho, nu) = (el.youngs_pa as f64, el.density as f64, el.poisson as f64);
    let area = m.areas_m2.outer * s * s;
    let wall = cup.cup.wall_thickness as f64;
    let (wet, _) = wetness(cup);
    let a = &m.areas_m2;
    let wetted = (a.floor * wet[0] + (0..WALL_RINGS).map(|r| a.wall[r] * wet[1 + r]).sum::<f64>() + a.rim * wet[4])
        / (a.floor + a.wall.iter().sum::<f64>() + a.rim);
    let top = modes.iter().map(|m| m.freq_hz).fold(0.0f32, f32::max);
    DiffuseParams {
        low_hz: top,
        loss_factor: (md.loss_factor as f64 + GRAIN_CONTACT_LOSS * wetted) as f32,
        mass_kg: (m.mass_kg * rho / m.reference_material.density * s.powi(3)) as f32,
        area_m2: area as f32,
        edge_m: (2.0 * PI * (cup.cup.rim_radius + cup.cup.floor_radius) as f64) as f32,
        coincidence_hz: coincidence_frequency(wall, e, rho, nu) as f32,
        modal_density_per_hz: plate_modal_density(area, wall, e, rho, nu) as f32,
        distance_m,
    }
}

/// Removes the steady part of the bank's output: a one-pole high-pass (`y[n] = x[n] -
/// x[n-1] + r y[n-1]`, corner `DC_BLOCK_HZ`), per channel, sample by sample.
///
/// A mode's surface velocity under a steady force is zero: the force holds the surface
/// displaced, it does not keep it moving (the second-order mode of thesis eq. 3.10 has no
/// response at 0 Hz). The one-multiply oscillator the bank runs (eq. 3.15) does respond: the
/// real part of its gain at 0 Hz, Re 1 / (1 - p), is about 1/2 + delta T / (w T)^2 for a
/// lightly damped mode. A pour pushes on the cup with a mean force (the momentum the grains
/// bring, passed on through the pile, one-sided), so without this the cup stem carries an
/// offset and a rumble that follows the flow.
#[derive(Debug, Clone, Copy, Default)]
pub struct DcBlocker {
    r: f32,
    x1: [f32; 2],
    y1: [f32; 2],
}

/// Corner of `DcBlocker`, Hz: far below any cup's lowest mode (a few hundred Hz for the
/// largest bowl, about a kilohertz and up for a mug).
pub const DC_BLOCK_HZ: f64 = 20.0;

impl DcBlocker {
    pub fn new(sample_rate: f32) -> Self {
        DcBlocker {
            r: (-2.0 * PI * DC_BLOCK_HZ / sample_rate as f64).exp() as f32,
            ..Default::default()
        }
    }

    pub fn reset(&mut self) {
        self.x1 = [0.0; 2];
        self.y1 = [0.0; 2];
    }

    /// Filters both channels in place, side by side (each one's recursion waits on its last
    /// sample; two in one loop overlap): the same samples as `process` on each.
    pub fn process_pair(&mut self, l: &mut [f32], r: &mut [f32]) {
        debug_assert_eq!(l.len(), r.len());
        let ([mut xl, mut xr], [mut yl, mut yr]) = (self.x1, self.y1);
        for (a, b) in l.iter_mut().zip(r.iter_mut()) {
            let (ya, yb) = (*a - xl + self.r * yl, *b - xr + self.r * yr);
            (xl, xr) = (*a, *b);
            (*a, *b) = (ya, yb);
            (yl, yr) = (ya, yb);
        }
        (self.x1, self.y1) = ([xl, xr], [yl, yr]);
    }

    /// Filters channel `ch` in place.
    pub fn process(&mut self, ch: usize, x: &mut [f32]) {
        let (mut x1, mut y1) = (self.x1[ch], self.y1[ch]);
        for v in x {
            let y = *v - x1 + self.r * y1;
            x1 = *v;
            *v = y;
            y1 = y;
        }
        self.x1[ch] = x1;
        self.y1[ch] = y1;
    }
}

/// Modes per SIMD lane group of the bank: one AVX-512 vector, two AVX or four SSE ones.
pub const LANES: usize = 16;
const GROUPS: usize = MAX_MODES / LANES;
type Lane = [f32; LANES];
/// Longest span `ModalBank::process` takes in one call, samples.
pub const MAX_SPAN: usize = 128;

/// The resonator bank. Fixed capacity; `set_modes` never allocates.
///
/// Laid out for SIMD: modes in groups of `LANES`, every coefficient and state an array of
/// one group's lanes, so one pass over a span advances `LANES` modes at once.
pub struct ModalBank {
    sample_rate: f32,
    osc: Oscillators,
    /// A span's per-lane output sums (L, R, and the floor's acceleration on the nonlinear
    /// path), kept here so a span writes only what it uses.
    acc: [[Lane; MAX_SPAN]; 3],
    modes: [Mode; MAX_MODES],
    /// Each mode's angular frequency (rad/s) and per-sample decay factor at rest, which the
    /// pitch glide (`control`) starts from.
    base: [(f64, f64); MAX_MODES],
    /// The metal cup's nonlinear path (`nonlinear`), or none (a linear bank).
    nonlinear: Option<Nonlinear>,
    /// The instruction set `process` runs in (`simd`).
    isa: Isa,
}

/// The oscillators' coefficients and states, in lane groups.
struct Oscillators {
    count: usize,
    /// Pole e^{(-delta + i w) T}.
    pole_re: [Lane; GROUPS],
    pole_im: [Lane; GROUPS],
    /// Input gain per bus: shape * T / M (m/s per N sample).
    input: [[Lane; CUP_BUSES]; GROUPS],
    /// Output: pressure per unit surface velocity Re(y), per channel, Pa s/m.
    out: [[Lane; GROUPS]; 2],
    y_re: [Lane; GROUPS],
    y_im: [Lane; GROUPS],
    /// The nonlinear path (`nonlinear`) runs: mode coupling and the floor's acceleration.
    nl: bool,
    /// Displacement per unit Im(y) (1 / w, s), summed over a section for the coupling.
    disp: [Lane; GROUPS],
    /// The floor's acceleration per unit Im(y) (-w times the floor shape, 1/s).
    accel: [Lane; GROUPS],
    /// Input gain of the coupling force at the mode's peak: T / M (m/s per N sample); zero
    /// in the first section, which nothing drives.
    couple_in: [Lane; GROUPS],
    /// Coupling gain of each section into the next, N/m^2 (`nonlinear::coupling_gain`).
    kappa: [f32; GROUPS],
    /// A section's displacement is clipped to +- this (the wall thickness), m.
    clip: f32,
    /// Each section's summed displacement over the span, m.
    section: [[f32; MAX_SPAN]; GROUPS],
    /// Mass of the grain layer resting on the floor, kg (`nonlinear::buzz_force`).
    layer_kg: f32,
}

impl ModalBank {
    pub fn new(sample_rate: f32, isa: Isa) -> Self {
        ModalBank {
            sample_rate,
            osc: Oscillators {
                count: 0,
                pole_re: [[0.0; LANES]; GROUPS],
                pole_im: [[0.0; LANES]; GROUPS],
                input: [[[0.0; LANES]; CUP_BUSES]; GROUPS],
                out: [[[0.0; LANES]; GROUPS]; 2],
                y_re: [[0.0; LANES]; GROUPS],
                y_im: [[0.0; LANES]; GROUPS],
                nl: false,
                disp: [[0.0; LANES]; GROUPS],
                accel: [[0.0; LANES]; GROUPS],
                couple_in: [[0.0; LANES]; GROUPS],
                kappa: [0.0; GROUPS],
                clip: 0.0,
                section: [[0.0; MAX_SPAN]; GROUPS],
                layer_kg: 0.0,
            },
            acc: [[[0.0; LANES]; MAX_SPAN]; 3],
            modes: [Mode::ZERO; MAX_MODES],
            base: [(0.0, 0.0); MAX_MODES],
            nonlinear: None,
            isa,
        }
    }

    pub fn reset(&mut self) {
        self.osc.y_re = [[0.0; LANES]; GROUPS];
        self.osc.y_im = [[0.0; LANES]; GROUPS];
    }

    pub fn modes(&self) -> &[Mode] {
        &self.modes[..self.osc.count]
    }

    /// Velocity state of mode `i` (analytic signal, m/s).
    pub fn state(&self, i: usize) -> (f32, f32) {
        (self.osc.y_re[i / LANES][i % LANES], self.osc.y_im[i / LANES][i % LANES])
    }

    /// Installs a mode set. Oscillator states are kept, so frequencies glide without clicks.
    /// `distance_m` is the listener distance, `width` the stereo width 0..1.
    pub fn set_modes(&mut self, modes: &[Mode], distance_m: f32, width: f32) {
        let t = 1.0 / self.sample_rate as f64;
        let n = modes.len().min(MAX_MODES);
        // lanes past the last mode are silent: zero state, pole, input and output
        for i in n..MAX_MODES {
            let (g, k) = (i / LANES, i % LANES);
            self.osc.y_re[g][k] = 0.0;
            self.osc.y_im[g][k] = 0.0;
            self.osc.pole_re[g][k] = 0.0;
            self.osc.pole_im[g][k] = 0.0;
            for b in 0..CUP_BUSES {
                self.osc.input[g][b][k] = 0.0;
            }
            self.osc.out[0][g][k] = 0.0;
            self.osc.out[1][g][k] = 0.0;
        }
        self.osc.count = n;
        for (i, m) in modes.iter().take(n).enumerate() {
            let (g, k) = (i / LANES, i % LANES);
            self.modes[i] = *m;
            let w = 2.0 * PI * m.freq_hz as f64;
            let r = (-(m.decay_per_s as f64) * t).exp();
            self.base[i] = (w, r);
            self.osc.pole_re[g][k] = (r * (w * t).cos()) as f32;
            self.osc.pole_im[g][k] = (r * (w * t).sin()) as f32;
            for b in 0..CUP_BUSES {
                self.osc.input[g][b][k] = (m.shape[b] as f64 * t / m.mass_kg as f64) as f32;
            }
            // pressure from the surface velocity Re(y) (module doc)
            let gain = AIR_DENSITY as f64 * SPEED_OF_SOUND as f64 * (m.radiating_area_m2 as f64 / (4.0 * PI)).sqrt()
                / distance_m.max(0.05) as f64;
            // the ears see the cup from azimuths +-phi around the listener's (0)
            let phi = EAR_HALF_ANGLE * width.clamp(0.0, 1.0) as f64;
            let gains = [m.directivity(phi), m.directivity(-phi)];
            for (out, dir) in self.osc.out.iter_mut().zip(gains) {
                out[g][k] = (gain * dir) as f32;
            }
        }
        self.apply_nonlinear();
    }

    /// Turns the metal cup's nonlinear path (`nonlinear`) on for the current mode set (and
    /// the ones `set_modes` installs later), or off with `None`. Never allocates.
    pub fn set_nonlinear(&mut self, nonlinear: Option<Nonlinear>) {
        self.nonlinear = nonlinear;
        self.apply_nonlinear();
    }

    /// The nonlinear path's coefficients for the installed modes (`Oscillators`).
    fn apply_nonlinear(&mut self) {
        let o = &mut self.osc;
        o.disp = [[0.0; LANES]; GROUPS];
        o.accel = [[0.0; LANES]; GROUPS];
        o.couple_in = [[0.0; LANES]; GROUPS];
        o.kappa = [0.0; GROUPS];
        o.nl = false;
        let Some(nl) = self.nonlinear else {
            return;
        };
        o.nl = o.count > 0;
        o.clip = nl.wall_m as f32;
        o.layer_kg = nl.layer_kg as f32;
        let t = 1.0 / self.sample_rate as f64;
        for (i, m) in self.modes[..o.count].iter().enumerate() {
            let (g, k) = (i / LANES, i % LANES);
            let w = self.base[i].0;
            o.disp[g][k] = (1.0 / w) as f32;
            o.accel[g][k] = (-w * m.shape[FLOOR_BUS] as f64) as f32;
            if g > 0 {
                o.couple_in[g][k] = (t / m.mass_kg as f64) as f32;
            }
            if k == 0 {
                o.kappa[g] = coupling_gain(m.mass_kg as f64, w, nl.wall_m) as f32;
            }
        }
    }

    /// Control step of the nonlinear path, once per engine window (a fixed grid from the
    /// pour's start, so the result never depends on how blocks are cut): the pitch glide.
    /// Each mode's frequency is set from the bank's state, `f0 (1 + delta)`
    /// (`nonlinear::glide`), the decay kept. Does nothing for a linear bank.
    pub fn control(&mut self) {
        let Some(nl) = self.nonlinear else {
            return;
        };
        let n = self.osc.count;
        let s = stretch((0..n).map(|i| (self.state(i), self.base[i].0)));
        let t = 1.0 / self.sample_rate as f64;
        let w_max = 2.0 * PI * max_mode_freq_hz(self.sample_rate) as f64;
        for i in 0..n {
            let (g, k) = (i / LANES, i % LANES);
            let (w0, r) = self.base[i];
            let w = (w0 * (1.0 + glide(s, w0, nl.wall_m))).min(w_max.max(w0));
            self.osc.pole_re[g][k] = (r * (w * t).cos()) as f32;
            self.osc.pole_im[g][k] = (r * (w * t).sin()) as f32;
        }
    }

    /// Advances the bank by one sample with bus forces `force` (N) and returns (L, R) in Pa.
    pub fn tick(&mut self, force: &[f32; CUP_BUSES]) -> (f32, f32) {
        let buses: [&[f32]; CUP_BUSES] = std::array::from_fn(|b| std::slice::from_ref(&force[b]));
        let (mut l, mut r) = ([0.0], [0.0]);
        self.process(&buses, &mut l, &mut r);
        (l[0], r[0])
    }

    /// Advances the bank over a span: `force[b][n]` is the force on bus `b` at sample `n`
    /// (N); writes the pressure (Pa) to `out_l` / `out_r`. The span is the shortest of the
    /// slices, at most `MAX_SPAN` samples (longer input is processed in pieces).
    ///
    /// Thesis eq. 3.15 per mode and sample: `y <- p y + u`, `u = sum_b input_b force_b`; the
    /// output sums `out Re(y)` over the modes. Buses silent over the whole span are skipped
    /// (they add exact zeros), and the lane sums run in a fixed order, so the samples do
    /// not depend on how a block is cut into spans.
    pub fn process(&mut self, force: &[&[f32]; CUP_BUSES], out_l: &mut [f32], out_r: &mut [f32]) {
        self.process_buzz(force, out_l, out_r, &mut []);
    }

    /// `process`, and on the nonlinear path the buzzing grains' force (N,
    /// `nonlinear::buzz_force`) added to `buzz` sample by sample (when `buzz` is as long as
    /// the span; an empty `buzz` takes nothing).
    pub fn process_buzz(
        &mut self,
        force: &[&[f32]; CUP_BUSES],
        out_l: &mut [f32],
        out_r: &mut [f32],
        buzz: &mut [f32],
    ) {
        let isa = self.isa;
        isa.run(Process {
            bank: self,
            force,
            out: [out_l, out_r],
            buzz,
        });
    }

    /// `process` in the copy of `T`, in spans of at most `MAX_SPAN` samples. The AVX-512
    /// copy: a group is one vector, and the 32 registers hold every group's coefficients
    /// and states, so one pass runs them all (`GROUPS`); the lane sums are taken sixteen
    /// samples at a time (`lane_sums_avx512`). Elsewhere one group a pass (the AVX copy:
    /// a group is two vectors, 16 registers).
    #[inline(always)]
    fn process_in<T: Target>(
        &mut self,
        force: &[&[f32]; CUP_BUSES],
        out_l: &mut [f32],
        out_r: &mut [f32],
        buzz: &mut [f32],
    ) {
        let len = force
            .iter()
            .map(|f| f.len())
            .fold(out_l.len().min(out_r.len()), usize::min);
        let buzz = if buzz.len() >= len { &mut buzz[..len] } else { &mut [] };
        let mut done = 0;
        while done < len {
            let n = (len - done).min(MAX_SPAN);
            let piece: [&[f32]; CUP_BUSES] = std::array::from_fn(|b| &force[b][done..done + n]);
            let (l, r) = (&mut out_l[done..done + n], &mut out_r[done..done + n]);
            #[cfg(target_arch = "x86_64")]
            if T::AVX512 {
                let n = self.lanes::<GROUPS, T>(&piece, n);
                for (acc, out) in self.acc.iter().zip([l, r]) {
                    let mut t = 0;
                    while t + 16 <= n {
                        let rows: &[Lane; 16] = acc[t..t + 16].try_into().expect("16 rows");
                        // SAFETY: `T::AVX512`: this is the AVX-512 copy, run where the CPU
                        // has AVX-512 F (`simd::Isa::run`).
                        out[t..t + 16].copy_from_slice(&unsafe { lane_sums_avx512(rows) });
                        t += 16;
                    }
                    lane_sums(&acc[t..n], &mut out[t..n]);
                }
                let from = done.min(buzz.len());
                self.buzz(&mut buzz[from..], n);
                done += n;
                continue;
            }
            self.span::<1, T>(&piece, l, r);
            let from = done.min(buzz.len());
            self.buzz(&mut buzz[from..], n);
            done += n;
        }
    }

    /// Adds the buzzing grains' force for the first `n` samples of the span just run to
    /// `buzz` (nothing for a linear bank or an empty `buzz`).
    #[inline(always)]
    fn buzz(&self, buzz: &mut [f32], n: usize) {
        if !self.osc.nl || buzz.len() < n {
            return;
        }
        let mut a = [0.0f32; MAX_SPAN];
        lane_sums(&self.acc[2][..n], &mut a[..n]);
        for (b, &a) in buzz[..n].iter_mut().zip(&a[..n]) {
            *b += buzz_force(a, self.osc.layer_kg);
        }
    }

    /// One span of at most `MAX_SPAN` samples (see `process`), at most `W` groups a pass.
    #[inline(always)]
    fn span<const W: usize, T: Target>(&mut self, force: &[&[f32]; CUP_BUSES], out_l: &mut [f32], out_r: &mut [f32]) {
        let n = self.lanes::<W, T>(force, out_l.len().min(out_r.len()));
        for (acc, out) in self.acc.iter().zip([out_l, out_r]) {
            lane_sums(&acc[..n], &mut out[..n]);
        }
    }

    /// Runs the bank over the first `len` samples of `force` (at most `MAX_SPAN`) and leaves
    /// each sample's per-lane output sums in `acc` (L, R); returns the span's length.
    #[inline(always)]
    fn lanes<const W: usize, T: Target>(&mut self, force: &[&[f32]; CUP_BUSES], len: usize) -> usize {
        let n = force.iter().map(|f| f.len()).fold(len.min(MAX_SPAN), usize::min);
        // the buses with any force in the span
        let mut active = [0usize; CUP_BUSES];
        let mut buses = 0;
        for (b, f) in force.iter().enumerate() {
            // any sample not ±0 (NaN counts)
            if !all_zero(&f[..n]) {
                active[buses] = b;
                buses += 1;
            }
        }
        let nl = self.osc.nl;
        let [acc_l, acc_r, acc_a] = &mut self.acc;
        let acc = [&mut acc_l[..n], &mut acc_r[..n], &mut acc_a[..if nl { n } else { 0 }]];
        // the number of active buses as a constant: the bus loop unrolls and each group's
        // bus gains stay in registers; the nonlinear path is its own copy, so the linear
        // bank pays nothing for it
        let osc = &mut self.osc;
        if nl {
            osc.run_active::<W, true, T>(buses, &active, force, acc);
        } else {
            osc.run_active::<W, false, T>(buses, &active, force, acc);
        }
        n
    }
}

/// `ModalBank::process` as a `simd::Kernel`.
struct Process<'a, 'f> {
    bank: &'a mut ModalBank,
    force: &'a [&'f [f32]; CUP_BUSES],
    out: [&'a mut [f32]; 2],
    buzz: &'a mut [f32],
}

impl Kernel for Process<'_, '_> {
    type Output = ();
    const HAS_AVX512: bool = true;
    #[inline(always)]
    fn run<T: Target>(self, _: T) {
        let [l, r] = self.out;
        self.bank.process_in::<T>(self.force, l, r, self.buzz);
    }
}

impl Oscillators {
    /// `run_groups` with the count of active buses `buses` as its constant: the bus loop
    /// unrolls and each group's bus gains stay in registers.
    #[inline(always)]
    fn run_active<const W: usize, const NL: bool, T: Target>(
        &mut self,
        buses: usize,
        active: &[usize; CUP_BUSES],
        force: &[&[f32]; CUP_BUSES],
        acc: [&mut [Lane]; 3],
    ) {
        match buses {
            0 => self.run_groups::<0, W, NL, T>(active, force, acc),
            1 => self.run_groups::<1, W, NL, T>(active, force, acc),
            2 => self.run_groups::<2, W, NL, T>(active, force, acc),
            3 => self.run_groups::<3, W, NL, T>(active, force, acc),
            4 => self.run_groups::<4, W, NL, T>(active, force, acc),
            5 => self.run_groups::<5, W, NL, T>(active, force, acc),
            6 => self.run_groups::<6, W, NL, T>(active, force, acc),
            7 => self.run_groups::<7, W, NL, T>(active, force, acc),
            _ => self.run_groups::<CUP_BUSES, W, NL, T>(active, force, acc),
        }
    }

    /// Every group over the span with the first `B` buses of `active`, at most `W` groups a
    /// pass, the groups' outputs summed lane by lane into `acc` (L, R; one entry per
    /// sample, overwritten) in group order. Each group's recursion is a chain of dependent
    /// operations from one sample to the next; the groups of a pass are independent chains
    /// that keep the CPU busy while each waits, and their sums stay in registers. The sums
    /// run in group order whatever `W`, so every copy gives the same bits.
    #[inline(always)]
    fn run_groups<const B: usize, const W: usize, const NL: bool, T: Target>(
        &mut self,
        active: &[usize; CUP_BUSES],
        force: &[&[f32]; CUP_BUSES],
        mut acc: [&mut [Lane]; 3],
    ) {
        let n = acc[0].len().min(acc[1].len());
        let mut forces: [&[f32]; B] = [&[]; B];
        for (j, f) in forces.iter_mut().enumerate() {
            *f = &force[active[j]][..n];
        }
        let groups = self.count.div_ceil(LANES);
        if groups == 0 {
            for a in acc.iter_mut() {
                a.fill([0.0; LANES]);
            }
        }
        let mut g = 0;
        while g < groups {
            let first = g == 0;
            let take = W.clamp(1, 3).min(groups - g);
            let acc = acc.each_mut();
            match take {
                3 => self.run::<B, 3, NL, T>([g, g + 1, g + 2], first, active, &forces, acc),
                2 => self.run::<B, 2, NL, T>([g, g + 1], first, active, &forces, acc),
                _ => self.run::<B, 1, NL, T>([g], first, active, &forces, acc),
            }
            g += take;
        }
    }

    /// Groups `gs` over the span (thesis eq. 3.15 per mode: `y <- p y + u`), their outputs
    /// added in the order of `gs` to the lane sums in `acc`, or to zero on the `first` pass.
    /// The multiply-adds are fused where `T` fuses (`simd::madd`).
    ///
    /// `NL` (the metal cup, `nonlinear`): each group is a section of Phya's feed-forward
    /// coupling. Its summed displacement at each sample goes to `section`, and the group
    /// after it takes `coupling_force` of that as one more input, after the buses; the
    /// floor's acceleration is summed into `acc[2]` like an output. A section is always run
    /// before the next (in an earlier pass or earlier in the same sample), so every `W`
    /// gives the same bits.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // lane loops, indexed across several arrays
    fn run<const B: usize, const G: usize, const NL: bool, T: Target>(
        &mut self,
        gs: [usize; G],
        first: bool,
        active: &[usize; CUP_BUSES],
        forces: &[&[f32]; B],
        acc: [&mut &mut [Lane]; 3],
    ) {
        let [acc_l, acc_r, acc_a] = acc;
        let n = acc_l.len().min(acc_r.len());
        let mut cut: [&[f32]; B] = [&[]; B];
        for (c, f) in cut.iter_mut().zip(forces) {
            *c = &f[..n];
        }
        let forces = cut;
        let pr = gather(gs, &self.pole_re);
        let pi = gather(gs, &self.pole_im);
        let ol = gather(gs, &self.out[0]);
        let or = gather(gs, &self.out[1]);
        let mut input = [[[0.0; LANES]; B]; G];
        for (row, &g) in input.iter_mut().zip(&gs) {
            for (x, &bus) in row.iter_mut().zip(active) {
                *x = self.input[g][bus];
            }
        }
        let mut yr = gather(gs, &self.y_re);
        let mut yi = gather(gs, &self.y_im);
        let (dp, oa, ci) = if NL {
            (
                gather(gs, &self.disp),
                gather(gs, &self.accel),
                gather(gs, &self.couple_in),
            )
        } else {
            ([[0.0; LANES]; G], [[0.0; LANES]; G], [[0.0; LANES]; G])
        };
        for t in 0..n {
            let (mut sl, mut sr) = if first {
                ([0.0; LANES], [0.0; LANES])
            } else {
                (acc_l[t], acc_r[t])
            };
            let mut sa = if NL && !first { acc_a[t] } else { [0.0; LANES] };
            for h in 0..G {
                let mut u = [0.0f32; LANES];
                for (inp, f) in input[h].iter().zip(&forces) {
                    let f = f[t];
                    for k in 0..LANES {
                        u[k] = madd::<T>(inp[k], f, u[k]);
                    }
                }
                if NL && gs[h] > 0 {
                    let p = gs[h] - 1;
                    let f = coupling_force(self.section[p][t], self.kappa[p], self.clip);
                    for k in 0..LANES {
                        u[k] = madd::<T>(ci[h][k], f, u[k]);
                    }
                }
                let mut xs = [0.0f32; LANES];
                for k in 0..LANES {
                    // Re and Im of p y + u
                    let nr = madd::<T>(yr[h][k], pr[h][k], madd::<T>(-yi[h][k], pi[h][k], u[k]));
                    let ni = madd::<T>(yr[h][k], pi[h][k], yi[h][k] * pr[h][k]);
                    yr[h][k] = nr;
                    yi[h][k] = ni;
                    sl[k] = madd::<T>(ol[h][k], nr, sl[k]);
                    sr[k] = madd::<T>(or[h][k], nr, sr[k]);
                    if NL {
                        sa[k] = madd::<T>(oa[h][k], ni, sa[k]);
                        xs[k] = dp[h][k] * ni;
                    }
                }
                // the last section drives nothing
                if NL && gs[h] + 1 < GROUPS {
                    self.section[gs[h]][t] = lane_sum(&xs);
                }
            }
            (acc_l[t], acc_r[t]) = (sl, sr);
            if NL {
                acc_a[t] = sa;
            }
        }
        for (h, &g) in gs.iter().enumerate() {
            self.y_re[g] = yr[h];
            self.y_im[g] = yi[h];
        }
    }
}

/// `[v[gs[0]], v[gs[1]], …]`. A plain loop where `array::map` was: its closure and drop
/// machinery, copied into each of `Oscillators::run`'s 216 instances (buses × groups ×
/// nonlinear × instruction set), was a third of the engine's compiled code (`cargo
/// llvm-lines`) and of its build time; the loads are the same.
#[inline(always)]
fn gather<const G: usize>(gs: [usize; G], v: &[Lane; GROUPS]) -> [Lane; G] {
    let mut out = [[0.0; LANES]; G];
    for (o, &g) in out.iter_mut().zip(&gs) {
        *o = v[g];
    }
    out
}

impl ModalBank {
    /// Flushes tiny states to zero (no denormals in long tails).
    pub fn flush_denormals(&mut self) {
        for g in 0..GROUPS {
            for k in 0..LANES {
                if self.osc.y_re[g][k].abs() < 1e-20 && self.osc.y_im[g][k].abs() < 1e-20 {
                    self.osc.y_re[g][k] = 0.0;
                    self.osc.y_im[g][k] = 0.0;
                }
            }
        }
    }
}

/// `lane_sum` of sixteen rows at once, with the same additions in the same order: each
/// step adds, for every row, the upper half of its remaining lanes to the lower half;
/// shuffles pair the rows so that every add is a full vector (15 adds and 31 shuffles for
/// 16 rows, where one row at a time takes 4 adds and 4 shuffles each).
///
/// # Safety
/// Only where the CPU has AVX-512 F; inlined into the AVX-512 copy of `process`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn lane_sums_avx512(rows: &[Lane; 16]) -> [f32; 16] {
    use std::arch::x86_64::*;
    // SAFETY (every unsafe block): unaligned loads and stores of 16 floats from / to arrays
    // of 16 floats.
    let x: [__m512; 16] = std::array::from_fn(|t| unsafe { _mm512_loadu_ps(rows[t].as_ptr()) });
    // h[k] = x[k] + x[k + 8]: rows t, t + 1 -> [h_t | h_{t+1}] (256-bit halves)
    let h: [__m512; 8] = std::array::from_fn(|i| {
        let (a, b) = (x[2 * i], x[2 * i + 1]);
        // 128-bit blocks (a0 a1 b0 b1) + (a2 a3 b2 b3)
        _mm512_add_ps(
            _mm512_shuffle_f32x4::<0b01_00_01_00>(a, b),
            _mm512_shuffle_f32x4::<0b11_10_11_10>(a, b),
        )
    });
    // q[k] = h[k] + h[k + 4]: [h_t | h_{t+1}], [h_{t+2} | h_{t+3}] -> [q_t q_t+1 q_t+2 q_t+3]
    let q: [__m512; 4] = std::array::from_fn(|i| {
        let (a, b) = (h[2 * i], h[2 * i + 1]);
        // blocks (a0 a2 b0 b2) + (a1 a3 b1 b3)
        _mm512_add_ps(
            _mm512_shuffle_f32x4::<0b10_00_10_00>(a, b),
            _mm512_shuffle_f32x4::<0b11_01_11_01>(a, b),
        )
    });
    // r[k] = q[k] + q[k + 2], within each 128-bit block: rows (a, b) -> per block
    // (a.r0 a.r1 b.r0 b.r1)
    let r: [__m512; 2] = std::array::from_fn(|i| {
        let (a, b) = (q[2 * i], q[2 * i + 1]);
        _mm512_add_ps(
            _mm512_shuffle_ps::<0b01_00_01_00>(a, b),
            _mm512_shuffle_ps::<0b11_10_11_10>(a, b),
        )
    });
    // s = r[0] + r[1]: per block (r0 of a's two samples, of b's two) + (r1 likewise)
    let s = _mm512_add_ps(
        _mm512_shuffle_ps::<0b10_00_10_00>(r[0], r[1]),
        _mm512_shuffle_ps::<0b11_01_11_01>(r[0], r[1]),
    );
    // lane 4j + m of `s` holds row 4m + j's sum (block j of each step holds rows j, 4 + j,
    // 8 + j, 12 + j): a 4 x 4 transpose, its own inverse, puts them in row order
    let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    let mut out = [0.0f32; 16];
    unsafe { _mm512_storeu_ps(out.as_mut_ptr(), _mm512_permutexvar_ps(order, s)) };
    out
}

/// `lane_sum` of each row of `acc` into `out`, one row at a time.
#[inline(always)]
fn lane_sums(acc: &[Lane], out: &mut [f32]) {
    for (o, a) in out.iter_mut().zip(acc) {
        *o = lane_sum(a);
    }
}

/// Sum of one group's lanes in a fixed pairwise order: halves added lane by lane, down to
/// one (the order a vector reduction takes).
#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn lane_sum(x: &Lane) -> f32 {
    let mut h = [0.0f32; LANES / 2];
    for k in 0..LANES / 2 {
        h[k] = x[k] + x[k + LANES / 2];
    }
    let mut q = [0.0f32; LANES / 4];
    for k in 0..LANES / 4 {
        q[k] = h[k] + h[k + LANES / 4];
    }
    (q[0] + q[2]) + (q[1] + q[3])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::CupMaterial;
    use crate::control::choices::CupShape;
    use crate::derived::cups::Cup;

    fn cup(material: CupMaterial, fill: f32) -> CupState {
        CupState {
            material,
            cup: Cup::new(CupShape::Mug, 1.0),
            fill,
            grain_density: 1587.0,
            grain_diameter_m: 0.5e-3,
        }
    }

    #[test]
    fn impulse_through_a_mode_decays_as_analytic() {
        let fs = 48_000.0;
        let mut modes = [Mode::ZERO; MAX_MODES];
        let n = build_modes(&cup(CupMaterial::Glass, 0.0), 20_000.0, &mut modes);
        assert!(n > 10);
        let m = modes[0];
        let mut bank = ModalBank::new(fs, Isa::detect());
        bank.set_modes(&modes[..1], 0.5, 0.0);
        let mut f = [0.0; CUP_BUSES];
        f[1] = 1.0 / (1.0 / fs); // 1 N s impulse into bus 1
        bank.tick(&f);
        let (yr, yi) = bank.state(0);
        let v0 = (yr.powi(2) + yi.powi(2)).sqrt();
        let expected = (m.shape[1] / m.mass_kg).abs();
        assert!((v0 / expected - 1.0).abs() < 1e-3);
        let zero = [0.0; CUP_BUSES];
        let steps = (fs * 0.1) as usize;
        for _ in 0..steps {
            bank.tick(&zero);
        }
        let (yr, yi) = bank.state(0);
        let v1 = (yr.powi(2) + yi.powi(2)).sqrt();
        let analytic = expected * (-m.decay_per_s * steps as f32 / fs).exp();
        assert!((v1 / analytic - 1.0).abs() < 1e-2, "{v1} vs {analytic}");
    }

    /// The bank as thesis eq. 3.15-3.18 state it, one mode and one sample at a time: each
    /// mode a complex one-multiply oscillator `y <- p y + u` (from rest), its input
    /// `u = sum_b input_b f_b` over the buses, the pressure `sum_i out_i Re(y_i)`. It takes
    /// the bank's coefficients, and adds the modes in the bank's fixed order (mode `i` into
    /// partial sum `i mod LANES`, in mode order, then the partial sums pairwise,
    /// `lane_sum`), so that it gives the same bits; its multiply-adds fuse where `fused`.
    ///
    /// On the nonlinear path (`nonlinear`), Phya's feed-forward sections: the modes in
    /// groups of `LANES` (lowest first), each group's displacement `sum Im(y) / w` summed,
    /// squared (`coupling_force`) and added, after the buses, to the next group's input; and
    /// the third output, the buzzing grains' force from the floor's acceleration
    /// `sum -w s_floor Im(y)` (`buzz_force`; zero for a linear bank).
    fn reference(bank: &ModalBank, force: &[Vec<f32>], fused: bool) -> [Vec<f32>; 3] {
        let madd = |a: f32, b: f32, c: f32| if fused { a.mul_add(b, c) } else { a * b + c };
        let o = &bank.osc;
        let lane = |x: &[Lane; GROUPS], i: usize| x[i / LANES][i % LANES];
        // the lanes of the last group past the last mode are silent modes (all zero)
        let modes = o.count.div_ceil(LANES) * LANES;
        let mut y = vec![(0.0f32, 0.0f32); modes];
        let mut out = [Vec::new(), Vec::new(), Vec::new()];
        for t in 0..force[0].len() {
            let mut sums = [[0.0f32; LANES]; 3];
            let mut section = [0.0f32; GROUPS];
            let mut disp = [0.0f32; LANES];
            for (i, y) in y.iter_mut().enumerate() {
                let (g, k) = (i / LANES, i % LANES);
                let (pr, pi) = (lane(&o.pole_re, i), lane(&o.pole_im, i));
                let mut u = 0.0;
                for (b, f) in force.iter().enumerate() {
                    u = madd(o.input[g][b][k], f[t], u);
                }
                if o.nl && g > 0 {
                    let f = crate::resonators::nonlinear::coupling_force(section[g - 1], o.kappa[g - 1], o.clip);
                    u = madd(o.couple_in[g][k], f, u);
                }
                // Re and Im of p y + u
                let (yr, yi) = *y;
                let re = madd(yr, pr, madd(-yi, pi, u));
                let im = madd(yr, pi, yi * pr);
                *y = (re, im);
                for (sum, gain) in sums.iter_mut().zip(&o.out) {
                    sum[k] = madd(lane(gain, i), re, sum[k]);
                }
                if o.nl {
                    sums[2][k] = madd(lane(&o.accel, i), im, sums[2][k]);
                    disp[k] = lane(&o.disp, i) * im;
                    if k == LANES - 1 {
                        section[g] = lane_sum(&disp);
                    }
                }
            }
            for (out, sum) in out.iter_mut().zip(&sums[..2]) {
                out.push(lane_sum(sum));
            }
            let buzz = if o.nl {
                crate::resonators::nonlinear::buzz_force(lane_sum(&sums[2]), o.layer_kg)
            } else {
                0.0
            };
            out[2].push(buzz);
        }
        out
    }

    /// The bank in the copy of `isa` over spans of many lengths (its output and buzz force),
    /// and its scalar reference (`reference`).
    fn run_bank(
        isa: Isa,
        modes: &[Mode],
        nonlinear: Option<Nonlinear>,
        force: &[Vec<f32>],
    ) -> ([Vec<f32>; 3], [Vec<f32>; 3]) {
        let len = force[0].len();
        let mut bank = ModalBank::new(48_000.0, isa);
        bank.set_modes(modes, 0.5, 0.7);
        bank.set_nonlinear(nonlinear);
        let want = reference(&bank, force, isa.fused());
        let (mut l, mut r, mut b) = (vec![0.0f32; len], vec![0.0f32; len], vec![0.0f32; len]);
        let mut start = 0;
        for span in [64, 1, 300, 16, 37, 0, 128].into_iter().cycle() {
            let end = (start + span).min(len);
            let f: [&[f32]; CUP_BUSES] = std::array::from_fn(|b| &force[b][start..end]);
            bank.process_buzz(&f, &mut l[start..end], &mut r[start..end], &mut b[start..end]);
            start = end;
            if start == len {
                break;
            }
        }
        ([l, r, b], want)
    }

    #[test]
    fn every_copy_of_the_nonlinear_bank_gives_the_scalar_banks_bits_over_any_spans() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        let state = cup(CupMaterial::Steel, 0.1);
        let mut modes = [Mode::ZERO; MAX_MODES];
        let count = build_modes(&state, 20_000.0, &mut modes);
        let nl = Nonlinear::for_cup(&state).expect("steel is nonlinear");
        assert!(nl.layer_kg > 0.0);
        // hard hits on the floor and a wall: sections driven past the wall thickness, the
        // floor past g
        let len = 2000;
        let force: Vec<Vec<f32>> = (0..CUP_BUSES)
            .map(|b| {
                (0..len)
                    .map(|_| match b {
                        0 | 2 if rng.random::<f32>() < 0.01 => rng.random_range(-2000.0..2000.0),
                        _ => 0.0,
                    })
                    .collect()
            })
            .collect();
        let differ = |a: &[f32], b: &[f32]| a.iter().zip(b).position(|(x, y)| x.to_bits() != y.to_bits());
        for n in [count, LANES + 3, 2 * LANES + 5] {
            let n = n.min(count);
            for isa in crate::base::simd::Isa::available() {
                let (got, want) = run_bank(isa, &modes[..n], Some(nl), &force);
                // the path is exercised: the floor buzzes, and the coupling changes the sound
                assert!(want[2].iter().any(|&x| x != 0.0), "{n} modes: no buzz");
                for c in 0..3 {
                    assert_eq!(differ(&got[c], &want[c]), None, "{n} modes, {isa:?}, output {c}");
                }
                let linear = run_bank(isa, &modes[..n], None, &force).0;
                assert!(linear[2].iter().all(|&x| x == 0.0));
                if n > LANES {
                    assert!(differ(&linear[0], &got[0]).is_some(), "{n} modes: no coupling");
                }
            }
        }
    }

    #[test]
    fn every_copy_of_the_bank_gives_the_scalar_banks_bits_over_any_spans() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut modes = [Mode::ZERO; MAX_MODES];
        let count = build_modes(&cup(CupMaterial::Ceramic, 0.2), 20_000.0, &mut modes);
        // sparse forces on a few buses, a silent bus, a -0.0 and spans of many lengths
        let len = 3000;
        let force: Vec<Vec<f32>> = (0..CUP_BUSES)
            .map(|b| {
                (0..len)
                    .map(|t| match b {
                        3 => 0.0,
                        5 if t == 17 => -0.0,
                        _ if rng.random::<f32>() < 0.02 => rng.random_range(-5.0..5.0),
                        _ => 0.0,
                    })
                    .collect()
            })
            .collect();
        // the bank in the copy of `isa` over spans of many lengths, and its scalar reference
        let run = |isa: Isa, modes: &[Mode]| run_bank(isa, modes, None, &force);
        // the first sample whose bits differ
        let differ = |a: &[f32], b: &[f32]| a.iter().zip(b).position(|(x, y)| x.to_bits() != y.to_bits());
        let mut levels = Vec::new();
        // every group count, a partial last group included
        for n in [count, 1, LANES, LANES + 3, 2 * LANES + 5] {
            let n = n.min(count);
            for isa in crate::base::simd::Isa::available() {
                let (got, want) = run(isa, &modes[..n]);
                assert!(want[0].iter().any(|&x| x != 0.0));
                for c in 0..2 {
                    assert_eq!(differ(&got[c], &want[c]), None, "{n} modes, {isa:?}, channel {c}");
                }
                levels.push(isa.level());
            }
            // the unfused baseline copy (x86-64 CPUs without FMA) differs from the fused
            // ones by rounding only, and does differ (so a copy that fused where it should
            // not, or the reverse, would fail the comparisons above)
            let fused = run(Isa::new(crate::base::simd::Level::PortableFused).unwrap(), &modes[..n]).0;
            let unfused = run(Isa::new(crate::base::simd::Level::Portable).unwrap(), &modes[..n]).0;
            for (u, w) in unfused.iter().zip(&fused).take(2) {
                let peak = w.iter().fold(0.0f32, |m, x| m.max(x.abs()));
                let err = u.iter().zip(w).fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
                assert!(err <= 1e-4 * peak, "{n} modes: unfused differs by {err}, peak {peak}");
                assert!(err > 0.0, "{n} modes: the fused and unfused copies agree");
            }
        }
        // the copy the engine runs here was among them
        assert!(levels.contains(&Isa::detect().level()));
    }

    #[test]
    fn frequencies_scale_inversely_with_size() {
        let mut a = [Mode::ZERO; MAX_MODES];
        let mut b = a;
        build_modes(&cup(CupMaterial::Ceramic, 0.0), 1e9, &mut a);
        let mut big = cup(CupMaterial::Ceramic, 0.0);
        big.cup = Cup::new(CupShape::Mug, 2.0);
        build_modes(&big, 1e9, &mut b);
        assert!((a[0].freq_hz / b[0].freq_hz - 2.0).abs() < 1e-3);
    }

    #[test]
    fn steel_rings_longer_than_plastic_and_fill_damps() {
        let mut m = [Mode::ZERO; MAX_MODES];
        build_modes(&cup(CupMaterial::Steel, 0.0), 1e9, &mut m);
        let steel = m[0].t60_s();
        build_modes(&cup(CupMaterial::Plastic, 0.0), 1e9, &mut m);
        let plastic = m[0].t60_s();
        build_modes(&cup(CupMaterial::Steel, 0.5), 1e9, &mut m);
        let steel_full = m[0].t60_s();
        assert!(steel > 3.0 * plastic, "{steel} {plastic}");
        assert!(steel_full < 0.2 * steel, "{steel_full} {steel}");
    }
}
