//! Band-limited contact pulses.
//!
//! A Hertz contact lasts microseconds, far less than a sample, so its half-sine (PAN eq. 6)
//! cannot be sampled at the host rate. Instead, at start-up, for a grid of contact durations
//! and sub-sample onsets, the exact spectrum of a unit-area half-sine is multiplied by a
//! low-pass that is flat to 20 kHz (or 0.40 fs at high rates, see `pass_edge`) and zero at Nyquist, and transformed back with an inverse
//! real FFT (realfft). Two kernels are stored per grid point: the pulse itself (`g0`, units
//! 1/s, unit area in seconds) and its time derivative (`g1`, 1/s^2), which the far-field term
//! of the acceleration noise needs (thesis eq. 4.1: the `2r/a` terms; see `accel_noise`).
//!
//! Spectrum of the unit-area half-sine of duration D (derived from PAN eq. 6):
//! `X(w) = cos(w D / 2) / (1 - (w D / pi)^2) * exp(-i w D / 2)`, with the limit `pi/4` at
//! `w D = pi`. Long, soft contacts therefore roll off the top of the band; short, hard ones
//! are flat across it (Phya 4.7).

use crate::base::fastmath;
use crate::base::simd::{madd, Isa, Kernel, Target};
use crate::fft::Complex;

/// Samples of low-pass support on each side of the pulse onset.
pub const HALF: usize = 24;
/// Sub-sample onset resolution (rows are linearly interpolated).
pub const PHASES: usize = 32;
/// Number of contact-duration rows (log-spaced).
pub const DURATIONS: usize = 24;
/// Longest contact rendered with its own shape, s. Longer contacts use this row (their
/// spectrum is already below -40 dB at a few kHz, see module doc).
pub const MAX_DURATION_S: f64 = 0.5e-3;
/// Shortest distinct row, in samples: below this the pulse is a delta within the band.
const MIN_DURATION_SAMPLES: f64 = 0.02;
/// Top of the band the kernels keep flat where the sample rate allows, Hz: the audio band.
pub const AUDIO_BAND_HZ: f64 = 20_000.0;
/// Stop-band edge of the band limit, cycles per sample (zero at Nyquist: no aliasing).
const STOP: f64 = 0.50;

/// Pass-band edge, cycles per sample: 20 kHz at 44.1 and 48 kHz (0.454 and 0.417), 0.40 fs
/// at higher rates (so a 96 kHz render keeps 38 kHz), and never closer to Nyquist than 0.46
/// (below 43.5 kHz the band is as wide as a transition of 0.04 fs allows).
pub fn pass_edge(sample_rate: f64) -> f64 {
    (AUDIO_BAND_HZ / sample_rate).clamp(0.40, 0.46)
}

/// Kernel tables for one sample rate. Built in `new`; read-only afterwards.
#[derive(Clone)]
pub struct PulseKernels {
    taps: usize,
    /// Taps each duration row actually holds (the rest of its `taps` are zero).
    row_taps: [usize; DURATIONS],
    sample_rate: f64,
    log_d0: f64,
    log_step: f64,
    /// The instruction set of the pass into the rings (`simd`), and of the renderer that
    /// uses these kernels (`batch::RenderContext`).
    isa: Isa,
    /// Layout: [duration][phase 0..=PHASES][g0 taps, g1 taps]
    data: Vec<f32>,
    /// Phase rows per second, PHASES fs: the second derivative's finite difference
    /// (`row_weights`).
    phase_rate: f32,
}

/// A pulse's amplitudes: of the unit-area pulse `g0` (1/s), its derivative `g1` (1/s²) and
/// its second derivative (1/s³), which a spinning grain's quadrupole needs (`shape`).
pub type Amplitudes = [f32; 3];

/// Interpolated kernel rows and weights for one pulse, ready to be accumulated.
#[derive(Clone, Copy)]
pub struct PulseRef {
    row_a: usize,
    row_b: usize,
    frac: f32,
    /// Taps of the rows that can be non-zero.
    len: usize,
}

impl PulseRef {
    /// Taps this pulse can write (a prefix of `PulseKernels::taps`).
    pub fn taps(&self) -> usize {
        self.len
    }
}

impl PulseKernels {
    pub fn new(sample_rate: f32, isa: Isa) -> Self {
        let fs = sample_rate as f64;
        let d_max = (MAX_DURATION_S * fs).max(MIN_DURATION_SAMPLES * 2.0);
        let taps = (2 * HALF + d_max.ceil() as usize + 1).next_multiple_of(8);
        let log_d0 = MIN_DURATION_SAMPLES.ln();
        let log_step = (d_max.ln() - log_d0) / (DURATIONS - 1) as f64;
        let n = (4 * taps).next_power_of_two().max(512);
        let ifft = crate::fft::inverse(n);
        let mut spec = ifft.make_input_vec();
        let mut spec1 = ifft.make_input_vec();
        let mut time = ifft.make_output_vec();
        let mut time1 = ifft.make_output_vec();
        let mut scratch = ifft.make_scratch_vec();
        let row = 2 * taps;
        let pass = pass_edge(fs);
        let mut data = vec![0.0f32; DURATIONS * (PHASES + 1) * row];
        let mut row_taps = [taps; DURATIONS];
        for (di, row_len) in row_taps.iter_mut().enumerate() {
            let d = (log_d0 + log_step * di as f64).exp();
            // a short pulse needs only its own length plus the low-pass support either side
            *row_len = (2 * HALF + d.ceil() as usize + 2).next_multiple_of(8).min(taps);
            for pi in 0..=PHASES {
                let onset = HALF as f64 + pi as f64 / PHASES as f64;
                for (j, (s0, s1)) in spec.iter_mut().zip(spec1.iter_mut()).enumerate() {
                    let f = j as f64 / n as f64;
                    let w = 2.0 * std::f64::consts::PI * f;
                    let x = half_sine_spectrum(w, d) * band_limit(f, pass);
                    let shifted = x * Complex::from_polar(1.0, -w * onset);
                    *s0 = shifted;
                    *s1 = shifted * Complex::new(0.0, w);
                }
                // C2R needs real DC and Nyquist bins; both hold by construction
                // (X(0) = 1, band_limit(0.5) = 0), up to rounding.
                spec[0].im = 0.0;
                spec1[0] = Complex::new(0.0, 0.0);
                spec[n / 2] = Complex::new(0.0, 0.0);
                spec1[n / 2] = Complex::new(0.0, 0.0);
                ifft.process_with_scratch(&mut spec, &mut time, &mut scratch)
                    .expect("kernel IFFT sizes are fixed");
                ifft.process_with_scratch(&mut spec1, &mut time1, &mut scratch)
                    .expect("kernel IFFT sizes are fixed");
                let base = (di * (PHASES + 1) + pi) * row;
                let pulse_end = onset + d;
                for k in 0..*row_len {
                    let win = taper(k as f64, onset, pulse_end, *row_len);
                    // per-sample -> per-second units: area in samples is 1, so x fs; d/dn = d/dt / fs.
                    data[base + k] = (time[k] / n as f64 * fs * win) as f32;
                    data[base + taps + k] = (time1[k] / n as f64 * fs * fs * win) as f32;
                }
            }
        }
        PulseKernels {
            taps,
            row_taps,
            sample_rate: fs,
            log_d0,
            log_step,
            isa,
            data,
            phase_rate: (PHASES as f64 * fs) as f32,
        }
    }

    pub fn taps(&self) -> usize {
        self.taps
    }

    /// The instruction set the pass into the rings runs in (and the renderer's copies).
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Runs another copy (tests compare every copy with the others).
    #[cfg(test)]
    pub(crate) fn set_isa(&mut self, isa: Isa) {
        self.isa = isa;
    }

    pub fn sample_rate(&self) -> f32 {
        self.sample_rate as f32
    }

    /// Chooses the rows for a pulse of `duration_s` starting `phase` (0..1) samples after
    /// an integer sample. The kernel's tap `k` lands on that integer sample + k - HALF.
    pub fn select(&self, duration_s: f32, phase: f32) -> PulseRef {
        let d = (duration_s as f64 * self.sample_rate).max(MIN_DURATION_SAMPLES);
        self.select_ln(d.ln() as f32, phase)
    }

    /// `select` for a duration given as its natural log in samples (the renderer has the
    /// log already: `contact` durations are a power law of the speed, PAN eq. 7).
    #[inline]
    pub fn select_ln(&self, ln_duration_samples: f32, phase: f32) -> PulseRef {
        let (pi, frac) = phase_cell(phase);
        self.pulse(self.duration_row(ln_duration_samples) as usize, pi as usize, frac)
    }

    /// The duration row of `select_ln`: the nearest row; NaN and anything below the
    /// shortest row take row 0. Written as lane arithmetic (the renderer runs it for a
    /// batch of collisions at once, `engine::RenderContext::prepare`).
    #[inline(always)]
    pub fn duration_row(&self, ln_duration_samples: f32) -> i32 {
        let x = (ln_duration_samples - self.log_d0 as f32) / self.log_step as f32;
        // nearest row: x + 1/2 truncated, NaN and x <= 0 giving row 0
        fastmath::trunc_clamped(x + 0.5, (DURATIONS - 1) as f32)
    }

    /// The pulse of duration row `di`, sub-sample phase cell `pi` and fraction `frac`
    /// (`phase_cell`).
    #[inline]
    pub fn pulse(&self, di: usize, pi: usize, frac: f32) -> PulseRef {
        let di = di.min(DURATIONS - 1);
        let pi = pi.min(PHASES - 1);
        let row_a = (di * (PHASES + 1) + pi) * 2 * self.taps;
        PulseRef {
            row_a,
            row_b: row_a + 2 * self.taps,
            frac,
            len: self.row_taps[di],
        }
    }

    /// `out[k] += a0 g0[k] + a1 g1[k] + a2 g2[k]` over the pulse's taps (`out` must hold
    /// `pulse.taps()` samples).
    #[inline]
    pub fn accumulate(&self, pulse: PulseRef, a: Amplitudes, out: &mut [f32]) {
        self.accumulate_in(pulse, a, out, self.isa);
    }

    /// `accumulate` in the copy of `pass`.
    #[inline(always)]
    pub fn accumulate_in(&self, pulse: PulseRef, a: Amplitudes, out: &mut [f32], pass: impl Pass) {
        self.add_to_in(pulse, a, [&mut out[..pulse.len]], [1.0], pass);
    }

    /// The weights of a pulse's four rows (g0 and g1 at the phase cell's two ends): linear
    /// in the phase, and the second derivative as a difference of the g1 rows. Row b is row
    /// a delayed by one phase cell, 1/(PHASES fs) s, so `g2 = dg1/dt ≈ (g1_a - g1_b) PHASES
    /// fs`: the rows are band-limited, and the difference quotient's error is `(w dt/2)²/6`,
    /// under 0.03 % at 20 kHz (its time is the cell's middle, at most 1/64 sample off).
    #[inline(always)]
    fn row_weights(&self, p: &PulseRef, a: Amplitudes) -> [f32; 4] {
        let (wa, wb) = (1.0 - p.frac, p.frac);
        let k = a[2] * self.phase_rate;
        [a[0] * wa, a[0] * wb, a[1] * wa + k, a[1] * wb - k]
    }

    /// Two pulses at the same offset (`add_pair_to_in` into one destination), in the copy
    /// of `pass`.
    #[inline(always)]
    pub fn accumulate_pair_in(
        &self,
        p: PulseRef,
        a: Amplitudes,
        q: PulseRef,
        b: Amplitudes,
        out: &mut [f32],
        pass: impl Pass,
    ) {
        // the pulses share their duration row, so their lengths
        let n = p.len;
        self.add_pair_to_in(p, a, q, b, [&mut out[..n]], [1.0], pass);
    }

    /// `dst[d][k] += gains[d] * (a0 g0[k] + a1 g1[k] + a2 g2[k])` over the pulse's taps, in one pass
    /// (no scratch): the pulse is built once per tap and added into every destination.
    /// Each `dst[d]` must hold `pulse.taps()` samples. In the copy of `pass`: a
    /// `simd::Target` inlines the pass into the caller's copy (the renderer's), an `Isa`
    /// dispatches to it.
    #[inline(always)]
    pub fn add_to_in<const D: usize>(
        &self,
        p: PulseRef,
        a: Amplitudes,
        dst: [&mut [f32]; D],
        gains: [f32; D],
        pass: impl Pass,
    ) {
        let w = [self.weighted(p, self.row_weights(&p, a))];
        pass.splat(w, dst, gains);
    }

    /// `add_to_in` for two pulses at the same integer sample (a grain-grain collision's two
    /// spheres): their sum, each pulse summed over its rows, then the pulses in order.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn add_pair_to_in<const D: usize>(
        &self,
        p: PulseRef,
        a: Amplitudes,
        q: PulseRef,
        b: Amplitudes,
        dst: [&mut [f32]; D],
        gains: [f32; D],
        pass: impl Pass,
    ) {
        let (cp, cq) = (self.row_weights(&p, a), self.row_weights(&q, b));
        if p.row_a == q.row_a {
            let c = std::array::from_fn(|r| cp[r] + cq[r]);
            pass.splat([self.weighted(p, c)], dst, gains);
        } else {
            let w = [self.weighted(p, cp), self.weighted(q, cq)];
            pass.splat(w, dst, gains);
        }
    }

    /// `dst[k] += a0 g0[k]` over the pulse's taps (no derivative term: the cup force), in
    /// the copy of `pass` (`add_to_in`).
    #[inline(always)]
    pub fn add_g0_to_in(&self, p: PulseRef, a0: f32, dst: &mut [f32], pass: impl Pass) {
        let n = p.len;
        let rows = [&self.data[p.row_a..p.row_a + n], &self.data[p.row_b..p.row_b + n]];
        let w = [Weighted {
            rows,
            c: [a0 * (1.0 - p.frac), a0 * p.frac],
        }];
        pass.splat(w, [dst], [1.0]);
    }

    #[inline]
    fn weighted(&self, p: PulseRef, c: [f32; 4]) -> Weighted<'_, 4> {
        let (t, n) = (self.taps, p.len);
        Weighted {
            rows: [
                &self.data[p.row_a..p.row_a + n],
                &self.data[p.row_b..p.row_b + n],
                &self.data[p.row_a + t..p.row_a + t + n],
                &self.data[p.row_b + t..p.row_b + t + n],
            ],
            c,
        }
    }
}

/// Where a pass into the rings runs (`add_to_in` and the others): a `simd::Target`
/// inlines it into the caller's copy of that target (the renderer's, `batch`); an `Isa`
/// dispatches to the kernels' copy for it (`simd::Isa::run`).
pub trait Pass: Copy {
    /// `dst[d][k] += gains[d] * pulse(k)`, the pulse the sum of `pulses`.
    fn splat<const P: usize, const R: usize, const D: usize>(
        self,
        pulses: [Weighted<'_, R>; P],
        dst: [&mut [f32]; D],
        gains: [f32; D],
    );
}

impl<T: Target> Pass for T {
    #[inline(always)]
    fn splat<const P: usize, const R: usize, const D: usize>(
        self,
        pulses: [Weighted<'_, R>; P],
        dst: [&mut [f32]; D],
        gains: [f32; D],
    ) {
        #[cfg(target_arch = "x86_64")]
        if T::AVX {
            // SAFETY: a value of a target with AVX exists only where the CPU has AVX and
            // FMA (`simd::Isa::run`).
            unsafe { splat_avx_in(pulses, dst, gains) };
            return;
        }
        splat_scalar::<P, R, D, T>(pulses, dst, gains);
    }
}

impl Pass for Isa {
    #[inline]
    fn splat<const P: usize, const R: usize, const D: usize>(
        self,
        pulses: [Weighted<'_, R>; P],
        dst: [&mut [f32]; D],
        gains: [f32; D],
    ) {
        self.run(Splat { pulses, dst, gains });
    }
}

/// `Pass::splat` as a `simd::Kernel`.
struct Splat<'a, 'd, const P: usize, const R: usize, const D: usize> {
    pulses: [Weighted<'a, R>; P],
    dst: [&'d mut [f32]; D],
    gains: [f32; D],
}

impl<const P: usize, const R: usize, const D: usize> Kernel for Splat<'_, '_, P, R, D> {
    type Output = ();
    #[inline(always)]
    fn run<T: Target>(self, target: T) {
        target.splat(self.pulses, self.dst, self.gains);
    }
}

/// Kernel rows of one pulse and their weights: the pulse is `sum_i c[i] rows[i]`.
pub struct Weighted<'a, const R: usize> {
    rows: [&'a [f32]; R],
    c: [f32; R],
}

/// The pulses' sum at tap `k`: each pulse's weighted rows summed left to right (fused
/// where `T` fuses), then the pulses summed in order (the same order in every copy, so
/// the bits agree).
#[inline(always)]
fn pulse_at<const P: usize, const R: usize, T: Target>(pulses: &[Weighted<'_, R>; P], k: usize) -> f32 {
    let mut v = 0.0f32;
    for (i, w) in pulses.iter().enumerate() {
        let mut x = w.c[0] * w.rows[0][k];
        for r in 1..R {
            x = madd::<T>(w.c[r], w.rows[r][k], x);
        }
        v = if i == 0 { x } else { v + x };
    }
    v
}

/// `dst[d][k] += gains[d] * pulse(k)`, one tap at a time: the scalar version of
/// `splat_avx_in`, and the baseline copies' pass (fused where `T` fuses).
#[inline(always)]
fn splat_scalar<const P: usize, const R: usize, const D: usize, T: Target>(
    pulses: [Weighted<'_, R>; P],
    mut dst: [&mut [f32]; D],
    gains: [f32; D],
) {
    let n = dst.iter().map(|d| d.len()).min().unwrap_or(0);
    for k in 0..n {
        add_tap::<D, T>(&mut dst, gains, k, pulse_at::<P, R, T>(&pulses, k));
    }
}

/// `dst[d][k] += gains[d] * v` for every destination (fused where `T` fuses).
#[inline(always)]
fn add_tap<const D: usize, T: Target>(dst: &mut [&mut [f32]; D], gains: [f32; D], k: usize, v: f32) {
    for (d, g) in dst.iter_mut().zip(gains) {
        d[k] = madd::<T>(g, v, d[k]);
    }
}

/// The AVX copy of `splat_scalar` (fused): eight taps per step, the same IEEE operations
/// in the same order, so it gives the same bits as the fused baseline copy. Inlined into
/// the AVX copies of its callers (`Pass`).
///
/// # Safety
/// Only where the CPU has AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn splat_avx_in<const P: usize, const R: usize, const D: usize>(
    pulses: [Weighted<'_, R>; P],
    mut dst: [&mut [f32]; D],
    gains: [f32; D],
) {
    use std::arch::x86_64::*;
    let n = dst.iter().map(|d| d.len()).min().unwrap_or(0);
    // every row is read over 0..n below
    for w in &pulses {
        for r in &w.rows {
            assert!(r.len() >= n);
        }
    }
    // SAFETY (all the intrinsics below): the CPU has AVX and FMA (the caller's contract).
    let c: [[__m256; R]; P] =
        std::array::from_fn(|i| std::array::from_fn(|r| unsafe { _mm256_set1_ps(pulses[i].c[r]) }));
    let g: [__m256; D] = std::array::from_fn(|d| unsafe { _mm256_set1_ps(gains[d]) });
    let whole = n - n % 8;
    let mut k = 0;
    while k < whole {
        // SAFETY: k + 8 <= n, and every row and destination holds at least n samples.
        unsafe {
            let mut v = _mm256_setzero_ps();
            for (i, w) in pulses.iter().enumerate() {
                let mut x = _mm256_mul_ps(c[i][0], _mm256_loadu_ps(w.rows[0].as_ptr().add(k)));
                #[allow(clippy::needless_range_loop)] // `R` is a constant: unrolled
                for r in 1..R {
                    x = _mm256_fmadd_ps(c[i][r], _mm256_loadu_ps(w.rows[r].as_ptr().add(k)), x);
                }
                v = if i == 0 { x } else { _mm256_add_ps(v, x) };
            }
            #[allow(clippy::needless_range_loop)] // `D` is a constant: unrolled
            for d in 0..D {
                let p = dst[d].as_mut_ptr().add(k);
                _mm256_storeu_ps(p, _mm256_fmadd_ps(g[d], v, _mm256_loadu_ps(p)));
            }
        }
        k += 8;
    }
    for k in whole..n {
        add_tap::<D, crate::base::simd::PortableFused>(
            &mut dst,
            gains,
            k,
            pulse_at::<P, R, crate::base::simd::PortableFused>(&pulses, k),
        );
    }
}

/// The sub-sample phase cell of a pulse starting `phase` (0..1) samples after an integer
/// sample, and its fraction towards the next cell (NaN takes the last cell).
#[inline(always)]
pub fn phase_cell(phase: f32) -> (i32, f32) {
    let p = (phase.clamp(0.0, 1.0) * PHASES as f32).min(PHASES as f32 - 1e-4);
    let pi = fastmath::trunc_clamped(p, PHASES as f32);
    (pi, p - pi as f32)
}

/// Unit-area half-sine spectrum, `w` in rad/sample, `d` in samples (derivation in module doc).
fn half_sine_spectrum(w: f64, d: f64) -> Complex<f64> {
    let x = w * d / std::f64::consts::PI;
    let denom = 1.0 - x * x;
    let mag = if denom.abs() < 1e-6 {
        std::f64::consts::FRAC_PI_4
    } else {
        (w * d / 2.0).cos() / denom
    };
    Complex::from_polar(mag, -w * d / 2.0)
}

/// Raised-cosine band limit: 1 below `pass`, 0 at STOP (cycles per sample).
fn band_limit(f: f64, pass: f64) -> f64 {
    if f <= pass {
        1.0
    } else if f >= STOP {
        0.0
    } else {
        0.5 * (1.0 + (std::f64::consts::PI * (f - pass) / (STOP - pass)).cos())
    }
}

/// Flat over the pulse, Hann-shaped fall-off over the low-pass tails on both sides.
fn taper(k: f64, onset: f64, pulse_end: f64, taps: usize) -> f64 {
    let rise = onset;
    let fall = (taps as f64 - 1.0 - pulse_end).max(1.0);
    if k < onset {
        let x = k / rise;
        0.5 * (1.0 - (std::f64::consts::PI * x).cos())
    } else if k <= pulse_end {
        1.0
    } else {
        let x = ((k - pulse_end) / fall).min(1.0);
        0.5 * (1.0 + (std::f64::consts::PI * x).cos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_pulse_kernel_has_unit_area_and_zero_mean_derivative() {
        let k = PulseKernels::new(48_000.0, Isa::detect());
        let mut out = vec![0.0f32; k.taps()];
        k.accumulate(k.select(20e-6, 0.3), [1.0, 0.0, 0.0], &mut out);
        let area: f32 = out.iter().sum::<f32>() / 48_000.0;
        assert!((area - 1.0).abs() < 1e-3, "area {area}");
        let mut d = vec![0.0f32; k.taps()];
        k.accumulate(k.select(20e-6, 0.3), [0.0, 1.0, 0.0], &mut d);
        let s: f32 = d.iter().sum::<f32>() / 48_000.0;
        let peak = d.iter().fold(0.0f32, |m, x| m.max(x.abs())) / 48_000.0;
        assert!(s.abs() < 1e-3 * peak, "derivative kernel sums to {s}, peak {peak}");
    }

    #[test]
    fn second_derivative_kernel_has_the_moments_of_one() {
        // for a pulse g of unit area, g'' has zero area and zero first moment, and
        // ∫ t² g'' dt = 2 (twice integrating by parts): checked on a 30 us contact, in
        // samples (t in samples, so the sum carries fs^2 / fs^3 = 1/fs)
        let fs = 48_000.0f64;
        let k = PulseKernels::new(fs as f32, Isa::detect());
        let mut g2 = vec![0.0f32; k.taps()];
        k.accumulate(k.select(30e-6, 0.4), [0.0, 0.0, 1.0], &mut g2);
        let centre = HALF as f64 + 0.4 + 0.5 * 30e-6 * fs;
        let moment = |n: i32| -> f64 {
            g2.iter()
                .enumerate()
                .map(|(i, &x)| ((i as f64 - centre) / fs).powi(n) * x as f64 / fs)
                .sum()
        };
        let peak = g2.iter().fold(0.0f32, |m, x| m.max(x.abs())) as f64 / fs;
        assert!(moment(0).abs() < 1e-3 * peak, "{} {peak}", moment(0));
        assert!(moment(1).abs() < 1e-3 * peak / fs, "{}", moment(1));
        assert!((moment(2) - 2.0).abs() < 0.01, "{}", moment(2));
    }

    #[test]
    fn onset_moves_the_kernel_centroid() {
        let k = PulseKernels::new(48_000.0, Isa::detect());
        let centroid = |phase: f32| {
            let mut out = vec![0.0f32; k.taps()];
            k.accumulate(k.select(5e-6, phase), [1.0, 0.0, 0.0], &mut out);
            let s: f32 = out.iter().sum();
            out.iter().enumerate().map(|(i, x)| i as f32 * x).sum::<f32>() / s
        };
        let c0 = centroid(0.0);
        let c5 = centroid(0.5);
        // a 5 us pulse is 0.24 samples long: its centroid sits half of that after the onset
        assert!((c0 - HALF as f32 - 0.12).abs() < 0.05, "{c0}");
        assert!((c5 - c0 - 0.5).abs() < 0.05, "{c0} {c5}");
    }

    #[test]
    fn one_pass_splat_matches_building_the_pulse_then_adding_it_bit_for_bit() {
        let k = PulseKernels::new(48_000.0, Isa::detect());
        let (p, q) = (k.select(12e-6, 0.31), k.select(12e-6, 0.37));
        let (a, b) = ([0.7, -0.002, 2e-10], [-0.4, 0.003, -3e-10]);
        let gains = [0.9f32, 1.3];
        // reference: the pulse pair built tap by tap from the kernel rows with fused
        // multiply-adds (the two pulses fall in different phase cells here), then added to
        // each channel
        let pulse = |r: PulseRef, a: Amplitudes, i: usize| {
            let (wa, wb, t) = (1.0 - r.frac, r.frac, k.taps);
            let g = |row: usize| k.data[row + i];
            // the second derivative: the g1 rows' difference over one phase cell
            let d = a[2] * (PHASES as f32 * 48_000.0);
            let x = (a[0] * wa) * g(r.row_a);
            let x = (a[0] * wb).mul_add(g(r.row_b), x);
            let x = (a[1] * wa + d).mul_add(g(r.row_a + t), x);
            (a[1] * wb - d).mul_add(g(r.row_b + t), x)
        };
        assert_ne!(p.row_a, q.row_a);
        let scratch: Vec<f32> = (0..p.taps()).map(|i| pulse(p, a, i) + pulse(q, b, i)).collect();
        let base: Vec<f32> = (0..p.taps()).map(|i| (i as f32 * 0.37).sin()).collect();
        let expect: Vec<Vec<f32>> = gains
            .iter()
            .map(|g| base.iter().zip(&scratch).map(|(x, s)| g.mul_add(*s, *x)).collect())
            .collect();
        // every copy, through the dispatch the renderer uses (`simd::Isa::run`: the AVX
        // copies are the pass `splat_avx_in` inlined)
        let run = |isa: Isa| {
            let mut k2 = k.clone();
            k2.set_isa(isa);
            let (mut l, mut r) = (base.clone(), base.clone());
            k2.add_pair_to_in(p, a, q, b, [&mut l[..], &mut r[..]], gains, isa);
            [l, r]
        };
        let mut levels = Vec::new();
        for isa in Isa::available().filter(|isa| isa.fused()) {
            let got = run(isa);
            for (g, e) in got.iter().zip(&expect) {
                assert!(g.iter().zip(e).all(|(x, y)| x.to_bits() == y.to_bits()), "{isa:?}");
            }
            levels.push(isa.level());
        }
        assert!(levels.contains(&Isa::detect().level()));
        // the unfused baseline copy (x86-64 CPUs without FMA) differs by rounding only
        let peak = expect.iter().flatten().fold(0.0f32, |m, x| m.max(x.abs()));
        let unfused = run(Isa::new(crate::base::simd::Level::Portable).unwrap());
        for (g, e) in unfused.iter().zip(&expect) {
            for (x, y) in g.iter().zip(e) {
                assert!((x - y).abs() <= 1e-6 * peak, "unfused {x} vs fused {y}");
            }
        }
        // and does differ (so the bit-for-bit checks above would catch a copy that does not fuse)
        assert_ne!(unfused.to_vec(), expect);
    }

    #[test]
    fn long_contacts_are_duller() {
        // energy above 8 kHz relative to the total: less for a 300 us contact than a 10 us one
        let k = PulseKernels::new(48_000.0, Isa::detect());
        let hf = |d: f32| {
            let mut out = vec![0.0f32; k.taps()];
            k.accumulate(k.select(d, 0.0), [1.0, 0.0, 0.0], &mut out);
            // first difference as a crude high-pass
            let e: f32 = out.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum();
            let t: f32 = out.iter().map(|x| x * x).sum();
            e / t
        };
        assert!(hf(300e-6) < 0.5 * hf(10e-6));
    }
}
