//! Which vector instructions the audio path may use: chosen once, here.
//!
//! `Isa::detect` asks the CPU once, when the engine is built (`Engine::new`), and the
//! result is handed to each unit's constructor (`ModalBank::new(sample_rate, isa)`,
//! `DiffuseResonator::new`, `PulseKernels::new`, `generator::Shapes::new`); `process`
//! never asks again. The hot loops are written once, generic over a `Target` (what the
//! copy may use: fused multiply-adds, AVX intrinsics, AVX-512), as a `Kernel`;
//! `Isa::run` is the one dispatch point: it runs the kernel's copy compiled for the
//! chosen instruction set. The two `#[target_feature]` attributes of the crate are the
//! two functions below (`run_avx`, `run_avx512`), so every copy is compiled for the same
//! feature sets:
//!
//! - `Level::Portable`, `Level::PortableFused`: the baseline (SSE2 on x86-64), its
//!   multiply-adds unfused or fused;
//! - `Level::Avx`: AVX and FMA (`AVX_FEATURES`);
//! - `Level::Avx512`: AVX-512 F and VL on top (`AVX512_FEATURES`): 32 registers that hold
//!   all the modal bank's lane groups at once, and a batch of 16 collisions in one vector.
//!   Kernels that gain nothing from it (`Kernel::HAS_AVX512` false) run their AVX copy.
//!
//! The kernels: the modal bank (`modal::ModalBank::process`), the diffuse resonator
//! (`diffuse::DiffuseResonator::process`), the generator's lane arithmetic
//! (`generator::lanes::finish_lanes`), the renderer's batched set-up
//! (`batch::RenderContext::prepare_into`) and its pass into the rings
//! (`RenderContext::render_batch`, into whose AVX copy the kernels' `std::arch` pass
//! `kernels::splat_avx_in` is inlined), the surface's radiation filter
//! (`surface::Radiation::process`), and the engine's span as a whole (`Engine::span`: the
//! mix, the limiter and the cup's small filters, plain code compiled for AVX; its copies do
//! the same operations, so the same bits). The first three and the kernels' pass each sit
//! beside a plain scalar version, and a test runs every copy this CPU has
//! (`Isa::available`) against it; the renderer's copies are tested against each other
//! (`batch`), and a test renders a pour through the whole engine in every copy.
//!
//! Every copy does the same IEEE operations in the same order, so their samples are
//! identical: same seed, same events, same output. The two loops that are mostly
//! multiply-adds, the modal bank and the pulses' pass into the rings, fuse them (`madd`:
//! one rounding, and half the instructions) in every copy that runs on a CPU with FMA:
//! the AVX and AVX-512 copies, and the baseline copy where the target always has FMA
//! (`BASELINE_FUSED`: 64-bit ARM, or an x86-64 build for such CPUs). So the output is the
//! same on every machine with FMA (every x86-64 with AVX2, since 2013, and every 64-bit
//! ARM); an x86-64 CPU without it (older, or a low-power Atom) runs the baseline copy
//! unfused, whose samples differ from those by rounding (tests bound the difference).
//!
//! Why not the `multiversion` crate (0.8): it compiles a function for a list of targets
//! and runs the best one the CPU has, choosing at each call (through a function pointer
//! set on first use, or a cached feature check for generic functions). A test cannot run
//! a chosen copy: its clones are private and the choice is the CPU's, so on an AVX-512
//! machine the portable and AVX copies could not be compared bit for bit with the
//! AVX-512 one, nor the whole engine run in each; the choice is made per function and
//! call, not once per engine; and it does not take functions that use `self` (since
//! 0.7), which each unit's `process` is. (Its static dispatch inside a multiversioned
//! caller would keep the renderer's inlined AVX pass; the other two points stand.) What it
//! would replace here is the two attributes below and the `match` in `Isa::run`.

/// The instruction-set levels the hot loops are compiled for, slowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The baseline, multiply-adds as a product and a sum (two roundings).
    Portable,
    /// The baseline, multiply-adds fused (`f32::mul_add`; a slow library call on an
    /// x86-64 CPU without FMA, so the engine picks it only where `BASELINE_FUSED`).
    PortableFused,
    /// AVX and FMA (`AVX_FEATURES`).
    Avx,
    /// AVX-512 F and VL, AVX and FMA (`AVX512_FEATURES`).
    Avx512,
}

/// The features of the AVX copies (the string of `run_avx`'s `#[target_feature]`).
pub const AVX_FEATURES: &str = "avx,fma";
/// The features of the AVX-512 copies (the string of `run_avx512`'s `#[target_feature]`).
pub const AVX512_FEATURES: &str = "avx,fma,avx512f,avx512vl";

/// An instruction-set level this CPU runs: only `Isa::detect`, `Isa::new` and
/// `Isa::available` make one, each after asking the CPU, so holding an `Isa` is the
/// proof that its copies may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Isa(Level);

impl Isa {
    /// The fastest level this CPU has: asked once, in `Engine::new` (never in `process`).
    pub fn detect() -> Isa {
        [Level::Avx512, Level::Avx]
            .into_iter()
            .find_map(Isa::new)
            .unwrap_or_else(Isa::baseline)
    }

    /// The baseline copy this build runs where the CPU has no AVX: fused where every CPU
    /// the build targets has FMA (`BASELINE_FUSED`).
    pub fn baseline() -> Isa {
        Isa(if BASELINE_FUSED {
            Level::PortableFused
        } else {
            Level::Portable
        })
    }

    /// `level`, if this CPU runs it (the portable levels everywhere).
    pub fn new(level: Level) -> Option<Isa> {
        let has = |feature: &str| -> bool {
            #[cfg(target_arch = "x86_64")]
            {
                match feature {
                    "avx" => std::arch::is_x86_feature_detected!("avx"),
                    "fma" => std::arch::is_x86_feature_detected!("fma"),
                    "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
                    "avx512vl" => std::arch::is_x86_feature_detected!("avx512vl"),
                    _ => false,
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                let _ = feature;
                false
            }
        };
        let ok = match level {
            Level::Portable | Level::PortableFused => true,
            Level::Avx => AVX_FEATURES.split(',').all(has),
            Level::Avx512 => AVX512_FEATURES.split(',').all(has),
        };
        ok.then_some(Isa(level))
    }

    /// Every level this CPU runs, slowest first (tests run each copy of a kernel).
    pub fn available() -> impl Iterator<Item = Isa> {
        [Level::Portable, Level::PortableFused, Level::Avx, Level::Avx512]
            .into_iter()
            .filter_map(Isa::new)
    }

    pub fn level(self) -> Level {
        self.0
    }

    /// Whether this level's copies fuse their multiply-adds (`madd`).
    pub fn fused(self) -> bool {
        self.0 != Level::Portable
    }

    /// Runs `kernel`'s copy for this level: the one dispatch point of the hot loops.
    #[inline]
    pub fn run<K: Kernel>(self, kernel: K) -> K::Output {
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: an `Isa` of this level exists only where the CPU has its features.
            Level::Avx512 if K::HAS_AVX512 => unsafe { run_avx512(kernel) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above (AVX-512 includes AVX and FMA).
            Level::Avx | Level::Avx512 => unsafe { run_avx(kernel) },
            Level::Portable => kernel.run(Portable),
            _ => kernel.run(PortableFused),
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
fn run_avx<K: Kernel>(kernel: K) -> K::Output {
    kernel.run(Avx(()))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma,avx512f,avx512vl")]
fn run_avx512<K: Kernel>(kernel: K) -> K::Output {
    kernel.run(Avx512(()))
}

// the attributes take literals only: the constants are checked against them here
const _: () = assert!(const_str_eq(AVX_FEATURES, "avx,fma"));
const _: () = assert!(const_str_eq(AVX512_FEATURES, "avx,fma,avx512f,avx512vl"));

/// `a == b`, at compile time.
const fn const_str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A hot loop, written once over a `Target` and run by `Isa::run` in the copy compiled
/// for the engine's instruction set. `run` must be `#[inline(always)]`, so that its body
/// is compiled into that copy.
pub trait Kernel {
    type Output;
    /// Whether the kernel has an AVX-512 copy (else AVX-512 CPUs run its AVX copy).
    const HAS_AVX512: bool = false;
    fn run<T: Target>(self, target: T) -> Self::Output;
}

/// What the copy a kernel runs in may use. A value of an AVX target exists only inside
/// that copy's dispatch (`Isa::run`), where the CPU has the features.
pub trait Target: Copy {
    /// Multiply-adds fuse (`madd`).
    const FUSED: bool;
    /// The code is compiled with AVX and FMA: `std::arch` AVX intrinsics inline into it.
    const AVX: bool;
    /// The code is compiled with AVX-512 F and VL as well.
    const AVX512: bool;
}

/// The baseline copy, unfused.
#[derive(Clone, Copy, Debug)]
pub struct Portable;
/// The baseline copy, fused.
#[derive(Clone, Copy, Debug)]
pub struct PortableFused;
/// The AVX copy (made only by `Isa::run`).
#[derive(Clone, Copy, Debug)]
pub struct Avx(());
/// The AVX-512 copy (made only by `Isa::run`).
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

impl Target for Portable {
    const FUSED: bool = false;
    const AVX: bool = false;
    const AVX512: bool = false;
}
impl Target for PortableFused {
    const FUSED: bool = true;
    const AVX: bool = false;
    const AVX512: bool = false;
}
impl Target for Avx {
    const FUSED: bool = true;
    const AVX: bool = true;
    const AVX512: bool = false;
}
impl Target for Avx512 {
    const FUSED: bool = true;
    const AVX: bool = true;
    const AVX512: bool = true;
}

/// Whether the baseline copies fuse their multiply-adds (`madd`): where every CPU the
/// build targets has FMA, so `f32::mul_add` is one instruction (64-bit ARM; x86-64 built
/// with FMA enabled). Elsewhere `mul_add` would be a slow library call, so they do not.
pub const BASELINE_FUSED: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));

/// `a * b + c`: fused, with one rounding (`f32::mul_add`), in the copies of a `Target`
/// that fuses; else a product and a sum, two roundings.
#[inline(always)]
pub fn madd<T: Target>(a: f32, b: f32, c: f32) -> f32 {
    if T::FUSED {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Whether every sample of `x` is ±0 (NaN and the infinities are not): the bits without the
/// sign OR-ed over the slice, a lane loop with no early exit (packed SIMD).
#[inline(always)]
pub fn all_zero(x: &[f32]) -> bool {
    x.iter().fold(0u32, |a, &v| a | (v.to_bits() << 1)) == 0
}

/// `dst[k] += gain * src[k]` over the shorter slice: a lane loop, compiled into the copy
/// of the kernel that calls it (`batch::RenderContext::render_batch`).
#[inline(always)]
pub fn add_scaled(dst: &mut [f32], src: &[f32], gain: f32) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    for k in 0..n {
        dst[k] += gain * src[k];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_picks_the_fastest_level_this_cpu_has() {
        let all: Vec<Level> = Isa::available().map(Isa::level).collect();
        assert_eq!(all[..2], [Level::Portable, Level::PortableFused]);
        let best = all.iter().copied().filter(|&l| l >= Level::Avx).max();
        assert_eq!(Isa::detect().level(), best.unwrap_or(Isa::baseline().level()));
        assert_eq!(Isa::detect().fused(), Isa::detect().level() != Level::Portable);
    }

    #[test]
    fn every_copy_renders_the_same_bits_through_the_whole_engine() {
        use crate::{Engine, Outputs, Settings};
        // a pour with its cup ringing, in blocks of odd lengths, in every fused copy (the
        // unfused one differs by rounding: the `modal` and `kernels` tests)
        let render = |isa: Isa| {
            let mut e = Engine::with_isa(Settings::default(), 48_000.0, 512, isa);
            e.note_on(1.0, 60);
            let frames = 24_000;
            let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; frames]);
            let mut a = 0;
            for block in [512, 37, 128, 1, 300].into_iter().cycle() {
                let b = (a + block).min(frames);
                let [ml, mr, gl, gr, cl, cr] = &mut out;
                e.process(Outputs {
                    main: [&mut ml[a..b], &mut mr[a..b]],
                    grains: [&mut gl[a..b], &mut gr[a..b]],
                    cup: [&mut cl[a..b], &mut cr[a..b]],
                    surface: None,
                    friction: None,
                });
                a = b;
                if a == frames {
                    break;
                }
            }
            out.map(|c| c.iter().map(|x| x.to_bits()).collect::<Vec<u32>>())
        };
        let want = render(Isa::detect());
        for stem in &want {
            assert!(stem.iter().any(|&x| f32::from_bits(x) != 0.0), "a stem is silent");
        }
        for isa in Isa::available().filter(|isa| isa.fused()) {
            assert!(want == render(isa), "{isa:?}");
        }
    }
}
