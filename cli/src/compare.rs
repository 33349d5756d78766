//! `granary compare`: how far one render is from another, in the three figures of a
//! transparency check (B relative to A, A being the reference):
//!
//! - **spectrum**: the largest difference, in dB, between the two files' third-octave band
//!   powers from 100 Hz to 16 kHz (band powers from one FFT of the whole file, zero-padded to
//!   a power of two; channels' powers added);
//! - **envelope**: the largest difference, in dB, between their levels in 50 ms windows
//!   (RMS over both channels), over the windows where either file is within 20 dB of the
//!   louder file's loudest window (the pour's body: see [`ENVELOPE_RANGE_DB`]);
//! - **crest**: the largest relative difference between the crest factors (peak / RMS) of
//!   each octave band's 50 ms envelope, 125 Hz to 16 kHz (each band cut from the FFT of the
//!   whole file: bins outside the octave set to zero), over the bands within 60 dB of the
//!   loudest band. Grouping smooths transients; this catches it.
//!
//! The functions take [`Audio`] (samples in memory), so tests can compare renders without
//! files.

use granary_engine::fft::Complex;
use granary_engine::render::Rendered;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Lowest and highest third-octave band centres, Hz.
pub const SPECTRUM_HZ: (f64, f64) = (100.0, 16_000.0);
/// Octave bands of the crest figure: centres 125 Hz x 2^k, k = 0..=7 (to 16 kHz).
pub const OCTAVES: usize = 8;
/// Envelope window, s.
pub const WINDOW_S: f64 = 0.05;
/// Octave bands more than this far below the loudest are left out of the crest figure, dB.
pub const FLOOR_DB: f64 = -60.0;
/// Envelope windows more than this far below the louder file's loudest window are left out
/// of the envelope figure, dB. The windows further down are a pour's first sparse landings
/// and the last grains of its tail, a handful of collisions a window, whose level is
/// chance's: two means of 8 reference takes of coffee beans in a glass jar, differing only by
/// their seeds, are 39 dB apart there (`cli/tests/transparency.rs`). The figure is about
/// the pour itself, so it looks within 20 dB of its loudest.
pub const ENVELOPE_RANGE_DB: f64 = 20.0;
/// Levels of silence (a power of zero), dB: finite, so differences stay numbers.
const SILENCE_DB: f64 = -300.0;

/// Audio to compare: one sample vector per channel, all of the same length.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    pub sample_rate: u32,
    pub channels: Vec<Vec<f32>>,
}

impl Audio {
    /// Reads a WAV file (float or integer PCM, any channel count).
    pub fn read(path: &Path) -> Result<Audio, String> {
        let name = path.display();
        let reader = hound::WavReader::open(path).map_err(|e| match e {
            hound::Error::IoError(e) => format!("{name}: {}", crate::output::io_message(&e)),
            e => format!("{name}: not a WAV file we can read: {e}"),
        })?;
        let spec = reader.spec();
        let n = spec.channels as usize;
        let samples: Vec<f32> = match spec.sample_format {
            hound::SampleFormat::Float => reader.into_samples::<f32>().collect::<Result<_, _>>(),
            hound::SampleFormat::Int => {
                let scale = 1.0 / (1u64 << (spec.bits_per_sample - 1)) as f32;
                reader
                    .into_samples::<i32>()
                    .map(|s| s.map(|s| s as f32 * scale))
                    .collect::<Result<_, _>>()
            }
        }
        .map_err(|e| format!("{name}: {e}"))?;
        let mut channels = vec![Vec::with_capacity(samples.len() / n.max(1)); n];
        for frame in samples.chunks_exact(n) {
            for (c, x) in channels.iter_mut().zip(frame) {
                c.push(*x);
            }
        }
        if channels.first().is_none_or(Vec::is_empty) {
            return Err(format!("{name}: has no samples"));
        }
        Ok(Audio {
            sample_rate: spec.sample_rate,
            channels,
        })
    }

    /// The main output of an engine render (stereo).
    pub fn main_of(r: &Rendered) -> Audio {
        Audio {
            sample_rate: r.sample_rate as u32,
            channels: r.main.to_vec(),
        }
    }

    /// Frames (samples per channel).
    pub fn frames(&self) -> usize {
        self.channels.first().map_or(0, Vec::len)
    }
}

/// One band of a table: its centre and a figure for each file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Band {
    pub centre_hz: f64,
    pub a: f64,
    pub b: f64,
}

/// An octave band's envelope crest factors, and whether it counts (is within [`FLOOR_DB`] of
/// the loudest band).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CrestBand {
    #[serde(flatten)]
    pub band: Band,
    pub counted: bool,
}

/// The three figures and what they come from (`--json` prints it as it is; crest figures
/// are ratios, not percent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Takes compared on each side (A, B): the figures are of their means.
    pub takes: (usize, usize),
    /// Largest |B - A| over the third-octave bands, dB.
    pub spectrum_db: f64,
    /// Third-octave band levels (dB, mean power summed over channels).
    pub spectrum: Vec<Band>,
    /// Largest |B - A| over the 50 ms windows above the floor, dB.
    pub envelope_db: f64,
    /// Where it was, s (the window's start).
    pub envelope_at_s: f64,
    /// Windows compared (those above the floor) and all windows.
    pub envelope_windows: (usize, usize),
    /// Largest |crest B / crest A - 1| over the octave bands above the floor.
    pub crest: f64,
    /// Octave bands' envelope crest factors (peak / RMS of the 50 ms envelope).
    pub crest_bands: Vec<CrestBand>,
}

impl Comparison {
    /// The three figures, one line each.
    pub fn summary(&self) -> String {
        let worst_spectrum = worst(&self.spectrum, |b| (b.b - b.a).abs());
        let crest_used: Vec<Band> = self.crest_bands.iter().filter(|c| c.counted).map(|c| c.band).collect();
        let worst_crest = worst(&crest_used, |b| crest_difference(b.a, b.b));
        let takes = match self.takes {
            (1, 1) => String::new(),
            (a, b) => format!("the means of {a} takes (A) and {b} takes (B):\n"),
        };
        format!(
            "{takes}spectrum: {:.2} dB (largest third-octave band difference, {} bands from {} to {}{})\n\
             envelope: {:.2} dB (largest 50 ms level difference, over {} of {} windows within {} dB of the louder file's loudest{})\n\
             crest: {:.1} % (largest relative difference of an octave band's envelope crest factor, {} of {} bands from {} to {} within {} dB of the loudest{})",
            self.spectrum_db,
            self.spectrum.len(),
            hz(self.spectrum.first().map_or(0.0, |b| b.centre_hz)),
            hz(self.spectrum.last().map_or(0.0, |b| b.centre_hz)),
            worst_spectrum.map_or(String::new(), |b| format!("; at {}", hz(b.centre_hz))),
            self.envelope_db,
            self.envelope_windows.0,
            self.envelope_windows.1,
            ENVELOPE_RANGE_DB,
            if self.envelope_windows.0 > 0 {
                format!("; at {:.2} s", self.envelope_at_s)
            } else {
                String::new()
            },
            100.0 * self.crest,
            crest_used.len(),
            self.crest_bands.len(),
            hz(self.crest_bands.first().map_or(0.0, |c| c.band.centre_hz)),
            hz(self.crest_bands.last().map_or(0.0, |c| c.band.centre_hz)),
            -FLOOR_DB,
            worst_crest.map_or(String::new(), |b| format!("; at {}", hz(b.centre_hz))),
        )
    }

    /// The per-band tables (`--verbose`).
    pub fn tables(&self) -> String {
        let mut t = String::from("\nthird-octave band     A dB     B dB   B-A dB\n");
        for b in &self.spectrum {
            let _ = writeln!(
                t,
                "{:>17} {:>8.2} {:>8.2} {:>+8.2}",
                hz(b.centre_hz),
                b.a,
                b.b,
                b.b - b.a
            );
        }
        t.push_str("\noctave band   crest A  crest B  B/A-1 %\n");
        for CrestBand { band: b, counted } in &self.crest_bands {
            let _ = writeln!(
                t,
                "{:>11} {:>9.3} {:>8.3} {:>+8.1}{}",
                hz(b.centre_hz),
                b.a,
                b.b,
                100.0 * (b.b / b.a - 1.0),
                if *counted { "" } else { "  (below the floor: left out)" }
            );
        }
        t.pop();
        t
    }
}

/// The band where `f` is largest.
fn worst(bands: &[Band], f: impl Fn(&Band) -> f64) -> Option<Band> {
    bands.iter().copied().max_by(|x, y| f(x).total_cmp(&f(y)))
}

/// `|b / a - 1|`, 0 when both are 0.
fn crest_difference(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (b / a - 1.0).abs()
    }
}

/// A frequency as tables show it: `125 Hz`, `1.25 kHz`.
fn hz(f: f64) -> String {
    if f >= 1000.0 {
        format!("{} kHz", (f / 10.0).round() / 100.0)
    } else {
        format!("{} Hz", f.round())
    }
}

/// The nominal third-octave centres from 100 Hz to 16 kHz (IEC 61260's series: 100, 125,
/// 160, ... 16 000), with the exact centres 1000 x 2^(n/3) the bands are cut around.
pub fn third_octave_centres() -> Vec<(f64, f64)> {
    const NOMINAL: [f64; 10] = [100.0, 125.0, 160.0, 200.0, 250.0, 315.0, 400.0, 500.0, 630.0, 800.0];
    (-10..=12)
        .map(|n: i32| {
            let exact = 1000.0 * 2f64.powf(n as f64 / 3.0);
            let decade = 10f64.powi((n + 10).div_euclid(10));
            (NOMINAL[(n + 10).rem_euclid(10) as usize] * decade, exact)
        })
        .collect()
}

/// A file's spectra: one FFT per channel of the whole file, zero-padded to `size`.
struct Spectra {
    sample_rate: f64,
    frames: usize,
    size: usize,
    bins: Vec<Vec<Complex<f64>>>,
}

impl Spectra {
    fn new(audio: &Audio, size: usize) -> Spectra {
        let fft = granary_engine::fft::forward(size);
        let bins = audio
            .channels
            .iter()
            .map(|c| {
                let mut input: Vec<f64> = c.iter().map(|&x| x as f64).collect();
                input.resize(size, 0.0);
                let mut out = fft.make_output_vec();
                fft.process(&mut input, &mut out).expect("buffers sized by the plan");
                out
            })
            .collect();
        Spectra {
            sample_rate: audio.sample_rate as f64,
            frames: audio.frames(),
            size,
            bins,
        }
    }

    /// The bins whose frequencies lie in `[lo, hi)` Hz.
    fn range(&self, lo: f64, hi: f64) -> std::ops::Range<usize> {
        let per_bin = self.sample_rate / self.size as f64;
        let last = self.size / 2;
        let first = ((lo / per_bin).ceil() as usize).min(last + 1);
        let end = ((hi / per_bin).ceil() as usize).min(last + 1);
        first..end.max(first)
    }

    /// Mean power (per frame, channels added) in `[lo, hi)` Hz, by Parseval: a bin's share
    /// of the energy is 2 |X|^2 / size (DC and Nyquist once).
    fn band_power(&self, lo: f64, hi: f64) -> f64 {
        let r = self.range(lo, hi);
        let last = self.size / 2;
        let energy: f64 = self
            .bins
            .iter()
            .map(|b| {
                b[r.clone()]
                    .iter()
                    .zip(r.clone())
                    .map(|(x, i)| if i == 0 || i == last { 1.0 } else { 2.0 } * x.norm_sqr())
                    .sum::<f64>()
            })
            .sum();
        energy / self.size as f64 / self.frames as f64
    }

    /// The band `[lo, hi)` Hz of each channel as a signal (FFT masking), `frames` long.
    fn band_signal(&self, lo: f64, hi: f64) -> Vec<Vec<f32>> {
        let ifft = granary_engine::fft::inverse(self.size);
        let r = self.range(lo, hi);
        self.bins
            .iter()
            .map(|b| {
                let mut masked = vec![Complex::new(0.0, 0.0); b.len()];
                masked[r.clone()].copy_from_slice(&b[r.clone()]);
                // a real signal's DC and Nyquist bins are real
                masked[0].im = 0.0;
                let last = masked.len() - 1;
                masked[last].im = 0.0;
                let mut out = ifft.make_output_vec();
                ifft.process(&mut masked, &mut out).expect("buffers sized by the plan");
                out.truncate(self.frames);
                out.iter().map(|x| (x / self.size as f64) as f32).collect()
            })
            .collect()
    }
}

fn db(power: f64) -> f64 {
    if power > 0.0 {
        (10.0 * power.log10()).max(SILENCE_DB)
    } else {
        SILENCE_DB
    }
}

/// Frames in one envelope window at `sample_rate`.
pub fn window_frames(sample_rate: u32) -> usize {
    ((WINDOW_S * sample_rate as f64).round() as usize).max(1)
}

/// Mean square over the channels in consecutive windows of `window` frames (the last may be
/// shorter).
pub fn envelope_power(channels: &[Vec<f32>], window: usize) -> Vec<f64> {
    let frames = channels.first().map_or(0, Vec::len);
    (0..frames.div_ceil(window))
        .map(|w| {
            let r = w * window..((w + 1) * window).min(frames);
            let n = (r.len() * channels.len()) as f64;
            channels
                .iter()
                .map(|c| c[r.clone()].iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>())
                .sum::<f64>()
                / n
        })
        .collect()
}

/// Third-octave band levels (dB of mean power, channels added), 100 Hz to 16 kHz; bands that
/// reach past the Nyquist frequency are left out.
pub fn third_octave_levels(audio: &Audio) -> Vec<(f64, f64)> {
    let s = Spectra::new(audio, audio.frames().next_power_of_two());
    third_octave_powers(&s).into_iter().map(|(f, p)| (f, db(p))).collect()
}

/// Third-octave band powers (mean power, channels added) by nominal centre.
fn third_octave_powers(s: &Spectra) -> Vec<(f64, f64)> {
    let edge = 2f64.powf(1.0 / 6.0);
    third_octave_centres()
        .into_iter()
        .filter(|(_, f)| f * edge <= s.sample_rate / 2.0)
        .map(|(nominal, f)| (nominal, s.band_power(f / edge, f * edge)))
        .collect()
}

/// The octave bands' centres, Hz: 125 x 2^k.
pub fn octave_centres() -> Vec<f64> {
    (0..OCTAVES).map(|k| 125.0 * 2f64.powi(k as i32)).collect()
}

/// Each octave band's mean power and its envelope's crest factor (peak / RMS of the 50 ms
/// RMS envelope); bands starting past the Nyquist frequency are left out.
fn octaves(s: &Spectra, window: usize) -> Vec<(f64, f64, f64)> {
    let edge = 2f64.sqrt();
    octave_centres()
        .into_iter()
        .filter(|f| f / edge < s.sample_rate / 2.0)
        .map(|f| {
            let band = s.band_signal(f / edge, f * edge);
            let env: Vec<f64> = envelope_power(&band, window).into_iter().map(f64::sqrt).collect();
            let peak = env.iter().copied().fold(0.0, f64::max);
            let rms = (env.iter().map(|e| e * e).sum::<f64>() / env.len() as f64).sqrt();
            let crest = if rms > 0.0 { peak / rms } else { 0.0 };
            (f, s.band_power(f / edge, f * edge), crest)
        })
        .collect()
}

/// Compares `b` with `a` (the reference). Both must have the same sample rate and channel
/// count; lengths may differ (band powers are per frame, envelopes are compared over the
/// shorter).
pub fn compare(a: &Audio, b: &Audio) -> Result<Comparison, String> {
    compare_takes(std::slice::from_ref(a), std::slice::from_ref(b))
}

/// What the figures are made of, for one file: third-octave band powers, the 50 ms
/// envelope's powers, and each octave band's power and envelope crest factor.
struct Features {
    third_octaves: Vec<(f64, f64)>,
    envelope: Vec<f64>,
    octaves: Vec<(f64, f64, f64)>,
}

impl Features {
    fn of(audio: &Audio) -> Features {
        let s = Spectra::new(audio, audio.frames().next_power_of_two());
        let window = window_frames(audio.sample_rate);
        Features {
            third_octaves: third_octave_powers(&s),
            envelope: envelope_power(&audio.channels, window),
            octaves: octaves(&s, window),
        }
    }

    /// The mean over several files (takes of one render): band powers, envelope powers
    /// (over the shortest file) and crest factors averaged. For one file, its own.
    fn mean(all: &[&Features]) -> Features {
        let n = all.len() as f64;
        let first = &all[0];
        let windows = all.iter().map(|f| f.envelope.len()).min().unwrap_or(0);
        Features {
            third_octaves: (0..first.third_octaves.len())
                .map(|i| {
                    (
                        first.third_octaves[i].0,
                        all.iter().map(|f| f.third_octaves[i].1).sum::<f64>() / n,
                    )
                })
                .collect(),
            envelope: (0..windows)
                .map(|w| all.iter().map(|f| f.envelope[w]).sum::<f64>() / n)
                .collect(),
            octaves: (0..first.octaves.len())
                .map(|i| {
                    let mean = |k: fn(&(f64, f64, f64)) -> f64| all.iter().map(|f| k(&f.octaves[i])).sum::<f64>() / n;
                    (first.octaves[i].0, mean(|o| o.1), mean(|o| o.2))
                })
                .collect(),
        }
    }
}

/// Compares takes `b` with takes `a` (the reference): the figures of [`compare`] on the
/// takes' means (band powers, 50 ms envelope powers and octave bands' crest factors averaged
/// over each side's takes). A pour is random: one take is one realisation, and two takes of
/// the same settings with different seeds differ by more than a transparency check's
/// tolerances. The mean of several takes is what a setting sounds like. Every file must
/// have the same sample rate and channel count.
pub fn compare_takes(a: &[Audio], b: &[Audio]) -> Result<Comparison, String> {
    if a.is_empty() || b.is_empty() {
        return Err("nothing to compare: each side needs a file".into());
    }
    let all: Vec<&Audio> = a.iter().chain(b).collect();
    let takes = Takes::of(&all)?;
    let (ia, ib): (Vec<usize>, Vec<usize>) = ((0..a.len()).collect(), (a.len()..all.len()).collect());
    Ok(takes.compare(&ia, &ib))
}

/// Takes analysed once (`Features`), so that the figures of any two groups of them can be
/// had without reading the audio again: a permutation test's many splits (`chance`).
pub struct Takes {
    sample_rate: u32,
    features: Vec<Features>,
}

impl Takes {
    /// Analyses `takes`: every file must have the same sample rate and channel count, and
    /// samples.
    pub fn of(takes: &[&Audio]) -> Result<Takes, String> {
        let Some(first) = takes.first() else {
            return Err("nothing to compare: each side needs a file".into());
        };
        for x in takes {
            if x.sample_rate != first.sample_rate {
                return Err(format!(
                    "the files have different sample rates, {} Hz and {} Hz: compare renders at one rate",
                    first.sample_rate, x.sample_rate
                ));
            }
            if x.channels.len() != first.channels.len() {
                return Err(format!(
                    "the files have different channel counts, {} and {}",
                    first.channels.len(),
                    x.channels.len()
                ));
            }
            if x.frames() == 0 {
                return Err("a file has no samples".into());
            }
        }
        Ok(Takes {
            sample_rate: first.sample_rate,
            features: takes.iter().map(|t| Features::of(t)).collect(),
        })
    }

    /// The figures of the mean of takes `b` against the mean of takes `a` (indices; each
    /// side at least one), as `compare_takes`.
    pub fn compare(&self, a: &[usize], b: &[usize]) -> Comparison {
        let side = |i: &[usize]| Features::mean(&i.iter().map(|&k| &self.features[k]).collect::<Vec<_>>());
        let (fa, fb) = (side(a), side(b));
        let sample_rate = self.sample_rate;
        let spectrum: Vec<Band> = fa
            .third_octaves
            .iter()
            .zip(&fb.third_octaves)
            .map(|(&(f, x), &(_, y))| Band {
                centre_hz: f,
                a: db(x),
                b: db(y),
            })
            .collect();
        let spectrum_db = spectrum.iter().map(|b| (b.b - b.a).abs()).fold(0.0, f64::max);

        let window = window_frames(sample_rate);
        let ea: Vec<f64> = fa.envelope.iter().copied().map(db).collect();
        let eb: Vec<f64> = fb.envelope.iter().copied().map(db).collect();
        let loudest = ea.iter().chain(&eb).copied().fold(SILENCE_DB, f64::max);
        let floor = loudest - ENVELOPE_RANGE_DB;
        let mut envelope_db = 0.0;
        let mut envelope_at_s = 0.0;
        let mut counted = 0;
        let common = ea.len().min(eb.len());
        for (w, (x, y)) in ea.iter().zip(&eb).enumerate() {
            if x.max(*y) >= floor && loudest > SILENCE_DB {
                counted += 1;
                let d = (y - x).abs();
                if d > envelope_db {
                    envelope_db = d;
                    envelope_at_s = (w * window) as f64 / sample_rate as f64;
                }
            }
        }

        let level = |o: &(f64, f64, f64)| db(o.1);
        let loudest_band = fa
            .octaves
            .iter()
            .chain(&fb.octaves)
            .map(level)
            .fold(SILENCE_DB, f64::max);
        let crest_bands: Vec<CrestBand> = fa
            .octaves
            .iter()
            .zip(&fb.octaves)
            .map(|(x, y)| {
                let counted = level(x).max(level(y)) >= loudest_band + FLOOR_DB && loudest_band > SILENCE_DB;
                let band = Band {
                    centre_hz: x.0,
                    a: x.2,
                    b: y.2,
                };
                CrestBand { band, counted }
            })
            .collect();
        let crest = crest_bands
            .iter()
            .filter(|c| c.counted)
            .map(|c| crest_difference(c.band.a, c.band.b))
            .fold(0.0, f64::max);

        Comparison {
            takes: (a.len(), b.len()),
            spectrum_db,
            spectrum,
            envelope_db,
            envelope_at_s,
            envelope_windows: (counted, common),
            crest,
            crest_bands,
        }
    }
}

/// The three figures' spread by chance alone (`chance`): each figure's quantile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chance {
    pub spectrum_db: f64,
    pub envelope_db: f64,
    pub crest: f64,
}

/// How far apart the three figures of takes `b` against takes `a` come by chance alone, where
/// `b[k]` is paired with `a[k]` (the same seed at two qualities, say): each figure's
/// `quantile` (0..1) over `splits` relabellings, each pair's two takes swapped between the
/// sides at random (drawn from `seed`). Were the two sides to sound the same, each pair's
/// takes would be exchangeable, so these relabellings draw the figures' null distribution,
/// the pairing kept (a paired permutation test: Good, "Permutation, Parametric and Bootstrap
/// Tests of Hypotheses", 3rd ed. 2005, ch. 3). The sides as they are and all swapped are
/// left out (the figures themselves), so with n pairs the figures pass with the chance
/// `quantile` when the sides do sound the same, for `quantile` up to 1 − 2/2ⁿ. With few
/// pairs the relabellings that swap one pair keep most of a true difference (n − 2 of n
/// pairs' worth), and an upper quantile of them is nearly the figure: the test's power
/// wants many pairs (the full transparency table's 16 and 48; its 8 of sand are weak).
/// Reference takes of other seeds would ignore the pairing (takes of one seed share their
/// draws until the first grouped window), and one such comparison is a single draw of
/// a wider distribution. `None` for fewer than two pairs, sides of different lengths, no
/// splits or an index past the takes.
pub fn chance(takes: &Takes, a: &[usize], b: &[usize], splits: usize, quantile: f64, seed: u64) -> Option<Chance> {
    use rand_xoshiro::rand_core::{RngCore, SeedableRng};
    if a.is_empty() || a.len() != b.len() || splits == 0 || a.iter().chain(b).any(|&k| k >= takes.features.len()) {
        return None;
    }
    if a.len() < 2 {
        return None;
    }
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut x, mut y) = (a.to_vec(), b.to_vec());
    let mut figures: [Vec<f64>; 3] = Default::default();
    while figures[0].len() < splits {
        let mut bits = 0u64;
        let mut swapped = 0;
        for k in 0..a.len() {
            if k % 64 == 0 {
                bits = rng.next_u64();
            }
            (x[k], y[k]) = if bits & 1 == 1 { (b[k], a[k]) } else { (a[k], b[k]) };
            swapped += (bits & 1) as usize;
            bits >>= 1;
        }
        // not the sides as they are, nor all swapped (the same figures)
        if swapped == 0 || swapped == a.len() {
            continue;
        }
        let c = takes.compare(&x, &y);
        for (f, v) in figures.iter_mut().zip([c.spectrum_db, c.envelope_db, c.crest]) {
            f.push(v);
        }
    }
    let at = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let k = ((quantile.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        v[k]
    };
    let [spectrum_db, envelope_db, crest] = figures.map(at);
    Some(Chance {
        spectrum_db,
        envelope_db,
        crest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded noise bursts (a transient every 0.25 s), stereo.
    fn bursts(seconds: f64, sample_rate: u32) -> Audio {
        let n = (seconds * sample_rate as f64) as usize;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut noise = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let period = sample_rate as usize / 4;
        let channels = (0..2)
            .map(|_| {
                (0..n)
                    .map(|i| {
                        let t = (i % period) as f64 / sample_rate as f64;
                        (0.5 * noise() * (-t / 0.02).exp()) as f32
                    })
                    .collect()
            })
            .collect();
        Audio { sample_rate, channels }
    }

    /// The chance spread is the relabellings' figures: takes at gains 1, 1.1, 1.2, 1.3
    /// paired with the same at 1.4 ... 1.7, their largest spectrum and envelope figure is
    /// that of the relabelling that swaps the first pair (every band and window moves by the
    /// sides' power ratio; the sides as they are and all swapped are left out), found among
    /// 2,000 random relabellings of the 14; a relabelling's median is nearer; takes all
    /// alike give zero; unpaired sides, or one pair, give none.
    #[test]
    fn chance_is_the_figures_spread_over_relabelled_pairs() {
        let one = bursts(1.0, 8_000);
        let gained = |g: f32| Audio {
            sample_rate: one.sample_rate,
            channels: one.channels.iter().map(|c| c.iter().map(|x| g * x).collect()).collect(),
        };
        let gains: Vec<f32> = (0..8).map(|k| 1.0 + 0.1 * k as f32).collect();
        let audio: Vec<Audio> = gains.iter().map(|&g| gained(g)).collect();
        let takes = Takes::of(&audio.iter().collect::<Vec<_>>()).unwrap();
        let (a, b) = ([0, 1, 2, 3], [4, 5, 6, 7]);
        let c = chance(&takes, &a, &b, 2000, 1.0, 1).unwrap();
        let power = |g: &[f32]| g.iter().map(|&g| (g as f64).powi(2)).sum::<f64>();
        let db = |x: &[f32], y: &[f32]| 10.0 * (power(y) / power(x)).log10();
        let paired = db(&gains[..4], &gains[4..]);
        assert!((takes.compare(&a, &b).spectrum_db - paired).abs() < 1e-3);
        // the largest of the others: the first pair swapped (1.4, 1.1, 1.2, 1.3 against 1.0,
        // 1.5, 1.6, 1.7)
        let one_swapped = db(&[1.4, 1.1, 1.2, 1.3], &[1.0, 1.5, 1.6, 1.7]);
        assert!(
            (c.spectrum_db - one_swapped).abs() < 1e-3,
            "{c:?} against {one_swapped}"
        );
        assert!(
            (c.envelope_db - one_swapped).abs() < 1e-3,
            "{c:?} against {one_swapped}"
        );
        let median = chance(&takes, &a, &b, 2000, 0.5, 1).unwrap();
        assert!(median.spectrum_db < 0.5 * paired, "{median:?}");
        let alike = Takes::of(&[&one, &one, &one, &one]).unwrap();
        let none = chance(&alike, &[0, 1], &[2, 3], 100, 1.0, 1).unwrap();
        assert_eq!((none.spectrum_db, none.envelope_db, none.crest), (0.0, 0.0, 0.0));
        assert_eq!(chance(&takes, &a, &b[..3], 100, 0.5, 1), None);
        assert_eq!(chance(&takes, &[], &[], 100, 0.5, 1), None);
        assert_eq!(chance(&takes, &[0], &[4], 100, 0.5, 1), None);
        assert_eq!(chance(&takes, &a, &[4, 5, 6, 8], 100, 0.5, 1), None);
    }

    #[test]
    fn the_nominal_series_is_iec() {
        let c: Vec<f64> = third_octave_centres().iter().map(|c| c.0).collect();
        assert_eq!(c.len(), 23);
        assert_eq!(&c[..4], [100.0, 125.0, 160.0, 200.0]);
        assert_eq!(&c[c.len() - 3..], [10_000.0, 12_500.0, 16_000.0]);
        for (nominal, exact) in third_octave_centres() {
            assert!((exact / nominal - 1.0).abs() < 0.03, "{nominal} {exact}");
        }
    }

    #[test]
    fn band_powers_add_up_to_the_signal_power() {
        // white noise: the bands from 100 Hz to 16 kHz hold their share of the power
        let a = bursts(2.0, 48_000);
        let total: f64 = a.channels.iter().flatten().map(|x| (*x as f64).powi(2)).sum::<f64>() / a.frames() as f64;
        let s = Spectra::new(&a, a.frames().next_power_of_two());
        let all = s.band_power(0.0, 24_001.0);
        assert!((all / total - 1.0).abs() < 1e-9, "{all} {total}");
        // the bands are contiguous: together they are the span from the lowest band's lower
        // edge to the highest's upper edge
        let edge = 2f64.powf(1.0 / 6.0);
        let centres = third_octave_centres();
        let bands: f64 = third_octave_powers(&s).iter().map(|(_, p)| p).sum();
        let span = s.band_power(centres[0].1 / edge, centres[22].1 * edge);
        assert!((bands / span - 1.0).abs() < 1e-9, "{bands} {span}");
        assert!(span < all && span > 0.5 * all, "{span} of {all}");
    }

    #[test]
    fn figures_of_a_file_and_itself_with_gain() {
        let a = bursts(2.0, 48_000);
        let c = compare(&a, &a).unwrap();
        assert_eq!((c.spectrum_db, c.envelope_db, c.crest), (0.0, 0.0, 0.0));
        assert_eq!(c.spectrum.len(), 23);
        assert_eq!(c.crest_bands.len(), 8);
        let g = 10f32.powf(1.0 / 20.0);
        let mut b = a.clone();
        b.channels.iter_mut().flatten().for_each(|x| *x *= g);
        let c = compare(&a, &b).unwrap();
        assert!((c.spectrum_db - 1.0).abs() < 1e-4, "{}", c.spectrum_db);
        assert!((c.envelope_db - 1.0).abs() < 1e-4, "{}", c.envelope_db);
        assert!(c.crest < 1e-5, "{}", c.crest);
    }

    /// The envelope looks at the pour's body: a tail 30 dB down that differs by 10 dB does not
    /// count; a passage 15 dB down that differs by 3 dB does (the windows within
    /// `ENVELOPE_RANGE_DB` of the loudest).
    #[test]
    fn the_envelope_leaves_out_what_is_more_than_20_db_down() {
        // a steady 1 kHz tone, two seconds: forty windows of one level
        let tone: Vec<f32> = (0..96_000)
            .map(|i| (0.5 * (std::f64::consts::TAU * i as f64 / 48.0).sin()) as f32)
            .collect();
        let a = Audio {
            sample_rate: 48_000,
            channels: vec![tone.clone(), tone],
        };
        let scaled = |audio: &Audio, from_s: f64, gain_db: f64| {
            let mut b = audio.clone();
            let from = (from_s * b.sample_rate as f64) as usize;
            let g = 10f64.powf(gain_db / 20.0) as f32;
            b.channels
                .iter_mut()
                .for_each(|c| c[from..].iter_mut().for_each(|x| *x *= g));
            b
        };
        // the last second 30 dB down in both, and 10 dB further down in B: left out
        let quiet = scaled(&a, 1.0, -30.0);
        let c = compare(&quiet, &scaled(&quiet, 1.0, -10.0)).unwrap();
        assert!(c.envelope_db < 1e-9, "{}", c.envelope_db);
        assert_eq!(c.envelope_windows, (20, 40));
        // 15 dB down, and 3 dB further in B: counted
        let body = scaled(&a, 1.0, -15.0);
        let c = compare(&body, &scaled(&body, 1.0, -3.0)).unwrap();
        assert!((c.envelope_db - 3.0).abs() < 1e-3, "{}", c.envelope_db);
        assert_eq!(c.envelope_windows, (40, 40));
    }

    #[test]
    fn smoothed_transients_change_the_crest_not_the_spectrum() {
        // the same noise with its bursts spread out: same spectrum shape, flatter envelope
        let a = bursts(2.0, 48_000);
        let mut b = a.clone();
        for c in b.channels.iter_mut() {
            c.rotate_left(1);
            let n = c.len();
            // shuffle the samples within each 0.25 s period in place: a deterministic
            // permutation that keeps each period's power but spreads its burst
            for p in c.chunks_mut(12_000) {
                let len = p.len();
                for i in 0..len {
                    let j = (i * 7919) % len;
                    p.swap(i, j);
                }
            }
            assert_eq!(c.len(), n);
        }
        let c = compare(&a, &b).unwrap();
        assert!(c.crest > 0.3, "crest {}", c.crest);
        // (2 s of noise: a narrow low band's power is itself uncertain by about a dB)
        assert!(c.spectrum_db < 2.0, "spectrum {}", c.spectrum_db);
    }

    #[test]
    fn takes_are_compared_by_their_means() {
        let x = bursts(1.0, 48_000);
        let mut y = x.clone();
        y.channels.iter_mut().flatten().for_each(|s| *s *= 2.0);
        // the order of the takes does not matter
        let c = compare_takes(&[x.clone(), y.clone()], &[y.clone(), x.clone()]).unwrap();
        assert_eq!((c.spectrum_db, c.envelope_db, c.crest), (0.0, 0.0, 0.0));
        assert_eq!(c.takes, (2, 2));
        // powers 1 and 4 average to 2.5: 10 log10(2.5) dB above x alone, in every band and
        // window; the crest factors (x's and y's are the same) do not move
        let c = compare_takes(std::slice::from_ref(&x), &[x.clone(), y.clone()]).unwrap();
        let want = 10.0 * 2.5f64.log10();
        assert!((c.spectrum_db - want).abs() < 1e-6, "{}", c.spectrum_db);
        assert!((c.envelope_db - want).abs() < 1e-6, "{}", c.envelope_db);
        assert!(c.crest < 1e-9, "{}", c.crest);
        assert!(c.summary().starts_with("the means of 1 takes (A) and 2 takes (B):"));
        assert!(compare_takes(&[], std::slice::from_ref(&x)).is_err());
        assert!(compare_takes(std::slice::from_ref(&x), &[]).is_err());
    }

    #[test]
    fn mismatches_are_refused() {
        let a = bursts(0.5, 48_000);
        let mut b = bursts(0.5, 44_100);
        assert!(compare(&a, &b)
            .unwrap_err()
            .contains("different sample rates, 48000 Hz and 44100 Hz"));
        b = a.clone();
        b.channels.pop();
        assert!(compare(&a, &b)
            .unwrap_err()
            .contains("different channel counts, 2 and 1"));
    }
}
