//! Which vector instructions the audio path may use.
//!
//! The hot loops (`modal::ModalBank::process`, `diffuse::DiffuseResonator::process`, the
//! renderer's batched set-up `RenderContext::prepare`, the generator's batched sines and
//! cosines) are written over fixed-size lane arrays that the compiler vectorises; on x86-64
//! they are compiled twice, for the baseline (SSE2) and for AVX, and the AVX copy is chosen
//! at run time where the CPU has it (`kernels::splat_avx`, the pulses' pass into the rings,
//! is written with `std::arch` intrinsics instead). The modal bank and the renderer's set-up
//! have a third copy for AVX-512 (`has_avx512`): 32 registers that hold all the bank's lane
//! groups at once, and a batch of 16 collisions in one vector. Every copy
//! does the same IEEE operations in the same order (no fused multiply-add), so their
//! samples are identical: same seed, same events, same output on any x86-64 machine.

/// True where the AVX copies of the hot loops may run (checked once, at construction of
/// the engine's parts, never in `process`).
pub fn has_avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True where the AVX-512 copies may run (AVX-512 F and VL: 32 vector registers, 16-lane
/// vectors); checked once, like `has_avx`. Those copies keep the same IEEE operations in
/// the same order, so their samples equal the other copies'.
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
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
