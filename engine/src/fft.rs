//! The workspace's real FFTs (realfft over rustfft), planned here and only here.
//!
//! rustfft's planner is generic over the sample type and pulls every butterfly and algorithm
//! it might choose into the crate that calls it: in an optimised build each calling crate
//! compiled its own copy (generics are not shared across crates there), and that copy was most
//! of the code of the command line (63 % of its LLVM IR) and of the plugin (53 %), and a large
//! part of every test crate that took a spectrum. These functions are not generic and not
//! inlined, so rustfft is compiled once, here, in `f64`, and every other crate calls it through
//! the plans' trait objects (which is how realfft hands plans out anyway). `f64` throughout:
//! the engine's own filters need it, and one sample type means one copy.

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

/// A forward and an inverse FFT of length `n`, from one planner (they share its twiddles).
#[inline(never)]
pub fn pair(n: usize) -> (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>) {
    let mut planner = realfft::RealFftPlanner::<f64>::new();
    (planner.plan_fft_forward(n), planner.plan_fft_inverse(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_returns_n_times_the_signal_and_a_cosine_lands_in_its_bin() {
        let n = 48;
        let (fwd, inv) = pair(n);
        let x: Vec<f64> = (0..n)
            .map(|i| (2.0 * std::f64::consts::PI * 5.0 * i as f64 / n as f64).cos())
            .collect();
        let mut input = x.clone();
        let mut spectrum = fwd.make_output_vec();
        fwd.process(&mut input, &mut spectrum).unwrap();
        assert_eq!(spectrum.len(), n / 2 + 1);
        for (k, s) in spectrum.iter().enumerate() {
            let want = if k == 5 { n as f64 / 2.0 } else { 0.0 };
            assert!((s.re - want).abs() < 1e-9 && s.im.abs() < 1e-9, "bin {k}: {s}");
        }
        let mut back = inv.make_output_vec();
        inv.process(&mut spectrum, &mut back).unwrap();
        for (a, b) in back.iter().zip(&x) {
            assert!((a / n as f64 - b).abs() < 1e-12);
        }
        assert_eq!(forward(n).len(), n);
        assert_eq!(inverse(n).len(), n);
    }
}
