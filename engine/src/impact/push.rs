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
/// it (`mean_push_force`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct GroupPush {
    pushed: [[f32; CUP_BUSES + 1]; window::CELLS.len()],
    units: [f32; window::CELLS.len()],
    last_end: [f32; CUP_BUSES + 1],
}

/// Samples on each side of a window boundary over which a window's mean push is joined to
/// the last one's (`mean_push_force`): half a window's eighth, 0.33 ms at 48 kHz.
const MEAN_PUSH_JOIN: usize = 16;
/// The longest running box `mean_push_force` smooths with, samples (a half-millisecond
/// pulse's at 768 kHz is 205).
const MEAN_PUSH_MAX_BOX: usize = 256;
/// The longest force `mean_push_force` writes, samples.
pub(crate) const MEAN_PUSH_LEN: usize = MEAN_PUSH_JOIN + WINDOW + 2 * (MEAN_PUSH_MAX_BOX - 1);

/// The running box `mean_push_force` smooths with twice at `sample_rate`, samples: the
/// triangle of two boxes of h has the variance (h² − 1)/6 of the longest pulse the kernels
/// render (`kernels::MAX_DURATION_S`, a half-sine of duration D spreads its area with
/// variance D²(1/4 − 2/π²), PAN eq. 6), what a pile's pushes through the bed last
/// (`collision::bed_pulse`: the contact plus L / c_bed); 13 at 48 kHz.
pub(crate) fn mean_push_box(sample_rate: f32) -> usize {
    let d = kernels::MAX_DURATION_S * sample_rate as f64;
    let variance = d * d * (0.25 - 2.0 / (std::f64::consts::PI * std::f64::consts::PI));
    ((6.0 * variance + 1.0).sqrt().round() as usize).clamp(1, MEAN_PUSH_MAX_BOX)
}

/// The force of a window's mean push (`add_group_means`), N, into `out`; returns the
/// samples written, from `MEAN_PUSH_JOIN + h - 1` before the window's first (h, the box:
/// `mean_push_box`), and where the window's ramp ends (N, the next window's `last_end`).
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
fn mean_push_force(
    ramp: [f32; 2],
    last_end: f32,
    sample_rate: f32,
    h: usize,
    out: &mut [f32; MEAN_PUSH_LEN],
) -> (usize, f32) {
    let per_sample = sample_rate / WINDOW as f32;
    let [d0, d1] = ramp.map(|d| d * per_sample);
    let len = MEAN_PUSH_JOIN + WINDOW + 2 * (h - 1);
    out[..len].fill(0.0);
    let (before, window) = out[..MEAN_PUSH_JOIN + WINDOW].split_at_mut(MEAN_PUSH_JOIN);
    for (j, f) in window.iter_mut().enumerate() {
        let x = (j as f32 + 0.5) / WINDOW as f32;
        *f = d0 + (d1 - d0) * x;
    }
    let half_step = 0.5 * (d0 - last_end);
    for s in 0..MEAN_PUSH_JOIN {
        // samples s + 0.5 before and after the boundary
        let w = half_step * (1.0 - (s as f32 + 0.5) / MEAN_PUSH_JOIN as f32);
        before[MEAN_PUSH_JOIN - 1 - s] = w;
        window[s] -= w;
    }
    running_box(&mut out[..len], h);
    running_box(&mut out[..len], h);
    (len, d1)
}

/// `x[n] <- (x[n] + x[n-1] + ... + x[n-h+1]) / h` in place: a running box of `h` samples
/// (at most `MEAN_PUSH_MAX_BOX`; the samples before the first are zero), its sum kept
/// running.
fn running_box(x: &mut [f32], h: usize) {
    if h <= 1 {
        return;
    }
    let scale = 1.0 / h as f32;
    // the last h inputs, the oldest at `head`
    let mut last = [0.0f32; MEAN_PUSH_MAX_BOX];
    let mut head = 0;
    let mut sum = 0.0f32;
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
/// window's (`mean_push_force`), after the cup's (or the surface's) travel time. Reference
/// quality adds nothing unless a cell reaches its ceiling
/// (`generator::REFERENCE_RENDERED_PER_CELL_PER_S`). Allocation-free.
pub(crate) fn add_group_means(
    means: &[GroupMean; window::CELLS.len()],
    pending: &[Collision],
    pushed_at_once: [[f32; CUP_BUSES + 1]; window::CELLS.len()],
    params: &RenderParams,
    window_s: f32,
    group_push: &mut GroupPush,
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
    let keep = (-window_s / GROUP_PUSH_TAU_S).exp();
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
        let mut force = [0.0f32; MEAN_PUSH_LEN];
        let (len, end) = mean_push_force(r, *last_end, k.sample_rate, params.push_box, &mut force);
        *last_end = end;
        // the ring index of the force's first sample, the join and the boxes' delay before
        // the window's: not yet read out (`params.base` is `GENERATOR_LEAD` ahead of the
        // reading; a travel shorter than the join and the boxes shifts the force later)
        let delay = delay.round().max(0.0) as u64;
        let lead = ((MEAN_PUSH_JOIN + params.push_box - 1) as u64).min(delay + GENERATOR_LEAD as u64 - 1);
        let start = params.base + delay - lead;
        let ring = &mut cup_ring[bus];
        for (j, f) in force[..len].iter().enumerate() {
            ring[(start + j as u64) as usize & params.mask] += f;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Consecutive windows' mean pushes (`mean_push_force`) as `add_group_means` writes
    /// them, each after the last: the force over the windows, from the first's join on.
    fn stream(ramps: &[[f32; 2]], fs: f32) -> Vec<f32> {
        let mut out = vec![0.0f32; WINDOW * (ramps.len() + 1) + MEAN_PUSH_LEN];
        let mut last_end = 0.0;
        for (n, &r) in ramps.iter().enumerate() {
            let mut force = [f32::NAN; MEAN_PUSH_LEN];
            let (len, end) = mean_push_force(r, last_end, fs, mean_push_box(fs), &mut force);
            last_end = end;
            for (j, f) in force[..len].iter().enumerate() {
                out[n * WINDOW + j] += f;
            }
        }
        out
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
        // one window alone: its impulse, N s, is the ramp's mean, and the plain version (the
        // ramp and its join from zero convolved with the triangle of half-width h, weights
        // (h - |d|) / h²) is what it writes
        let ramp = [0.3f32, 1.7];
        let mut force = [0.0f32; MEAN_PUSH_LEN];
        let (len, end) = mean_push_force(ramp, 0.0, fs, h, &mut force);
        assert_eq!(end, 1.7 * fs / WINDOW as f32);
        let impulse: f64 = force[..len].iter().map(|&f| f as f64).sum::<f64>() / fs as f64;
        assert!((impulse - 1.0).abs() < 1e-5, "{impulse}");
        let per_sample = (fs / WINDOW as f32) as f64;
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
        let h = h as i64;
        for (n, &f) in force[..len].iter().enumerate() {
            let plain: f64 = (1 - h..h)
                .map(|k| raw(n as i64 - (h - 1) - k) * (h - k.abs()) as f64 / (h * h) as f64)
                .sum();
            assert!((f as f64 - plain).abs() < 1e-4 * per_sample, "{n}: {f} vs {plain}");
        }
        // a steady force over windows is steady: no ripple where they join
        let steady = stream(&[[1.0, 1.0]; 6], fs);
        let lead = MEAN_PUSH_JOIN + h as usize - 1;
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
        let mut unjoined = [0.0f32; MEAN_PUSH_LEN];
        mean_push_force(
            [2.0, 2.0],
            2.0 * per_sample as f32,
            fs,
            mean_push_box(fs),
            &mut unjoined,
        );
        let jump = unjoined.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f32, f32::max);
        assert!((jump as f64) > 2.0 * per_sample / 15.0, "{}", jump as f64 / per_sample);
        // the windows' impulses add up: 1 + 1 + 2 + 2 N s
        let total: f64 = step.iter().map(|&f| f as f64).sum::<f64>() / fs as f64;
        assert!((total - 6.0).abs() < 1e-4, "{total}");
    }
}
