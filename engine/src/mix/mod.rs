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
    #[inline(always)]
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
        // the same operations per sample (`mix_sample`), so the same bits. The settled loop
        // runs over slices cut to the span, which compiles to packed SIMD: a quiet pour
        // (`granary bench`, `rate:1k`) 1.03x as fast as the scalar loop, side by side.
        let mut next = self.gains;
        step(&mut next);
        if next == self.gains {
            let gains = self.gains;
            let (pl, pr) = (&pressure[0][..len], &pressure[1][..len]);
            let (ml, mr) = (&modal[0][..len], &modal[1][..len]);
            let (dl, dr) = (&diffuse[0][..len], &diffuse[1][..len]);
            let (ground, rubbing) = (&mut ground[..len], &mut rubbing[..len]);
            let (grains_l, grains_r) = (&mut grains_l[..len], &mut grains_r[..len]);
            let (cup_l, cup_r, main_l) = (&mut cup_l[..len], &mut cup_r[..len], &mut main_l[..len]);
            let main_r = &mut main_r[..len];
            for t in 0..len {
                let (g, c, s, f) = (&[pl[t], pr[t]], &[ml[t] + dl[t], mr[t] + dr[t]], ground[t], rubbing[t]);
                let [sg, sc, ss, sf, out] = mix_sample(&gains, friction_gain, g, c, s, f);
                (grains_l[t], grains_r[t], cup_l[t], cup_r[t]) = (sg[0], sg[1], sc[0], sc[1]);
                (ground[t], rubbing[t], main_l[t], main_r[t]) = (ss[0], sf[0], out[0], out[1]);
            }
        } else {
            for t in 0..len {
                step(&mut self.gains);
                let (g, c) = (
                    &[pressure[0][t], pressure[1][t]],
                    &[modal[0][t] + diffuse[0][t], modal[1][t] + diffuse[1][t]],
                );
                let [sg, sc, ss, sf, out] = mix_sample(&self.gains, friction_gain, g, c, ground[t], rubbing[t]);
                (grains_l[t], grains_r[t], cup_l[t], cup_r[t]) = (sg[0], sg[1], sc[0], sc[1]);
                (ground[t], rubbing[t], main_l[t], main_r[t]) = (ss[0], sf[0], out[0], out[1]);
            }
        }
        self.limiter.process_span(main_l, main_r);
    }
}

/// One sample of the mix: the grains' (left, right), the cup's (modal plus diffuse), the
/// surface's and the friction's stems times their gains and the output gain (`gains`:
/// grains, cup, surface, friction, out), each 0 where it is not finite, and the main
/// output, their sum: `[grains, cup, [surface, _], [friction, _], main]`.
#[inline(always)]
fn mix_sample(
    gains: &[f32; 5],
    friction_gain: f32,
    grains: &[f32; 2],
    cup: &[f32; 2],
    surface: f32,
    friction: f32,
) -> [[f32; 2]; 5] {
    let [g_grains, g_cup, g_surface, g_friction, g_out] = *gains;
    let sg = grains.map(|x| finite_or_zero(x * g_grains * g_out));
    let sc = cup.map(|x| finite_or_zero(x * g_cup * g_out));
    let ss = finite_or_zero(surface * g_surface * g_out);
    let sf = finite_or_zero(friction * friction_gain * g_friction * g_out);
    [
        sg,
        sc,
        [ss, 0.0],
        [sf, 0.0],
        [sg[0] + sc[0] + ss + sf, sg[1] + sc[1] + ss + sf],
    ]
}

#[inline]
fn finite_or_zero(x: f32) -> f32 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}
