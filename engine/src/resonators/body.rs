//! The cup as one rigid body (issue 44, the closed, shaken jar): a jar shaken in the hand jolts
//! as a whole when its bed slams the wall, and a body that jolts radiates. Real shakers carry
//! 10–20 dB more of their energy below 500 Hz than the cup's own modes (a kilohertz and up) and
//! the grains give a shake; that thump is the jar's jolt.
//!
//! - **The push.** The shaken bed stops dead against the wall (`gesture`, the slam: a granular
//!   bed colliding as a whole is perfectly inelastic), its grains arriving as a ramp over the
//!   slam's length L. The momentum they bring, M_b v, enters the jar at the rate
//!   F(t) = 2 M_b v t / L² (`gesture::SlamPart`), and the grains already stopped move on with
//!   the jar, M_b (t/L)² of them: the jar's acceleration is a(t) = F(t) / (M + M_b (t/L)²), M
//!   the jar's own mass (Newton's second law; the same momentum balance as `impact::foot`'s,
//!   the grains' collisions among themselves cancelling). The hand holds the jar through soft
//!   tissue, which passes little at audio frequencies: the jar is taken free (an upper bound).
//!   The rattling grains' hits after the slam come from all sides and are left out.
//! - **The sound.** A compact body translating with a(t) radiates as a dipole; for a rigid
//!   sphere of radius a (thesis eq. 4.1–4.2, re-derived in `impact::accel_noise`):
//!   p = ρ₀ a³ cos θ / (2 r²) (u + (r/c) du/dt), u = B * a(t), B the sphere's low-pass at
//!   √2 c / a. The jar is taken as the sphere of its outer volume (its inner volume and its
//!   walls'), as the grains are taken as the spheres of theirs; θ from the shake's axis (along
//!   the cup's first wall sector, `Cup::sector_dirs`) to the listener, the sign turning with
//!   the side slammed. Into the Cup stem: it is the vessel's sound.
//!
//! `RigidBody::set` runs when the cup or the listener changes; `slam_accel` writes a window's
//! acceleration (the engine rings it after the cup's travel time) and `process` turns it into
//! pressure. Allocation-free.

use crate::base::materials::{AIR_DENSITY, SPEED_OF_SOUND};
use crate::base::window::WINDOW;
use crate::impact::accel_noise::SphereFilter;
use crate::pour::gesture::SlamPart;

/// The cup as a rigid body at the listener (module doc).
#[derive(Debug, Clone)]
pub struct RigidBody {
    sample_rate: f32,
    /// Radius of the sphere of the cup's outer volume, m, its mass, kg, and the listener's
    /// distance, m, and cos θ from the shake's axis.
    radius_m: f32,
    mass_kg: f32,
    distance_m: f32,
    cos_theta: f32,
    /// ρ₀ a³ cos θ / (2 r²), Pa per m/s², and that times r / c times the sample rate (the
    /// far field's weight on du/dt taken as a difference of samples).
    near: f32,
    far: f32,
    filter: SphereFilter,
    /// The last filtered acceleration u, m/s² (for du/dt).
    last_u: f32,
}

impl RigidBody {
    pub fn new(sample_rate: f32) -> RigidBody {
        RigidBody {
            sample_rate,
            radius_m: 0.0,
            mass_kg: 1.0,
            distance_m: 1.0,
            cos_theta: 0.0,
            near: 0.0,
            far: 0.0,
            filter: SphereFilter::new(sample_rate, 0.05),
            last_u: 0.0,
        }
    }

    /// Silent.
    pub fn reset(&mut self) {
        self.filter.reset();
        self.last_u = 0.0;
    }

    /// The cup: the radius of the sphere of its outer volume, m, and its mass, kg; heard from
    /// `distance_m` at `cos_theta` from the shake's axis. Recomputes only what changed.
    pub fn set(&mut self, radius_m: f32, mass_kg: f32, distance_m: f32, cos_theta: f32) {
        let ok = |x: f32| x.is_finite() && x > 0.0;
        let (radius_m, mass_kg) = if ok(radius_m) && ok(mass_kg) {
            (radius_m, mass_kg)
        } else {
            (0.0, 1.0)
        };
        let distance_m = if ok(distance_m) {
            distance_m.max(radius_m * 1.01)
        } else {
            1.0
        };
        let cos_theta = if cos_theta.is_finite() {
            cos_theta.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        let now = (radius_m, mass_kg, distance_m, cos_theta);
        if now == (self.radius_m, self.mass_kg, self.distance_m, self.cos_theta) {
            return;
        }
        if radius_m != self.radius_m && radius_m > 0.0 {
            self.filter.set(self.sample_rate, radius_m);
        }
        (self.radius_m, self.mass_kg, self.distance_m, self.cos_theta) = now;
        self.near = 0.5 * AIR_DENSITY * radius_m.powi(3) * cos_theta / (distance_m * distance_m);
        self.far = self.near * (distance_m / SPEED_OF_SOUND) * self.sample_rate;
    }

    /// Adds to `accel` (m/s², one window) the cup's acceleration in the part of a slam
    /// `part` (module doc), signed by the side slammed.
    pub fn slam_accel(&self, part: &SlamPart, accel: &mut [f32; WINDOW]) {
        let (m_b, v, len) = (part.bed_kg, part.speed_m_s, part.len_s);
        if !(m_b > 0.0 && v > 0.0 && len > 0.0 && m_b.is_finite() && v.is_finite() && len.is_finite()) {
            return;
        }
        let sign = if part.side == 0 { 1.0 } else { -1.0 };
        let [w0, w1] = part.window.map(|w| if w.is_finite() { w.clamp(0.0, 1.0) } else { 0.0 });
        let [t0, t1] = part.t_s;
        if !(w1 > w0 && t0.is_finite() && t1.is_finite()) {
            return;
        }
        // the samples whose middles fall in the part, each at its own time in the slam
        let first = (w0 * WINDOW as f32).round() as usize;
        let last = ((w1 * WINDOW as f32).round() as usize).min(WINDOW);
        for (j, a) in accel.iter_mut().enumerate().take(last).skip(first) {
            let x = ((j as f32 + 0.5) / WINDOW as f32 - w0) / (w1 - w0);
            let t = (t0 + (t1 - t0) * x.clamp(0.0, 1.0)).clamp(0.0, len);
            let f = 2.0 * m_b * v * t / (len * len);
            *a += sign * f / (self.mass_kg + m_b * (t / len).powi(2));
        }
    }

    /// Adds the pressure at the listener, Pa, for the acceleration `accel` (m/s², from the
    /// window's start) to `out` (both the window's length).
    pub fn process(&mut self, accel: &[f32], out: &mut [f32]) {
        // at rest and not pushed (all but a shake's slams): nothing to add
        let at_rest = self.last_u == 0.0 && self.filter.is_at_rest();
        if self.radius_m <= 0.0 || (at_rest && crate::base::simd::all_zero(accel)) {
            return;
        }
        let (near, far) = (self.near, self.far);
        let mut last = self.last_u;
        for (a, y) in accel.iter().zip(out.iter_mut()) {
            let u = self.filter.process(*a);
            *y += near * u + far * (u - last);
            last = u;
        }
        // a jolt's state decays towards nothing: once under 1e-20 m/s² it is at rest again
        self.filter.settle(1e-20);
        self.last_u = if last.abs() < 1e-20 { 0.0 } else { last };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impact::accel_noise::SphereSource;

    /// The jar's pressure for a half-sine acceleration against the continuous-time sphere
    /// (`SphereSource::waveform`, thesis eq. 4.1–4.2 re-derived): the same peak within 3 %.
    #[test]
    fn a_jolted_jar_radiates_as_the_sphere_of_its_volume() {
        let fs = 48_000.0f32;
        for (radius, distance, cos, dur) in [(0.05f32, 0.4f32, 0.6f32, 0.004f32), (0.04, 1.0, -1.0, 0.0015)] {
            let mut b = RigidBody::new(fs);
            b.set(radius, 0.3, distance, cos);
            let n = 4096;
            let accel: Vec<f32> = (0..n)
                .map(|i| {
                    let t = (i as f32 + 0.5) / fs;
                    if t < dur {
                        100.0 * (std::f32::consts::PI * t / dur).sin()
                    } else {
                        0.0
                    }
                })
                .collect();
            let mut out = vec![0.0f32; n];
            b.process(&accel, &mut out);
            let got = out.iter().fold(0.0f32, |m, x| m.max(x.abs())) as f64;
            let want = SphereSource {
                radius_m: radius as f64,
                distance_m: distance as f64,
                cos_theta: cos as f64,
                peak_accel: 100.0,
                duration_s: dur as f64,
            }
            .peak_pressure();
            assert!(
                (got / want - 1.0).abs() < 0.03,
                "{radius} m at {distance} m: {got} Pa against {want} Pa"
            );
        }
    }

    /// Over a whole slam the acceleration integrates to the momentum the bed brings over the
    /// jar's mass with the bed's own (the bed moves on with the jar): ∫a dt between
    /// M_b v / (M + M_b) and M_b v / M, and split into windows it is the same sum.
    #[test]
    fn a_slam_gives_the_jar_the_beds_momentum() {
        let fs = 48_000.0f32;
        let mut b = RigidBody::new(fs);
        b.set(0.05, 0.3, 0.4, 1.0);
        let (m_b, v, len) = (0.15f32, 0.8f32, 0.025f32);
        let dt = WINDOW as f32 / fs;
        let windows = (len / dt).ceil() as usize + 1;
        let mut dv = 0.0f64;
        for w in 0..windows {
            let (a, z) = ((w as f32 * dt).min(len), ((w + 1) as f32 * dt).min(len));
            if z <= a {
                continue;
            }
            let part = SlamPart {
                bed_kg: m_b,
                speed_m_s: v,
                len_s: len,
                t_s: [a, z],
                window: [0.0, (z - a) / dt],
                side: 0,
            };
            let mut accel = [0.0f32; WINDOW];
            b.slam_accel(&part, &mut accel);
            dv += accel.iter().map(|&x| x as f64).sum::<f64>() / fs as f64;
        }
        let (lo, hi) = ((m_b * v / (0.3 + m_b)) as f64, (m_b * v / 0.3) as f64);
        assert!(dv > lo && dv < hi, "{dv} m/s, not within {lo}..{hi}");
        // the other side pushes the other way
        let part = SlamPart {
            side: 1,
            bed_kg: m_b,
            speed_m_s: v,
            len_s: len,
            t_s: [0.0, dt],
            window: [0.0, 1.0],
        };
        let mut accel = [0.0f32; WINDOW];
        b.slam_accel(&part, &mut accel);
        assert!(accel.iter().all(|&x| x <= 0.0) && accel.iter().any(|&x| x < 0.0));
    }

    #[test]
    fn absurd_parts_and_cups_make_silence_not_nan() {
        let mut b = RigidBody::new(48_000.0);
        b.set(f32::NAN, -1.0, 0.0, f32::INFINITY);
        let mut accel = [0.0f32; WINDOW];
        let ok = SlamPart {
            bed_kg: 0.1,
            speed_m_s: 1.0,
            len_s: 0.02,
            t_s: [0.0, 0.002],
            window: [0.0, 1.0],
            side: 0,
        };
        for part in [
            SlamPart { bed_kg: f32::NAN, ..ok },
            SlamPart { len_s: 0.0, ..ok },
            SlamPart {
                t_s: [f32::NAN, 0.002],
                side: 1,
                ..ok
            },
            SlamPart {
                window: [f32::NAN, 2.0],
                ..ok
            },
            SlamPart {
                speed_m_s: f32::INFINITY,
                ..ok
            },
        ] {
            b.slam_accel(&part, &mut accel);
        }
        assert!(accel.iter().all(|x| x.is_finite()));
        let mut out = [0.0f32; WINDOW];
        b.process(&[1e3; WINDOW], &mut out);
        assert!(out.iter().all(|&x| x == 0.0), "a cup without a size is silent");
    }
}
