//! The gestures' sliding contacts as sound: one `friction::Friction` voice for each of
//! `gesture::VOICES` (grain on grain, grain on cup, spoon on grain, spoon on cup), driven
//! by the speed and load the gestures' mechanics give each window (`gesture::Sliding`). Their
//! pressure at the listener is the Friction stem; the two on the cup also push on its buses.

use crate::base::materials::{CupMaterial, FrictionMaterial, FrictionPairData, GrainMaterial};
use crate::derived::cups::{wall_bus, FLOOR_BUS};
use crate::pour::gesture::{Sliding, Voice, VOICES};
use crate::resonators::friction::{Friction, REFERENCE_DISTANCE_M};
use std::ops::Range;

/// The four sliding voices and what each does this window.
pub struct Sliders {
    voices: Vec<Friction>,
    sliding: [Sliding; VOICES.len()],
    /// The materials each voice slides on each other (`Voice::pair`), for the settings.
    pairs: [FrictionPairData; VOICES.len()],
    /// `pairs` changed since the voices last took them.
    new_pairs: bool,
    /// From a voice's pressure at `REFERENCE_DISTANCE_M` to the listener's.
    distance_gain: f32,
}

impl Sliders {
    /// The voices for grains of `grain` in a cup of `cup` at `sample_rate`, their junctions
    /// seeded from `seed` (allocates: `Engine::new`).
    pub fn new(sample_rate: f32, seed: u64, grain: GrainMaterial, cup: CupMaterial) -> Sliders {
        let pairs = VOICES.map(|v| v.pair(grain, FrictionMaterial::Cup(cup)));
        Sliders {
            voices: (pairs.iter().enumerate())
                .map(|(k, &pair)| Friction::new(sample_rate, seed_of(seed, k), pair))
                .collect(),
            sliding: [Sliding::default(); VOICES.len()],
            pairs,
            new_pairs: false,
            distance_gain: 0.0,
        }
    }

    /// The pairs for new settings (`Engine::derive`); the voices take them at the next
    /// window (`window`).
    pub fn set_pairs(&mut self, grain: GrainMaterial, surface: FrictionMaterial) {
        self.pairs = VOICES.map(|v| v.pair(grain, surface));
        self.new_pairs = true;
    }

    /// At rest, the junctions reseeded from `seed`.
    pub fn reset(&mut self, seed: u64) {
        self.sliding = [Sliding::default(); VOICES.len()];
        for (k, f) in self.voices.iter_mut().enumerate() {
            f.reseed(seed_of(seed, k));
        }
    }

    /// A window's sliding contacts (`gesture::GestureOutput::sliding`), the pairs of the
    /// settings (when they changed: the voices keep theirs otherwise), and the listener
    /// `cup_distance_m` from the cup.
    pub fn window(&mut self, sliding: [Sliding; VOICES.len()], cup_distance_m: f32) {
        self.sliding = sliding;
        if self.new_pairs {
            for (f, &pair) in self.voices.iter_mut().zip(&self.pairs) {
                f.set_pair(pair);
            }
            self.new_pairs = false;
        }
        self.distance_gain = REFERENCE_DISTANCE_M / cup_distance_m.max(0.05);
    }

    /// From a voice's pressure to the listener's (`Stems::friction_gain`).
    pub fn distance_gain(&self) -> f32 {
        self.distance_gain
    }

    /// One span: every voice that slides or still rings adds its pressure at
    /// `REFERENCE_DISTANCE_M` into `out`, and the ones on the cup their friction force into
    /// `cup_ring`'s buses over `range` (before the modes read them).
    pub fn render(&mut self, out: &mut [f32], cup_ring: &mut [Vec<f32>], range: Range<usize>) {
        for ((f, voice), sliding) in self.voices.iter_mut().zip(VOICES).zip(self.sliding) {
            if sliding.load_n <= 0.0 && f.is_silent() {
                continue;
            }
            match voice {
                Voice::GrainCup | Voice::SpoonCup => {
                    let bus = if voice == Voice::SpoonCup {
                        FLOOR_BUS
                    } else {
                        wall_bus(0, 0)
                    };
                    let force = &mut cup_ring[bus][range.clone()];
                    f.render_with_force(sliding.speed_m_s, sliding.load_n, out, Some(force));
                }
                Voice::GrainGrain | Voice::SpoonGrain => f.render(sliding.speed_m_s, sliding.load_n, out),
            }
        }
    }
}

/// The seed of sliding contact `k`'s junctions (`friction::Friction`), from the engine's.
fn seed_of(seed: u64, k: usize) -> u64 {
    seed ^ (0x6672_6963_7469_6f6e_u64.wrapping_mul(k as u64 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::SurfaceMaterial;

    /// New settings' materials reach every voice at the next window, and a window without
    /// new settings leaves them; `Sliders::new`'s are the voices' from the start.
    #[test]
    fn new_materials_reach_the_voices_at_the_next_window() {
        let (grain, cup) = (GrainMaterial::Sugar, CupMaterial::Ceramic);
        let mut s = Sliders::new(48_000.0, 1, grain, cup);
        let voices = |s: &Sliders| s.voices.iter().map(|f| *f.pair()).collect::<Vec<_>>();
        let first = voices(&s);
        assert_eq!(
            first,
            VOICES.map(|v| v.pair(grain, FrictionMaterial::Cup(cup))).to_vec()
        );
        let none = [Sliding::default(); VOICES.len()];
        s.window(none, 0.5);
        assert_eq!(voices(&s), first);
        let (grain, surface) = (GrainMaterial::Rice, FrictionMaterial::Surface(SurfaceMaterial::Wood));
        s.set_pairs(grain, surface);
        assert_eq!(voices(&s), first, "not before the window");
        s.window(none, 0.5);
        let second = voices(&s);
        assert_eq!(second, VOICES.map(|v| v.pair(grain, surface)).to_vec());
        assert_ne!(second, first);
        s.window(none, 0.5);
        assert_eq!(voices(&s), second);
    }
}
