//! Which vector instructions the audio path may use.
//!
//! The hot loops (`modal::ModalBank::process`, `diffuse::DiffuseResonator::process`, the
//! renderer's batched set-up `RenderContext::prepare`, the generator's batched lane
//! arithmetic `generator::finish_lanes`) are written over fixed-size lane arrays that the compiler vectorises; on x86-64
//! they are compiled twice, for the baseline (SSE2) and for AVX with FMA, and the AVX copy
//! is chosen at run time where the CPU has both (`kernels::splat_avx`, the pulses' pass
//! into the rings, is written with `std::arch` intrinsics instead, and inlined into the AVX
//! copy of the render loop, `RenderContext::render_batch_avx`). The modal bank, the
//! renderer's set-up and the generator's lanes have a third copy for AVX-512
//! (`has_avx512`): 32 registers that hold all the bank's lane groups at once, and a batch of
//! 16 collisions in one vector.
//!
//! Every copy does the same IEEE operations in the same order, so their samples are
//! identical: same seed, same events, same output. The two loops that are mostly
//! multiply-adds, the modal bank and the pulses' pass into the rings, fuse them (`madd`:
//! one rounding, and half the instructions) in every copy that runs on a CPU with FMA:
//! the AVX and AVX-512 copies, and the baseline copy where the target always has FMA
//! (`BASELINE_FUSED`: 64-bit ARM, or an x86-64 build for such CPUs). So the output is the
//! same on every machine with FMA (every x86-64 with AVX2, since 2013, and every 64-bit
//! ARM); an x86-64 CPU without it (older, or a low-power Atom) runs the baseline copy
//! unfused, whose samples differ from those by rounding (a test bounds the difference).

/// True where the AVX copies of the hot loops may run: AVX and FMA (checked once, at
/// construction of the engine's parts, never in `process`).
pub fn has_avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True where the AVX-512 copies may run (AVX-512 F and VL: 32 vector registers, 16-lane
/// vectors, on top of `has_avx`); checked once, like `has_avx`. Those copies keep the same
/// IEEE operations in the same order, so their samples equal the AVX copies'.
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx() && std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the baseline copies fuse their multiply-adds (`madd`): where every CPU the
/// build targets has FMA, so `f32::mul_add` is one instruction (64-bit ARM; x86-64 built
/// with FMA enabled). Elsewhere `mul_add` would be a slow library call, so they do not.
pub const BASELINE_FUSED: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));

/// `a * b + c`: fused, with one rounding (`f32::mul_add`), where `FUSED`; else a product
/// and a sum, two roundings.
#[inline(always)]
pub fn madd<const FUSED: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FUSED {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// `dst[k] += gain * src[k]` over the shorter slice, in the AVX copy where `avx`.
#[inline]
pub fn add_scaled(dst: &mut [f32], src: &[f32], gain: f32, avx: bool) {
    #[cfg(target_arch = "x86_64")]
    if avx {
        // SAFETY: callers pass `avx` from `has_avx`.
        unsafe { add_scaled_avx(dst, src, gain) };
        return;
    }
    add_scaled_lanes(dst, src, gain);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn add_scaled_avx(dst: &mut [f32], src: &[f32], gain: f32) {
    add_scaled_lanes(dst, src, gain);
}

#[inline(always)]
fn add_scaled_lanes(dst: &mut [f32], src: &[f32], gain: f32) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    for k in 0..n {
        dst[k] += gain * src[k];
    }
}
