//! The batched renderer of collisions: a window's collisions set up sixteen at a time in SIMD
//! lanes (`RenderContext::prepare`), then written into the output rings through the
//! band-limited pulse kernels (`RenderContext::render_batch`).
//!
//! The fast copy of `collision::physics` and `collision::render_one`, which define a
//! collision: the set-up gives the same bits as `physics` (the same operations in the same
//! order, lane by lane), the rings the same samples within rounding (the kernels' rows are
//! combined in another order). The tests below check both on thousands of random
//! collisions. It renders the engine's collisions only, whose two spheres are the same grain.

use crate::base::simd::{Kernel, Target};
use crate::base::window::{Collision, CollisionKind};
use crate::base::{fastmath, simd};
use crate::derived::cups::SURFACE_BUS;
use crate::impact::accel_noise::sphere_amplitudes_at;
use crate::impact::collision;
use crate::impact::collision::{Constants, BED_LOSS_LENGTH_M};
use crate::impact::kernels;
use crate::impact::kernels::{PulseKernels, HALF};

/// Per-window constants for rendering collisions: the physics (`collision::Constants`) and
/// where the window's time 0 is in the rings.
#[derive(Clone, Copy, Default)]
pub(crate) struct RenderParams {
    pub(crate) c: Constants,
    /// The ring index (unwrapped) of the window's time 0.
    pub(crate) base: u64,
    pub(crate) mask: usize,
}

impl RenderParams {
    /// Adds `x`, sample by sample from the window's time 0, to `ring` `delay` samples late
    /// (rounded; a travel time to the listener): a force whose samples the window knows
    /// already (`impact::foot`'s push through the cup's foot, `resonators::body`'s jolt).
    pub(crate) fn add_late(&self, ring: &mut [f32], delay: f32, x: &[f32]) {
        let start = self.base + delay.round().max(0.0) as u64;
        for (j, v) in x.iter().enumerate() {
            ring[(start + j as u64) as usize & self.mask] += v;
        }
    }
}

/// Collisions whose set-up runs together, one SIMD lane each (`RenderContext::prepare`).
pub(crate) const BATCH: usize = 16;

/// The per-collision quantities of a batch, lane `i` for its collision `i`: its
/// `collision::physics`, and the kernel rows its pulses take.
#[derive(Default)]
pub(crate) struct Prepared {
    /// ln of the contact duration in samples (PAN eq. 7).
    ln_duration: [f32; BATCH],
    /// Per sphere: the amplitudes of the pulse and its derivative
    /// (`accel_noise::sphere_amplitudes`).
    a0: [[f32; BATCH]; 2],
    a1: [[f32; BATCH]; 2],
    /// A shaped grain's second-derivative amplitude (`shape`; zero for spheres).
    a2: [[f32; BATCH]; 2],
    /// Gains of the left and right channel.
    pan: [[f32; BATCH]; 2],
    /// The cup force pulse's impulse times the group weight (through a bed, what reaches
    /// the cup), N s, and ln of its duration in samples (`collision::bed_pulse`).
    cup_amplitude: [f32; BATCH],
    cup_ln_duration: [f32; BATCH],
    /// Kernel rows (`PulseKernels::select_ln`, split): the duration row, and per pulse
    /// (sphere 0, sphere 1, cup) the integer sample of its time (samples into the window;
    /// retarded for the spheres, delayed for the cup), its phase cell and fraction.
    row: [i32; BATCH],
    /// The cup pulse's duration row (the contact's row, or a bed pulse's longer one).
    cup_row: [i32; BATCH],
    whole: [[i32; BATCH]; 3],
    cell: [[i32; BATCH]; 3],
    frac: [[f32; BATCH]; 3],
}

pub(crate) struct RenderContext<'a> {
    pub(crate) kernels: &'a PulseKernels,
    pub(crate) p: RenderParams,
}

impl RenderContext<'_> {
    /// Splats one collision into the ring buffers (its pulses and its cup force).
    /// `scratch` holds at least `taps + 1` samples.
    pub(crate) fn render(&self, c: &Collision, grains: &mut [Vec<f32>; 2], cup: &mut [Vec<f32>], scratch: &mut [f32]) {
        let prepared = self.prepare(std::slice::from_ref(c));
        self.render_batch(std::slice::from_ref(c), &prepared, grains, cup, scratch);
    }

    /// The per-collision quantities of up to `BATCH` collisions, one SIMD lane each (in the
    /// copy of the engine's instruction set, `simd`; the same operations in the same order
    /// in every copy).
    fn prepare(&self, batch: &[Collision]) -> Prepared {
        let mut out = Prepared::default();
        self.prepare_into(batch, &mut out);
        out
    }

    /// `prepare` into `out`: every lane of it is written (lanes past the batch's end with
    /// harmless values), so `out` need not be cleared between batches.
    pub(crate) fn prepare_into(&self, batch: &[Collision], out: &mut Prepared) {
        self.kernels.isa().run(Prepare { ctx: self, batch, out });
    }

    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // lane loops, indexed across several arrays
    fn prepare_lanes(&self, batch: &[Collision], out: &mut Prepared) {
        // the batch as lanes (lanes past its end keep harmless zeros and unit speeds)
        let mut pos = [[0.0f32; BATCH]; 3];
        let mut nrm = [[0.0f32; BATCH]; 3];
        let (mut time, mut v0, mut ln_v0, mut weight) =
            ([0.0f32; BATCH], [1.0f32; BATCH], [0.0f32; BATCH], [0.0f32; BATCH]);
        let (mut per_v, mut ln_d1) = ([0.0f32; BATCH], [0.0f32; BATCH]);
        let (mut bed, mut bed_weight) = ([0.0f32; BATCH], [0.0f32; BATCH]);
        // where the force pulse goes: the cup's delay, or the surface's
        let mut delay = [self.p.c.cup_delay; BATCH];
        for (i, c) in batch.iter().take(BATCH).enumerate() {
            for j in 0..3 {
                pos[j][i] = c.position[j];
                nrm[j][i] = c.normal[j];
            }
            time[i] = c.time;
            v0[i] = c.v0;
            ln_v0[i] = c.ln_v0;
            weight[i] = c.weight;
            per_v[i] = self.p.c.impulse_per_v[c.kind as usize];
            // a grain-cup hit has no bed, nor a collision whose pulse another writes
            let through = c.kind == CollisionKind::GrainGrain && c.bed_weight > 0.0;
            bed[i] = if through { c.bed_m } else { 0.0 };
            bed_weight[i] = if through { c.bed_weight } else { 0.0 };
            ln_d1[i] = self.p.c.ln_duration_at_1[c.kind as usize];
            if c.bus == SURFACE_BUS {
                delay[i] = self.p.c.surface_delay;
            }
        }
        // the engine's two spheres are the same grain (`Engine::render_params`)
        debug_assert_eq!(self.p.c.spheres[0], self.p.c.spheres[1]);
        let a = self.p.c.spheres[0].radius_m;
        let dipole_scale = self.p.c.grain.dipole_scale;
        // Every step below is a loop over the lanes with no call and no branch, so that it
        // compiles to packed SIMD (a loop over lanes with everything in its body does not).
        // PAN eq. 7 and the impulse law, from the per-window constants (`RenderParams`)
        let mut impulse_ns = [0.0f32; BATCH];
        let mut dv = [0.0f32; BATCH];
        // shaped grains (`shape`): each collision's orientations and contacts, drawn one lane at
        // a time (`collision::draw_shapes`); spheres skip this
        let shaped = self.p.c.grain.shaped;
        let mut draws = [None; BATCH];
        let (mut impulse_scale, mut ln_shift) = ([1.0f32; BATCH], [0.0f32; BATCH]);
        if shaped {
            for (i, c) in batch.iter().take(BATCH).enumerate() {
                let d = collision::draw_shapes(&self.p.c, c);
                impulse_scale[i] = d.impulse_scale;
                ln_shift[i] = d.ln_duration_shift;
                draws[i] = Some(d);
            }
        }
        for i in 0..BATCH {
            impulse_ns[i] = per_v[i] * v0[i].max(1e-9);
            out.ln_duration[i] = ln_d1[i] - 0.2 * ln_v0[i].max(-20.7);
        }
        if shaped {
            for i in 0..BATCH {
                impulse_ns[i] *= impulse_scale[i];
                out.ln_duration[i] += ln_shift[i];
            }
        }
        for i in 0..BATCH {
            out.cup_amplitude[i] = impulse_ns[i] * weight[i];
            dv[i] = impulse_ns[i] / self.p.c.spheres[0].mass_kg * weight[i];
        }
        // pulse times, samples: sphere 0, sphere 1, cup (through a bed: later, longer and
        // weaker, `collision::bed_pulse`; with no bed the contact's own pulse)
        let mut times = [[0.0f32; BATCH]; 3];
        for i in 0..BATCH {
            let travel = bed[i] * self.p.c.bed_samples_per_m;
            let through = bed_weight[i] > 0.0;
            times[2][i] = if through {
                time[i] + delay[i] + travel
            } else {
                time[i] + delay[i]
            };
            let loss = fastmath::exp(-bed[i] * (1.0 / BED_LOSS_LENGTH_M));
            let spread = fastmath::ln(fastmath::exp(out.ln_duration[i]) + travel);
            out.cup_amplitude[i] = if through {
                out.cup_amplitude[i] * bed_weight[i] * loss
            } else {
                out.cup_amplitude[i]
            };
            out.cup_ln_duration[i] = if through { spread } else { out.ln_duration[i] };
        }
        // thesis 4.1 / 5.3: the first sphere accelerates along n, the second along -n
        // (both are computed; a grain-cup collision uses the first only)
        for (k, sign) in [1.0f32, -1.0].into_iter().enumerate() {
            let offset = sign * a;
            let mut d = [[0.0f32; BATCH]; 3];
            for j in 0..3 {
                for i in 0..BATCH {
                    d[j][i] = self.p.c.listener[j] - (pos[j][i] + offset * nrm[j][i]);
                }
            }
            for i in 0..BATCH {
                let r = (d[0][i] * d[0][i] + d[1][i] * d[1][i] + d[2][i] * d[2][i])
                    .sqrt()
                    .max(a * 1.01);
                let inv_r = 1.0 / r;
                let cos_theta = sign * (nrm[0][i] * d[0][i] + nrm[1][i] * d[1][i] + nrm[2][i] * d[2][i]) * inv_r;
                let (a0, a1) = sphere_amplitudes_at(a, r, inv_r, cos_theta, dv[i]);
                // retarded time t' = t - (r - a) / c (thesis eq. 4.1), in samples
                times[k][i] = time[i] + (r - a) * self.p.c.samples_per_m;
                // the cube's dipole (`shape`; 1 for a sphere)
                out.a0[k][i] = a0 * dipole_scale;
                out.a1[k][i] = a1 * dipole_scale;
                out.a2[k][i] = 0.0;
            }
        }
        if shaped {
            // shaped grains replace the spheres' pulses lane by lane (`collision::shaped_pulse`)
            for (i, c) in batch.iter().take(BATCH).enumerate() {
                let Some(d) = &draws[i] else { continue };
                let spheres = if c.kind == CollisionKind::GrainCup { 1 } else { 2 };
                for k in 0..spheres {
                    let p = collision::shaped_pulse(&self.p.c, c, k, d, impulse_ns[i]);
                    times[k][i] = p.time;
                    out.a0[k][i] = p.a0;
                    out.a1[k][i] = p.a1;
                    out.a2[k][i] = p.a2;
                }
            }
        }
        // constant-power pan across the cup's width
        for i in 0..BATCH {
            let pan = (pos[1][i] * self.p.c.pan_scale).clamp(-1.0, 1.0);
            let (sin_th, cos_th) = fastmath::sin_cos((pan + 1.0) * std::f32::consts::FRAC_PI_4);
            out.pan[0][i] = cos_th * std::f32::consts::SQRT_2;
            out.pan[1][i] = sin_th * std::f32::consts::SQRT_2;
        }
        // the kernel rows: one duration row for all three pulses, a phase each
        for i in 0..BATCH {
            out.row[i] = self.kernels.duration_row(out.ln_duration[i]);
            out.cup_row[i] = self.kernels.duration_row(out.cup_ln_duration[i]);
        }
        for k in 0..3 {
            for i in 0..BATCH {
                let t = times[k][i];
                // kept as an integer: no float-to-integer conversion when the pulse is written
                let whole = fastmath::floor_non_negative(t);
                let (cell, frac) = kernels::phase_cell(t - whole as f32);
                out.whole[k][i] = whole;
                out.cell[k][i] = cell;
                out.frac[k][i] = frac;
            }
        }
    }

    /// Writes a batch's collisions, `prepare`d, into the rings in order, in the copy of the
    /// engine's instruction set (`simd`): in the AVX copy (which AVX-512 CPUs run too), the
    /// kernels' AVX pass inlines into it (`render_prepared`).
    pub(crate) fn render_batch(
        &self,
        batch: &[Collision],
        prepared: &Prepared,
        grains: &mut [Vec<f32>; 2],
        cup: &mut [Vec<f32>],
        scratch: &mut [f32],
    ) {
        self.kernels.isa().run(RenderBatch {
            ctx: self,
            batch,
            prepared,
            grains,
            cup,
            scratch,
        });
    }

    /// Writes collision `c`, lane `i` of `prepared`, into the rings, with the kernels' pass
    /// for `target` inlined.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn render_prepared<T: Target>(
        &self,
        c: &Collision,
        prepared: &Prepared,
        i: usize,
        grains: &mut [Vec<f32>; 2],
        cup: &mut [Vec<f32>],
        scratch: &mut [f32],
        target: T,
    ) {
        // a grain-surface collision's second sphere is the grain's image in the ground
        let spheres = if c.kind == CollisionKind::GrainCup { 1 } else { 2 };
        let row = prepared.row[i] as usize;
        let pulse = |k: usize| {
            self.kernels
                .pulse(row, prepared.cell[k][i] as usize, prepared.frac[k][i])
        };
        let amplitudes = |k: usize| [prepared.a0[k][i], prepared.a1[k][i], prepared.a2[k][i]];
        // Both spheres' pulses go into one pass (they are microseconds apart and usually
        // share their kernel rows), panned into the two channels. `first` is the earlier
        // pulse's sample; the offsets are from it, so one is 0, and both are when equal.
        let (w0, w1) = (prepared.whole[0][i], prepared.whole[1][i]);
        let first = if spheres == 2 { w0.min(w1) } else { w0 };
        let max_offset = scratch.len() - self.kernels.taps();
        let offset = |w: i32| ((w - first) as usize).min(max_offset);
        let (o0, p0) = (offset(w0), pulse(0));
        let (o1, p1) = if spheres == 2 { (offset(w1), pulse(1)) } else { (0, p0) };
        let used = if spheres == 2 {
            (o0 + p0.taps()).max(o1 + p1.taps())
        } else {
            o0 + p0.taps()
        };
        let pan_gain = [prepared.pan[0][i], prepared.pan[1][i]];
        let (t0, t1) = (amplitudes(0), amplitudes(1));
        // a grouped draw's pulses go in `GROUP_COPIES` times (`collision::copies`)
        let copies = collision::copies(c);
        let mut built = false;
        for &(shift, sign) in copies.places() {
            let g = sign * copies.gain;
            let pan_gain = [pan_gain[0] * g, pan_gain[1] * g];
            let start = self.ring_start(first + shift);
            if o0 == o1 && start + used <= grains[0].len().min(grains[1].len()) {
                // the common case: one pass from the kernel rows into both channels
                let [gl, gr] = &mut *grains;
                let dst = [&mut gl[start..start + used], &mut gr[start..start + used]];
                if spheres == 1 {
                    self.kernels.add_to_in(p0, t0, dst, pan_gain, target);
                } else {
                    self.kernels.add_pair_to_in(p0, t0, p1, t1, dst, pan_gain, target);
                }
            } else {
                // pulses on different samples, or a kernel that wraps around the ring: build
                // the pulse in `scratch` (once for the copies), then add it (`first` is the
                // earlier pulse's sample, so one offset is 0, and both are when equal)
                let scratch_used = &mut scratch[..used];
                if !built {
                    scratch_used.fill(0.0);
                    if spheres == 1 {
                        self.kernels.accumulate_in(p0, t0, scratch_used, target);
                    } else if o0 == o1 {
                        self.kernels.accumulate_pair_in(p0, t0, p1, t1, scratch_used, target);
                    } else {
                        self.kernels.accumulate_in(p0, t0, &mut scratch_used[o0..], target);
                        self.kernels.accumulate_in(p1, t1, &mut scratch_used[o1..], target);
                    }
                    built = true;
                }
                for (ring, g) in grains.iter_mut().zip(pan_gain) {
                    self.add_into_ring(ring, start, scratch_used, g);
                }
            }
        }
        if c.kind != CollisionKind::GrainGrain || c.bed_weight > 0.0 {
            let impulse = prepared.cup_amplitude[i];
            let pulse = self.kernels.pulse(
                prepared.cup_row[i] as usize,
                prepared.cell[2][i] as usize,
                prepared.frac[2][i],
            );
            let start = self.ring_start(prepared.whole[2][i]);
            let ring = &mut cup[c.bus];
            if start + pulse.taps() <= ring.len() {
                let dst = &mut ring[start..start + pulse.taps()];
                self.kernels.add_g0_to_in(pulse, impulse, dst, target);
            } else {
                let scratch = &mut scratch[..pulse.taps()];
                scratch.fill(0.0);
                self.kernels.accumulate_in(pulse, [impulse, 0.0, 0.0], scratch, target);
                self.add_into_ring(ring, start, scratch, 1.0);
            }
        }
    }

    /// Ring index of the first kernel tap for a pulse whose integer sample is `whole`.
    #[inline]
    fn ring_start(&self, whole: i32) -> usize {
        ((self.p.base + whole as u64 - HALF as u64) as usize) & self.p.mask
    }

    /// `ring[(start + k) mod len] += gain * src[k]`: the part before the ring's end, then
    /// the part that wraps around to its start (`src` is never longer than the ring).
    #[inline]
    fn add_into_ring(&self, ring: &mut [f32], start: usize, src: &[f32], gain: f32) {
        let start = start & self.p.mask;
        let before_end = (ring.len() - start).min(src.len());
        let (head, wrapped) = src.split_at(before_end);
        simd::add_scaled(&mut ring[start..start + before_end], head, gain);
        simd::add_scaled(&mut ring[..wrapped.len()], wrapped, gain);
    }
}

/// `RenderContext::prepare_into` as a `simd::Kernel` (its AVX-512 copy: a batch's lanes
/// are one vector).
struct Prepare<'a, 'k> {
    ctx: &'a RenderContext<'k>,
    batch: &'a [Collision],
    out: &'a mut Prepared,
}

impl Kernel for Prepare<'_, '_> {
    type Output = ();
    const HAS_AVX512: bool = true;
    #[inline(always)]
    fn run<T: Target>(self, _: T) {
        self.ctx.prepare_lanes(self.batch, self.out);
    }
}

/// `RenderContext::render_batch` as a `simd::Kernel`.
struct RenderBatch<'a, 'k> {
    ctx: &'a RenderContext<'k>,
    batch: &'a [Collision],
    prepared: &'a Prepared,
    grains: &'a mut [Vec<f32>; 2],
    cup: &'a mut [Vec<f32>],
    scratch: &'a mut [f32],
}

impl Kernel for RenderBatch<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn run<T: Target>(self, target: T) {
        for (i, c) in self.batch.iter().enumerate() {
            let ctx = self.ctx;
            ctx.render_prepared(c, self.prepared, i, self.grains, self.cup, self.scratch, target);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::{CupMaterial, GrainMaterial};
    use crate::base::window::WINDOW;
    use crate::derived::cups::CUP_BUSES;
    use crate::impact::collision::{add_pulse_shifted, physics, render_one};
    use crate::{Engine, Settings};
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Engines whose collision constants differ: sample rates, grains from sugar to gravel
    /// and steel, cups, listeners, stereo widths.
    fn engines() -> Vec<Engine> {
        let set_ups = [
            (
                44_100.0,
                GrainMaterial::Sugar,
                1.0,
                CupMaterial::Ceramic,
                1.0,
                30.0,
                0.4,
                0.7,
            ),
            (
                48_000.0,
                GrainMaterial::Rice,
                2.0,
                CupMaterial::Glass,
                0.5,
                0.0,
                0.1,
                1.0,
            ),
            (
                48_000.0,
                GrainMaterial::GlassBeads2,
                0.5,
                CupMaterial::Steel,
                2.5,
                90.0,
                2.0,
                0.0,
            ),
            (
                96_000.0,
                GrainMaterial::Gravel,
                4.0,
                CupMaterial::Wood,
                1.5,
                60.0,
                10.0,
                0.3,
            ),
            (
                22_050.0,
                GrainMaterial::SteelShot1,
                0.25,
                CupMaterial::Plastic,
                0.8,
                45.0,
                0.25,
                1.0,
            ),
        ];
        set_ups
            .into_iter()
            .map(|(fs, grain, size, cup, cup_size, angle, distance, width)| {
                let s = Settings {
                    grain_material: grain,
                    grain_size: size,
                    cup_material: cup,
                    cup_size,
                    listener_angle_deg: angle,
                    listener_distance_m: distance,
                    stereo_width: width,
                    ..Settings::default()
                };
                Engine::new(s, fs, 64)
            })
            .collect()
    }

    /// A collision with every quantity random over (and beyond) what the generator makes.
    fn random_collision(rng: &mut Xoshiro256PlusPlus) -> Collision {
        let grain_cup = rng.random_bool(0.4);
        let normal = loop {
            let v: [f32; 3] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
            let norm = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            if (0.1..=1.0).contains(&norm) {
                break v.map(|x| x / norm);
            }
        };
        let v0 = 10f32.powf(rng.random_range(-5.5..0.8));
        Collision {
            time: rng.random_range(0.0..WINDOW as f32),
            kind: if grain_cup {
                CollisionKind::GrainCup
            } else {
                CollisionKind::GrainGrain
            },
            cell: 0,
            bus: rng.random_range(0..CUP_BUSES),
            position: [
                rng.random_range(-0.1..0.1),
                rng.random_range(-0.1..0.1),
                rng.random_range(0.0..0.2),
            ],
            normal,
            v0,
            ln_v0: v0.ln(),
            weight: rng.random_range(1.0..8.0),
            // a collision on the pile (through a bed of up to 12 cm, standing for one to
            // sixteen pulses) or in the stream
            bed_m: if !grain_cup && rng.random_bool(0.6) {
                10f32.powf(rng.random_range(-4.0..-0.9))
            } else {
                0.0
            },
            // a pulse that stands for one to four, or none (another collision writes it)
            bed_weight: if grain_cup || rng.random_bool(0.3) {
                0.0
            } else {
                rng.random_range(1.0..4.0f32)
            },
            // a grouped draw, its spheres' pulses copied over the window
            spread: rng.random_bool(0.5),
        }
    }

    /// The engine's kernels in every copy the CPU can run (`simd::Isa::available`).
    fn copies(e: &Engine) -> Vec<PulseKernels> {
        simd::Isa::available()
            .map(|isa| {
                let mut kernels = e.kernels.clone();
                kernels.set_isa(isa);
                kernels
            })
            .collect()
    }

    #[test]
    fn batched_set_up_is_the_scalar_physics_bit_for_bit() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
        let mut checked = [0usize; 2];
        let mut bed_pulses = 0usize;
        for e in engines() {
            let params = e.render_params();
            for kernels in copies(&e) {
                let ctx = RenderContext {
                    kernels: &kernels,
                    p: params,
                };
                let mut prepared = Prepared::default();
                for _ in 0..70 {
                    // full batches and partial ones (the lanes past the end are not read)
                    let n = rng.random_range(1..=BATCH + 4).min(BATCH);
                    let batch: Vec<Collision> = (0..n).map(|_| random_collision(&mut rng)).collect();
                    ctx.prepare_into(&batch, &mut prepared);
                    for (i, c) in batch.iter().enumerate() {
                        let p = physics(&params.c, c);
                        let lane = |x: &[f32; BATCH]| x[i].to_bits();
                        let what = format!("{c:?}");
                        assert_eq!(lane(&prepared.ln_duration), p.ln_duration.to_bits(), "{what}");
                        assert_eq!(prepared.row[i], kernels.duration_row(p.ln_duration), "{what}");
                        for ch in 0..2 {
                            assert_eq!(lane(&prepared.pan[ch]), p.pan[ch].to_bits(), "{what}");
                        }
                        // a pulse's time as the kernels take it: integer sample, phase cell
                        let cell_of = |t: f32| {
                            let (cell, frac) = kernels::phase_cell(t - t.floor());
                            (t.floor() as i32, cell, frac.to_bits())
                        };
                        let cell_at =
                            |k: usize| (prepared.whole[k][i], prepared.cell[k][i], prepared.frac[k][i].to_bits());
                        for (s, sphere) in p.heard().iter().enumerate() {
                            assert_eq!(lane(&prepared.a0[s]), sphere.a0.to_bits(), "{what}");
                            assert_eq!(lane(&prepared.a1[s]), sphere.a1.to_bits(), "{what}");
                            assert_eq!(lane(&prepared.a2[s]), sphere.a2.to_bits(), "{what}");
                            assert_eq!(cell_at(s), cell_of(sphere.time), "{what}");
                        }
                        if let Some(f) = p.cup {
                            assert_eq!(lane(&prepared.cup_amplitude), f.amplitude.to_bits(), "{what}");
                            assert_eq!(lane(&prepared.cup_ln_duration), f.ln_duration.to_bits(), "{what}");
                            assert_eq!(prepared.cup_row[i], kernels.duration_row(f.ln_duration), "{what}");
                            assert_eq!(cell_at(2), cell_of(f.time), "{what}");
                            bed_pulses += usize::from(c.bed_m > 0.0);
                        }
                        checked[c.kind as usize] += 1;
                    }
                }
            }
        }
        assert!(checked.iter().all(|&n| n > 1000), "{checked:?}");
        assert!(bed_pulses > 500, "{bed_pulses} pulses through a bed");
    }

    #[test]
    fn batched_rings_are_render_one_within_rounding() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(22);
        let mut worst = 0.0f32;
        let mut wrapped = 0;
        for e in engines() {
            let len = e.grains_ring[0].len();
            for trial in 0..50 {
                let mut params = e.render_params();
                // anywhere in the ring, and every other time near its end, so that pulses
                // wrap around it
                params.base = if trial % 2 == 0 {
                    rng.random_range(len as u64 - 3 * WINDOW as u64..len as u64)
                } else {
                    rng.random_range(HALF as u64..8 * len as u64)
                };
                let ctx = RenderContext {
                    kernels: &e.kernels,
                    p: params,
                };
                let n = rng.random_range(1..=BATCH);
                let batch: Vec<Collision> = (0..n).map(|_| random_collision(&mut rng)).collect();
                let (mut grains, mut cup, mut scratch) = (e.grains_ring.clone(), e.cup_ring.clone(), e.scratch.clone());
                let mut prepared = Prepared::default();
                ctx.prepare_into(&batch, &mut prepared);
                ctx.render_batch(&batch, &prepared, &mut grains, &mut cup, &mut scratch);
                // the reference, and the sum of the magnitudes of every pulse written
                let (mut want, mut want_cup) = (e.grains_ring.clone(), e.cup_ring.clone());
                let (mut size, mut size_cup) = (e.grains_ring.clone(), e.cup_ring.clone());
                let origin = params.base as usize;
                for c in &batch {
                    let [l, r] = &mut want;
                    let p = render_one(&params.c, &e.kernels, c, origin, [l, r], &mut want_cup);
                    let add_size =
                        |ring: &mut [f32], ln_duration: f32, t: (f32, i32), a: kernels::Amplitudes, gain: f32| {
                            let mut one = vec![0.0f32; ring.len()];
                            add_pulse_shifted(&e.kernels, ln_duration, t, a, gain, &mut one, origin);
                            for (s, x) in ring.iter_mut().zip(one) {
                                *s += x.abs();
                            }
                        };
                    let copies = collision::copies(c);
                    for (ring, gain) in size.iter_mut().zip(p.pan) {
                        for &(shift, _) in copies.places() {
                            for s in p.heard() {
                                let g = gain * copies.gain;
                                add_size(ring, p.ln_duration, (s.time, shift), [s.a0, s.a1, s.a2], g);
                            }
                        }
                    }
                    if let Some(f) = p.cup {
                        add_size(
                            &mut size_cup[f.bus],
                            f.ln_duration,
                            (f.time, 0),
                            [f.amplitude, 0.0, 0.0],
                            1.0,
                        );
                    }
                    let last = (origin + p.heard()[0].time as usize + e.kernels.taps()) / len;
                    wrapped += usize::from(last > origin / len);
                }
                let rings = |g: &[Vec<f32>; 2], c: &[Vec<f32>]| g.iter().chain(c).cloned().collect::<Vec<_>>();
                let (got, want, size) = (rings(&grains, &cup), rings(&want, &want_cup), rings(&size, &size_cup));
                for ((got, want), size) in got.iter().zip(&want).zip(&size) {
                    // every sample within 1e-6 of the largest sum of pulse magnitudes written
                    // into the ring (see the assertion below)
                    let scale = size.iter().fold(0.0f32, |m, x| m.max(*x));
                    for (x, y) in got.iter().zip(want) {
                        let diff = (x - y).abs();
                        worst = worst.max(diff / scale.max(f32::MIN_POSITIVE));
                        assert!(diff <= 1e-6 * scale, "{x} vs {y} (scale {scale:e}) {batch:?}");
                    }
                    assert_eq!(scale == 0.0, got.iter().all(|&x| x == 0.0), "written where nothing was");
                }
            }
        }
        // Each sample of a pulse is a sum of up to eight products of kernel taps and
        // amplitudes, and the pulses of a batch are summed in the ring: the two copies
        // round each sum in their own order, a few units of f32's 6e-8 relative rounding
        // of the magnitudes summed.
        eprintln!("largest difference: {worst:e} of the summed pulse magnitudes; {wrapped} pulses wrapped");
        assert!(wrapped > 20, "too few pulses wrapped around the rings: {wrapped}");
    }

    #[test]
    fn batched_collision_set_up_is_the_same_bits_in_every_copy() {
        let mut e = Engine::new(Settings::default(), 48_000.0, 64);
        e.note_on(1.0, 60);
        let params = e.render_params();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let batch: Vec<Collision> = (0..BATCH)
            .map(|i| Collision {
                time: rng.random_range(0.0..128.0),
                kind: if i % 3 == 0 {
                    CollisionKind::GrainCup
                } else {
                    CollisionKind::GrainGrain
                },
                cell: 0,
                bus: 0,
                position: [0.0; 3].map(|_| rng.random_range(-0.04..0.04)),
                normal: [0.6, 0.0, 0.8],
                v0: rng.random_range(0.01..3.0),
                ln_v0: 0.0,
                weight: rng.random_range(1.0..4.0),
                bed_m: if i % 3 == 1 { 0.006 * i as f32 } else { 0.0 },
                bed_weight: if i % 3 == 1 { 1.0 + i as f32 } else { 0.0 },
                spread: i % 2 == 0,
            })
            .collect();
        let bits = |p: &Prepared| {
            let mut v: Vec<u32> = Vec::new();
            for x in [p.ln_duration, p.cup_amplitude, p.cup_ln_duration] {
                v.extend(x.map(f32::to_bits));
            }
            v.extend(p.cup_row.map(|r| r as u32));
            for k in 0..2 {
                for x in [p.a0[k], p.a1[k], p.a2[k], p.pan[k]] {
                    v.extend(x.map(f32::to_bits));
                }
            }
            for k in 0..3 {
                v.extend(p.whole[k].map(|w| w as u32));
                v.extend(p.frac[k].map(f32::to_bits));
                v.extend(p.cell[k].map(|c| c as u32));
            }
            v.extend(p.row.map(|r| r as u32));
            v
        };
        // every copy against the engine's (the AVX-512 one where the CPU has it)
        let best = RenderContext {
            kernels: &e.kernels,
            p: params,
        }
        .prepare(&batch);
        assert!(best.a0[0].iter().any(|&x| x != 0.0), "the set-up computed nothing");
        for isa in simd::Isa::available() {
            let mut kernels = e.kernels.clone();
            kernels.set_isa(isa);
            let ctx = RenderContext {
                kernels: &kernels,
                p: params,
            };
            assert_eq!(bits(&best), bits(&ctx.prepare(&batch)), "{isa:?}");
        }
    }

    #[test]
    fn rendered_batches_are_the_same_bits_in_every_copy() {
        let mut e = Engine::new(Settings::default(), 48_000.0, 64);
        e.note_on(1.0, 60);
        let mut params = e.render_params();
        // near the rings' end, so that some pulses wrap around it
        params.base = e.grains_ring[0].len() as u64 - 60;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        let batch: Vec<Collision> = (0..BATCH)
            .map(|i| {
                let v0: f32 = rng.random_range(0.01..3.0);
                let grain_cup = i % 3 == 0;
                Collision {
                    time: rng.random_range(0.0..128.0),
                    kind: if grain_cup {
                        CollisionKind::GrainCup
                    } else {
                        CollisionKind::GrainGrain
                    },
                    cell: 0,
                    bus: if grain_cup { rng.random_range(0..CUP_BUSES) } else { 0 },
                    position: [0.0; 3].map(|_| rng.random_range(-0.04..0.04)),
                    normal: [0.6, 0.0, 0.8],
                    v0,
                    ln_v0: v0.ln(),
                    weight: rng.random_range(1.0..4.0),
                    bed_m: if i % 3 == 1 { 0.006 * i as f32 } else { 0.0 },
                    bed_weight: if i % 3 == 1 { 1.0 + i as f32 } else { 0.0 },
                    spread: i % 2 == 0,
                }
            })
            .collect();
        let render = |kernels: &PulseKernels| {
            let ctx = RenderContext { kernels, p: params };
            let (mut grains, mut cup, mut scratch) = (e.grains_ring.clone(), e.cup_ring.clone(), e.scratch.clone());
            ctx.render_batch(&batch, &ctx.prepare(&batch), &mut grains, &mut cup, &mut scratch);
            grains
                .iter()
                .chain(&cup)
                .flatten()
                .map(|x| x.to_bits())
                .collect::<Vec<u32>>()
        };
        // every fused copy against the engine's (the unfused one differs by rounding:
        // `kernels` tests)
        let best = render(&e.kernels);
        for isa in simd::Isa::available().filter(|isa| isa.fused()) {
            let mut kernels = e.kernels.clone();
            kernels.set_isa(isa);
            assert_eq!(best, render(&kernels), "{isa:?}");
        }
        let ring = e.grains_ring[0].len();
        let written = |range: std::ops::Range<usize>| best[range].iter().any(|&x| x != 0);
        assert!(
            written(0..60) && written(ring - 60..ring),
            "the pulses should wrap around the ring"
        );
    }
}
