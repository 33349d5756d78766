//! Levels of a render, measured as it streams: integrated loudness (EBU R128 / ITU-R BS.1770,
//! the `ebur128` crate), true peak, sample peak, RMS over both channels, and how hard the
//! main output's limiter worked; and the EBU R 128 figures a Broadcast WAV file's `bext` chunk
//! carries ([`R128`]: loudness range, the momentary and short-term maxima), for the mix and
//! for each stem.
//!
//! The limiter's gain reduction is read from the aligned outputs: the limiter is stereo-linked
//! and its input is the grains stem plus the cup stem, so at each frame its gain is the main
//! output over that sum (taken on the louder channel of the sum). A frame counts as limited
//! when the reduction exceeds [`ACTIVE_DB`]; frames whose sum is below [`GATE`] are too quiet
//! to read a ratio from and count as not limited.

use crate::bwf::Loudness;
use ebur128::{EbuR128, Mode};
use granary_engine::render::Block;

/// Gain reduction above which the limiter counts as active, dB.
pub const ACTIVE_DB: f64 = 0.01;
/// Below this |stems' sum| (−120 dBFS) a frame's gain reduction is not read.
pub const GATE: f32 = 1e-6;

/// The EBU R 128 meter of one stereo file (`ebur128`: ITU-R BS.1770-4, EBU Tech 3341 and
/// 3342): integrated loudness, loudness range, true peak, and the largest momentary (400 ms)
/// and short-term (3 s) loudness, read every 100 ms of audio (EBU Tech 3341 §2.2: the meters
/// are updated at least ten times a second). The reading times are counted in frames from the
/// start, so the figures do not depend on the block size.
pub struct R128 {
    meter: EbuR128,
    /// Frames between two readings (a tenth of a second, rounded).
    hop: u64,
    frames: u64,
    max_momentary: f64,
    max_short_term: f64,
    /// The mean (K-weighted, channel-summed) energy of each of the last 30 readings' 100 ms,
    /// oldest first from `next` (zeros before the first: the meter's window starts silent),
    /// where a reading's 100 ms are `ebur128`'s own (`hop_exact`).
    tenths: [f64; 30],
    next: usize,
    /// Whether `hop` is exactly the meter's 100 ms (the rate a multiple of 10 Hz: every rate
    /// a host offers). Then the momentary and short-term loudness are read from `tenths`,
    /// one 100 ms interval a reading, rather than from the meter's whole 400 ms and 3 s
    /// windows at each reading (34 times the audio: a quarter of a minute-long render's
    /// time); the same energies summed in another order (rounding only).
    hop_exact: bool,
}

impl R128 {
    /// A meter for a stereo file at `sample_rate` Hz.
    pub fn new(sample_rate: u32) -> Result<R128, String> {
        let meter = EbuR128::new(2, sample_rate, Mode::I | Mode::LRA | Mode::TRUE_PEAK)
            .map_err(|e| format!("loudness meter at {sample_rate} Hz: {e}"))?;
        Ok(R128 {
            meter,
            hop: (sample_rate as u64).div_ceil(10).max(1),
            frames: 0,
            max_momentary: f64::NEG_INFINITY,
            max_short_term: f64::NEG_INFINITY,
            tenths: [0.0; 30],
            next: 0,
            // `ebur128`'s 100 ms is (rate + 5) / 10 frames, its `loudness_window(100)` rate / 10
            hop_exact: sample_rate.is_multiple_of(10),
        })
    }

    /// Adds frames (`x[0]` left, `x[1]` right, equal lengths).
    pub fn add(&mut self, x: [&[f32]; 2]) {
        let n = x[0].len().min(x[1].len());
        let mut at = 0;
        while at < n {
            // up to the next reading
            let to_reading = (self.hop - self.frames % self.hop) as usize;
            let k = to_reading.min(n - at);
            // planar input of equal lengths cannot fail
            let _ = self
                .meter
                .add_frames_planar_f32(&[&x[0][at..at + k], &x[1][at..at + k]]);
            self.frames += k as u64;
            at += k;
            if self.frames.is_multiple_of(self.hop) {
                self.read();
            }
        }
    }

    /// A reading: the momentary (400 ms) and short-term (3 s) loudness now, into the maxima.
    fn read(&mut self) {
        if !self.hop_exact {
            if let Ok(m) = self.meter.loudness_momentary() {
                self.max_momentary = self.max_momentary.max(m);
            }
            if let Ok(s) = self.meter.loudness_shortterm() {
                self.max_short_term = self.max_short_term.max(s);
            }
            return;
        }
        // BS.1770-4 eq. 2: L = -0.691 + 10 log10(z), z the channel-summed mean square
        let Ok(tenth) = self.meter.loudness_window(100) else {
            return;
        };
        self.tenths[self.next] = if tenth.is_finite() {
            10f64.powf((tenth + 0.691) / 10.0)
        } else {
            0.0
        };
        self.next = (self.next + 1) % self.tenths.len();
        // the newest 4 and all 30, each a mean over equally long intervals
        let newest = |k: usize| (1..=k).map(|i| self.tenths[(self.next + 30 - i) % 30]).sum::<f64>() / k as f64;
        let loudness = |z: f64| {
            if z > 0.0 {
                -0.691 + 10.0 * z.log10()
            } else {
                f64::NEG_INFINITY
            }
        };
        self.max_momentary = self.max_momentary.max(loudness(newest(4)));
        self.max_short_term = self.max_short_term.max(loudness(newest(30)));
    }

    /// Integrated loudness, LUFS (−∞ when silent or shorter than 400 ms).
    pub fn integrated(&self) -> f64 {
        self.meter.loudness_global().unwrap_or(f64::NEG_INFINITY)
    }

    /// True peak over both channels, dBTP.
    pub fn true_peak_dbtp(&self) -> f64 {
        db((0..2)
            .filter_map(|c| self.meter.true_peak(c).ok())
            .fold(0.0f64, f64::max))
    }

    /// The figures so far; those not measured yet are NaN, not computed: the momentary and
    /// short-term maxima before the first reading, the loudness range before its first
    /// short-term (3 s) block.
    pub fn loudness(&self) -> Loudness {
        let measured = |x: f64| if self.frames >= self.hop { x } else { f64::NAN };
        let range = if self.frames >= 30 * self.hop {
            self.meter.loudness_range().unwrap_or(f64::NAN)
        } else {
            f64::NAN
        };
        Loudness {
            integrated_lufs: self.integrated(),
            range_lu: range,
            true_peak_dbtp: self.true_peak_dbtp(),
            max_momentary_lufs: measured(self.max_momentary),
            max_short_term_lufs: measured(self.max_short_term),
        }
    }
}

/// Accumulates the levels of a render block by block.
pub struct Meter {
    r128: R128,
    frames: u64,
    sum_sq: f64,
    peak: f32,
    /// Smallest main / (the stems' sum) ratio seen (1 = no reduction).
    min_gain: f64,
    limited: u64,
    /// The gain below which a frame counts as limited: −[`ACTIVE_DB`] as a ratio.
    active_below: f64,
}

/// The figures `granary render` prints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Levels {
    /// Integrated loudness, LUFS (−inf when the render is silent or shorter than 400 ms).
    pub integrated_lufs: f64,
    /// True peak over both channels, dBTP (4× oversampled below 96 kHz).
    pub true_peak_dbtp: f64,
    /// Sample peak, dBFS.
    pub peak_dbfs: f64,
    /// RMS over both channels, dBFS.
    pub rms_dbfs: f64,
    /// Largest gain reduction of the limiter, dB (0 when it never acted).
    pub max_gain_reduction_db: f64,
    /// Share of the frames where the limiter took more than [`ACTIVE_DB`] off, 0..1.
    pub limiter_active: f64,
    pub frames: u64,
}

impl Levels {
    /// Whether every sample of the main output is zero.
    pub fn silent(&self) -> bool {
        self.peak_dbfs == f64::NEG_INFINITY
    }
}

fn db(x: f64) -> f64 {
    if x > 0.0 {
        20.0 * x.log10()
    } else {
        f64::NEG_INFINITY
    }
}

impl Meter {
    /// A meter for a stereo render at `sample_rate` Hz.
    pub fn new(sample_rate: u32) -> Result<Meter, String> {
        let r128 = R128::new(sample_rate)?;
        Ok(Meter {
            r128,
            frames: 0,
            sum_sq: 0.0,
            peak: 0.0,
            min_gain: 1.0,
            limited: 0,
            active_below: 10f64.powf(-ACTIVE_DB / 20.0),
        })
    }

    /// Adds one block of the render.
    pub fn add(&mut self, b: &Block<'_>) {
        self.r128.add(b.main);
        let [ml, mr] = b.main;
        for t in 0..b.len() {
            let (l, r) = (ml[t], mr[t]);
            self.sum_sq += (l as f64) * (l as f64) + (r as f64) * (r as f64);
            self.peak = self.peak.max(l.abs()).max(r.abs());
            // the mix before the limiter: every stem
            let pre = [0, 1].map(|c| b.grains[c][t] + b.cup[c][t] + b.surface[c][t] + b.friction[c][t]);
            let (pre, post) = if pre[0].abs() >= pre[1].abs() {
                (pre[0], l)
            } else {
                (pre[1], r)
            };
            if pre.abs() > GATE {
                let gain = (post as f64 / pre as f64).abs();
                self.min_gain = self.min_gain.min(gain);
                // -db(gain) > ACTIVE_DB without a logarithm a frame (NaN counts, as there)
                if gain < self.active_below || gain.is_nan() {
                    self.limited += 1;
                }
            }
        }
        self.frames += b.len() as u64;
    }

    /// The figures so far.
    pub fn levels(&self) -> Levels {
        let n = self.frames.max(1) as f64;
        Levels {
            integrated_lufs: self.r128.integrated(),
            true_peak_dbtp: self.r128.true_peak_dbtp(),
            peak_dbfs: db(self.peak as f64),
            rms_dbfs: db((self.sum_sq / (2.0 * n)).sqrt()),
            max_gain_reduction_db: (-db(self.min_gain)).max(0.0),
            limiter_active: self.limited as f64 / n,
            frames: self.frames,
        }
    }

    /// The mix's R 128 meter.
    pub fn r128(&self) -> &R128 {
        &self.r128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block<'a>(main: [&'a [f32]; 2], grains: [&'a [f32]; 2], cup: [&'a [f32]; 2]) -> Block<'a> {
        let zeros: &'a [f32] = &ZEROS[..main[0].len()];
        Block {
            main,
            grains,
            cup,
            surface: [zeros, zeros],
            friction: [zeros, zeros],
        }
    }
    static ZEROS: [f32; 65_536] = [0.0; 65_536];

    #[test]
    fn a_full_scale_sine_reads_as_its_standard_level() {
        // BS.1770: a 1 kHz sine peaking at 0 dBFS in both channels reads 0 LUFS; here at
        // half scale, -6.02 LUFS
        let fs = 48_000;
        let x: Vec<f32> = (0..fs * 3)
            .map(|i| (2.0 * std::f32::consts::PI * 1000.0 * i as f32 / fs as f32).sin() * 0.5)
            .collect();
        let zero = vec![0.0f32; x.len()];
        let mut m = Meter::new(fs as u32).unwrap();
        for (c, z) in x.chunks(1000).zip(zero.chunks(1000)) {
            // the whole signal came through the limiter untouched
            m.add(&block([c, c], [c, c], [z, z]));
        }
        let l = m.levels();
        assert!((l.integrated_lufs - -6.02).abs() < 0.1, "{l:?}");
        assert!((l.true_peak_dbtp - -6.02).abs() < 0.1, "{l:?}");
        assert!((l.rms_dbfs - -9.03).abs() < 0.01, "{l:?}");
        assert_eq!((l.max_gain_reduction_db, l.limiter_active), (0.0, 0.0));
        assert!(!l.silent());
    }

    /// The momentary and short-term maxima as `ebur128` reads its own 400 ms and 3 s
    /// windows every 100 ms: what `R128` gave before it summed its 100 ms readings.
    fn maxima_read_whole(fs: u32, x: [&[f32]; 2]) -> (f64, f64) {
        let mut meter = EbuR128::new(2, fs, Mode::I | Mode::LRA | Mode::TRUE_PEAK).unwrap();
        let hop = (fs as usize).div_ceil(10);
        let (mut m, mut s) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for (l, r) in x[0].chunks(hop).zip(x[1].chunks(hop)) {
            meter.add_frames_planar_f32(&[l, r]).unwrap();
            if l.len() == hop {
                m = m.max(meter.loudness_momentary().unwrap());
                s = s.max(meter.loudness_shortterm().unwrap());
            }
        }
        (m, s)
    }

    #[test]
    fn the_maxima_from_tenths_are_the_meters_windows() {
        // a signal whose loudness moves: a 1 kHz tone in bursts growing and fading over 8 s,
        // quieter on the right, after 0.3 s of silence; at a rate a multiple of 10 Hz (read
        // from the summed tenths) and at one that is not (the meter's own windows)
        for fs in [48_000u32, 44_100, 22_051] {
            let n = fs as usize * 8;
            let env = |i: usize| {
                let t = i as f32 / fs as f32;
                if t < 0.3 {
                    0.0
                } else {
                    (0.5 + 0.5 * (t * 1.7).sin()) * if (t * 3.0).fract() < 0.4 { 1.0 } else { 0.05 }
                }
            };
            let tone = |i: usize| (2.0 * std::f32::consts::PI * 1000.0 * i as f32 / fs as f32).sin();
            let l: Vec<f32> = (0..n).map(|i| 0.4 * env(i) * tone(i)).collect();
            let r: Vec<f32> = l.iter().map(|x| 0.5 * x).collect();
            let mut meter = R128::new(fs).unwrap();
            // blocks that do not fall on the readings
            let mut at = 0;
            for (k, len) in [1usize, 333, 4_799, 4_800, 1_000, 10_007].iter().cycle().enumerate() {
                if at >= n || k > 100_000 {
                    break;
                }
                let to = (at + len).min(n);
                meter.add([&l[at..to], &r[at..to]]);
                at = to;
            }
            let got = meter.loudness();
            let (m, s) = maxima_read_whole(fs, [&l, &r]);
            assert!(m.is_finite() && s.is_finite() && s < m - 0.5, "{fs} Hz: {m} {s}");
            assert!(
                (got.max_momentary_lufs - m).abs() < 1e-9,
                "{fs} Hz: {got:?} against {m}"
            );
            assert!(
                (got.max_short_term_lufs - s).abs() < 1e-9,
                "{fs} Hz: {got:?} against {s}"
            );
        }
    }

    #[test]
    fn gain_reduction_is_main_over_the_stems_sum() {
        let pre = [0.5f32, 2.0, -4.0, 1e-9];
        // the limiter halves the second frame, quarters the third; the fourth is gated
        let main = [0.5f32, 1.0, -1.0, 0.0];
        let zero = [0.0f32; 4];
        let mut m = Meter::new(48_000).unwrap();
        m.add(&block([&main, &main], [&pre, &pre], [&zero, &zero]));
        let l = m.levels();
        assert!((l.max_gain_reduction_db - 12.041).abs() < 0.01, "{l:?}");
        assert_eq!(l.limiter_active, 0.5);
        let silent = Meter::new(48_000).unwrap();
        assert!(silent.levels().silent());
    }

    #[test]
    fn the_friction_stem_is_part_of_the_mix_before_the_limiter() {
        // grains and a friction stem in opposite phase: the main output is their sum, half
        // the grains, and the limiter did nothing (leaving friction out reads 6 dB)
        let grains = [0.3f32, -0.6, 0.2, 0.5];
        let friction = grains.map(|x| -0.5 * x);
        let main = grains.map(|x| 0.5 * x);
        let zero = [0.0f32; 4];
        let mut m = Meter::new(48_000).unwrap();
        m.add(&Block {
            main: [&main, &main],
            grains: [&grains, &grains],
            cup: [&zero, &zero],
            surface: [&zero, &zero],
            friction: [&friction, &friction],
        });
        let l = m.levels();
        assert_eq!((l.max_gain_reduction_db, l.limiter_active), (0.0, 0.0), "{l:?}");
    }
}
