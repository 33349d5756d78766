//! The workspace's real FFTs (realfft over rustfft), planned here and only here; the engine
//! re-exports this crate as `granary_engine::fft`.
//!
//! rustfft's planner is generic over the sample type and pulls every butterfly and algorithm
//! it might choose (for `f32` and `f64` both: it picks by type at run time) into the crate that
//! calls it: in an optimised build each calling crate compiled its own copy (generics are not
//! shared across crates there), and that copy was most of the code of the command line (63 %
//! of its LLVM IR) and of the plugin (53 %), a third of the engine's, and a large part of every
//! test crate that took a spectrum. These functions are not generic and not inlined, so
//! rustfft is compiled once, in this crate of its own (not in the engine, whose unit tests
//! are a second build of the whole engine), and every other crate calls it through the plans'
//! trait objects (which is how realfft hands plans out anyway). `f64` throughout: the engine's
//! own filters need it, and one sample type means one copy.

use std::sync::Arc;

pub use realfft::num_complex::{Complex, Complex64};
pub use realfft::{ComplexToReal, RealToComplex};

/// A forward real FFT of length `n` (`n` real samples to `n/2 + 1` complex bins, unscaled).
#[inline(never)]
pub fn forward(n: usize) -> Arc<dyn RealToComplex<f64>> {
    realfft::RealFftPlanner::<f64>::new().plan_fft_forward(n)
}

/// An inverse real FFT of length `n` (`n/2 + 1` complex bins to `n` real samples, unscaled:
/// `inverse(forward(x)) = n·x`).
#[inline(never)]
pub fn inverse(n: usize) -> Arc<dyn ComplexToReal<f64>> {
    realfft::RealFftPlanner::<f64>::new().plan_fft_inverse(n)
}

/// A forward and an inverse FFT of length `n`, planned together.
#[inline(never)]
pub fn pair(n: usize) -> (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>) {
    let mut planner = realfft::RealFftPlanner::<f64>::new();
    (planner.plan_fft_forward(n), planner.plan_fft_inverse(n))
}
