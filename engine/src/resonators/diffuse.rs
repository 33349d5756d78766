//! Diffuse perceptual resonator (Phya = seed 004, §7.2) above the cup's modal range.
//!
//! "The excitation is divided into frequency bands. The energy in each band is filtered
//! with a one-pole filter to model the energy decay of the diffuse resonance. The resonant
//! energy in each band then modulates a matching synthesized output noise band."
//!
//! Energy is given physical units so the diffuse part joins the modal part without a
//! level jump. Band `b` (centre `f`, noise bandwidth `B`) holds `E`, the surface
//! mean-square velocity (m^2/s^2) of the modes the analytic mode set lacks in that band.
//! An impulse `J` excites each of the `N = n(f) B` modes of a structure of mass `M` to a
//! mean-square velocity `J^2 / (2 M^2)`; the band-passed force `x_b` carries
//! `J^2 = sum(x_b^2) T / (2B)`, so per sample `E += x_b^2 T n(f) / (4 M^2)`, and
//! `E *= exp(-2 delta T)` with `delta = eta w / 2`. The modal density of a thin shell well
//! above its ring frequency is that of a flat plate, `n(f) = sqrt(3) S / (h c_L)`
//! (Cremer & Heckl). Radiated power `W = rho0 c sigma S E` spread over a sphere gives
//! `p = rho0 c sqrt(sigma S / (4 pi)) sqrt(E) noise / r`, noise of unit RMS in the band.
//! The radiation efficiency `sigma` is 1 above the coincidence frequency
//! `f_c = c^2 / (1.8 c_L h)` and, below it, that of the plate's edge modes,
//! `sigma = P c / (pi^2 S f_c) sqrt(f / f_c)` (Maidanik 1962, `P` the edge length), joined
//! to 1 by a `(f / f_c)^4` term.

use crate::base::materials::{AIR_DENSITY, SPEED_OF_SOUND};
use crate::base::simd::{Isa, Kernel, Target};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::f64::consts::PI;

pub const MAX_BANDS: usize = 10;
/// Band width, octaves.
const BAND_OCTAVES: f64 = 0.5;

/// Band-pass coefficients (`Biquads` holds the states).
#[derive(Debug, Clone, Copy, Default)]
struct Biquad {
    b0: f32,
    b2: f32,
    a1: f32,
    a2: f32,
}

impl Biquad {
    /// Constant-peak-gain band-pass (RBJ cookbook), `octaves` wide at -3 dB.
    fn bandpass(sample_rate: f64, freq: f64, octaves: f64) -> Self {
        let w0 = 2.0 * PI * freq / sample_rate;
        let alpha = w0.sin() * ((2f64.ln() / 2.0) * octaves * w0 / w0.sin()).sinh();
        let a0 = 1.0 + alpha;
        Biquad {
            b0: (alpha / a0) as f32,
            b2: (-alpha / a0) as f32,
            a1: (-2.0 * w0.cos() / a0) as f32,
            a2: ((1.0 - alpha) / a0) as f32,
        }
    }
}

/// What the diffuse part needs to know about the cup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffuseParams {
    /// Lowest band centre, Hz (the top of the analytic mode set).
    pub low_hz: f32,
    /// Loss factor (material plus grain contact).
    pub loss_factor: f32,
    /// Mass of the cup, kg.
    pub mass_kg: f32,
    /// Radiating surface S, m^2.
    pub area_m2: f32,
    /// Length of the free and supported edges P (rim and floor), m.
    pub edge_m: f32,
    /// Coincidence frequency f_c, Hz.
    pub coincidence_hz: f32,
    /// Modal density n(f), modes per Hz (frequency-independent for a plate).
    pub modal_density_per_hz: f32,
    pub distance_m: f32,
}

/// Bands per SIMD lane group.
const LANES: usize = 4;
const GROUPS: usize = MAX_BANDS.div_ceil(LANES);
const SLOTS: usize = GROUPS * LANES;
type Lane = [f32; LANES];
/// Longest span `process` takes in one piece, samples.
const MAX_SPAN: usize = 128;

/// Biquad coefficients and states for every band, one lane per band (SIMD layout).
#[derive(Debug, Clone, Copy, Default)]
struct Biquads {
    b0: [Lane; GROUPS],
    b2: [Lane; GROUPS],
    a1: [Lane; GROUPS],
    a2: [Lane; GROUPS],
    x1: [Lane; GROUPS],
    x2: [Lane; GROUPS],
    y1: [Lane; GROUPS],
    y2: [Lane; GROUPS],
}

impl Biquads {
    fn set(&mut self, band: usize, q: &Biquad) {
        let (g, k) = (band / LANES, band % LANES);
        self.b0[g][k] = q.b0;
        self.b2[g][k] = q.b2;
        self.a1[g][k] = q.a1;
        self.a2[g][k] = q.a2;
    }

    fn clear(&mut self) {
        for s in [&mut self.x1, &mut self.x2, &mut self.y1, &mut self.y2] {
            *s = [[0.0; LANES]; GROUPS];
        }
    }

    fn clear_band(&mut self, band: usize) {
        let (g, k) = (band / LANES, band % LANES);
        for s in [&mut self.x1, &mut self.x2, &mut self.y1, &mut self.y2] {
            s[g][k] = 0.0;
        }
    }

    /// One sample of band `band` (direct form I: `y = b0 x + b2 x[-2] - a1 y[-1] -
    /// a2 y[-2]`, the RBJ band-pass having b1 = 0).
    fn tick(&mut self, band: usize, x: f32) -> f32 {
        let (g, k) = (band / LANES, band % LANES);
        let y = self.b0[g][k] * x + self.b2[g][k] * self.x2[g][k]
            - self.a1[g][k] * self.y1[g][k]
            - self.a2[g][k] * self.y2[g][k];
        self.x2[g][k] = self.x1[g][k];
        self.x1[g][k] = x;
        self.y2[g][k] = self.y1[g][k];
        self.y1[g][k] = y;
        y
    }

    /// One sample of group `g`'s bands (`tick`, lane-wise).
    #[inline(always)]
    fn run(&mut self, g: usize, x: &Lane) -> Lane {
        let mut y = [0.0; LANES];
        for k in 0..LANES {
            y[k] = self.b0[g][k] * x[k] + self.b2[g][k] * self.x2[g][k]
                - self.a1[g][k] * self.y1[g][k]
                - self.a2[g][k] * self.y2[g][k];
        }
        self.x2[g] = self.x1[g];
        self.x1[g] = *x;
        self.y2[g] = self.y1[g];
        self.y1[g] = y;
        y
    }
}

pub struct DiffuseResonator {
    sample_rate: f64,
    count: usize,
    analysis: Biquads,
    synthesis: [Biquads; 2],
    energy: [Lane; GROUPS],
    decay: [Lane; GROUPS],
    input_gain: [Lane; GROUPS],
    output_gain: [Lane; GROUPS],
    centre: [f32; MAX_BANDS],
    /// Noise generators, one xorshift32 per band and channel (never zero). A group of
    /// bands past `count` is not run and its noise not drawn: its states are those of
    /// `noise_at[g]` samples since the reseed, and `set` brings them to `clock` when the
    /// group runs again (`jump`), so every band's noise is the same function of the samples
    /// since the reseed whether or not it ran.
    noise: [[[u32; LANES]; GROUPS]; 2],
    /// Samples since the last reseed.
    clock: u64,
    /// For each group not run, the sample its noise states are at.
    noise_at: [u64; GROUPS],
    /// The instruction set `process` runs in (`simd`).
    isa: Isa,
}

impl DiffuseResonator {
    pub fn new(sample_rate: f32, seed: u64, isa: Isa) -> Self {
        let mut d = DiffuseResonator {
            sample_rate: sample_rate as f64,
            count: 0,
            analysis: Biquads::default(),
            synthesis: [Biquads::default(); 2],
            energy: [[0.0; LANES]; GROUPS],
            decay: [[1.0; LANES]; GROUPS],
            input_gain: [[0.0; LANES]; GROUPS],
            output_gain: [[0.0; LANES]; GROUPS],
            centre: [0.0; MAX_BANDS],
            noise: [[[1; LANES]; GROUPS]; 2],
            clock: 0,
            noise_at: [0; GROUPS],
            isa,
        };
        d.reseed(seed);
        d
    }

    pub fn reset(&mut self, seed: u64) {
        self.reseed(seed);
        self.energy = [[0.0; LANES]; GROUPS];
        self.analysis.clear();
        for s in &mut self.synthesis {
            s.clear();
        }
    }

    /// New noise seed; band energies are kept.
    pub fn reseed(&mut self, seed: u64) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xD1FF_05E0);
        for lane in self.noise.iter_mut().flatten().flatten() {
            *lane = rng.random::<u32>() | 1;
        }
        self.clock = 0;
        self.noise_at = [0; GROUPS];
    }

    /// Centres of the bands that take energy from the cup's force now (those above the
    /// highest mode), lowest first, Hz.
    pub fn band_centres(&self) -> impl Iterator<Item = f32> + '_ {
        self.active().map(|b| self.centre[b])
    }

    /// Amplitude T60 of each band of `band_centres`, s.
    pub fn band_t60s(&self) -> impl Iterator<Item = f32> + '_ {
        let fs = self.sample_rate as f32;
        self.active().map(move |b| {
            let d = self.decay[b / LANES][b % LANES];
            // energy decays as d per sample: amplitude T60 = ln(1000) / (-ln(d) fs / 2)
            1000f32.ln() / (-d.ln() * fs / 2.0)
        })
    }

    /// The bands that take energy, lowest first (band 0 is the grid's highest).
    fn active(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.count)
            .rev()
            .filter(|&b| self.input_gain[b / LANES][b % LANES] > 0.0)
    }

    /// Sets the bands from the cup's state. The bands lie on a fixed grid (half octaves
    /// from 1 kHz to the top of the band; band 0 is the highest), so their filters never
    /// move; a band whose centre lies below the highest mode (`DiffuseParams::low_hz`) takes
    /// no new energy, and what it holds decays at its own rate. So when the modes move (the
    /// cup fills, its modes fall) a band fades in or out, never switches, and no energy is
    /// lost or made (no click). Only the bands down to the lowest that takes energy or still
    /// holds some are run (`count`): the grid's low bands, under the modes, cost nothing.
    pub fn set(&mut self, p: &DiffuseParams, modes_in_band: impl Fn(f32, f32) -> usize) {
        let fs = self.sample_rate;
        let top = (0.45 * fs).min(20_000.0);
        let t = 1.0 / fs;
        let mut grid = [0.0f64; MAX_BANDS];
        let mut n = 0;
        let mut f = 1000.0 * 2f64.powf(BAND_OCTAVES / 2.0);
        while f < top && n < MAX_BANDS {
            grid[n] = f;
            n += 1;
            f *= 2f64.powf(BAND_OCTAVES);
        }
        for (band, &f) in grid[..n].iter().rev().enumerate() {
            let lo = f * 2f64.powf(-BAND_OCTAVES / 2.0);
            let hi = f * 2f64.powf(BAND_OCTAVES / 2.0);
            let b3 = hi - lo;
            let b_noise = PI / 2.0 * b3;
            let analytic = modes_in_band(lo as f32, hi as f32) as f64;
            let missing = (p.modal_density_per_hz as f64 * b_noise - analytic).max(0.0);
            // the modes cover the band below the highest one
            let density = if f < p.low_hz as f64 { 0.0 } else { missing / b_noise };
            let m = p.mass_kg.max(1e-4) as f64;
            let w = 2.0 * PI * f;
            if (self.centre[band] as f64 - f).abs() > 1e-3 {
                let q = Biquad::bandpass(fs, f, BAND_OCTAVES);
                self.analysis.set(band, &q);
                for s in &mut self.synthesis {
                    s.set(band, &q);
                }
            }
            let (g, k) = (band / LANES, band % LANES);
            self.centre[band] = f as f32;
            self.input_gain[g][k] = (t * density / (4.0 * m * m)) as f32;
            self.decay[g][k] = (-(p.loss_factor as f64) * w * t).exp() as f32; // exp(-2 delta T)
            let sigma = radiation_efficiency(f, p);
            let radiation = AIR_DENSITY as f64 * SPEED_OF_SOUND as f64 * (sigma * p.area_m2 as f64 / (4.0 * PI)).sqrt()
                / p.distance_m.max(0.05) as f64;
            // uniform white noise on [-1, 1] has RMS 1/sqrt(3); the band keeps 2 B / fs of it.
            let noise_norm = (3.0 * fs / (2.0 * b_noise)).sqrt();
            self.output_gain[g][k] = (radiation * noise_norm) as f32;
        }
        let lane = |a: &[Lane; GROUPS], b: usize| a[b / LANES][b % LANES];
        let live = (0..n)
            .rev()
            .find(|&b| lane(&self.input_gain, b) > 0.0 || lane(&self.energy, b) > 0.0)
            .map_or(0, |b| b + 1);
        // bands past the live ones are silent and stay so until they are live again
        for b in live..SLOTS {
            let (g, k) = (b / LANES, b % LANES);
            self.energy[g][k] = 0.0;
            if b >= n {
                self.input_gain[g][k] = 0.0;
                self.output_gain[g][k] = 0.0;
                if b < MAX_BANDS {
                    self.centre[b] = 0.0;
                }
            }
            self.analysis.clear_band(b);
            for s in &mut self.synthesis {
                s.clear_band(b);
            }
        }
        // groups that stop running keep their noise where it is; those that start again
        // catch up with the samples they missed
        let (was, now) = (self.count.div_ceil(LANES), live.div_ceil(LANES));
        for g in now..was {
            self.noise_at[g] = self.clock;
        }
        for g in was..now {
            let missed = self.clock - self.noise_at[g];
            for lane in self.noise.iter_mut().flat_map(|c| c[g].iter_mut()) {
                *lane = jump(*lane, missed);
            }
        }
        self.count = live;
    }

    /// One sample: total cup force in (N), pressure (L, R) out (Pa). The scalar version of
    /// `process`, one band at a time (Phya 7.2, module doc), with the same operations: the
    /// bands of each lane of `process` summed in band order, the lanes' sums pairwise, and
    /// the silent lanes past the last band run as well (so both leave the same noise
    /// states); so it gives the same bits.
    pub fn tick(&mut self, force: f32) -> (f32, f32) {
        let mut sums = [[0.0f32; LANES]; 2];
        for band in 0..self.count.div_ceil(LANES) * LANES {
            let (g, k) = (band / LANES, band % LANES);
            // band-pass the force, and integrate the band's energy with its decay
            // (tiny energies flushed to zero)
            let xb = self.analysis.tick(band, force);
            let e = self.energy[g][k] * self.decay[g][k] + xb * xb * self.input_gain[g][k];
            let e = if e < 1e-30 { 0.0 } else { e };
            self.energy[g][k] = e;
            // modulate band-passed noise (one generator per channel) by the square root
            let amp = e.sqrt() * self.output_gain[g][k];
            for (c, sum) in sums.iter_mut().enumerate() {
                let noise = uniform_one(&mut self.noise[c][g][k]);
                sum[k] += amp * self.synthesis[c].tick(band, noise);
            }
        }
        self.clock += 1;
        let [l, r] = sums;
        ((l[0] + l[2]) + (l[1] + l[3]), (r[0] + r[2]) + (r[1] + r[3]))
    }

    /// A span: total cup force in (N), pressure (L, R) written to `out_l` / `out_r` (Pa),
    /// over the shortest of the three slices. Left and right use independent noise, as a
    /// diffuse field is incoherent. Bands are lanes of one SIMD pass; lane sums run in a
    /// fixed order, so the samples do not depend on how a block is cut into spans (and
    /// equal `tick`'s).
    pub fn process(&mut self, force: &[f32], out_l: &mut [f32], out_r: &mut [f32]) {
        let isa = self.isa;
        isa.run(Process {
            diffuse: self,
            force,
            out: [out_l, out_r],
        });
    }

    /// Phya 7.2 per band and sample (module doc): band-pass the force, integrate its
    /// energy with the band's decay, and modulate band-passed noise by the square root.
    #[inline(always)]
    fn span(&mut self, force: &[f32], out_l: &mut [f32], out_r: &mut [f32]) {
        let groups = self.count.div_ceil(LANES);
        let len = force.len().min(out_l.len()).min(out_r.len());
        for t in 0..len {
            let x = [force[t]; LANES];
            let (mut l, mut r) = ([0.0f32; LANES], [0.0f32; LANES]);
            for g in 0..groups {
                let xb = self.analysis.run(g, &x);
                let mut amp = [0.0f32; LANES];
                for k in 0..LANES {
                    let e = self.energy[g][k] * self.decay[g][k] + xb[k] * xb[k] * self.input_gain[g][k];
                    let e = if e < 1e-30 { 0.0 } else { e };
                    self.energy[g][k] = e;
                    amp[k] = e.sqrt() * self.output_gain[g][k];
                }
                for (c, acc) in [&mut l, &mut r].into_iter().enumerate() {
                    let noise = uniform(&mut self.noise[c][g]);
                    let y = self.synthesis[c].run(g, &noise);
                    for k in 0..LANES {
                        acc[k] += amp[k] * y[k];
                    }
                }
            }
            out_l[t] = (l[0] + l[2]) + (l[1] + l[3]);
            out_r[t] = (r[0] + r[2]) + (r[1] + r[3]);
        }
        self.clock += len as u64;
    }
}

/// `process` as a `simd::Kernel` (no AVX-512 copy: four bands a vector gain nothing from
/// it), in spans of at most `MAX_SPAN` samples.
struct Process<'a> {
    diffuse: &'a mut DiffuseResonator,
    force: &'a [f32],
    out: [&'a mut [f32]; 2],
}

impl Kernel for Process<'_> {
    type Output = ();
    #[inline(always)]
    fn run<T: Target>(self, _: T) {
        let [out_l, out_r] = self.out;
        let (d, force) = (self.diffuse, self.force);
        let len = force.len().min(out_l.len()).min(out_r.len());
        let mut done = 0;
        while done < len {
            let n = (len - done).min(MAX_SPAN);
            d.span(
                &force[done..done + n],
                &mut out_l[done..done + n],
                &mut out_r[done..done + n],
            );
            done += n;
        }
    }
}

/// One draw of uniform noise on [-1, 1) (xorshift32, Marsaglia 2003: shifts and xors only,
/// so the lanes of `uniform` run as one vector; its 2^32 - 1 period is 25 hours at 48 kHz).
#[inline(always)]
fn uniform_one(state: &mut u32) -> f32 {
    let x = xorshift(*state);
    *state = x;
    // 23 random mantissa bits in [2, 4), shifted to [-1, 1)
    f32::from_bits((x >> 9) | 0x4000_0000) - 3.0
}

/// xorshift32's step (Marsaglia 2003), which `uniform_one` draws with and `JUMPS` takes
/// ahead. It is linear over the bits (GF(2)): the state after it is the sum (xor) of what it
/// makes of each set bit.
#[inline(always)]
pub(crate) const fn xorshift(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}

/// A linear map of the 32 state bits given by the images of the bits: `x` taken through it.
const fn apply(map: &[u32; 32], x: u32) -> u32 {
    let mut y = 0;
    let mut i = 0;
    while i < 32 {
        if (x >> i) & 1 == 1 {
            y ^= map[i];
        }
        i += 1;
    }
    y
}

/// xorshift32's step taken 2^k times, for k = 0..63, as linear maps (each the one before
/// applied twice): built by the compiler (a `static`: one table, read in place).
static JUMPS: [[u32; 32]; 64] = {
    let mut maps = [[0u32; 32]; 64];
    let mut i = 0;
    while i < 32 {
        maps[0][i] = xorshift(1 << i);
        i += 1;
    }
    let mut k = 1;
    while k < 64 {
        let mut i = 0;
        while i < 32 {
            maps[k][i] = apply(&maps[k - 1], maps[k - 1][i]);
            i += 1;
        }
        k += 1;
    }
    maps
};

/// The xorshift32 state `x` after `n` steps, exactly (Haramoto et al. 2008's jump ahead for
/// linear generators: the step's matrix to the power n, by its binary digits).
fn jump(mut x: u32, n: u64) -> u32 {
    let mut k = 0;
    while k < 64 && n >> k != 0 {
        if (n >> k) & 1 == 1 {
            x = apply(&JUMPS[k], x);
        }
        k += 1;
    }
    x
}

/// `uniform_one` in every lane.
#[inline(always)]
fn uniform(state: &mut [u32; LANES]) -> Lane {
    let mut out = [0.0; LANES];
    for k in 0..LANES {
        out[k] = uniform_one(&mut state[k]);
    }
    out
}

/// Radiation efficiency at `f` Hz (module doc).
pub fn radiation_efficiency(f: f64, p: &DiffuseParams) -> f64 {
    let fc = p.coincidence_hz.max(1.0) as f64;
    if f >= fc {
        return 1.0;
    }
    let edge = p.edge_m as f64 * SPEED_OF_SOUND as f64 / (PI * PI * p.area_m2.max(1e-6) as f64 * fc) * (f / fc).sqrt();
    (edge + (f / fc).powi(4)).min(1.0)
}

/// Coincidence frequency of a plate, f_c = c^2 / (1.8 c_L h), Hz.
pub fn coincidence_frequency(thickness_m: f64, youngs: f64, density: f64, poisson: f64) -> f64 {
    let c_l = (youngs / (density * (1.0 - poisson * poisson))).sqrt();
    (SPEED_OF_SOUND as f64).powi(2) / (1.8 * c_l * thickness_m)
}

/// Flat-plate modal density n(f) = sqrt(3) S / (h c_L), c_L = sqrt(E / (rho (1 - nu^2))).
pub fn plate_modal_density(area_m2: f64, thickness_m: f64, youngs: f64, density: f64, poisson: f64) -> f64 {
    let c_l = (youngs / (density * (1.0 - poisson * poisson))).sqrt();
    3f64.sqrt() * area_m2 / (thickness_m * c_l)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cup's diffuse parameters for the tests: its modes end at `low_hz`.
    fn params(low_hz: f32, loss_factor: f32) -> DiffuseParams {
        DiffuseParams {
            low_hz,
            loss_factor,
            mass_kg: 0.2,
            area_m2: 0.03,
            edge_m: 0.5,
            coincidence_hz: 3000.0,
            modal_density_per_hz: 0.01,
            distance_m: 0.5,
        }
    }

    /// The jump ahead is the generator stepped: for any state and count of steps (none, a
    /// few, a window's, past 2^32), `jump` gives what stepping one at a time does.
    #[test]
    fn the_noise_jumps_ahead_as_it_steps() {
        let step_by = |mut x: u32, n: u64| {
            for _ in 0..n {
                x = xorshift(x);
            }
            x
        };
        for x in [1u32, 0xDEAD_BEEF, 0x8000_0001, 0x1234_5679] {
            for n in [0u64, 1, 2, 3, 31, 128, 1_000, 123_457, 3_000_001] {
                assert_eq!(jump(x, n), step_by(x, n), "state {x:#x}, {n} steps");
            }
            // the period is 2^32 - 1: that many steps return the state
            assert_eq!(jump(x, (1 << 32) - 1), x, "{x:#x}");
            assert_eq!(jump(jump(x, 5_000), 7_000), jump(x, 12_000));
        }
    }

    /// A group of bands that stops running while the modes cover it, and runs again when they
    /// move back, draws the noise it would have drawn had it run all along: after 30,000
    /// samples with few bands then more, every noise state is that of a resonator that had
    /// the more bands from the start; `process` and `tick` alike.
    #[test]
    fn bands_that_run_again_take_up_their_noise_where_it_would_be() {
        let fs = 48_000.0;
        let (few, many) = (params(12_000.0, 0.01), params(1_500.0, 0.01));
        let mut all_along = DiffuseResonator::new(fs, 7, Isa::detect());
        all_along.set(&many, |_, _| 0);
        let mut paused = DiffuseResonator::new(fs, 7, Isa::detect());
        paused.set(&few, |_, _| 0);
        let (mut scalar_all, mut scalar_paused) = (
            DiffuseResonator::new(fs, 7, Isa::detect()),
            DiffuseResonator::new(fs, 7, Isa::detect()),
        );
        scalar_all.set(&many, |_, _| 0);
        scalar_paused.set(&few, |_, _| 0);
        assert!(
            paused.count.div_ceil(LANES) < all_along.count.div_ceil(LANES),
            "no group paused"
        );
        let force = vec![0.0f32; 30_000];
        let (mut l, mut r) = (vec![0.0f32; 30_000], vec![0.0f32; 30_000]);
        for (d, chunk) in [(&mut all_along, 300), (&mut paused, 97)] {
            for ((f, l), r) in force.chunks(chunk).zip(l.chunks_mut(chunk)).zip(r.chunks_mut(chunk)) {
                d.process(f, l, r);
            }
        }
        for _ in 0..30_000 {
            scalar_all.tick(0.0);
            scalar_paused.tick(0.0);
        }
        paused.set(&many, |_, _| 0);
        scalar_paused.set(&many, |_, _| 0);
        assert_eq!(paused.noise, all_along.noise);
        assert_eq!(scalar_paused.noise, all_along.noise);
        assert_eq!(scalar_all.noise, all_along.noise);
    }

    /// The same through everything that moves the groups between running and not: bands that
    /// ran and stop (the modes cover them), several `set`s at one sample, `tick` and `process`
    /// in uneven spans, a reseed and a reset while a group is paused; each time a resonator
    /// that ran every band all along holds the same noise once the paused one runs them again
    /// (a review's test: forgetting where a group stopped passes the one above, not this).
    #[test]
    fn paused_groups_keep_their_noise_through_stops_reseeds_and_resets() {
        let fs = 48_000.0;
        let (few, mid, many) = (params(12_000.0, 0.01), params(5_000.0, 0.01), params(1_500.0, 0.01));
        let (mut all_along, mut paused) = (
            DiffuseResonator::new(fs, 7, Isa::detect()),
            DiffuseResonator::new(fs, 7, Isa::detect()),
        );
        for d in [&mut all_along, &mut paused] {
            d.set(&many, |_, _| 0);
        }
        let run = |d: &mut DiffuseResonator, n: usize, chunk: usize| {
            let force = vec![0.0f32; n];
            let (mut l, mut r) = (vec![0.0f32; n], vec![0.0f32; n]);
            for ((f, l), r) in force.chunks(chunk).zip(l.chunks_mut(chunk)).zip(r.chunks_mut(chunk)) {
                d.process(f, l, r);
            }
        };
        run(&mut all_along, 1_000, 128);
        run(&mut paused, 1_000, 37);
        // the groups that ran stop, and run again after spans and ticks
        paused.set(&few, |_, _| 0);
        run(&mut paused, 777, 50);
        for _ in 0..333 {
            paused.tick(0.0);
        }
        run(&mut all_along, 1_110, 128);
        for p in [&mid, &few, &mid] {
            paused.set(p, |_, _| 0);
        }
        run(&mut paused, 500, 64);
        run(&mut all_along, 500, 64);
        paused.set(&many, |_, _| 0);
        assert_eq!(paused.noise, all_along.noise, "after stopping and running again");
        // a reseed, and a reset, while paused
        type Restart = fn(&mut DiffuseResonator);
        let restarts: [(&str, Restart); 2] = [("reseed", |d| d.reseed(9)), ("reset", |d| d.reset(3))];
        for (what, restart) in restarts {
            paused.set(&few, |_, _| 0);
            run(&mut paused, 300, 64);
            run(&mut all_along, 300, 64);
            restart(&mut all_along);
            restart(&mut paused);
            run(&mut paused, 900, 64);
            run(&mut all_along, 900, 64);
            paused.set(&many, |_, _| 0);
            assert_eq!(paused.noise, all_along.noise, "after a {what} while paused");
        }
    }

    #[test]
    fn band_energy_decays_with_its_t60() {
        let fs = 48_000.0;
        let mut d = DiffuseResonator::new(fs, 1, Isa::detect());
        d.set(&params(4000.0, 0.01), |_, _| 0);
        assert!(d.band_centres().count() >= 4);
        // an impulse, then measure the envelope of the output over two windows
        d.tick(1000.0);
        let rms = |d: &mut DiffuseResonator, n: usize| (0..n).map(|_| d.tick(0.0).0.powi(2)).sum::<f32>() / n as f32;
        let first = rms(&mut d, 2400);
        for _ in 0..9600 {
            d.tick(0.0);
        }
        let later = rms(&mut d, 2400);
        assert!(first > 0.0 && later < first, "{first} {later}");
        let t60 = d.band_t60s().next().unwrap();
        // loss factor 0.01 at ~4.7 kHz: delta = 0.01 * 2 pi f / 2 ~ 150/s -> T60 ~ 46 ms
        assert!(t60 > 0.02 && t60 < 0.08, "{t60}");
    }

    #[test]
    fn a_band_the_modes_take_over_fades_with_its_t60_instead_of_stopping() {
        let fs = 48_000.0;
        let p = |low_hz: f32| params(low_hz, 0.005);
        let mut d = DiffuseResonator::new(fs, 1, Isa::detect());
        d.set(&p(1000.0), |_, _| 0);
        let all = d.band_centres().count();
        d.tick(1000.0);
        let rms = |d: &mut DiffuseResonator, n: usize| (0..n).map(|_| d.tick(0.0).0.powi(2)).sum::<f32>() / n as f32;
        // once the band filters have taken the impulse in
        rms(&mut d, 2400);
        let before = rms(&mut d, 240);
        // the cup fills, its modes rise over the lowest bands: they stop taking energy
        d.set(&p(6000.0), |_, _| 0);
        assert!(d.band_centres().count() < all, "the modes took over no band");
        let after = rms(&mut d, 240);
        // 5 ms later the sound has decayed at the bands' rate (T60 over 100 ms at a loss
        // factor of 0.005 below 6 kHz: less than 1.5 dB in 5 ms), not dropped
        assert!(after > before * 0.5, "the sound dropped from {before:e} to {after:e}");
    }

    #[test]
    fn every_copy_of_process_gives_the_scalar_ticks_bits_over_any_spans() {
        use rand::{Rng, SeedableRng};
        let fs = 48_000.0;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        // sparse impulses over a low-level noise, then silence (tiny energies flush to zero)
        let len = 6000;
        let force: Vec<f32> = (0..len)
            .map(|t| match t {
                4000.. => 0.0,
                _ if rng.random::<f32>() < 0.01 => rng.random_range(-50.0..50.0),
                _ => rng.random_range(-0.1..0.1),
            })
            .collect();
        let params = |low_hz: f32| params(low_hz, 0.02);
        // ten bands (two full lane groups and a partial one), then five from a third
        // of the way (a band count change keeps the energies of the bands that stay)
        let set = |d: &mut DiffuseResonator, t: usize| match t {
            0 => d.set(&params(1000.0), |_, _| 0),
            2000 => d.set(&params(4000.0), |_, _| 1),
            _ => {}
        };
        let mut reference = DiffuseResonator::new(fs, 9, Isa::baseline());
        let want: Vec<(f32, f32)> = (0..len)
            .map(|t| {
                set(&mut reference, t);
                reference.tick(force[t])
            })
            .collect();
        assert_eq!(reference.band_centres().count(), 5);
        assert!(want.iter().any(|&(l, r)| l != 0.0 && r != 0.0 && l != r));
        let mut levels = Vec::new();
        for isa in Isa::available() {
            let mut d = DiffuseResonator::new(fs, 9, isa);
            let (mut l, mut r) = (vec![0.0f32; len], vec![0.0f32; len]);
            let mut start = 0;
            for span in [64, 1, 300, 16, 37, 0, 129].into_iter().cycle() {
                // spans end at the set-up changes
                let end = (start + span).min(len);
                let end = if start < 2000 { end.min(2000) } else { end };
                set(&mut d, start);
                d.process(&force[start..end], &mut l[start..end], &mut r[start..end]);
                start = end;
                if start == len {
                    break;
                }
            }
            for (t, &(wl, wr)) in want.iter().enumerate() {
                assert_eq!(
                    (wl.to_bits(), wr.to_bits()),
                    (l[t].to_bits(), r[t].to_bits()),
                    "{isa:?}, sample {t}"
                );
            }
            levels.push(isa.level());
        }
        assert!(levels.contains(&Isa::detect().level()));
    }
}
