//! The mean push of grouped draws: what the collisions a grouped cell does not render one
//! by one push on the cup through the bed, added to the cup's force rings as a smooth force
//! (`add_group_means`), measured from the draws that are rendered (`GroupPush`).

use crate::base::window::{self, Collision, WINDOW};
use crate::derived::cups::{CUP_BUSES, SURFACE_BUS};
use crate::generator::GroupMean;
use crate::impact::batch::RenderParams;
use crate::impact::{collision, kernels, GENERATOR_LEAD};

/// The memory of the measured push per mean-push unit (`GroupPush`), s: long next to a
/// window, so that the random impulses of one window's few draws do not make the added mean
/// force noisy, and short next to the pour's changes of place (the pile rising, the aim).
///
/// Why 0.3 s: the measure's error is a random walk with a step each window, and the mean
/// force it scales is the whole cell's (its level follows the collision count, not its
/// square root), so its noise below the window rate falls as the memory's square. At
/// 0.05 s (about 600 draws remembered) it put the cup of fine sand poured into a wooden bowl
/// (40 g/s, a steady stream) 2.5 dB above reference quality at 100 Hz; at 0.3 s (about 3,600)
/// 0.5 dB, about what two means of 8 takes differ by chance (0.4 dB). The speed is taken out of the measure
/// (impulses go as the speed: the memory holds the push per unit and per m/s), so a
/// quickening fall does not lag.
const GROUP_PUSH_TAU_S: f32 = 0.3;

/// Per generator cell, what its grouped draws pushed on each cup bus (the surface's last),
/// N s, and the mean-push units they carried times the window's mean speed (units m/s),
/// both summed over the past windows with the weight exp(-age / `GROUP_PUSH_TAU_S`): their
/// ratio is the push of one unit per m/s of mean speed, each window counted by how many
/// units its draws carried (so a pour's first windows are not pulled towards zero).
///
/// And per bus, the force the last window's mean push ended at (N), so the next one joins
/// it (`MeanPush`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct GroupPush {
    pushed: [[f32; CUP_BUSES + 1]; window::CELLS.len()],
    units: [f32; window::CELLS.len()],
    last_end: [f32; CUP_BUSES + 1],
}

/// Samples on each side of a window boundary over which a window's mean push is joined to
/// the last one's (`MeanPush`): half a window's eighth, 0.33 ms at 48 kHz.
const MEAN_PUSH_JOIN: usize = 16;
/// The longest running box `MeanPush` smooths with, samples (a half-millisecond
/// pulse's at 768 kHz is 205).
const MEAN_PUSH_MAX_BOX: usize = 256;
/// The longest force `MeanPush` writes, samples.
pub(crate) const MEAN_PUSH_LEN: usize = MEAN_PUSH_JOIN + WINDOW + 2 * (MEAN_PUSH_MAX_BOX - 1);

/// The running box `MeanPush` smooths with twice at `sample_rate`, samples: the
/// triangle of two boxes of h has the variance (h² − 1)/6 of the longest pulse the kernels
/// render (`kernels::MAX_DURATION_S`, a half-sine of duration D spreads its area with
/// variance D²(1/4 − 2/π²), PAN eq. 6), what a pile's pushes through the bed last
/// (`collision::bed_pulse`: the contact plus L / c_bed); 13 at 48 kHz.
pub(crate) fn mean_push_box(sample_rate: f32) -> usize {
    let d = kernels::MAX_DURATION_S * sample_rate as f64;
    let variance = d * d * (0.25 - 2.0 / (std::f64::consts::PI * std::f64::consts::PI));
    ((6.0 * variance + 1.0).sqrt().round() as usize).clamp(1, MEAN_PUSH_MAX_BOX)
}

/// A window's mean push (`add_group_means`) as a force, N, at one sample rate: three
/// shapes computed once (`new`, the only place that allocates), which `add_to` weighs and
/// adds to a ring each window.
///
/// Many collisions' pushes add up to their rate times their mean pulse, so the force
/// follows the collisions' density over the window: the impulse `ramp` (N s per window
/// times the density at its start and end, `ramp[0] + (ramp[1] - ramp[0]) x` at the
/// fraction x of the window; the impulse is their mean), each sample's share at its centre.
/// Its start differs from where the last window's ended (`last_end`, N) by what the
/// windows' counts and measures differ by: that step is spread over `MEAN_PUSH_JOIN`
/// samples each side of the boundary as two opposite triangles (half the step each side,
/// zero area: the impulse stays). Then it is smoothed as the pushes' pulses smooth it, by
/// a running box of h samples twice: every window by the same kernel, so the windows'
/// sum is the whole force's, smoothed (unsmoothed, the corner where a clump of sand lands
/// clicked in the cup, where reference quality does not).
///
/// All of that is linear in the ramp's start d0 and end d1 (N) and the join's half step
/// (d0 − `last_end`)/2, and the boxes are the same every window: so the smoothed force
/// is d0 `start` + d1 `end` + ((d0 − `last_end`)/2) `join`, the three shapes the ramps'
/// two halves and the join's triangles take through the two boxes (in f64, then f32).
#[derive(Debug, Clone)]
pub(crate) struct MeanPush {
    /// The running box, samples (`mean_push_box`).
    h: usize,
    /// Force per window impulse per sample, 1/s: the sample rate over the window's length.
    per_sample: f32,
    /// What the measured push keeps of its memory over a window (`GROUP_PUSH_TAU_S`).
    keep: f32,
    start: Box<[f32]>,
    end: Box<[f32]>,
    join: Box<[f32]>,
}

impl MeanPush {
    pub(crate) fn new(sample_rate: f32) -> Self {
        let h = mean_push_box(sample_rate);
        let len = MEAN_PUSH_JOIN + WINDOW + 2 * (h - 1);
        let shape = |f: &dyn Fn(usize) -> f64| -> Box<[f32]> {
            let mut x: Vec<f64> = (0..len).map(f).collect();
            running_box(&mut x, h);
            running_box(&mut x, h);
            x.into_iter().map(|v| v as f32).collect()
        };
        // sample i's place in the window (its first at MEAN_PUSH_JOIN), centred
        let at = |i: usize| (i as f64 - MEAN_PUSH_JOIN as f64 + 0.5) / WINDOW as f64;
        let in_window = |i: usize| (MEAN_PUSH_JOIN..MEAN_PUSH_JOIN + WINDOW).contains(&i);
        // the join's triangles: +w before the boundary, −w after, w falling from the boundary
        let join = |i: usize| {
            let (s, sign) = if i < MEAN_PUSH_JOIN {
                (MEAN_PUSH_JOIN - 1 - i, 1.0)
            } else {
                (i - MEAN_PUSH_JOIN, -1.0)
            };
            if s < MEAN_PUSH_JOIN {
                sign * (1.0 - (s as f64 + 0.5) / MEAN_PUSH_JOIN as f64)
            } else {
                0.0
            }
        };
        MeanPush {
            h,
            per_sample: sample_rate / WINDOW as f32,
            keep: (-(WINDOW as f32 / sample_rate) / GROUP_PUSH_TAU_S).exp(),
            start: shape(&|i| if in_window(i) { 1.0 - at(i) } else { 0.0 }),
            end: shape(&|i| if in_window(i) { at(i) } else { 0.0 }),
            join: shape(&join),
        }
    }

    /// The samples the force spans, from `MEAN_PUSH_JOIN + h - 1` before the window's first.
    fn len(&self) -> usize {
        self.start.len()
    }

    /// The weights of `start`, `end` and `join` for `ramp` after a window that ended at
    /// `last_end`, N, and where this window's ramp ends (N, the next window's `last_end`).
    fn weights(&self, ramp: [f32; 2], last_end: f32) -> ([f32; 3], f32) {
        let [d0, d1] = ramp.map(|d| d * self.per_sample);
        ([d0, d1, 0.5 * (d0 - last_end)], d1)
    }

    /// Adds the force of `weights` from its sample `from` on to `out`, sample by sample.
    fn add(&self, [d0, d1, half_step]: [f32; 3], from: usize, out: &mut [f32]) {
        let to = from + out.len();
        let shapes = self.start[from..to]
            .iter()
            .zip(&self.end[from..to])
            .zip(&self.join[from..to]);
        for (o, ((a, b), c)) in out.iter_mut().zip(shapes) {
            *o += d0 * a + d1 * b + half_step * c;
        }
    }
}

/// `x[n] <- (x[n] + x[n-1] + ... + x[n-h+1]) / h` in place: a running box of `h` samples
/// (the samples before the first are zero), its sum kept running.
fn running_box(x: &mut [f64], h: usize) {
    if h <= 1 {
        return;
    }
    let scale = 1.0 / h as f64;
    // the last h inputs, the oldest at `head`
    let mut last = vec![0.0f64; h];
    let mut head = 0;
    let mut sum = 0.0f64;
    for v in x.iter_mut() {
        sum += *v - last[head];
        last[head] = *v;
        head += 1;
        if head == h {
            head = 0;
        }
        *v = sum * scale;
    }
}

/// Adds to the cup's force rings the mean push that grouping leaves out of this window's
/// cells (`generator::GroupMean`): `missing` collisions' worth on each bus, at the push of
/// one mean-push unit of the cell's draws measured over the past windows (`GroupPush`, from
/// the draws in `pending`, `collision::cup_push`, and from those rendered at once,
/// `pushed_at_once`), following the cells' density over the window and joined to the last
/// window's (`mean_push`, the shapes at the sample rate), after the cup's (or the
/// surface's) travel time. Reference quality adds nothing unless a cell reaches its
/// ceiling (`generator::REFERENCE_RENDERED_PER_CELL_PER_S`). Allocation-free.
pub(crate) fn add_group_means(
    means: &[GroupMean; window::CELLS.len()],
    pending: &[Collision],
    pushed_at_once: [[f32; CUP_BUSES + 1]; window::CELLS.len()],
    params: &RenderParams,
    group_push: &mut GroupPush,
    mean_push: &MeanPush,
    cup_ring: &mut [Vec<f32>],
) {
    if means.iter().all(|m| m.missing <= 0.0) && group_push.last_end.iter().all(|&f| f == 0.0) {
        return;
    }
    let k = &params.c;
    // what this window's draws of each grouped cell push on each bus, N s
    let mut pushed = pushed_at_once;
    for c in pending.iter().filter(|c| means[c.cell].missing > 0.0) {
        if let Some((bus, impulse)) = collision::cup_push(k, c) {
            pushed[c.cell][bus] += impulse;
        }
    }
    let keep = mean_push.keep;
    // the missing impulse per bus, N s, over all cells, times the density at the window's
    // start and end
    let mut ramp = [[0.0f32; 2]; CUP_BUSES + 1];
    for (cell, m) in means.iter().enumerate() {
        if m.missing <= 0.0 || m.carried <= 0.0 || m.mean_v.is_nan() || m.mean_v <= 0.0 {
            continue;
        }
        let units = &mut group_push.units[cell];
        *units = keep * *units + m.carried * m.mean_v;
        let sums = &mut group_push.pushed[cell];
        for (x, y) in sums.iter_mut().zip(pushed[cell]) {
            *x = keep * *x + y;
        }
        let per_unit = sums.map(|p| p / *units * m.mean_v);
        for (r, per_unit) in ramp.iter_mut().zip(per_unit) {
            let add = m.missing * per_unit;
            if add.is_finite() && add > 0.0 && m.density.iter().all(|d| d.is_finite()) {
                r[0] += add * m.density[0];
                r[1] += add * m.density[1];
            }
        }
    }
    // as a force, N, after the travel time (a window with none on a bus that had some
    // joins it to zero)
    for (bus, r) in ramp.into_iter().enumerate() {
        let last_end = &mut group_push.last_end[bus];
        if r == [0.0; 2] && *last_end == 0.0 {
            continue;
        }
        let delay = if bus == SURFACE_BUS {
            k.surface_delay
        } else {
            k.cup_delay
        };
        let (weights, end) = mean_push.weights(r, *last_end);
        *last_end = end;
        // the ring index of the force's first sample, the join and the boxes' delay before
        // the window's: not yet read out (`params.base` is `GENERATOR_LEAD` ahead of the
        // reading; a travel shorter than the join and the boxes shifts the force later)
        let delay = delay.round().max(0.0) as u64;
        let lead = ((MEAN_PUSH_JOIN + mean_push.h - 1) as u64).min(delay + GENERATOR_LEAD as u64 - 1);
        let first = (params.base + delay - lead) as usize & params.mask;
        let ring = &mut cup_ring[bus];
        // up to the ring's end, then on from its start
        let len = mean_push.len();
        let before_wrap = len.min(ring.len() - first);
        mean_push.add(weights, 0, &mut ring[first..first + before_wrap]);
        mean_push.add(weights, before_wrap, &mut ring[..len - before_wrap]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One window's mean push for `ramp` after one that ended at `last_end`, as
    /// `add_group_means` adds it, and where it ends.
    fn force(shape: &MeanPush, ramp: [f32; 2], last_end: f32) -> (Vec<f32>, f32) {
        let (weights, end) = shape.weights(ramp, last_end);
        let mut out = vec![0.0f32; shape.len()];
        shape.add(weights, 0, &mut out);
        (out, end)
    }

    /// Consecutive windows' mean pushes as `add_group_means` writes them, each after the
    /// last: the force over the windows, from the first's join on.
    fn stream(ramps: &[[f32; 2]], fs: f32) -> Vec<f32> {
        let shape = MeanPush::new(fs);
        let mut out = vec![0.0f32; WINDOW * (ramps.len() + 1) + MEAN_PUSH_LEN];
        let mut last_end = 0.0;
        for (n, &r) in ramps.iter().enumerate() {
            let (f, end) = force(&shape, r, last_end);
            last_end = end;
            for (o, f) in out[n * WINDOW..].iter_mut().zip(f) {
                *o += f;
            }
        }
        out
    }

    /// `MeanPush`'s window for `ramp` after none at `fs` against its definition: impulse
    /// kept, and the raw ramp and join convolved with the two boxes' triangle.
    fn plain_window(ramp: [f32; 2], fs: f32) {
        let (force, end) = force(&MeanPush::new(fs), ramp, 0.0);
        assert_eq!(end, ramp[1] * fs / WINDOW as f32);
        let impulse: f64 = force.iter().map(|&f| f as f64).sum::<f64>() / fs as f64;
        let mean = 0.5 * (ramp[0] + ramp[1]) as f64;
        assert!((impulse - mean).abs() < 1e-5 * mean, "{fs}: {impulse}");
        let per_sample = (fs / WINDOW as f32) as f64;
        let h = mean_push_box(fs) as i64;
        assert_eq!(force.len() as i64, MEAN_PUSH_JOIN as i64 + WINDOW as i64 + 2 * (h - 1));
        let raw = |i: i64| -> f64 {
            // sample i of the join and window (the window's first at MEAN_PUSH_JOIN)
            let j = MEAN_PUSH_JOIN as i64;
            let d0 = ramp[0] as f64 * per_sample;
            let step = 0.5 * d0;
            if (0..j).contains(&i) {
                step * (1.0 - (j - 1 - i) as f64 / j as f64 - 0.5 / j as f64)
            } else if (j..j + WINDOW as i64).contains(&i) {
                let x = ((i - j) as f64 + 0.5) / WINDOW as f64;
                let ramp_at = d0 + (ramp[1] - ramp[0]) as f64 * per_sample * x;
                let s = i - j;
                ramp_at
                    - if s < j {
                        step * (1.0 - (s as f64 + 0.5) / j as f64)
                    } else {
                        0.0
                    }
            } else {
                0.0
            }
        };
        for (n, &f) in force.iter().enumerate() {
            let plain: f64 = (1 - h..h)
                .map(|k| raw(n as i64 - (h - 1) - k) * (h - k.abs()) as f64 / (h * h) as f64)
                .sum();
            assert!(
                (f as f64 - plain).abs() < 1e-4 * per_sample,
                "{fs} Hz, {n}: {f} vs {plain}"
            );
        }
    }

    #[test]
    fn the_mean_push_keeps_its_impulse_follows_the_ramp_and_joins_the_windows_smoothly() {
        let fs = 48_000.0f32;
        let h = mean_push_box(fs);
        // a half-millisecond half-sine's variance, D²(1/4 − 2/π²), against the boxes'
        let d = 24.0f64;
        let want = d * d * (0.25 - 2.0 / (std::f64::consts::PI * std::f64::consts::PI));
        assert_eq!(h, 13);
        assert!((((h * h) as f64 - 1.0) / 6.0 - want).abs() < 2.0, "{h}");
        // one window alone, at 48 kHz and at the highest rate: its impulse, N s, is the
        // ramp's mean, and the plain version (the ramp and its join from zero convolved with
        // the triangle of half-width h, weights (h - |d|) / h²) is what it writes
        let ramp = [0.3f32, 1.7];
        for fs in [fs, 768_000.0] {
            plain_window(ramp, fs);
        }
        // added in two parts (where a ring wraps) it is the same
        let shape = MeanPush::new(fs);
        let (whole, _) = force(&shape, ramp, 0.5);
        let (weights, _) = shape.weights(ramp, 0.5);
        let mut parts = vec![0.0f32; shape.len()];
        let (a, b) = parts.split_at_mut(57);
        shape.add(weights, 0, a);
        shape.add(weights, 57, b);
        assert_eq!(whole, parts);
        let per_sample = (fs / WINDOW as f32) as f64;
        // a steady force over windows is steady: no ripple where they join
        let steady = stream(&[[1.0, 1.0]; 6], fs);
        let lead = MEAN_PUSH_JOIN + h - 1;
        for (i, &f) in steady[lead + WINDOW..lead + 5 * WINDOW].iter().enumerate() {
            assert!((f as f64 / per_sample - 1.0).abs() < 1e-5, "{i}: {f}");
        }
        // a force that doubles from one window to the next (a step the ramps do not follow)
        // rises over the join and the boxes, never faster than the largest step (2, at the
        // end) over 20 samples;
        // a window written as if the last had ended where it starts (no join) rises by the
        // boxes alone, by a thirteenth of its level from one sample to the next
        // (and then stops: a window with none joins it down to zero)
        let step = stream(&[[1.0, 1.0], [1.0, 1.0], [2.0, 2.0], [2.0, 2.0], [0.0, 0.0]], fs);
        let fastest = step.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
        assert!(
            (fastest as f64) < 2.0 * per_sample / 20.0,
            "{}",
            fastest as f64 / per_sample
        );
        let (unjoined, _) = force(&shape, [2.0, 2.0], 2.0 * per_sample as f32);
        let jump = unjoined.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
        assert!((jump as f64) > 2.0 * per_sample / 15.0, "{}", jump as f64 / per_sample);
        // the windows' impulses add up: 1 + 1 + 2 + 2 N s
        let total: f64 = step.iter().map(|&f| f as f64).sum::<f64>() / fs as f64;
        assert!((total - 6.0).abs() < 1e-4, "{total}");
    }
}
