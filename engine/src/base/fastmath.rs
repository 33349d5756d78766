//! Cheap transcendentals for the per-collision path, which must avoid libm's
//! transcendental functions.
//!
//! A pour renders up to hundreds of thousands of collisions per second, each needing a few
//! angles (its place and normal), a log-distributed speed and its contact duration. libm's
//! versions cost 20–100 ns each; these are polynomials of a few multiplies, accurate to a
//! few parts in 10^7 (tests below), far finer than anything they feed: random positions
//! and normals, and the choice of a kernel row. They use only IEEE multiplies and adds, so
//! they give the same bits on every machine.

use std::f32::consts::LN_2;

/// Nearest integer (ties to even) for |x| < 2^22, as a float and as an integer, without a
/// libm call (baseline x86-64 has no rounding instruction): adding and removing 1.5 * 2^23
/// rounds in the FPU. The integer is read from the bits of the sum that rounds (its unit is
/// the last mantissa bit), not converted: Rust's saturating float-to-integer `as` stays
/// scalar, with compares and branches, in the lane loops that call these functions.
///
/// The integer arithmetic here and in the functions below wraps (`wrapping_add`/`_sub`)
/// where its range is already bounded (here by |x| < 2^22, in `exp2` by the clamp, in
/// `sin_cos` by the quadrant's few bits): the same instructions and bits as a release
/// build, and no overflow check in the tests' build (debug assertions and overflow checks,
/// docs/testing.md), where a check that cannot fire kept the lane loops that call these
/// functions scalar, at half the speed.
#[inline(always)]
pub fn round_int(x: f32) -> (f32, i32) {
    const MAGIC: f32 = 12_582_912.0;
    let y = x + MAGIC;
    (y - MAGIC, (y.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32))
}

/// `floor(x)` as an integer, for 0 <= x < 2^24 (negative or NaN input gives 0, larger
/// input 2^24).
#[inline(always)]
pub fn floor_non_negative(x: f32) -> i32 {
    trunc_clamped(x, 16_777_216.0)
}

/// `x` clamped to `[0, hi]` (NaN to 0) and truncated to an integer; `hi` at most 2^24.
///
/// The same value as `x.clamp(0.0, hi) as i32`, but Rust's `as` saturates and maps NaN to
/// 0 for every input, which LLVM keeps as scalar conversions with compares and branches
/// even inside lane loops; here the clamp has already made the input finite and in range,
/// so a plain truncating conversion is exact and compiles to one packed instruction (the
/// renderer converts a whole batch of lanes at once).
#[inline(always)]
pub fn trunc_clamped(x: f32, hi: f32) -> i32 {
    debug_assert!((0.0..=16_777_216.0).contains(&hi));
    // `max` first: it maps NaN to 0 (`min` would map it to `hi`); the clamp (never given a
    // NaN here) keeps the result in [0, 2^24] whatever `hi` is, a no-op for a valid one
    let x = x.max(0.0).min(hi).clamp(0.0, 16_777_216.0);
    // SAFETY: `x` is finite and within [0, 2^24], so it is representable as an i32.
    unsafe { x.to_int_unchecked::<i32>() }
}

/// `(sin x, cos x)` for finite `x`; absolute error ~1e-6 for |x| < 20 (f32 reduction).
#[inline]
pub fn sin_cos(x: f32) -> (f32, f32) {
    // quadrant reduction: x = q pi/2 + r, |r| <= pi/4 (Cody–Waite, pi/2 in two parts)
    let (q, qi) = round_int(x * (2.0 / std::f32::consts::PI));
    let r = (x - q * 1.570_796_4) - q * (-4.371_139e-8);
    let r2 = r * r;
    // Taylor–minimax polynomials on [-pi/4, pi/4]
    let s = r * (1.0 + r2 * (-1.666_666_6e-1 + r2 * (8.333_307e-3 + r2 * (-1.980_741e-4 + r2 * 2.601_903e-6))));
    let c = 1.0 + r2 * (-0.5 + r2 * (4.166_664_6e-2 + r2 * (-1.388_731_6e-3 + r2 * 2.443_315_7e-5)));
    // quadrant q mod 4: odd quadrants swap sin and cos; sin is negated in quadrants 2 and
    // 3, cos in 1 and 2. Selected without branches: the arguments are random (azimuths,
    // pans), so a `match` here was mispredicted most of the time.
    let swap = qi & 1 != 0;
    let (a, b) = (if swap { c } else { s }, if swap { s } else { c });
    let sin_sign = ((qi & 2) as u32) << 30;
    let cos_sign = ((qi.wrapping_add(1) & 2) as u32) << 30;
    (
        f32::from_bits(a.to_bits() ^ sin_sign),
        f32::from_bits(b.to_bits() ^ cos_sign),
    )
}

/// `2^x` for x in roughly [-126, 127], relative error ~2e-7.
#[inline]
pub fn exp2(x: f32) -> f32 {
    let x = x.clamp(-126.0, 127.0);
    let (i, int) = round_int(x);
    let f = x - i; // [-0.5, 0.5]
                   // 2^f = e^(f ln 2): degree-6 Taylor in f ln 2 (error < 2e-7 for |f ln 2| < 0.35)
    let t = f * LN_2;
    let p = 1.0 + t * (1.0 + t * (0.5 + t * (1.0 / 6.0 + t * (1.0 / 24.0 + t * (1.0 / 120.0 + t * (1.0 / 720.0))))));
    p * f32::from_bits((int.wrapping_add(127) as u32) << 23)
}

/// `log2(x)` for positive normal `x`, absolute error ~3e-7; 0 or less gives -126.
#[inline]
pub fn log2(x: f32) -> f32 {
    if x.is_nan() || x < f32::MIN_POSITIVE {
        return -126.0;
    }
    let bits = x.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 127;
    // mantissa in [sqrt(1/2), sqrt(2))
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    if m > std::f32::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh(z), z = (m - 1) / (m + 1), |z| < 0.172
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let ln_m = 2.0 * z * (1.0 + z2 * (1.0 / 3.0 + z2 * (1.0 / 5.0 + z2 * (1.0 / 7.0 + z2 / 9.0))));
    e as f32 + ln_m * std::f32::consts::LOG2_E
}

/// `log2` of each of `x`, the same values, in a loop without branches that the compiler
/// runs in SIMD lanes (a bank's histograms take a logarithm of each bin's mass every window).
#[inline]
pub fn log2_each<const N: usize>(x: &[f32; N]) -> [f32; N] {
    let mut out = [0.0f32; N];
    for (o, &x) in out.iter_mut().zip(x) {
        let bits = x.to_bits();
        let e = ((bits >> 23) & 0xff) as i32 - 127;
        let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
        let high = m > std::f32::consts::SQRT_2;
        let m = if high { m * 0.5 } else { m };
        let e = if high { e + 1 } else { e };
        let z = (m - 1.0) / (m + 1.0);
        let z2 = z * z;
        let ln_m = 2.0 * z * (1.0 + z2 * (1.0 / 3.0 + z2 * (1.0 / 5.0 + z2 * (1.0 / 7.0 + z2 / 9.0))));
        let v = e as f32 + ln_m * std::f32::consts::LOG2_E;
        // NaN and below the normal range: `log2`'s -126 (`!(x >= MIN_POSITIVE)` holds for NaN)
        *o = if x >= f32::MIN_POSITIVE { v } else { -126.0 };
    }
    out
}

/// `ln x` (see `log2`).
#[inline]
pub fn ln(x: f32) -> f32 {
    log2(x) * LN_2
}

/// `e^x` (see `exp2`).
#[inline]
pub fn exp(x: f32) -> f32 {
    exp2(x * std::f32::consts::LOG2_E)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `log2_each` gives `log2`'s bits, through the mantissa's fold at sqrt 2, the normal
    /// range's end, zero, negative numbers, infinity and NaN.
    #[test]
    fn log2_each_is_log2() {
        // every exponent, random mantissas (xorshift32)
        let mut state = 0x2545_f491u32;
        let mut xs: Vec<f32> = (0..200_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                f32::from_bits(state)
            })
            .collect();
        xs.extend([
            0.0,
            -0.0,
            -1.0,
            f32::MIN_POSITIVE,
            f32::MIN_POSITIVE * 0.5,
            1.0,
            std::f32::consts::SQRT_2,
            f32::INFINITY,
            f32::NAN,
            f32::MAX,
            1e-4,
            0.707,
        ]);
        for c in xs.chunks(16) {
            let mut a = [0.0f32; 16];
            a[..c.len()].copy_from_slice(c);
            let got = log2_each(&a);
            for (x, g) in a.iter().zip(got) {
                assert_eq!(
                    g.to_bits(),
                    log2(*x).to_bits(),
                    "log2_each({x:e}) = {g}, log2 {}",
                    log2(*x)
                );
            }
        }
    }

    #[test]
    fn sin_cos_matches_libm() {
        let mut worst = 0.0f64;
        for i in -200_000..200_000 {
            let x = i as f32 * 1e-4;
            let (s, c) = sin_cos(x);
            let (rs, rc) = (x as f64).sin_cos();
            worst = worst.max((s as f64 - rs).abs()).max((c as f64 - rc).abs());
        }
        assert!(worst < 2e-6, "{worst}");
    }

    #[test]
    fn exp2_and_log2_match_libm() {
        let mut worst_e = 0.0f64;
        let mut worst_l = 0.0f64;
        for i in -40_000..40_000 {
            let x = i as f32 * 1e-3;
            let r = 2f64.powf(x as f64);
            worst_e = worst_e.max((exp2(x) as f64 / r - 1.0).abs());
            let y = 2f32.powf(x);
            worst_l = worst_l.max((log2(y) as f64 - (y as f64).log2()).abs());
        }
        assert!(worst_e < 5e-7, "exp2 {worst_e}");
        assert!(worst_l < 5e-7, "log2 {worst_l}");
        assert_eq!(log2(0.0), -126.0);
        assert_eq!(log2(f32::NAN), -126.0);
        assert!((ln(std::f32::consts::E) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn round_and_floor_match_std() {
        for i in -100_000..100_000 {
            let x = i as f32 * 0.013;
            assert_eq!(round_int(x).0, x.round_ties_even(), "{x}");
            assert_eq!(round_int(x).1, x.round_ties_even() as i32, "{x}");
            if x >= 0.0 {
                assert_eq!(floor_non_negative(x) as f32, x.floor(), "{x}");
            }
        }
        assert_eq!(floor_non_negative(-3.5), 0);
        assert_eq!(floor_non_negative(f32::NAN), 0);
        assert_eq!(floor_non_negative(f32::INFINITY), 1 << 24);
        for x in [
            -1e30,
            -2.5,
            -0.0,
            0.0,
            0.4,
            0.99,
            1.0,
            6.5,
            7.0,
            7.9,
            8.0,
            1e30,
            f32::NAN,
            f32::INFINITY,
        ] {
            assert_eq!(
                trunc_clamped(x, 7.0),
                if x.is_nan() { 0 } else { x.clamp(0.0, 7.0) as i32 },
                "{x}"
            );
        }
    }
}
