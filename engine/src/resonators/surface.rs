//! The surface's own sound in the engine: every grain–surface impulse pushes the ground
//! (a force pulse in the surface ring, the same band-limited Hertz half-sine the cup gets),
//! and the ground radiates it to the listener through one filter, `Radiation`: the
//! pressure at the listener for a unit impulse on the ground, from `ground` (seed 002 eq.
//! 3 and 12: Lamb's problem radiated by the Rayleigh integral), band-limited to the audio
//! band and sampled at the engine's rate.
//!
//! Why one filter for every contact time: in seed 002 the contact time only enters through
//! the force's profile (eq. 10–11), and the response is linear in the force, so the
//! pressure is (force pulse) * (radiation impulse response). The paper's regularised
//! profile f_eps (eq. 9) is a smooth stand-in for the Hertz half-sine (§4.1); the engine
//! renders the half-sine itself, band-limited like every other pulse (`kernels`), and the
//! singularities that the regularisation removes are removed here by the band limit
//! (`tests/surface.rs` compares the two renderings).
//!
//! The filter depends on the surface material, the listener's place relative to where the
//! grains land and the sample rate (`RadiationKey`). Building it takes a few thousand
//! evaluations of the Rayleigh integral: at `Engine::new`, `reset` and a pour's start it is
//! built at once; when a setting changes during a pour it is built a few evaluations per
//! window (`G_PER_WINDOW`), deterministically, and swapped in when complete (until then the
//! previous filter plays). Nothing here allocates after `new`.

use crate::base::materials::{SurfaceMaterial, AIR_DENSITY};
use crate::base::simd::{Isa, Kernel, Target};
use crate::control::choices::PourTarget;
use crate::control::settings::Settings;
use crate::derived::Derived;
use crate::fft::{Complex64 as C, ComplexToReal, RealToComplex};
use crate::impact::kernels::pass_edge;
use crate::resonators::ground::{earliest_arrival, HalfSpace, Listener, RayleighPush};
use std::f64::consts::PI;
use std::sync::Arc;

/// Most taps of the radiation filter.
pub const MAX_TAPS: usize = 2048;
/// The Rayleigh integral is sampled at this many times the engine's rate.
const OVERSAMPLE: usize = 4;
/// Its grid: `MAX_TAPS` taps at the engine's rate.
const FINE: usize = OVERSAMPLE * MAX_TAPS;
/// Azimuths of the Rayleigh integral's quadrature in the engine (`ground::RayleighPush`).
pub const AZIMUTHS: usize = 48;
/// Evaluations of the Rayleigh integral per generator window while a filter is built
/// during a pour.
pub const G_PER_WINDOW: usize = 16;

/// What the radiation filter depends on: the surface, and the listener relative to where
/// grains land on it, in millimetres (finer changes do not rebuild it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RadiationKey {
    pub material: SurfaceMaterial,
    pub horizontal_mm: u32,
    pub height_mm: u32,
}

impl RadiationKey {
    /// The key for the settings (`Engine::derive`): the surface, and the listener relative to where grains land on it. Onto the surface: the heap's
    /// place, with the listener `listener_distance` from it at `listener_angle` from the
    /// vertical. From the cup: a ring around the cup (`window::Cell::Surface`), a
    /// quarter as far again as its widest radius from its axis, seen from the listener
    /// above a full cup (spills come when it is full): the horizontal distance is the
    /// root-mean-square over the ring.
    pub fn for_settings(s: &Settings, d: &Derived) -> RadiationKey {
        let (across, up) = (d.listener_across_m, d.listener_up_m);
        match s.pour_target {
            PourTarget::Surface => RadiationKey::new(s.surface_material, across, up),
            PourTarget::Cup => {
                let ring = 1.25 * d.cup.widest_radius();
                RadiationKey::new(s.surface_material, across.hypot(ring), d.cup.depth + up)
            }
        }
    }

    pub fn new(material: SurfaceMaterial, horizontal_m: f32, height_m: f32) -> Self {
        let mm = |x: f32| (x.max(0.0) * 1000.0).round().min(1e6) as u32;
        RadiationKey {
            material,
            horizontal_mm: mm(horizontal_m),
            height_mm: mm(height_m).max(10),
        }
    }

    fn listener(&self) -> Listener {
        Listener {
            horizontal_m: self.horizontal_mm as f64 * 1e-3,
            height_m: self.height_mm as f64 * 1e-3,
        }
    }
}

/// The filter from the ground's force (N, one sample per sample) to the pressure at the
/// listener (Pa), and its builder.
pub struct Radiation {
    fs: f64,
    /// The instruction set of the filter's loop (`simd`).
    isa: Isa,
    /// The filter's taps, in order, and how many.
    taps: Vec<f32>,
    len: usize,
    active: Option<RadiationKey>,
    /// The active filter's tap 0 is this many samples after the impulse (its bulk delay:
    /// up to 1 ms before the sound can first arrive, `ground::earliest_arrival`).
    delay: usize,
    /// The pending filter's.
    pending_delay: usize,
    /// The filter being built: its key, Rayleigh integral, samples so far and how many.
    pending: Option<(RadiationKey, RayleighPush)>,
    g: Vec<f64>,
    need: usize,
    done: usize,
    fwd: Arc<dyn RealToComplex<f64>>,
    inv: Arc<dyn ComplexToReal<f64>>,
    fine: Vec<f64>,
    spectrum: Vec<C>,
    coarse: Vec<C>,
    out: Vec<f64>,
    scratch: Vec<C>,
    /// The input's last `HISTORY` samples, twice (`hist[i]` = `hist[i + HISTORY]`), so that
    /// any `MAX_TAPS + BLOCK` of them in a row are one slice; where the next block goes;
    /// samples since the last non-zero one.
    hist: Vec<f32>,
    pos: usize,
    quiet: usize,
}

impl Radiation {
    /// Allocates everything; no filter yet (silence until `set` and a build). The filter's
    /// loop runs in the copy for `isa` (`simd`).
    pub fn new(sample_rate: f32, isa: Isa) -> Self {
        let fwd = crate::fft::forward(FINE);
        let inv = crate::fft::inverse(MAX_TAPS);
        let scratch_len = fwd.get_scratch_len().max(inv.get_scratch_len());
        Radiation {
            fs: sample_rate as f64,
            isa,
            taps: vec![0.0; MAX_TAPS],
            len: 0,
            active: None,
            delay: 0,
            pending_delay: 0,
            pending: None,
            g: vec![0.0; FINE + 1],
            need: 0,
            done: 0,
            fine: fwd.make_input_vec(),
            spectrum: fwd.make_output_vec(),
            coarse: inv.make_input_vec(),
            out: inv.make_output_vec(),
            scratch: vec![C::default(); scratch_len],
            fwd,
            inv,
            hist: vec![0.0; 2 * HISTORY + GROUP_AVX512],
            pos: 0,
            quiet: usize::MAX / 2,
        }
    }

    /// The filter's taps (Pa per N of force, one sample each), in order.
    pub fn taps(&self) -> impl Iterator<Item = f32> + '_ {
        self.taps[..self.len].iter().copied()
    }

    /// The filter's bulk delay, samples: its tap 0 is this long after the impulse.
    pub fn delay_samples(&self) -> usize {
        self.delay
    }

    /// Asks for the filter of `key`: nothing if it plays or is being built, else its build
    /// starts (`advance`, `complete`).
    pub fn set(&mut self, key: RadiationKey) {
        if self.pending.map(|p| p.0) == Some(key) {
            return;
        }
        if self.active == Some(key) {
            // back to the filter that plays: drop the one being built
            self.pending = None;
            return;
        }
        let ground = HalfSpace::from_elastic(key.material.data().elastic);
        let listener = key.listener();
        let push = RayleighPush::with_azimuths(&ground, listener, AZIMUTHS);
        // from up to 1 ms before the sound can first arrive, long enough for the Rayleigh
        // wave to pass beneath the listener (four times its travel time to there), at
        // least 6 ms
        let first = earliest_arrival(&ground, listener);
        self.pending_delay = ((first - 1e-3).max(0.0) * self.fs).floor() as usize;
        let start = self.pending_delay as f64 / self.fs;
        let span = first - start + (4.0 * listener.distance_m() / ground.rayleigh_speed()).max(6e-3);
        let dt = 1.0 / (OVERSAMPLE as f64 * self.fs);
        self.need = ((span / dt).ceil() as usize).clamp(64, FINE);
        self.done = 0;
        self.pending = Some((key, push));
    }

    /// Builds at most `budget` more samples of the pending filter; swaps it in when done.
    pub fn advance(&mut self, budget: usize) {
        let Some((key, push)) = self.pending else { return };
        let dt = 1.0 / (OVERSAMPLE as f64 * self.fs);
        let start = self.pending_delay as f64 / self.fs;
        let end = (self.done + budget).min(self.need + 1);
        for k in self.done..end {
            self.g[k] = push.at(start + k as f64 * dt);
        }
        self.done = end;
        if self.done == self.need + 1 {
            self.finish(key);
        }
    }

    /// Builds the pending filter to the end at once.
    pub fn complete(&mut self) {
        self.advance(usize::MAX / 2);
    }

    /// The filter from the samples of G: G' per sample, tapered over its last fifth, times
    /// rho0 w² / (2 pi) (seed 002 eq. 12 with the third time derivative of eq. 7 on the
    /// push response: `ground::ground_pressure`, for a unit impulse) and a raised-cosine
    /// band limit from the kernels' pass edge to Nyquist, then back at the engine's rate.
    fn finish(&mut self, key: RadiationKey) {
        let dt = 1.0 / (OVERSAMPLE as f64 * self.fs);
        let need = self.need;
        self.fine.fill(0.0);
        for k in 0..need {
            self.fine[k] = (self.g[k + 1] - self.g[k]) / dt;
        }
        let m = (need / 5).max(1);
        for i in 0..m {
            self.fine[need - m + i] *= 0.5 * (1.0 + (PI * (i as f64 + 0.5) / m as f64).cos());
        }
        let ok = self
            .fwd
            .process_with_scratch(&mut self.fine, &mut self.spectrum, &mut self.scratch)
            .is_ok();
        let nyquist = 0.5 * self.fs;
        let edge = pass_edge(self.fs) * self.fs;
        let rho0 = AIR_DENSITY as f64;
        for (i, c) in self.coarse.iter_mut().enumerate() {
            let f = i as f64 / (FINE as f64 * dt);
            let band = if f <= edge {
                1.0
            } else {
                0.5 * (1.0 + (PI * (f - edge) / (nyquist - edge)).cos())
            };
            let w = 2.0 * PI * f;
            *c = self.spectrum[i] * (rho0 * w * w / (2.0 * PI) * band / FINE as f64);
        }
        if let Some(last) = self.coarse.last_mut() {
            last.im = 0.0;
        }
        self.coarse[0].im = 0.0;
        let ok = ok
            && self
                .inv
                .process_with_scratch(&mut self.coarse, &mut self.out, &mut self.scratch)
                .is_ok();
        let mut len = (need / OVERSAMPLE + 8).min(MAX_TAPS);
        for k in 0..len {
            // Pa per N s, times one sample's duration: Pa per N of force held for a sample
            let tap = if ok { self.out[k] / self.fs } else { 0.0 };
            self.taps[k] = if tap.is_finite() { tap as f32 } else { 0.0 };
        }
        // the tail that holds less than `TAIL` of the energy goes (the span is generous:
        // a hard ground's response is over in a fraction of it)
        let total: f64 = self.taps[..len].iter().map(|&t| (t as f64) * (t as f64)).sum();
        let mut tail = 0.0;
        while len > 1 {
            let t = self.taps[len - 1] as f64;
            if tail + t * t > TAIL * total {
                break;
            }
            tail += t * t;
            len -= 1;
        }
        self.len = len;
        self.delay = self.pending_delay;
        self.active = Some(key);
        self.pending = None;
    }

    /// Clears the filter's memory of past input.
    pub fn clear(&mut self) {
        self.hist.fill(0.0);
        self.pos = 0;
        self.quiet = usize::MAX / 2;
    }

    /// Filters one block of `force` (N; at most `BLOCK` samples) into `out` (Pa, overwritten),
    /// in the copy of the engine's instruction set (`simd`; every copy gives the same bits as
    /// `process_scalar`). The engine runs it once per generator window, on the window's
    /// samples of the surface's force bus, which are final at the window's start (every
    /// collision lands a window or more after it is generated, `GENERATOR_LEAD`): so the
    /// output does not depend on the host's blocks.
    pub fn process(&mut self, force: &[f32], out: &mut [f32]) {
        let isa = self.isa;
        isa.run(Filter { r: self, force, out });
    }

    /// `process`, in plain scalar code: for each sample, the sum over the taps in order,
    /// tap k times the input k samples before. The test reference of the copies (`tests`).
    pub fn process_scalar(&mut self, force: &[f32], out: &mut [f32]) {
        let n = self.record(force, out.len());
        let base = self.pos + HISTORY - n;
        for (t, y) in out[..n].iter_mut().enumerate() {
            let mut sum = 0.0f32;
            for k in 0..self.len {
                sum += self.taps[k] * self.hist[base + t - k];
            }
            *y = if self.quiet >= self.len + n { 0.0 } else { sum };
        }
    }

    /// Records a block of input; returns its length (at most `BLOCK` and `out_len`). After
    /// it, `hist[pos + HISTORY - n + t]` is the block's sample t, and the `MAX_TAPS` before it
    /// are the samples before the block.
    #[inline(always)]
    fn record(&mut self, force: &[f32], out_len: usize) -> usize {
        let n = force.len().min(out_len).min(BLOCK);
        // the block in two pieces where it wraps, each into both copies of the history
        let (p, first) = (self.pos, n.min(HISTORY - self.pos));
        for (from, to, len) in [(0, p, first), (first, 0, n - first)] {
            self.hist[to..to + len].copy_from_slice(&force[from..from + len]);
            self.hist[to + HISTORY..to + HISTORY + len].copy_from_slice(&force[from..from + len]);
        }
        self.pos = (p + n) & (HISTORY - 1);
        // samples since the last that is not ±0 (NaN is not)
        self.quiet = match force[..n].iter().rposition(|&x| x != 0.0) {
            Some(last) => n - 1 - last,
            None => self.quiet.saturating_add(n),
        };
        n
    }
}

/// Samples of input the filter keeps (a power of two, at least `MAX_TAPS + BLOCK`).
const HISTORY: usize = 4096;
/// The longest block `Radiation::process` takes (the generator's window).
pub const BLOCK: usize = crate::base::window::WINDOW;
/// Output samples computed together (their sums held in registers across the taps): in the
/// AVX-512 copy, whose 32 registers hold a whole window's 128 sums (8 vectors; the sums'
/// chains of additions then overlap enough to keep the adders busy: the default preset
/// 1.05x over 20 s against 32 at a time, side by side), else 32 (4 AVX vectors, 8 SSE ones).
const GROUP: usize = 32;
const GROUP_AVX512: usize = 128;
/// The filter's tail is cut where less than this share of its energy is left (−80 dB).
const TAIL: f64 = 1e-8;
const _: () = assert!(
    HISTORY.is_power_of_two()
        && HISTORY >= MAX_TAPS + BLOCK
        && BLOCK.is_multiple_of(GROUP)
        && BLOCK.is_multiple_of(GROUP_AVX512)
        && GROUP_AVX512 >= GROUP
);

/// `Radiation::process` as a `simd::Kernel`.
struct Filter<'a> {
    r: &'a mut Radiation,
    force: &'a [f32],
    out: &'a mut [f32],
}

impl Kernel for Filter<'_> {
    type Output = ();
    const HAS_AVX512: bool = true;
    #[inline(always)]
    fn run<T: Target>(self, _: T) {
        let Filter { r, force, out } = self;
        let n = r.record(force, out.len());
        let len = r.len;
        let out = &mut out[..n];
        if r.quiet >= len + n || len == 0 {
            out.fill(0.0);
            return;
        }
        let base = r.pos + HISTORY - n;
        let (taps, hist) = (&r.taps[..len], &r.hist[..]);
        if T::AVX512 {
            convolve::<GROUP_AVX512>(taps, hist, base, out);
        } else {
            convolve::<GROUP>(taps, hist, base, out);
        }
    }
}

/// `out[t]` = the sum over the taps in order of tap k times `hist[base + t - k]`, `G` outputs
/// at a time (as the scalar reference: products and sums unfused, in the same order; `hist`
/// holds `G` samples past `base + out.len()`, read and dropped by a last short group).
#[inline(always)]
fn convolve<const G: usize>(taps: &[f32], hist: &[f32], base: usize, out: &mut [f32]) {
    let n = out.len();
    let mut t0 = 0;
    while t0 < n {
        let m = (n - t0).min(G);
        let mut acc = [0.0f32; G];
        for (k, &h) in taps.iter().enumerate() {
            let x = &hist[base + t0 - k..base + t0 - k + G];
            for j in 0..G {
                acc[j] += h * x[j];
            }
        }
        out[t0..t0 + m].copy_from_slice(&acc[..m]);
        t0 += m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The history holds the input as a ring, mirrored, through many wraps, and `quiet`
    /// counts the samples since the last that was not ±0 (NaN counts as a sample).
    #[test]
    fn the_history_is_the_input_in_order() {
        let mut r = Radiation::new(48_000.0, Isa::baseline());
        let mut all = Vec::new();
        let mut rng = 0x2545_f491u32;
        for block in 0..150 {
            let len = [BLOCK, 1, 37, 100, 128][block % 5];
            let force: Vec<f32> = (0..len)
                .map(|i| {
                    rng = crate::resonators::diffuse::xorshift(rng);
                    match (block / 7) % 3 {
                        0 => 0.0,
                        1 if i % 40 == 3 => -0.0,
                        1 if i == len / 2 && block % 2 == 0 => f32::NAN,
                        _ => rng as f32 / u32::MAX as f32 - 0.5,
                    }
                })
                .collect();
            assert_eq!(r.record(&force, usize::MAX), len);
            all.extend_from_slice(&force);
            let last = r.pos + HISTORY - 1;
            for k in 0..HISTORY.min(all.len()) {
                let want = all[all.len() - 1 - k].to_bits();
                assert_eq!(r.hist[last - k].to_bits(), want, "block {block}, {k} back");
                assert_eq!(r.hist[(last - k) % HISTORY].to_bits(), want, "the mirror");
            }
            let zeros = all.iter().rev().take_while(|&&x| x == 0.0).count();
            let want = if zeros == all.len() {
                usize::MAX / 2 + zeros
            } else {
                zeros
            };
            assert_eq!(r.quiet, want, "block {block}");
        }
        assert!(all.len() > 2 * HISTORY);
    }

    /// Every copy of the filter's loop gives the scalar reference's bits, on input with
    /// silent gaps (and a last block shorter than the others).
    #[test]
    fn every_copy_is_the_scalar_filter() {
        let key = RadiationKey::new(SurfaceMaterial::Wood, 0.1, 0.3);
        let input: Vec<f32> = (0..3010)
            .map(|i| {
                if (i / 700) % 2 == 0 {
                    ((i * 7919) % 101) as f32 / 50.0 - 1.0
                } else {
                    0.0
                }
            })
            .collect();
        let mut want = vec![0.0; input.len()];
        let mut reference = Radiation::new(48_000.0, Isa::baseline());
        reference.set(key);
        reference.complete();
        for (x, y) in input.chunks(BLOCK).zip(want.chunks_mut(BLOCK)) {
            reference.process_scalar(x, y);
        }
        assert!(want.iter().any(|&y| y != 0.0));
        for isa in Isa::available() {
            let mut r = Radiation::new(48_000.0, isa);
            r.set(key);
            r.complete();
            let mut got = vec![0.0; input.len()];
            for (x, y) in input.chunks(BLOCK).zip(got.chunks_mut(BLOCK)) {
                r.process(x, y);
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            assert!(bits(&got) == bits(&want), "{:?}", isa.level());
        }
    }
}
