//! Stage 8, mix: the stems' gains, gliding to their settings, summed into the main output,
//! and the look-ahead limiter on it (`limiter`).

pub mod limiter;

use limiter::Limiter;

/// Gain smoothing time constant, s.
const GAIN_SMOOTH_S: f32 = 0.02;

/// The stems' gains and the main output's limiter.
pub struct Mix {
    /// Grains, cup, surface, friction and output gains, gliding to their targets (the
    /// `*_level_db` settings, `Derived::gains`) with the time constant `GAIN_SMOOTH_S`.
    gains: [f32; 5],
    coef: f32,
    limiter: Limiter,
}

/// One span of the stems at the listener before their gains (slices of the span's length):
/// the grains' pressure, the cup's modes and diffuse field, each left and right; the
/// surface's and the sliding contacts' sound (mono), which `Mix::span` overwrites with
/// what their stems carry; and the sliding contacts' gain for their distance.
pub struct Stems<'a> {
    pub grains: [&'a [f32]; 2],
    pub modal: [&'a [f32]; 2],
    pub diffuse: [&'a [f32]; 2],
    pub surface: &'a mut [f32],
    pub friction: &'a mut [f32],
    pub friction_gain: f32,
}

impl Mix {
    pub fn new(sample_rate: f32, ceiling: f32) -> Mix {
        Mix {
            gains: [0.0; 5],
            coef: 1.0 - (-1.0 / (GAIN_SMOOTH_S * sample_rate)).exp(),
            limiter: Limiter::new(sample_rate, ceiling),
        }
    }

    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    /// The limiter silent and the gains at `targets` (a reset).
    pub fn reset(&mut self, targets: [f32; 5]) {
        self.limiter.reset();
        self.gains = targets;
    }

    /// A pour starts (`Engine::restart`): the gains jump to `targets`, the limiter re-sums.
    pub fn restart(&mut self, targets: [f32; 5]) {
        self.limiter.resync();
        self.gains = targets;
    }

    /// One span: each stem times its gain and the output gain, gliding towards `targets`
    /// sample by sample, into `grains` and `cup` (left, right) and, summed with the surface
    /// and the friction stems, into `main`, which the limiter then holds under its ceiling.
    /// A sample that is not finite is 0 in every output.
    pub fn span(
        &mut self,
        targets: &[f32; 5],
        stems: Stems<'_>,
        main: [&mut [f32]; 2],
        grains: [&mut [f32]; 2],
        cup: [&mut [f32]; 2],
    ) {
        let Stems {
            grains: pressure,
            modal,
            diffuse,
            surface: ground,
            friction: rubbing,
            friction_gain,
        } = stems;
        let [main_l, main_r] = main;
        let [grains_l, grains_r] = grains;
        let [cup_l, cup_r] = cup;
        let len = main_l.len();
        let coef = self.coef;
        let step = |g: &mut [f32; 5]| {
            for (g, &target) in g.iter_mut().zip(targets) {
                *g += coef * (target - *g);
            }
        };
        // The smoothed gains settle on a fixed point of their step (within a few hundred
        // ulps of the target, where the step rounds away), after which every sample of a
        // span has the same gains and the glide is skipped. Either way, the same gains and
        // the same operations per sample, so the same bits. (The loop stays scalar: split
        // into a settled loop over slices cut to the span, it compiled to packed SIMD and
        // ran no faster, side by side, 2026-11-29: ten streams a sample, it waits on memory.)
        let mut next = self.gains;
        step(&mut next);
        let settled = next == self.gains;
        for t in 0..len {
            if !settled {
                step(&mut self.gains);
            }
            let [g_grains, g_cup, g_surface, g_friction, g_out] = self.gains;
            let sg = [pressure[0][t] * g_grains * g_out, pressure[1][t] * g_grains * g_out];
            let sc = [
                (modal[0][t] + diffuse[0][t]) * g_cup * g_out,
                (modal[1][t] + diffuse[1][t]) * g_cup * g_out,
            ];
            let ss = finite_or_zero(ground[t] * g_surface * g_out);
            ground[t] = ss;
            let sf = finite_or_zero(rubbing[t] * friction_gain * g_friction * g_out);
            rubbing[t] = sf;
            let sg = sg.map(finite_or_zero);
            let sc = sc.map(finite_or_zero);
            grains_l[t] = sg[0];
            grains_r[t] = sg[1];
            cup_l[t] = sc[0];
            cup_r[t] = sc[1];
            main_l[t] = sg[0] + sc[0] + ss + sf;
            main_r[t] = sg[1] + sc[1] + ss + sf;
        }
        self.limiter.process_span(main_l, main_r);
    }
}

#[inline]
fn finite_or_zero(x: f32) -> f32 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}
