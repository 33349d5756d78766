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
    pos: usize,
    /// Sliding-minimum deque of (index, gain), fixed capacity len + 1.
    dq_idx: Vec<u64>,
    dq_val: Vec<f32>,
    dq_head: usize,
    dq_len: usize,
    /// Moving average over the last `len` held gains.
    avg_buf: Vec<f32>,
    avg_sum: f64,
    held: f32,
    n: u64,
    /// How many of the latest samples in a row were held at unity gain (then every entry of
    /// `avg_buf` is 1 once it reaches `len`: the fast path of `process_span`).
    unity: usize,
}

impl Limiter {
    pub fn new(sample_rate: f32, ceiling: f32) -> Self {
        let len = ((LOOKAHEAD_S * sample_rate).round() as usize).max(1);
        let mut l = Limiter {
            len,
            ceiling,
            release: (-1.0 / (RELEASE_S * sample_rate)).exp(),
            delay: [vec![0.0; len], vec![0.0; len]],
            pos: 0,
            dq_idx: vec![0; len + 2],
            dq_val: vec![0.0; len + 2],
            dq_head: 0,
            dq_len: 0,
            avg_buf: vec![1.0; len],
            avg_sum: len as f64,
            held: 1.0,
            n: 0,
            unity: len,
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

    pub fn reset(&mut self) {
        for d in &mut self.delay {
            d.iter_mut().for_each(|x| *x = 0.0);
        }
        self.pos = 0;
        self.dq_head = 0;
        self.dq_len = 0;
        self.avg_buf.iter_mut().for_each(|x| *x = 1.0);
        self.avg_sum = self.len as f64;
        self.held = 1.0;
        self.n = 0;
        self.unity = self.len;
    }

    #[inline]
    pub fn process(&mut self, l: f32, r: f32) -> (f32, f32) {
        // Non-finite input never reaches the output.
        let l = if l.is_finite() { l } else { 0.0 };
        let r = if r.is_finite() { r } else { 0.0 };
        let peak = l.abs().max(r.abs());
        let need = if peak > self.ceiling { self.ceiling / peak } else { 1.0 };
        // sliding minimum over the last len + 1 samples
        let cap = self.dq_idx.len();
        while self.dq_len > 0 {
            let back = wrap(self.dq_head + self.dq_len - 1, cap);
            if self.dq_val[back] >= need {
                self.dq_len -= 1;
            } else {
                break;
            }
        }
        let slot = wrap(self.dq_head + self.dq_len, cap);
        self.dq_idx[slot] = self.n;
        self.dq_val[slot] = need;
        self.dq_len += 1;
        while self.dq_idx[self.dq_head] + (self.len as u64) < self.n {
            self.dq_head = wrap(self.dq_head + 1, cap);
            self.dq_len -= 1;
        }
        let window_min = self.dq_val[self.dq_head];
        // release: recover slowly, never above the window minimum
        self.held = window_min.min(1.0 - self.release * (1.0 - self.held));
        self.unity = if self.held == 1.0 {
            self.unity.saturating_add(1)
        } else {
            0
        };
        // n mod len: `pos` steps with `n` and wraps at `len` (both start at 0)
        let idx = self.pos;
        self.avg_sum += self.held as f64 - self.avg_buf[idx] as f64;
        self.avg_buf[idx] = self.held;
        self.n += 1;
        if self.n.is_multiple_of(1 << 16) {
            self.avg_sum = self.avg_buf.iter().map(|&x| x as f64).sum();
        }
        let gain = (self.avg_sum / self.len as f64) as f32;
        let out_l = self.delay[0][self.pos];
        let out_r = self.delay[1][self.pos];
        self.delay[0][self.pos] = l;
        self.delay[1][self.pos] = r;
        self.pos = wrap(self.pos + 1, self.len);
        let c = self.ceiling;
        ((out_l * gain).clamp(-c, c), (out_r * gain).clamp(-c, c))
    }

    /// `process` over a span, in place (`l` and `r` of equal length). While the limiter
    /// rests (unity gain held for a whole look-ahead, nothing in the sliding minimum but
    /// unity) and the span stays finite and under the ceiling, every sample only passes
    /// through the delay line: the state then moves exactly as `process` would move it,
    /// without the per-sample deque and average, and the output has the same bits.
    pub fn process_span(&mut self, l: &mut [f32], r: &mut [f32]) {
        let n = l.len().min(r.len());
        let (l, r) = (&mut l[..n], &mut r[..n]);
        let c = self.ceiling;
        let quiet = l.iter().chain(r.iter()).fold(true, |q, x| q & (x.abs() <= c));
        // (a run of unity gains implies `held` is 1; the deque check excludes a fresh reset)
        let resting = self.unity >= self.len
            && self.dq_len == 1
            && self.dq_val[self.dq_head] == 1.0
            // no periodic re-summing of the average inside the span
            && (self.n + n as u64) >> 16 == self.n >> 16;
        if !(quiet && resting) {
            for (x, y) in l.iter_mut().zip(r.iter_mut()) {
                (*x, *y) = self.process(*x, *y);
            }
            return;
        }
        // the average holds `len` ones (each step adds 1 - 1), so the gain stays this
        let gain = (self.avg_sum / self.len as f64) as f32;
        let [dl, dr] = &mut self.delay;
        for (x, y) in l.iter_mut().zip(r.iter_mut()) {
            let (out_l, out_r) = (dl[self.pos], dr[self.pos]);
            dl[self.pos] = *x;
            dr[self.pos] = *y;
            self.pos = wrap(self.pos + 1, self.len);
            *x = (out_l * gain).clamp(-c, c);
            *y = (out_r * gain).clamp(-c, c);
        }
        // the sliding minimum holds just the newest sample's unity gain
        self.n += n as u64;
        self.dq_idx[self.dq_head] = self.n - 1;
        self.unity = self.unity.saturating_add(n);
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

    #[test]
    fn span_processing_gives_the_same_bits_as_sample_by_sample() {
        // quiet passages (the fast path), peaks over the ceiling, NaN, and the release
        let input: Vec<f32> = (0..200_000)
            .map(|i| match i {
                50_000..=50_100 => 3.0 * (i as f32 * 0.3).sin(),
                90_000 => f32::NAN,
                _ => 0.5 * (i as f32 * 0.01).sin(),
            })
            .collect();
        let mut a = Limiter::new(48_000.0, 0.9);
        let mut b = Limiter::new(48_000.0, 0.9);
        let want: Vec<(f32, f32)> = input.iter().map(|&x| a.process(x, -0.5 * x)).collect();
        let (mut l, mut r): (Vec<f32>, Vec<f32>) = input.iter().map(|&x| (x, -0.5 * x)).unzip();
        let mut start = 0;
        for len in [64, 1, 128, 37].into_iter().cycle() {
            let end = (start + len).min(l.len());
            b.process_span(&mut l[start..end], &mut r[start..end]);
            start = end;
            if start == l.len() {
                break;
            }
        }
        for (t, (&(wl, wr), (gl, gr))) in want.iter().zip(l.iter().zip(&r)).enumerate() {
            assert_eq!((wl.to_bits(), wr.to_bits()), (gl.to_bits(), gr.to_bits()), "sample {t}");
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
