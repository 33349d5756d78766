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

/// Look-ahead time, s (Phya: one processing vector of 128 samples at 44.1 kHz).
pub const LOOKAHEAD_S: f32 = 0.0025;
/// Release time constant, s.
pub const RELEASE_S: f32 = 0.08;

pub struct Limiter {
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
}

/// Samples a span is processed in at once (`process_span` takes any length, in pieces).
const CHUNK: usize = 128;

impl Limiter {
    pub fn new(sample_rate: f32, ceiling: f32) -> Self {
        let len = ((LOOKAHEAD_S * sample_rate).round() as usize).max(1);
        let mut l = Limiter {
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
        };
        l.reset();
        l
    }

    /// Latency in samples, to be reported to the host.
    pub fn latency(&self) -> usize {
        self.len
    }

    pub fn ceiling(&self) -> f32 {
        self.ceiling
    }

    /// The gain on the last sample out, 0..=1 (1: not limiting; for a gain-reduction meter).
    pub fn gain(&self) -> f32 {
        ((self.avg_sum / self.len as f64) as f32).clamp(0.0, 1.0)
    }

    pub fn reset(&mut self) {
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
    fn chunk(&mut self, l: &mut [f32], r: &mut [f32]) {
        let m = l.len().min(r.len()).min(CHUNK);
        let (l, r) = (&mut l[..m], &mut r[..m]);
        let c = self.ceiling;
        // the gain each sample needs, min(1, ceiling / |x|), stereo-linked; non-finite
        // input never reaches the output (elementwise: packed SIMD)
        let mut need = [1.0f32; CHUNK];
        for ((x, y), g) in l.iter_mut().zip(r.iter_mut()).zip(&mut need) {
            *x = if x.is_finite() { *x } else { 0.0 };
            *y = if y.is_finite() { *y } else { 0.0 };
            let peak = x.abs().max(y.abs());
            *g = if peak > c { c / peak } else { 1.0 };
        }
        // per sample, in order: the window minimum, the release and the moving average
        // over the last `len` held gains as a running sum (state in locals, so that it
        // stays in registers), two samples a step (see the release below)
        let start = self.pos;
        let (len, w, release) = (self.len, self.len + 1, self.release);
        let mut sums = [0.0f64; CHUNK];
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
        let mut gain = [0.0f32; CHUNK];
        for (g, &s) in gain.iter_mut().zip(&sums[..m]) {
            *g = (s / len as f64) as f32;
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
        let mut needs = vec![1.0f32; len + 1];
        let mut delay = vec![(0.0f32, 0.0f32); len];
        let mut avg = vec![1.0f32; len];
        let (mut sum, mut dip) = (len as f64, 0.0f32);
        let mut out = Vec::new();
        for (n, &(l, r)) in input.iter().enumerate() {
            let (l, r) = (if l.is_finite() { l } else { 0.0 }, if r.is_finite() { r } else { 0.0 });
            let peak = l.abs().max(r.abs());
            needs[n % (len + 1)] = if peak > ceiling { ceiling / peak } else { 1.0 };
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
        for sample_rate in [48_000.0, 44_100.0, 47_600.0, 1_000.0] {
            let want = reference(&input, sample_rate, 0.9);
            let mut lim = Limiter::new(sample_rate, 0.9);
            let (mut l, mut r): (Vec<f32>, Vec<f32>) = input.iter().copied().unzip();
            let mut start = 0;
            for len in [64, 1, 0, 128, 37, 300, 7].into_iter().cycle() {
                let end = (start + len).min(l.len());
                lim.process_span(&mut l[start..end], &mut r[start..end]);
                start = end;
                if start == l.len() {
                    break;
                }
            }
            for (t, (&(wl, wr), (gl, gr))) in want.iter().zip(l.iter().zip(&r)).enumerate() {
                assert_eq!(
                    (wl.to_bits(), wr.to_bits()),
                    (gl.to_bits(), gr.to_bits()),
                    "{sample_rate} Hz, sample {t}"
                );
            }
            // and the peaks were limited: the output reaches the ceiling but never passes it
            let top = l.iter().chain(&r).fold(0.0f32, |a, &x| a.max(x.abs()));
            assert!(top <= 0.9 && top > 0.89, "{top}");
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
