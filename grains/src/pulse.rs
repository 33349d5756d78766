//! The acceleration pulse psi(t; h) of seed 001 eq. 17 and its running integral.
//!
//! The extracted eq. 17 reads `psi = 1/18 (-15 y^3 + 18 y^2 + 9 y + 2)` for `|t| <= h`,
//! `1/18 (5 (1+y)^3 - 3 (1+y)^2)` for `h <= |t| <= 2h`, 0 otherwise, "with y = 1 - |t|".
//! For the two pieces to meet (`2/18` at `|t| = h` on both sides) and for `psi(.; h)` to have
//! the time scale `h`, `y` must be `1 - |t|/h`: the `/h` was lost in extraction. Expanded in
//! `x = |t|/h` the pieces are the Mitchell–Netravali cubic with `B = 2/3`, `C = 1/6` (not the
//! often-quoted `B = C = 1/3`): `(1/6)[(12-9B-6C) x^3 + (-18+12B+6C) x^2 +
//! (6-2B)]` gives `(1/18)(-15 y^3 + 18 y^2 + 9 y + 2)` and the outer piece gives
//! `(1/18)(5 u^3 - 3 u^2)` with `u = 2 - x`, term for term. We take the formula as printed
//! (it is what the paper computed with). Its integral is `h` and its integer shifts sum to 1
//! (tests below), which is what eq. 18–19 and eq. 22 need.

/// seed 001 eq. 17: psi(t; h), dimensionless (used as an acceleration in m/s^2 per unit, or
/// as an interpolation kernel with `h = dt`). `h > 0` in s.
pub fn psi(t: f64, h: f64) -> f64 {
    debug_assert!(h > 0.0);
    let x = t.abs() / h;
    if x <= 1.0 {
        let y = 1.0 - x;
        (-15.0 * y * y * y + 18.0 * y * y + 9.0 * y + 2.0) / 18.0
    } else if x <= 2.0 {
        let u = 2.0 - x; // = 1 + y
        (5.0 * u * u * u - 3.0 * u * u) / 18.0
    } else {
        0.0
    }
}

/// Support half-width of psi(.; h): `2h`, s.
pub fn support(h: f64) -> f64 {
    2.0 * h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_meet_and_vanish_at_the_ends() {
        let h = 3e-6;
        assert!((psi(h * (1.0 - 1e-12), h) - psi(h * (1.0 + 1e-12), h)).abs() < 1e-9);
        assert!((psi(h, h) - 2.0 / 18.0).abs() < 1e-12);
        assert!(psi(2.0 * h, h).abs() < 1e-12);
        assert!((psi(0.0, h) - 14.0 / 18.0).abs() < 1e-12);
        // C1: one-sided slopes agree at |t| = h
        let e = 1e-6 * h;
        let left = (psi(h, h) - psi(h - e, h)) / e;
        let right = (psi(h + e, h) - psi(h, h)) / e;
        assert!((left - right).abs() < 1e-3 / h, "{left} {right}");
    }

    #[test]
    fn integral_is_h_and_shifts_sum_to_one() {
        let h = 2e-6;
        let n = 40_000;
        let dt = 4.0 * h / n as f64;
        let integral: f64 = (0..n).map(|i| psi(-2.0 * h + (i as f64 + 0.5) * dt, h) * dt).sum();
        assert!((integral / h - 1.0).abs() < 1e-6, "{integral}");
        for k in 0..10 {
            let t = 0.137 * k as f64 * h;
            let s: f64 = (-4..=4).map(|j| psi(t - j as f64 * h, h)).sum();
            assert!((s - 1.0).abs() < 1e-12, "{t}: {s}");
        }
    }
}
