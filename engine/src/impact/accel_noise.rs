//! Acceleration noise of a rigid sphere (thesis eq. 4.1–4.2, after Koss & Alfredson).
//!
//! Eq. 4.1–4.2 are the time-domain response of a sphere of radius `a` whose surface
//! acceleration is a half-sine of peak `a_m`. The extracted text is garbled, so the
//! equations were re-derived from the linear acoustics of a translating rigid sphere
//! (Laplace variable `s`, acceleration `A(s)`):
//!
//! ```text
//! p(r, theta, s) = rho0 a^3 cos(theta) / (2 r^2) * A(s) * (1 + s r / c)
//!                  * B(s) * exp(-s (r - a) / c),   B(s) = 2 l^2 / (s^2 + 2 l s + 2 l^2),  l = c / a
//! ```
//!
//! This reproduces every structural feature of eq. 4.1–4.2: the `l = c/a` terms
//! `e^{-l t'} cos(l t')`, the `(b^4 + 4 l^4)` denominators (partial fractions of
//! `(s^2 + b^2)(s^2 + 2ls + 2l^2)`), the `2r/a` far-field factor, the retarded time
//! `t' = t - (r-a)/c`, and the near-field limit `rho0 a^3 a_m cos(theta) sin(b t') / (2 r^2)`
//! (eq. 4.1's last term). `B` is a 2nd-order Butterworth low-pass at `sqrt(2) c / a`, unit
//! gain at DC. The renderer (`collision`) therefore splits the sound into
//! a band-limited pulse (`kernels`) weighted by the near-field amplitude, its derivative
//! weighted by `r/c` times that amplitude, and one shared `B` filter per output channel
//! (`SphereFilter`), since every grain in a pour has the same radius.

use crate::base::materials::{AIR_DENSITY, SPEED_OF_SOUND};

/// Amplitudes `(a0, a1)` for the kernels `g0` (pulse, 1/s) and `g1` (its derivative, 1/s^2)
/// of one sphere: `a0 = rho0 a^3 cos(theta) dv / (2 r^2)` (Pa s), `a1 = a0 r / c` (Pa s^2),
/// where `dv` is the sphere's velocity change (the area under its acceleration, j / m).
#[inline]
pub fn sphere_amplitudes(radius_m: f32, distance_m: f32, cos_theta: f32, delta_v: f32) -> (f32, f32) {
    let r = distance_m.max(radius_m * 1.01);
    sphere_amplitudes_at(radius_m, r, 1.0 / r, cos_theta, delta_v)
}

/// `sphere_amplitudes` for a distance `r` (m, at least 1.01 radii) whose reciprocal the
/// caller already has: no division (the renderer calls this twice per collision).
#[inline]
pub fn sphere_amplitudes_at(radius_m: f32, r: f32, inv_r: f32, cos_theta: f32, delta_v: f32) -> (f32, f32) {
    let a0 = 0.5 * AIR_DENSITY * (radius_m * radius_m * radius_m) * cos_theta * delta_v * (inv_r * inv_r);
    (a0, a0 * r * (1.0 / SPEED_OF_SOUND))
}

/// One sphere's acceleration noise in continuous time: a sphere of radius `a` whose
/// acceleration along the collision normal is a half-sine of peak `peak_accel` (m/s^2) and
/// duration `duration_s` (PAN eq. 6), heard at `distance_m` from its centre at `cos_theta`
/// from the normal. Used by inspection and tests, not by the renderer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SphereSource {
    pub radius_m: f64,
    pub distance_m: f64,
    pub cos_theta: f64,
    pub peak_accel: f64,
    pub duration_s: f64,
}

impl SphereSource {
    /// Arrival delay `(r - a) / c` of the front of the wave (thesis eq. 4.1: `t' = t - (r-a)/c`), s.
    pub fn delay_s(&self) -> f64 {
        (self.distance_m - self.radius_m).max(0.0) / SPEED_OF_SOUND as f64
    }

    /// Pressure p(t), Pa, at `t = t0 + i dt` for `i in 0..n`, with t = 0 the start of the contact:
    /// thesis eq. 4.1–4.2 in the re-derived form of the module doc,
    /// `p = rho0 a^3 cos(theta) / (2 r^2) (u + (r/c) du/dt)(t')` with `u = B * accel`.
    /// Integrates the state-space form of `B` (`x'' + 2 l x' + 2 l^2 x = 2 l^2 accel`) by RK4
    /// with a step far below both the contact time and `a/c`, and interpolates linearly.
    pub fn waveform(&self, t0: f64, dt: f64, n: usize) -> Vec<f64> {
        let (a, r, d) = (self.radius_m, self.distance_m.max(self.radius_m), self.duration_s);
        let c = SPEED_OF_SOUND as f64;
        let l = c / a;
        let k = AIR_DENSITY as f64 * a.powi(3) * self.cos_theta / (2.0 * r * r);
        let h_max = (d / 400.0).min(1.0 / l / 40.0);
        let sub = (dt / h_max).ceil().max(1.0);
        let h = dt / sub;
        let delay = self.delay_s();
        // fine grid of retarded time t' = j h, from 0 to the last requested sample
        let t_last = t0 + dt * n.saturating_sub(1) as f64 - delay;
        let fine = if t_last < 0.0 {
            0
        } else {
            (t_last / h).ceil() as usize + 2
        };
        let peak = self.peak_accel;
        let accel = |t: f64| {
            if (0.0..=d).contains(&t) {
                peak * (std::f64::consts::PI * t / d).sin()
            } else {
                0.0
            }
        };
        let deriv = |t: f64, x: f64, v: f64| (v, 2.0 * l * l * (accel(t) - x) - 2.0 * l * v);
        let mut p = Vec::with_capacity(fine);
        let (mut x, mut v) = (0.0f64, 0.0f64);
        for j in 0..fine {
            p.push(k * (x + r / c * v));
            let t = j as f64 * h;
            let (k1x, k1v) = deriv(t, x, v);
            let (k2x, k2v) = deriv(t + h / 2.0, x + h / 2.0 * k1x, v + h / 2.0 * k1v);
            let (k3x, k3v) = deriv(t + h / 2.0, x + h / 2.0 * k2x, v + h / 2.0 * k2v);
            let (k4x, k4v) = deriv(t + h, x + h * k3x, v + h * k3v);
            x += h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
            v += h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
        }
        (0..n)
            .map(|i| {
                let tr = (t0 + i as f64 * dt - delay) / h;
                if tr < 0.0 {
                    return 0.0;
                }
                let j = tr.floor() as usize;
                let f = tr - j as f64;
                match (p.get(j), p.get(j + 1)) {
                    (Some(&p0), Some(&p1)) => p0 + f * (p1 - p0),
                    (Some(&p0), None) => p0,
                    _ => 0.0,
                }
            })
            .collect()
    }

    /// Peak |p| (Pa) over the whole response (contact plus 12 time constants of `B`).
    pub fn peak_pressure(&self) -> f64 {
        let l = SPEED_OF_SOUND as f64 / self.radius_m;
        let span = self.duration_s + 12.0 / l;
        let steps = 20_000;
        self.waveform(self.delay_s(), span / steps as f64, steps + 1)
            .into_iter()
            .fold(0.0, |m, p| m.max(p.abs()))
    }
}

/// Peak pressure (Pa) of one sphere's acceleration noise, evaluated in continuous time from
/// the transfer function above (thesis eq. 4.1–4.2): a half-sine acceleration of peak
/// `peak_accel` (m/s^2) and duration `duration_s`.
pub fn peak_pressure_continuous(
    radius_m: f32,
    distance_m: f32,
    cos_theta: f32,
    peak_accel: f32,
    duration_s: f32,
) -> f32 {
    SphereSource {
        radius_m: radius_m as f64,
        distance_m: distance_m as f64,
        cos_theta: cos_theta as f64,
        peak_accel: peak_accel as f64,
        duration_s: duration_s as f64,
    }
    .peak_pressure() as f32
}

/// The sphere-radiation low-pass `B(s)` above, discretised with impulse-invariant poles
/// and a numerator that matches the analog magnitude at DC and at `min(w0, 0.75 pi)`
/// (magnitude-matched second-order design in the manner of Vicanek, *Matched Second Order
/// Digital Filters*, 2016). Unit DC gain.
#[derive(Debug, Clone, Copy, Default)]
pub struct SphereFilter {
    b0: f32,
    b1: f32,
    a1: f32,
    a2: f32,
    x1: f32,
    y1: f32,
    y2: f32,
}

impl SphereFilter {
    pub fn new(sample_rate: f32, radius_m: f32) -> Self {
        let mut f = SphereFilter::default();
        f.set(sample_rate, radius_m);
        f
    }

    /// Recomputes coefficients for a new grain radius; the state is kept (no click).
    pub fn set(&mut self, sample_rate: f32, radius_m: f32) {
        let t = 1.0 / sample_rate as f64;
        let l = SPEED_OF_SOUND as f64 / radius_m.max(1e-6) as f64;
        let w0 = std::f64::consts::SQRT_2 * l; // rad/s
        let e = (-l * t).exp();
        let a1 = -2.0 * e * (l * t).cos();
        let a2 = e * e;
        let wm = (w0 * t).min(0.75 * std::f64::consts::PI); // rad/sample
        let analog_sq = 1.0 / (1.0 + (wm / t / w0).powi(4)); // Butterworth |B|^2
        let s = (wm / 2.0).sin().powi(2);
        let (phi0, phi1) = (1.0 - s, s);
        let phi2 = 4.0 * phi0 * phi1;
        let big_a0 = (1.0 + a1 + a2).powi(2);
        let big_a1 = (1.0 - a1 + a2).powi(2);
        let big_a2 = -4.0 * a2;
        let den = big_a0 * phi0 + big_a1 * phi1 + big_a2 * phi2;
        let big_b0 = big_a0;
        let big_b1 = ((analog_sq * den - big_b0 * phi0) / phi1).max(0.0);
        let (sb0, sb1) = (big_b0.sqrt(), big_b1.sqrt());
        self.b0 = (0.5 * (sb0 + sb1)) as f32;
        self.b1 = (0.5 * (sb0 - sb1)) as f32;
        self.a1 = a1 as f32;
        self.a2 = a2 as f32;
    }

    pub fn reset(&mut self) {
        self.x1 = 0.0;
        self.y1 = 0.0;
        self.y2 = 0.0;
    }

    #[inline]
    pub fn process(&mut self, x: f32) -> f32 {
        let y = self.b0 * x + self.b1 * self.x1 - self.a1 * self.y1 - self.a2 * self.y2;
        self.x1 = x;
        self.y2 = self.y1;
        self.y1 = y;
        y
    }

    /// Zeroes the state once all of it is under `eps` (a decayed filter: `is_at_rest`).
    pub fn settle(&mut self, eps: f32) {
        if self.x1.abs() < eps && self.y1.abs() < eps && self.y2.abs() < eps {
            (self.x1, self.y1, self.y2) = (0.0, 0.0, 0.0);
        }
    }

    /// No state left: a zero input gives zeros.
    pub fn is_at_rest(&self) -> bool {
        self.x1 == 0.0 && self.y1 == 0.0 && self.y2 == 0.0
    }

    /// Whether the feedback is below f32 resolution (`a1 y1` and `a2 y2` under a fiftieth of
    /// an ulp of `y`): small grains, whose poles `e^{-c T / a}` are practically at the origin
    /// (at 48 kHz every radius under about 0.35 mm). The filter is then its two-tap numerator.
    pub fn feedback_negligible(&self) -> bool {
        self.a1.abs() < 1e-9 && self.a2.abs() < 1e-9
    }

    /// Filters a span of two channels (`input[ch]` into `output[ch]`, the shorter length of
    /// the four). Without feedback (`feedback_negligible`) each channel is a two-tap FIR
    /// over the span, which runs as packed SIMD; otherwise both recursions run in one loop,
    /// so they overlap in the CPU. The state stays that of the recursion either way.
    #[inline(always)]
    pub fn process_pair(filters: &mut [SphereFilter; 2], input: [&[f32]; 2], output: [&mut [f32]; 2]) {
        let n = input[0]
            .len()
            .min(input[1].len())
            .min(output[0].len())
            .min(output[1].len());
        if n == 0 {
            return;
        }
        let [out_l, out_r] = output;
        if filters.iter().all(|f| f.feedback_negligible()) {
            for (f, (x, y)) in filters.iter_mut().zip(input.into_iter().zip([out_l, out_r])) {
                let (x, y) = (&x[..n], &mut y[..n]);
                let (b0, b1) = (f.b0, f.b1);
                y[0] = b0 * x[0] + b1 * f.x1;
                for t in 1..n {
                    y[t] = b0 * x[t] + b1 * x[t - 1];
                }
                f.y2 = if n > 1 { y[n - 2] } else { f.y1 };
                f.x1 = x[n - 1];
                f.y1 = y[n - 1];
            }
        } else {
            let [filter_l, filter_r] = filters;
            let [in_l, in_r] = input;
            for t in 0..n {
                out_l[t] = filter_l.process(in_l[t]);
                out_r[t] = filter_r.process(in_r[t]);
            }
        }
    }

    /// Magnitude response at `freq_hz` (for tests).
    pub fn magnitude(&self, sample_rate: f32, freq_hz: f32) -> f32 {
        let w = 2.0 * std::f32::consts::PI * freq_hz / sample_rate;
        let z1 = (w.cos(), -w.sin());
        let z2 = ((2.0 * w).cos(), -(2.0 * w).sin());
        let num = (self.b0 + self.b1 * z1.0, self.b1 * z1.1);
        let den = (1.0 + self.a1 * z1.0 + self.a2 * z2.0, self.a1 * z1.1 + self.a2 * z2.1);
        (num.0.hypot(num.1)) / (den.0.hypot(den.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::GrainMaterial;
    use crate::impact::contact::{contact, Body};

    #[test]
    fn sphere_filter_matches_butterworth_in_band() {
        for &radius in &[0.1e-3f32, 1e-3, 3.5e-3] {
            for &fs in &[44_100.0f32, 48_000.0, 96_000.0] {
                let f = SphereFilter::new(fs, radius);
                let w0 = std::f32::consts::SQRT_2 * SPEED_OF_SOUND / radius;
                for &hz in &[0.0f32, 1000.0, 5000.0, 10_000.0, 16_000.0] {
                    let analog = 1.0 / (1.0 + (2.0 * std::f32::consts::PI * hz / w0).powi(4)).sqrt();
                    let digital = f.magnitude(fs, hz);
                    let db = 20.0 * (digital / analog).log10();
                    assert!(db.abs() < 1.0, "r {radius} fs {fs} f {hz}: {db} dB");
                }
            }
        }
    }

    #[test]
    fn span_filtering_matches_the_recursion_sample_by_sample() {
        // sugar-sized grains take the two-tap path, gravel-sized ones the recursion
        for (radius, fir) in [(0.25e-3f32, true), (4e-3, false)] {
            let mut pair = [SphereFilter::new(48_000.0, radius); 2];
            assert_eq!(pair[0].feedback_negligible(), fir, "radius {radius}");
            let mut single = pair;
            let x: [Vec<f32>; 2] = [0.37f32, 0.71].map(|k| (0..300).map(|i| (i as f32 * k).sin()).collect());
            let mut y = [vec![0.0f32; 300], vec![0.0f32; 300]];
            // uneven spans, as the engine cuts them
            let mut start = 0;
            for len in [1, 64, 7, 128, 100] {
                let span = start..start + len;
                let [yl, yr] = &mut y;
                SphereFilter::process_pair(
                    &mut pair,
                    [&x[0][span.clone()], &x[1][span.clone()]],
                    [&mut yl[span.clone()], &mut yr[span]],
                );
                start += len;
            }
            for ch in 0..2 {
                for (t, &got) in y[ch].iter().enumerate() {
                    let want = single[ch].process(x[ch][t]);
                    assert!(
                        (got - want).abs() <= 1e-6 * want.abs().max(1e-3),
                        "{radius} {ch} {t}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn reproduces_thesis_table_6_1_at_one_millimetre_per_second() {
        // Table 6.1: glass, a = 1 mm, r = 0.15 m, theta = 0, v0 = 0.001 m/s -> 1.0996e-4 Pa.
        let glass = GrainMaterial::GlassBeads1.data().elastic;
        let s = Body::sphere(glass, 1e-3);
        let c = contact(&s, &s, 1e-3, 1.0);
        let peak_accel = c.peak_force_n / s.mass_kg;
        let p = peak_pressure_continuous(1e-3, 0.15, 1.0, peak_accel, c.duration_s);
        assert!((p / 1.0996e-4 - 1.0).abs() < 0.15, "{p}");
    }
}
