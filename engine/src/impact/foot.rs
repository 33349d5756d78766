//! The cup standing on a plate pushes on it through its foot (issue 44, "Plates"): a table
//! under a mug that fills rings with the stream's landings.
//!
//! Take the cup and what it holds as one body standing on the surface, the stream entering
//! it. Newton's second law for that body (the momentum equation of a control volume with an
//! inflow: Fox & McDonald, *Introduction to Fluid Mechanics*, ch. 4) gives the force through its foot as its weight plus the rate at which momentum enters,
//! less the rate at which what it holds speeds up: the collisions between grains inside it,
//! and theirs with the cup's walls and floor, push both ways and cancel in the sum (Newton's
//! third law). Below the cup's lowest mode the cup moves as one rigid body with the surface,
//! so the surface feels exactly that sum: the weight (steady: a plate's modes do not answer
//! it, `modal::DcBlocker`) and the arrivals. A grain of mass m landing at v is stopped and
//! sent back up at e v (e its restitution) by its first contact, an impulse (1 + e) m v;
//! its rebounds land again later, e times as hard each time and spread over their flights
//! (a 0.3 s flight for a grain rebounding at 1.5 m/s): left out here (on a rigid support
//! they would add 1/(1 − e²) to the energy, +1.2 dB at e = 0.5; on loose grains far less).
//! The arrivals are a Poisson process of the scene's rate λ(t) (`PourState::arrivals_*`,
//! linear over a window), so the force is shot noise: mean λ J, variance λ J² ∫h² for a
//! pulse h (Campbell's theorem; Rice, "Mathematical analysis of random noise", Bell Syst.
//! Tech. J. 23 (1944) 282, §1.2).
//!
//! Above the cup's lowest mode the cup is no longer rigid: the grains' force goes into its
//! own modes (the Cup stem), and what passes its foot falls. That is modelled, not derived,
//! as the transmissibility of a mass on a spring above its resonance f₀,
//! |T| = 1 / |1 − (f/f₀)²|, falling 12 dB an octave (Den Hartog, *Mechanical Vibrations*,
//! 4th ed. 1956, ch. 2, vibration isolation), with f₀ the cup's lowest mode: a two-pole Butterworth low-pass at the cup's lowest mode (a mug's is about 1.3 kHz), as a
//! state-variable filter (Zavalishin, *The Art of VA Filter Design*, 2012, §4.4: the
//! trapezoidal SVF, `base::svf`, its low-pass output).
//!
//! The draws come from their own random stream, seeded from the pour's seed, so turning the
//! surface from a half-space to a plate changes no other stem. A window's count is drawn
//! exactly (Poisson) and placed by the rate's ramp; above `EXACT_MAX` a window (fine grains:
//! 0.2 mm sand at 40 g/s lands 3.6 million a second) each sample's sum is drawn as a normal
//! of the compound Poisson's mean and variance (at least 8 a sample at 48 kHz).

use crate::base::svf::Svf;
use crate::base::window::WINDOW;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Poisson, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Seed offset of the foot's random numbers from the pour's seed.
const SEED_SALT: u64 = 0x5eed_f007_0000_0001;
/// Arrivals a window drawn one by one at most; beyond, per sample as a normal (module doc).
const EXACT_MAX: f32 = 1024.0;
/// The Butterworth low-pass's damping, 2 ζ = √2 (Q = 1/√2).
const BUTTERWORTH_K: f32 = std::f32::consts::SQRT_2;

/// The force of the arrivals through the cup's foot, window by window (module doc).
/// Allocation-free.
#[derive(Debug, Clone)]
pub struct FootPush {
    rng: Xoshiro256PlusPlus,
    /// The low-pass's cutoff, Hz, the filter and its state.
    cutoff_hz: f32,
    lowpass: Svf,
    state: [f32; 2],
    sample_rate: f32,
}

impl FootPush {
    pub fn new(sample_rate: f32, seed: u64) -> FootPush {
        let mut f = FootPush {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT),
            cutoff_hz: 0.0,
            lowpass: Svf::default(),
            state: [0.0; 2],
            sample_rate,
        };
        f.set_cutoff(0.45 * sample_rate);
        f
    }

    /// Silent, the random numbers restarted from `seed` (a new pour, as a new engine).
    pub fn reset(&mut self, seed: u64) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT);
        self.state = [0.0; 2];
    }

    /// The random numbers from `seed`, without silencing the filter.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ SEED_SALT);
    }

    /// The low-pass's cutoff, Hz: the cup's lowest mode (kept below 0.45 fs). Only
    /// recomputes when it changes.
    pub fn set_cutoff(&mut self, hz: f32) {
        let hz = if hz.is_finite() && hz > 0.0 {
            hz.min(0.45 * self.sample_rate)
        } else {
            0.45 * self.sample_rate
        };
        if hz == self.cutoff_hz {
            return;
        }
        self.cutoff_hz = hz;
        self.lowpass = Svf::new((std::f32::consts::PI * hz / self.sample_rate).tan(), BUTTERWORTH_K);
    }

    pub fn cutoff_hz(&self) -> f32 {
        self.cutoff_hz
    }

    /// One window's force through the foot, N, into `out`: arrivals at `rate` grains a second
    /// at the window's start and end, each an impulse of `impulse_ns` N s (module doc).
    pub fn window(&mut self, rate: [f32; 2], impulse_ns: f32, out: &mut [f32; WINDOW]) {
        out.fill(0.0);
        let [r0, r1] = rate.map(|r| if r.is_finite() { r.max(0.0) } else { 0.0 });
        let dt = 1.0 / self.sample_rate;
        // the mean count in the window, and each sample's
        let mean = 0.5 * (r0 + r1) * WINDOW as f32 * dt;
        if impulse_ns.is_finite() && impulse_ns > 0.0 && mean > 0.0 {
            // an impulse J in one sample is a force J / dt over it
            let height = impulse_ns / dt;
            if mean <= EXACT_MAX {
                let n = match Poisson::new(mean as f64) {
                    Ok(p) => p.sample(&mut self.rng) as usize,
                    Err(_) => 0,
                };
                for _ in 0..n {
                    let x = ramp_place(r0, r1, self.rng.random::<f32>());
                    let j = ((x * WINDOW as f32) as usize).min(WINDOW - 1);
                    out[j] += height;
                }
            } else {
                for (j, f) in out.iter_mut().enumerate() {
                    let x = (j as f32 + 0.5) / WINDOW as f32;
                    let mu = (r0 + (r1 - r0) * x) * dt;
                    let z: f32 = StandardNormal.sample(&mut self.rng);
                    *f = height * (mu + mu.sqrt() * z).max(0.0);
                }
            }
        }
        // the foot's transmissibility: the SVF's low-pass output
        let mut s = self.state;
        for f in out.iter_mut() {
            *f = self.lowpass.tick(&mut s, *f).1;
        }
        // a silent pour's state decays to denormals: flushed
        self.state = s.map(|s| if s.abs() < 1e-30 { 0.0 } else { s });
    }
}

/// Where in the window (0..1) the uniform `u` falls for arrivals whose rate runs linearly
/// from `r0` to `r1`: the inverse of the ramp's cumulative share, x (r0 + (r1 − r0) x / 2)
/// / ((r0 + r1) / 2) = u.
fn ramp_place(r0: f32, r1: f32, u: f32) -> f32 {
    let d = r1 - r0;
    let total = 0.5 * (r0 + r1);
    if d.abs() <= 1e-6 * total.max(1e-30) {
        return u;
    }
    // r0 x + d x²/2 = u total
    let disc = (r0 * r0 + 2.0 * d * u * total).max(0.0);
    ((disc.sqrt() - r0) / d).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The low-pass's impulse response's energy, Σ h² (h for a unit sample).
    fn sum_h2(f: &FootPush) -> f64 {
        let mut state = [0.0f32; 2];
        (0..200_000)
            .map(|n| (f.lowpass.tick(&mut state, if n == 0 { 1.0 } else { 0.0 }).1 as f64).powi(2))
            .sum()
    }

    /// Campbell's theorem: the force's mean is λ J and its variance λ J² ∫h², in both of the
    /// draws (one by one, and per sample as a normal), over a steady rate and a ramp.
    #[test]
    fn the_foot_force_is_the_arrivals_shot_noise() {
        let fs = 48_000.0f32;
        let j = 2e-6f32;
        for (rate, cutoff) in [(2_000.0f32, 1300.0f32), (200_000.0, 1300.0), (5_000_000.0, 900.0)] {
            let mut f = FootPush::new(fs, 7);
            f.set_cutoff(cutoff);
            let h2 = sum_h2(&f) * fs as f64;
            let mut out = [0.0f32; WINDOW];
            let (mut s1, mut s2, mut n) = (0.0f64, 0.0f64, 0usize);
            let windows = 20_000;
            for w in 0..windows {
                f.window([rate, rate], j, &mut out);
                if w >= 100 {
                    for &x in &out {
                        s1 += x as f64;
                        s2 += (x as f64).powi(2);
                        n += 1;
                    }
                }
            }
            let mean = s1 / n as f64;
            let var = s2 / n as f64 - mean * mean;
            let (want_mean, want_var) = (rate as f64 * j as f64, rate as f64 * (j as f64).powi(2) * h2);
            assert!(
                (mean / want_mean - 1.0).abs() < 0.01,
                "rate {rate}: mean {mean} against {want_mean}"
            );
            assert!(
                (var / want_var - 1.0).abs() < 0.05,
                "rate {rate}: variance {var} against {want_var}"
            );
        }
    }

    #[test]
    fn arrivals_follow_the_ramp_within_the_window() {
        // a rate rising from 0 to 2r puts three quarters of them in the window's second half
        for (r0, r1, late) in [(0.0f32, 2.0f32, 0.75f32), (1.0, 1.0, 0.5), (3.0, 1.0, 0.375)] {
            let n = 20_000;
            let later = (0..n)
                .filter(|&i| ramp_place(r0, r1, (i as f32 + 0.5) / n as f32) >= 0.5)
                .count() as f32
                / n as f32;
            assert!((later - late).abs() < 1e-3, "{r0}->{r1}: {later}");
        }
    }

    #[test]
    fn bad_rates_and_impulses_make_silence_not_nan() {
        let mut f = FootPush::new(48_000.0, 1);
        f.set_cutoff(f32::NAN);
        let mut out = [1.0f32; WINDOW];
        for (rate, j) in [
            ([f32::NAN, 1e4], 1e-6),
            ([-5.0, -5.0], 1e-6),
            ([1e4, 1e4], f32::INFINITY),
            ([0.0, 0.0], 1.0),
        ] {
            f.window(rate, j, &mut out);
            assert!(out.iter().all(|x| x.is_finite()), "{rate:?} {j}");
        }
        f.window([f32::INFINITY, f32::INFINITY], 1e-6, &mut out);
        assert!(out.iter().all(|&x| x == 0.0));
    }
}
