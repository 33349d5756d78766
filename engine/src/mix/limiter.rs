//! Look-ahead brick-wall limiter (Phya = seed 004, §4.8: "a short look-ahead brick wall
//! limiter that can guarantee a limit without artifacts").
//!
//! The signal is delayed by `L` samples. For every incoming sample the gain it needs,
//! `min(1, ceiling / |x|)` (stereo-linked), goes through a sliding minimum over `L + 1`
//! samples and then a moving average over `L` samples. Every value averaged for the
//! sample leaving the delay line is a minimum over a window that contains that sample, so
//! the average can never exceed the gain it needs: the ceiling holds exactly, and the gain
//! ramps down smoothly over the look-ahead instead of jumping. A one-pole release lets the
//! gain recover. A final clamp catches rounding.
//!
//! The ceiling is a true-peak ceiling (ITU-R BS.1770-4 Annex 2, the peak EBU R 128 and
//! delivery specifications measure): the need of a sample is taken from the largest of its
//! own value and the signal between it and its neighbours, oversampled 4× below 96 kHz (2×
//! below 192 kHz, none above) by the interpolator `ebur128`'s meter uses, so that what
//! `granary render` reports in dBTP is what the limiter held (`TruePeak`). The interpolator
//! needs the samples after the one it looks at: it delays the signal by half its length
//! (6 samples at 4×), which adds to the look-ahead in the reported latency.

/// Look-ahead time, s (Phya: one processing vector of 128 samples at 44.1 kHz).
pub const LOOKAHEAD_S: f32 = 0.0025;
/// Release time constant, s.
pub const RELEASE_S: f32 = 0.08;

pub struct Limiter {
    /// The true-peak detector, ahead of the look-ahead.
    tp: TruePeak,
    len: usize,
    ceiling: f32,
    release: f32,
    delay: [Vec<f32>; 2],
    /// `n mod len`: the delay lines' and the average's ring position.
    pos: usize,
    /// Sliding minimum of the needed gains over the last `len + 1` samples, by blocks of
    /// `len + 1` (van Herk 1992, Gil & Werman 1993): the window ending in offset `j` of
    /// the current block is offsets `j + 1..` of the previous block and `..=j` of this
    /// one, so its minimum is the previous block's suffix minimum from `j + 1` (`suffix`;
    /// its entry `len + 1` is 1) and this block's running minimum (`prefix`). Three
    /// comparisons a sample, whatever the look-ahead; a block's suffix minima are taken
    /// when it closes, from its needs (`block`). Both are padded with ones to a multiple
    /// of `SCAN_CHAINS` entries (`suffix_minima`).
    block: Vec<f32>,
    suffix: Vec<f32>,
    prefix: f32,
    offset: usize,
    /// How far the release holds the gain below unity, `1 - gain`, decaying by `release`
    /// each sample.
    dip: f32,
    /// Moving average over the last `len` held gains.
    avg_buf: Vec<f32>,
    avg_sum: f64,
    n: u64,
    /// Whether `hold_calm` may stand in for `hold` (always, but in the test that compares the
    /// two).
    shortcut: bool,
    /// Chunks `hold_calm` stood in for (the test that compares the two).
    #[cfg(test)]
    calm_chunks: usize,
}

/// The most the release's dip may be for `Limiter::hold_calm`: 1 - dip rounds to 1 in f32
/// below 2^-25 (half the spacing of f32 under 1); a factor of two to spare.
const CALM_DIP: f32 = 1.0 / (1u32 << 26) as f32;

/// Samples a span is processed in at once (`process_span` takes any length, in pieces).
const CHUNK: usize = 128;

impl Limiter {
    pub fn new(sample_rate: f32, ceiling: f32) -> Self {
        let len = ((LOOKAHEAD_S * sample_rate).round() as usize).max(1);
        let mut l = Limiter {
            tp: TruePeak::new(sample_rate),
            len,
            ceiling,
            release: (-1.0 / (RELEASE_S * sample_rate)).exp(),
            delay: [vec![0.0; len], vec![0.0; len]],
            pos: 0,
            block: vec![1.0; (len + 1).next_multiple_of(SCAN_CHAINS)],
            suffix: vec![1.0; (len + 1).next_multiple_of(SCAN_CHAINS).max(len + 2)],
            prefix: 1.0,
            offset: 0,
            dip: 0.0,
            avg_buf: vec![1.0; len],
            avg_sum: len as f64,
            n: 0,
            shortcut: true,
            #[cfg(test)]
            calm_chunks: 0,
        };
        l.reset();
        l
    }

    /// Latency in samples, to be reported to the host: the look-ahead and the true-peak
    /// interpolator's delay.
    pub fn latency(&self) -> usize {
        self.len + self.tp.delay
    }

    pub fn ceiling(&self) -> f32 {
        self.ceiling
    }

    /// The gain on the last sample out, 0..=1 (1: not limiting; for a gain-reduction meter).
    pub fn gain(&self) -> f32 {
        ((self.avg_sum / self.len as f64) as f32).clamp(0.0, 1.0)
    }

    pub fn reset(&mut self) {
        self.tp.reset();
        for d in &mut self.delay {
            d.fill(0.0);
        }
        self.pos = 0;
        // no samples before the reset: nothing limits the window (every need is <= 1)
        self.block.fill(1.0);
        self.suffix.fill(1.0);
        self.prefix = 1.0;
        self.offset = 0;
        self.dip = 0.0;
        self.avg_buf.fill(1.0);
        self.avg_sum = self.len as f64;
        self.n = 0;
    }

    /// Makes the state a function of the samples it holds alone (a new pour starts here):
    /// the moving average re-summed now, and its re-sum schedule counted from here.
    pub fn resync(&mut self) {
        self.avg_sum = self.avg_buf.iter().map(|&x| x as f64).sum();
        self.n = 0;
    }

    /// One stereo sample (`process_span` over one sample).
    pub fn process(&mut self, l: f32, r: f32) -> (f32, f32) {
        let (mut l, mut r) = ([l], [r]);
        self.process_span(&mut l, &mut r);
        (l[0], r[0])
    }

    /// Limits a span in place (`l` and `r` of equal length; any length). The samples do
    /// not depend on how a signal is cut into spans: every step below is per sample, in
    /// sample order, or elementwise.
    #[inline(always)]
    pub fn process_span(&mut self, l: &mut [f32], r: &mut [f32]) {
        let n = l.len().min(r.len());
        let mut done = 0;
        while done < n {
            let m = (n - done).min(CHUNK);
            self.chunk(&mut l[done..done + m], &mut r[done..done + m]);
            done += m;
        }
    }

    /// `process_span` over at most `CHUNK` samples.
    #[inline(always)]
    fn chunk(&mut self, l: &mut [f32], r: &mut [f32]) {
        let m = l.len().min(r.len()).min(CHUNK);
        let (l, r) = (&mut l[..m], &mut r[..m]);
        let c = self.ceiling;
        // non-finite input never reaches the output (a loop a channel: chained, the two did
        // not vectorise)
        for x in l.iter_mut() {
            *x = if x.is_finite() { *x } else { 0.0 };
        }
        for x in r.iter_mut() {
            *x = if x.is_finite() { *x } else { 0.0 };
        }
        // the true peak from each sample to the next, stereo-linked; `l` and `r` become
        // the signal delayed by the interpolator (`TruePeak::run`)
        let mut peaks = [0.0f32; CHUNK];
        self.tp.run(l, r, &mut peaks, c / TP_MARGIN);
        // the gain each sample needs, min(1, ceiling / peak) over the spans either side of
        // it (elementwise: packed SIMD)
        let mut before = [0.0f32; CHUNK];
        before[0] = self.tp.last;
        before[1..m].copy_from_slice(&peaks[..m - 1]);
        self.tp.last = peaks[m - 1];
        let mut need = [1.0f32; CHUNK];
        for ((g, &p), &b) in need.iter_mut().zip(&peaks[..m]).zip(&before[..m]) {
            let peak = max(p, b) * TP_MARGIN;
            *g = if peak > c { c / peak } else { 1.0 };
        }
        // per sample, in order: the window minimum, the release and the moving average
        // over the last `len` held gains, each sample's running sum into `sums`; where
        // nothing limits, a shortcut that gives the same numbers (`hold_calm`)
        let start = self.pos;
        let mut sums = [0.0f64; CHUNK];
        let len = self.len;
        let mut gain = [0.0f32; CHUNK];
        let calm = if self.shortcut {
            self.hold_calm(&need[..m], &mut sums[..m])
        } else {
            None
        };
        if let Some(at) = calm {
            // at most two sums, either side of a re-sum: one division each
            gain[..at].fill((sums[0] / len as f64) as f32);
            if at < m {
                gain[at..m].fill((sums[at] / len as f64) as f32);
            }
        } else {
            self.hold(&need[..m], &mut sums[..m]);
            for (g, &s) in gain.iter_mut().zip(&sums[..m]) {
                *g = (s / len as f64) as f32;
            }
        }
        // the delay lines: each sample leaves its slot to the incoming one, which is a
        // swap, in pieces that do not wrap around the ring
        let mut done = 0;
        let mut pos = start;
        while done < m {
            let k = (m - done).min(self.len - pos);
            l[done..done + k].swap_with_slice(&mut self.delay[0][pos..pos + k]);
            r[done..done + k].swap_with_slice(&mut self.delay[1][pos..pos + k]);
            done += k;
            pos = wrap(pos + k, self.len);
        }
        // the gain on the delayed signal; a final clamp catches rounding
        for ((x, y), &g) in l.iter_mut().zip(r.iter_mut()).zip(&gain) {
            *x = (*x * g).clamp(-c, c);
            *y = (*y * g).clamp(-c, c);
        }
    }

    /// The held gains' running sums for the needs `need` (`sums`, as long), sample by sample
    /// in order: the window minimum, the release and the moving average over the last `len`
    /// held gains as a running sum (state in locals, so that it stays in registers), two
    /// samples a step (see the release below).
    fn hold(&mut self, need: &[f32], sums: &mut [f64]) {
        let m = need.len().min(sums.len());
        let (len, w, release) = (self.len, self.len + 1, self.release);
        {
            let mut window = Window {
                block: &mut self.block,
                suffix: &mut self.suffix,
                prefix: self.prefix,
                offset: self.offset,
                w,
            };
            let mut average = Average {
                buf: &mut self.avg_buf[..len],
                sum: self.avg_sum,
                pos: self.pos,
                n: self.n,
            };
            let mut dip = self.dip;
            let mut t = 0;
            while t + 2 <= m {
                let (min0, min1) = (window.push(need[t]), window.push(need[t + 1]));
                // release: recover slowly, never above the window minimum; the gain is
                // taken off the dip below unity. The second sample's dip is
                // max(a1, r max(a0, r dip)) = max(max(a1, r a0), r (r dip)) exactly
                // (rounding is monotone and r > 0), so the chain from one pair to the
                // next is two multiplies and one max, and the first sample's dip is off it.
                let (a0, a1) = (1.0 - min0, 1.0 - min1);
                let dip0 = max(a0, release * dip);
                dip = max(max(a1, release * a0), release * (release * dip));
                sums[t] = average.push(min(min0, 1.0 - dip0));
                sums[t + 1] = average.push(min(min1, 1.0 - dip));
                t += 2;
            }
            if t < m {
                let min0 = window.push(need[t]);
                dip = max(1.0 - min0, release * dip);
                sums[t] = average.push(min(min0, 1.0 - dip));
            }
            (self.prefix, self.offset, self.dip) = (window.prefix, window.offset, dip);
            (self.avg_sum, self.pos, self.n) = (average.sum, average.pos, average.n);
        }
    }

    /// `hold` where nothing limits, in a few steps a chunk instead of a chain a sample; nothing
    /// done unless every need of the chunk is 1 and the state is at rest: every
    /// need in the window 1 (the block's own so far, `prefix`, and the last block's after
    /// this offset, `suffix`), every held gain in the average 1, and the release's dip too
    /// small to show in 1 - dip (f32). Then each sample's window minimum is 1, its held gain
    /// 1 and the running sum unchanged (1 in for 1 out: + 0.0 exactly) but at the re-sum,
    /// and the dip decays by the release alone: the same numbers `hold` makes, bit for bit
    /// (the limiter's test runs both against the brute-force one). Most of a calibrated
    /// preset's time is here. Returns where in the chunk the sum changes (at the re-sum; the
    /// chunk's length if nowhere), `None` where it cannot stand in.
    fn hold_calm(&mut self, need: &[f32], sums: &mut [f64]) -> Option<usize> {
        let m = need.len().min(sums.len());
        let (len, w) = (self.len, self.len + 1);
        let calm = smallest(&need[..m]) == 1.0
            && self.dip <= CALM_DIP
            && (self.offset == 0 || self.prefix == 1.0)
            && self.suffix[self.offset + 1] == 1.0
            && smallest(&self.avg_buf[..len]) == 1.0;
        if !calm {
            return None;
        }
        #[cfg(test)]
        {
            self.calm_chunks += 1;
        }
        // the window: needs of 1 in; each block that closes on the way leaves suffix minima
        // of 1 (its entries before this chunk were 1 too: `prefix`)
        let end = self.offset + m;
        if end < w {
            self.block[self.offset..end].fill(1.0);
        } else {
            self.block[..w].fill(1.0);
            self.suffix.fill(1.0);
        }
        self.offset = end % w;
        self.prefix = 1.0;
        // the release: max(1 - 1, r dip) a sample, in `hold`'s pairs
        if self.dip != 0.0 {
            let r = self.release;
            for _ in 0..m / 2 {
                self.dip = r * (r * self.dip);
            }
            if m % 2 == 1 {
                self.dip *= r;
            }
        }
        // the average: unchanged but where the count passes a multiple of 2^16 (re-summed)
        let first = self.n;
        self.n += m as u64;
        self.pos = (self.pos + m) % len;
        sums[..m].fill(self.avg_sum);
        let period = 1u64 << 16;
        if first / period != self.n / period {
            let at = (period - first % period) as usize - 1;
            self.avg_sum = self.avg_buf.iter().map(|&x| x as f64).sum();
            sums[at..m].fill(self.avg_sum);
            return Some(at);
        }
        Some(m)
    }
}

/// Taps of the true-peak interpolator over all its phases (libebur128's and the `ebur128`
/// crate's length: 12 a phase at 4×, 24 at 2×).
const TP_TAPS: usize = 48;
/// The true peak is held this much under the ceiling (0.009 dB): the gain changes a little
/// across the interpolator's span, and the meter rounds its sums otherwise than `TruePeak`
/// (the example contact file at the default gain read −0.4998 dBTP against a ceiling of
/// −0.5006 without it).
const TP_MARGIN: f32 = 1.001;
/// Outputs the true-peak detector oversamples together, or skips together where no point
/// between their samples can reach the ceiling (`TruePeak::run`).
const TP_GROUP: usize = 16;
const _: () = assert!(CHUNK.is_multiple_of(TP_GROUP));
/// The most input samples the interpolator keeps from one chunk to the next (at 2×).
const TP_HISTORY: usize = TP_TAPS / 2 - 1;

/// The true-peak detector (ITU-R BS.1770-4 Annex 2): the signal oversampled by a polyphase
/// Hann-windowed sinc of `TP_TAPS` taps, the interpolator libebur128 and the `ebur128`
/// crate meter with (`ebur128::interp::InterpF`, rebuilt here from its definition):
/// h(j) = w(j) sin(π m / F) / (π m / F), m = j − 24, w(j) = (1 − cos(2π j / 48)) / 2,
/// phase p of input n being Σ_k h(kF + p) x(n − k), the signal at n − (24 − p) / F.
struct TruePeak {
    /// Oversampling factor F: 4 below 96 kHz, 2 below 192 kHz, 1 (the samples) above.
    factor: usize,
    /// Taps a phase, `TP_TAPS / factor` (1 without oversampling).
    per_phase: usize,
    /// h(kF + p) at index kF + p.
    h: [f32; TP_TAPS],
    /// The interpolator's delay, samples: `per_phase / 2` (0 without oversampling).
    delay: usize,
    /// The last `per_phase - 1` samples of each channel, oldest first.
    history: [[f32; TP_HISTORY]; 2],
    /// The peak of the span from the last sample out of `run` to the next.
    last: f32,
    /// The most any phase's taps can make of samples of magnitude 1: the largest sum of the
    /// taps' magnitudes over the phases (with a hair for rounding).
    bound: f32,
}

impl TruePeak {
    fn new(sample_rate: f32) -> Self {
        let factor = if sample_rate < 96_000.0 {
            4
        } else if sample_rate < 192_000.0 {
            2
        } else {
            1
        };
        let mut h = [0.0f32; TP_TAPS];
        if factor == 1 {
            h[0] = 1.0;
        } else {
            for (j, c) in h.iter_mut().enumerate() {
                let j = j as f64;
                let window = TP_TAPS as f64;
                let w = 0.5 * (1.0 - (2.0 * std::f64::consts::PI * j / window).cos());
                let m = j - window / 2.0;
                let x = m * std::f64::consts::PI / factor as f64;
                *c = if m.abs() > 1e-6 { w * x.sin() / x } else { w } as f32;
            }
        }
        let per_phase = if factor == 1 { 1 } else { TP_TAPS / factor };
        let bound = (0..factor)
            .map(|p| (0..per_phase).map(|k| h[k * factor + p].abs()).sum::<f32>())
            .fold(0.0f32, f32::max)
            * 1.0001;
        TruePeak {
            bound,
            factor,
            per_phase,
            h,
            delay: if factor == 1 { 0 } else { per_phase / 2 },
            history: [[0.0; TP_HISTORY]; 2],
            last: 0.0,
        }
    }

    fn reset(&mut self) {
        self.history = [[0.0; TP_HISTORY]; 2];
        self.last = 0.0;
    }

    /// For the chunk `l`, `r` (at most `CHUNK` samples): `peaks[t]`, the largest magnitude
    /// of either channel from delayed sample t to the next (the sample and the oversampled
    /// points after it), where any could pass `quiet`, else the samples' own; `l` and `r`
    /// then hold the signal delayed by `delay`.
    fn run(&mut self, l: &mut [f32], r: &mut [f32], peaks: &mut [f32; CHUNK], quiet: f32) {
        let m = l.len().min(r.len()).min(CHUNK);
        let (factor, held) = (self.factor, self.per_phase - 1);
        // each channel's held samples, then the chunk's
        let mut bufs = [[0.0f32; TP_HISTORY + CHUNK]; 2];
        for ((buf, x), history) in bufs.iter_mut().zip([&*l, &*r]).zip(&self.history) {
            buf[..held].copy_from_slice(&history[..held]);
            buf[held..held + m].copy_from_slice(&x[..m]);
        }
        // no point between the samples passes the largest sample the interpolator reads times
        // the sum of its taps' magnitudes (`bound`): where that is below `quiet`, the samples
        // are the peaks as far as the caller is concerned, and the oversampling is skipped, a
        // group of `TP_GROUP` outputs at a time
        let mut loud = [false; CHUNK / TP_GROUP];
        for (g, loud) in loud.iter_mut().enumerate().take(m.div_ceil(TP_GROUP)) {
            let (from, to) = (g * TP_GROUP, ((g + 1) * TP_GROUP).min(m) + held);
            let top = max(largest(&bufs[0][from..to]), largest(&bufs[1][from..to]));
            *loud = top * self.bound > quiet;
        }
        for ((x, buf), history) in [l, r].into_iter().zip(&bufs).zip(&mut self.history) {
            for (g, _) in loud.iter().enumerate().take(m.div_ceil(TP_GROUP)).filter(|(_, &l)| l) {
                let (from, to) = (g * TP_GROUP, ((g + 1) * TP_GROUP).min(m));
                // phase 0 is the delayed sample itself (h(kF) = 0 but at kF = 24, where it is 1)
                for p in 1..factor {
                    let mut acc = [0.0f32; TP_GROUP];
                    for k in 0..self.per_phase {
                        let h = self.h[k * factor + p];
                        for (a, &s) in acc.iter_mut().zip(&buf[held + from - k..held + to - k]) {
                            *a += h * s;
                        }
                    }
                    for (peak, a) in peaks[from..to].iter_mut().zip(&acc) {
                        *peak = max(*peak, a.abs());
                    }
                }
            }
            let delayed = &buf[held - self.delay..held - self.delay + m];
            for (peak, s) in peaks[..m].iter_mut().zip(delayed) {
                *peak = max(*peak, s.abs());
            }
            x[..m].copy_from_slice(delayed);
            history[..held].copy_from_slice(&buf[m..m + held]);
        }
    }
}

/// The smallest of `x` (needs and gains: finite, at most 1), 1 for none (`fold_lanes`).
#[inline(always)]
fn smallest(x: &[f32]) -> f32 {
    fold_lanes(x, 1.0, min)
}

/// The largest magnitude in `x` (finite), 0 for none (`fold_lanes`).
#[inline(always)]
fn largest(x: &[f32]) -> f32 {
    fold_lanes(x, 0.0, |t, v| max(t, v.abs()))
}

/// `x` folded by `op` from `init`: eight running folds side by side, then theirs (for a
/// minimum or a maximum, which do not depend on the order they are taken in; `op` applied
/// to two lanes' results must be their fold, as `max(t, |l|)` is for `l >= 0`).
#[inline(always)]
fn fold_lanes(x: &[f32], init: f32, op: impl Fn(f32, f32) -> f32) -> f32 {
    let mut lanes = [init; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = op(*l, v);
        }
    }
    let tail = chunks.remainder().iter().fold(init, |t, &v| op(t, v));
    lanes.iter().fold(tail, |t, &l| op(t, l))
}

/// The sliding minimum's state over one chunk (see `Limiter::block`).
struct Window<'a> {
    block: &'a mut [f32],
    suffix: &'a mut [f32],
    prefix: f32,
    offset: usize,
    /// Window (and block) length, `len + 1`.
    w: usize,
}

impl Window<'_> {
    /// Takes the next need in; returns the minimum over the window that ends with it.
    #[inline(always)]
    fn push(&mut self, need: f32) -> f32 {
        self.block[self.offset] = need;
        self.prefix = if self.offset == 0 { need } else { min(self.prefix, need) };
        let window_min = min(self.suffix[self.offset + 1], self.prefix);
        self.offset += 1;
        if self.offset == self.w {
            // the block closes: its suffix minima serve the next block's windows
            suffix_minima(self.block, self.suffix);
            self.offset = 0;
        }
        window_min
    }
}

/// `suffix[i] = min(block[i..])` over the block (`block` padded with ones to a multiple
/// of `SCAN_CHAINS` entries, `suffix` as long). The block's quarters are scanned as
/// independent chains side by side (a single chain is one dependent `min` an entry), then
/// each quarter takes the minimum of the ones after it. `min` returns one of its inputs,
/// so the order does not change a bit.
#[inline(always)]
fn suffix_minima(block: &[f32], suffix: &mut [f32]) {
    let q = block.len() / SCAN_CHAINS;
    let (block, suffix) = (&block[..q * SCAN_CHAINS], &mut suffix[..q * SCAN_CHAINS]);
    let mut running = [1.0f32; SCAN_CHAINS];
    for i in (0..q).rev() {
        for (j, r) in running.iter_mut().enumerate() {
            *r = min(block[j * q + i], *r);
            suffix[j * q + i] = *r;
        }
    }
    for j in (0..SCAN_CHAINS - 1).rev() {
        let after = suffix[(j + 1) * q];
        for s in &mut suffix[j * q..(j + 1) * q] {
            *s = min(*s, after);
        }
    }
}

/// Independent chains of the block's suffix scan (`suffix_minima`).
const SCAN_CHAINS: usize = 4;

/// The moving average's running sum over one chunk (see `Limiter::avg_buf`).
struct Average<'a> {
    buf: &'a mut [f32],
    sum: f64,
    pos: usize,
    n: u64,
}

impl Average<'_> {
    /// Takes the next held gain in; returns the sum over the last `len`.
    #[inline(always)]
    fn push(&mut self, held: f32) -> f64 {
        self.sum += held as f64 - self.buf[self.pos] as f64;
        self.buf[self.pos] = held;
        self.pos = wrap(self.pos + 1, self.buf.len());
        self.n += 1;
        if self.n.is_multiple_of(1 << 16) {
            // re-sum now and then: no rounding drift in the running sum
            self.sum = self.buf.iter().map(|&x| x as f64).sum();
        }
        self.sum
    }
}

/// The smaller of two numbers that are never NaN here (needs and gains are in [0, 1]): one
/// `minss`, where `f32::min`'s NaN handling adds three instructions to every dependent step.
#[inline(always)]
fn min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

/// The larger of two numbers that are never NaN here (see `min`).
#[inline(always)]
fn max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `i mod cap` for `i < 2 cap` (no division in the per-sample path).
#[inline(always)]
fn wrap(i: usize, cap: usize) -> usize {
    if i >= cap {
        i - cap
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hundred_db_step_never_exceeds_ceiling_and_barely_clamps() {
        let mut lim = Limiter::new(48_000.0, 0.9);
        let mut worst_pre_clamp = 0.0f32;
        for i in 0..48_000 {
            let x = if i < 10_000 {
                1e-3
            } else {
                1e2 * ((i as f32) * 0.05).sin()
            };
            let (l, r) = lim.process(x, -x);
            assert!(l.abs() <= 0.9 && r.abs() <= 0.9);
            worst_pre_clamp = worst_pre_clamp.max(l.abs());
        }
        assert!(worst_pre_clamp > 0.5);
    }

    #[test]
    fn quiet_signal_passes_unchanged_after_latency() {
        let mut lim = Limiter::new(48_000.0, 0.9);
        let lat = lim.latency();
        let input: Vec<f32> = (0..2000).map(|i| 0.5 * (i as f32 * 0.01).sin()).collect();
        let out: Vec<f32> = input.iter().map(|&x| lim.process(x, x).0).collect();
        for i in lat..2000 {
            assert!((out[i] - input[i - lat]).abs() < 1e-6);
        }
    }

    /// The limiter as the module doc states it, by brute force: the minimum over the last
    /// `len + 1` needs taken afresh every sample, the delay line one sample at a time
    /// (the release and the average in the same arithmetic as `Limiter`).
    fn reference(input: &[(f32, f32)], sample_rate: f32, ceiling: f32) -> Vec<(f32, f32)> {
        let lim = Limiter::new(sample_rate, ceiling);
        let (len, release) = (lim.len, lim.release);
        let tp = &lim.tp;
        let mut needs = vec![1.0f32; len + 1];
        let mut delay = vec![(0.0f32, 0.0f32); len];
        let mut avg = vec![1.0f32; len];
        let (mut sum, mut dip) = (len as f64, 0.0f32);
        let mut out = Vec::new();
        let clean: Vec<[f32; 2]> = input
            .iter()
            .map(|&(l, r)| [l, r].map(|x| if x.is_finite() { x } else { 0.0 }))
            .collect();
        let at = |n: usize, k: usize, c: usize| if n >= k { clean[n - k][c] } else { 0.0 };
        let mut last_peak = 0.0f32;
        for n in 0..clean.len() {
            // the true peak from the delayed sample to the next, each phase summed afresh
            let mut peak = 0.0f32;
            for c in 0..2 {
                for p in 1..tp.factor {
                    let mut acc = 0.0f32;
                    for k in 0..tp.per_phase {
                        acc += tp.h[k * tp.factor + p] * at(n, k, c);
                    }
                    peak = peak.max(acc.abs());
                }
                peak = peak.max(at(n, tp.delay, c).abs());
            }
            let (l, r) = (at(n, tp.delay, 0), at(n, tp.delay, 1));
            let around = peak.max(last_peak) * TP_MARGIN;
            last_peak = peak;
            needs[n % (len + 1)] = if around > ceiling { ceiling / around } else { 1.0 };
            let window_min = needs.iter().fold(1.0f32, |a, &b| a.min(b));
            dip = (1.0 - window_min).max(release * dip);
            let held = window_min.min(1.0 - dip);
            sum += held as f64 - avg[n % len] as f64;
            avg[n % len] = held;
            if (n as u64 + 1).is_multiple_of(1 << 16) {
                sum = avg.iter().map(|&x| x as f64).sum();
            }
            let gain = (sum / len as f64) as f32;
            let (dl, dr) = std::mem::replace(&mut delay[n % len], (l, r));
            out.push((
                (dl * gain).clamp(-ceiling, ceiling),
                (dr * gain).clamp(-ceiling, ceiling),
            ));
        }
        out
    }

    /// Calls `f` with consecutive ranges covering `0..total`, of the lengths `lens` in turn.
    fn in_spans(lens: &[usize], total: usize, mut f: impl FnMut(std::ops::Range<usize>)) {
        let mut start = 0;
        for &len in lens.iter().cycle() {
            let end = (start + len).min(total);
            f(start..end);
            start = end;
            if start == total {
                break;
            }
        }
    }

    /// Asserts that `l`, `r` are `want`, bit for bit.
    fn same_bits(want: &[(f32, f32)], l: &[f32], r: &[f32], sample_rate: f32) {
        for (t, (&(wl, wr), (gl, gr))) in want.iter().zip(l.iter().zip(r)).enumerate() {
            assert_eq!(
                (wl.to_bits(), wr.to_bits()),
                (gl.to_bits(), gr.to_bits()),
                "{sample_rate} Hz, sample {t}"
            );
        }
    }

    #[test]
    fn spans_of_any_length_give_the_brute_force_limiter_bit_for_bit() {
        // quiet passages, peaks over the ceiling, a lone spike, NaN, the release, and the
        // 2^16-sample re-sum; at rates whose window (look-ahead + 1) is and is not a
        // multiple of the suffix scan's chains, and a tiny one (a one-sample chain each)
        let input: Vec<(f32, f32)> = (0..140_000)
            .map(|i| {
                let x = match i {
                    50_000..=50_100 => 3.0 * (i as f32 * 0.3).sin(),
                    70_000 => 40.0,
                    90_000 => f32::NAN,
                    _ => 0.5 * (i as f32 * 0.01).sin(),
                };
                (x, -0.5 * x + if i == 100_000 { 2.0 } else { 0.0 })
            })
            .collect();
        for sample_rate in [48_000.0, 44_100.0, 47_600.0, 1_000.0, 96_000.0, 192_000.0] {
            let want = reference(&input, sample_rate, 0.9);
            let mut lim = Limiter::new(sample_rate, 0.9);
            let (mut l, mut r): (Vec<f32>, Vec<f32>) = input.iter().copied().unzip();
            in_spans(&[64, 1, 0, 128, 37, 300, 7], l.len(), |span| {
                lim.process_span(&mut l[span.clone()], &mut r[span]);
            });
            same_bits(&want, &l, &r, sample_rate);
            // and the peaks were limited: the output reaches the ceiling but never passes it
            let top = l.iter().chain(&r).fold(0.0f32, |a, &x| a.max(x.abs()));
            assert!(top <= 0.9 && top > 0.89, "{top}");
        }
    }

    #[test]
    fn the_calm_shortcut_gives_the_brute_force_limiter_bit_for_bit() {
        // after a burst, a long quiet stretch: the release's dip decays past the shortcut's
        // bound (`CALM_DIP`) and, under the engine's flush-to-zero, on to zero at 1 kHz; the
        // average's re-sum comes by every 2^16 samples, and at 1 kHz (a window of 4) blocks
        // close several times a chunk; then a second burst, which must take the shortcut's
        // state up exactly. Run as the engine runs it, denormals flushed.
        let _ftz = crate::base::ftz::FlushDenormals::new();
        let n = 420_000;
        let input: Vec<(f32, f32)> = (0..n)
            .map(|i| {
                let x = match i {
                    1_000..=1_200 | 300_000..=300_050 => 5.0 * (i as f32 * 0.2).sin(),
                    _ => 0.3 * (i as f32 * 0.013).sin(),
                };
                (x, 0.7 * x)
            })
            .collect();
        let state = |x: &Limiter| {
            (
                x.dip.to_bits(),
                x.avg_sum.to_bits(),
                x.prefix.to_bits(),
                (x.offset, x.pos, x.n),
                x.block[..x.len + 1]
                    .iter()
                    .chain(&x.suffix)
                    .chain(&x.avg_buf)
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>(),
            )
        };
        for sample_rate in [48_000.0, 1_000.0] {
            // the running sum knocked off its exact value (by a quarter of a held gain: the
            // gain 1.002 at 48 kHz), so that where the re-sum restores it shows in the output
            for drift in [0.0, 0.25] {
                let mut lim = Limiter::new(sample_rate, 0.9);
                // and the same without the shortcut: the same samples, and the whole state
                // the same after every span
                let mut slow = Limiter::new(sample_rate, 0.9);
                slow.shortcut = false;
                lim.avg_sum += drift;
                slow.avg_sum += drift;
                let (mut l, mut r): (Vec<f32>, Vec<f32>) = input.iter().copied().unzip();
                let (mut sl, mut sr) = (l.clone(), r.clone());
                let (mut calm_dips, mut zero_dips) = (0, 0);
                in_spans(&[128, 5, 300, 64, 1, 127], l.len(), |span| {
                    let (dip, before) = (lim.dip, lim.calm_chunks);
                    lim.process_span(&mut l[span.clone()], &mut r[span.clone()]);
                    slow.process_span(&mut sl[span.clone()], &mut sr[span.clone()]);
                    if lim.calm_chunks > before {
                        calm_dips += usize::from(dip > 0.0 && dip <= CALM_DIP);
                        zero_dips += usize::from(dip == 0.0 && lim.n > 2_000);
                    }
                    assert!(state(&lim) == state(&slow), "{sample_rate} Hz, span {span:?}");
                });
                let without: Vec<(f32, f32)> = sl.into_iter().zip(sr).collect();
                same_bits(&without, &l, &r, sample_rate);
                if drift == 0.0 {
                    same_bits(&reference(&input, sample_rate, 0.9), &l, &r, sample_rate);
                }
                // the stretches the test is for: calm chunks with a dip still decaying, and
                // (at 1 kHz, where it gets there) with the dip flushed to zero
                println!(
                    "{sample_rate} Hz, drift {drift}: {} calm chunks, {calm_dips} with a decaying dip, {zero_dips} after it reached zero",
                    lim.calm_chunks
                );
                assert!(calm_dips > 10, "{sample_rate} Hz: {calm_dips}");
                if sample_rate < 2_000.0 {
                    assert!(zero_dips > 10, "{sample_rate} Hz: {zero_dips}");
                }
            }
        }
    }

    /// The largest magnitude of `x` oversampled 32× by a long Hann-windowed sinc (f64): a
    /// finer measure of the true peak than the limiter's own.
    fn true_peak_32x(x: &[f32]) -> f64 {
        let half = 64isize;
        let mut top = 0.0f64;
        for n in half as usize..x.len() - half as usize {
            for q in 0..32 {
                let t = q as f64 / 32.0;
                let mut sum = 0.0;
                for k in -half + 1..=half {
                    let d = k as f64 - t;
                    let sinc = if d == 0.0 {
                        1.0
                    } else {
                        (std::f64::consts::PI * d).sin() / (std::f64::consts::PI * d)
                    };
                    let w = 0.5 * (1.0 + (std::f64::consts::PI * d / half as f64).cos());
                    sum += f64::from(x[(n as isize + k) as usize]) * sinc * w;
                }
                top = top.max(sum.abs());
            }
        }
        top
    }

    #[test]
    fn the_ceiling_holds_between_the_samples() {
        // a sine at a quarter of the rate, 45° off its samples: every sample at 0.707 of a
        // true peak of 1 (3 dB over the samples), and the same in bursts; ceiling 0.9. A
        // sample-peak limiter passes the samples untouched and the peaks at 1
        let sine = |i: usize| (std::f32::consts::FRAC_PI_2 * i as f32 + std::f32::consts::FRAC_PI_4).sin();
        for burst in [false, true] {
            let input: Vec<f32> = (0..20_000)
                .map(|i| {
                    if !burst || (i / 1_000) % 3 == 1 {
                        sine(i)
                    } else {
                        0.01 * sine(i)
                    }
                })
                .collect();
            let mut lim = Limiter::new(48_000.0, 0.9);
            let (mut l, mut r) = (input.clone(), input.iter().map(|x| -x).collect::<Vec<_>>());
            lim.process_span(&mut l, &mut r);
            let before = true_peak_32x(&input);
            let after = true_peak_32x(&l).max(true_peak_32x(&r));
            assert!(before > 0.99, "{before}");
            // as the meter measures it (its 4× interpolator: `TruePeak` afresh)...
            let mut meter = TruePeak::new(48_000.0);
            let mut metered = 0.0f32;
            for (cl, cr) in l.chunks(CHUNK).zip(r.chunks(CHUNK)) {
                let mut peaks = [0.0f32; CHUNK];
                meter.run(&mut cl.to_vec(), &mut cr.to_vec(), &mut peaks, 0.0);
                metered = peaks.iter().fold(metered, |a, &p| a.max(p));
            }
            assert!(
                metered <= 0.9 * 1.0001,
                "burst {burst}: metered true peak {metered} over 0.9"
            );
            // ...and finer: within the 4× interpolator's own error at a quarter of the rate
            // (0.4 %, 0.04 dB)
            assert!(
                after <= 0.9 * 1.005,
                "burst {burst}: true peak {after} over the ceiling 0.9"
            );
            assert!(after > 0.85, "burst {burst}: limited to {after}, far below the ceiling");
        }
    }

    #[test]
    fn the_latency_counts_the_interpolator() {
        for (rate, extra) in [(48_000.0, 6), (44_100.0, 6), (96_000.0, 12), (192_000.0, 0)] {
            let mut lim = Limiter::new(rate, 0.9);
            assert_eq!(lim.latency(), (LOOKAHEAD_S * rate).round() as usize + extra, "{rate}");
            // an impulse under the ceiling comes out exactly `latency` samples later
            let mut l: Vec<f32> = (0..2_000).map(|i| if i == 10 { 0.5 } else { 0.0 }).collect();
            let mut r = l.clone();
            lim.process_span(&mut l, &mut r);
            assert_eq!(l.iter().position(|&x| x != 0.0), Some(10 + lim.latency()), "{rate}");
            assert_eq!(l[10 + lim.latency()], 0.5);
        }
    }

    #[test]
    fn nan_is_silenced() {
        let mut lim = Limiter::new(48_000.0, 0.9);
        for _ in 0..500 {
            let (l, r) = lim.process(f32::NAN, f32::INFINITY);
            assert!(l.is_finite() && r.is_finite());
        }
    }
}
