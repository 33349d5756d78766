//! Surfaces of a finite size (issue 44): a table top, a shelf, a tray or a tile is a plate
//! with modes, where the paper's ground (seed 002, `ground`) is a half-space, right for thick
//! floors and soil. A plate rings: a stone dropped on a table sounds for tens of
//! milliseconds, with energy down to its lowest modes (100–300 Hz for a table top).
//!
//! - **Modes**: a thin (Kirchhoff) rectangular plate, a x b, thickness h, simply supported on
//!   its edges (a top on its frame, a tray on its rim, a tile on its bed's edges):
//!   f_mn = (pi / 2) (m^2 / a^2 + n^2 / b^2) sqrt(D / (rho h)), D = E h^3 / (12 (1 - nu^2)),
//!   shapes sin(m pi x / a) sin(n pi y / b), modal mass rho h a b / 4 (Leissa, *Vibration of
//!   Plates*, NASA SP-160, 1969, eq. 4.19 and §4.1; `mode_hz`).
//! - **Damping**: decay rate eta omega / 2 with eta the material's loss factor (the cup
//!   table's, Cremer & Heckl) plus `SUPPORT_LOSS` for what the supports and joints take
//!   (Cremer, Heckl & Petersson, *Structure-Borne Sound*, 3rd ed. 2005, §3.7: built-up
//!   structures show total loss factors of 0.01–0.1, most of it at their joints).
//! - **Excitation**: a force impulse J at the spot where the grains land (and the cup stands)
//!   sets mode mn ringing with displacement J phi_mn(x0, y0) / (M omega) e^(-sigma t)
//!   sin(omega t) (the modal equations of the same source, eq. 4.1–4.4 there).
//! - **Radiation**: the plate set in a baffle, its far field by the Rayleigh integral,
//!   p = rho0 / (2 pi r) * acceleration * I_mn, I_mn the mode shape's spatial Fourier
//!   transform at the listener's direction, in closed form (Wallace, "Radiation resistance
//!   of a rectangular panel", JASA 51 (1972) 946, eq. 3): `shape_transform`. A table is not
//!   baffled; below the frequency where a bending wave is as long as a sound wave its edges
//!   short-circuit some of this, so the lowest modes are here somewhat louder than a free
//!   table's.
//!
//! `Plate::modes` computes the modes once per surface and listener (`Engine::derive`);
//! `PlateBank` rings them, driven by the surface's force each window (`Engine::sound_surface`).

use crate::base::materials::{self, Plate, AIR_DENSITY, SPEED_OF_SOUND};
use std::f64::consts::PI;

/// Modes a plate rings at most (the lowest).
pub const MAX_PLATE_MODES: usize = 256;
/// Loss factor the supports and joints add to the material's (module doc).
pub const SUPPORT_LOSS: f32 = 0.01;

/// One mode as sound: frequency, decay rate (1/s) and the pressure at the listener per unit
/// force impulse at the spot, Pa per N s (the amplitude of its damped sine).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlateMode {
    pub freq_hz: f32,
    pub decay_s: f32,
    pub gain: f32,
    pub order: [u16; 2],
}

impl PlateMode {
    pub const ZERO: PlateMode = PlateMode {
        freq_hz: 0.0,
        decay_s: 0.0,
        gain: 0.0,
        order: [0, 0],
    };
}

impl Plate {
    /// Bending stiffness D = E h^3 / (12 (1 - nu^2)), N m (Leissa 1969 eq. 1.3).
    pub fn bending_stiffness(&self) -> f64 {
        let e = self.elastic;
        materials::bending_stiffness(e.youngs_pa as f64, self.thickness_m as f64, e.poisson as f64)
    }

    /// Mass per area rho h, kg/m^2.
    pub fn surface_density(&self) -> f64 {
        self.elastic.density as f64 * self.thickness_m as f64
    }

    /// Frequency of mode (m, n) of the simply supported plate, Hz (Leissa 1969 eq. 4.19).
    pub fn mode_hz(&self, m: u32, n: u32) -> f64 {
        let (a, b) = (self.length_m as f64, self.width_m as f64);
        let k2 = (m as f64 / a).powi(2) + (n as f64 / b).powi(2);
        0.5 * PI * k2 * (self.bending_stiffness() / self.surface_density()).sqrt()
    }

    /// Modal mass rho h a b / 4, kg.
    pub fn modal_mass(&self) -> f64 {
        self.surface_density() * self.length_m as f64 * self.width_m as f64 / 4.0
    }

    /// The lowest modes below `max_hz` (at most `MAX_PLATE_MODES`), heard from `horizontal_m`
    /// across and `height_m` above the spot, into `out`, lowest first; returns how many.
    /// No allocation.
    pub fn modes(
        &self,
        horizontal_m: f64,
        height_m: f64,
        max_hz: f64,
        out: &mut [PlateMode; MAX_PLATE_MODES],
    ) -> usize {
        let r = horizontal_m.hypot(height_m).max(0.05);
        let sin_theta = horizontal_m / r;
        let mut n_out = 0;
        // every (m, n) below max_hz: m up to where the n = 1 mode passes it
        let mut m = 1u32;
        while self.mode_hz(m, 1) < max_hz && m < 10_000 {
            let mut n = 1u32;
            while n < 10_000 {
                let f = self.mode_hz(m, n);
                if f >= max_hz {
                    break;
                }
                let mode = self.mode(m, n, f, r, sin_theta);
                insert_lowest(out, &mut n_out, mode);
                n += 1;
            }
            m += 1;
        }
        n_out
    }

    /// Mode (m, n) at `f` Hz heard at distance `r` (m), `sin_theta` off the normal (the
    /// listener's direction along the plate's long side): module doc.
    fn mode(&self, m: u32, n: u32, f: f64, r: f64, sin_theta: f64) -> PlateMode {
        let (a, b) = (self.length_m as f64, self.width_m as f64);
        let omega = 2.0 * PI * f;
        let k = omega / SPEED_OF_SOUND as f64;
        let [x0, y0] = self.spot.map(|s| s as f64);
        let shape = (m as f64 * PI * x0).sin() * (n as f64 * PI * y0).sin();
        let transform = shape_transform(m, a, k * sin_theta) * shape_transform(n, b, 0.0);
        // pressure per impulse: rho0 / (2 pi r) |I| omega^2 * (phi0 / (M omega))
        let gain = AIR_DENSITY as f64 / (2.0 * PI * r) * transform * omega * shape / self.modal_mass();
        let eta = self.loss_factor + SUPPORT_LOSS;
        PlateMode {
            freq_hz: f as f32,
            decay_s: eta * omega as f32 / 2.0,
            gain: gain as f32,
            order: [m as u16, n as u16],
        }
    }
}

/// |∫_0^L sin(m pi x / L) e^{j alpha x} dx|: the magnitude of a mode shape's spatial Fourier
/// transform along one side (Wallace 1972 eq. 3): (m pi / L) |1 - (-1)^m e^{j alpha L}| /
/// |(m pi / L)^2 - alpha^2|, and L / 2 where the denominator vanishes (coincidence).
pub fn shape_transform(m: u32, l: f64, alpha: f64) -> f64 {
    let km = m as f64 * PI / l;
    let den = km * km - alpha * alpha;
    if den.abs() < 1e-9 * km * km {
        return 0.5 * l;
    }
    let sign = if m.is_multiple_of(2) { 1.0 } else { -1.0 };
    // |1 - sign e^{j alpha L}|
    let (c, s) = ((alpha * l).cos(), (alpha * l).sin());
    let num = ((1.0 - sign * c).powi(2) + (sign * s).powi(2)).sqrt();
    km * num / den.abs()
}

/// Keeps the `MAX_PLATE_MODES` lowest modes in `out[..*n]`, sorted by frequency.
fn insert_lowest(out: &mut [PlateMode; MAX_PLATE_MODES], n: &mut usize, mode: PlateMode) {
    let at = out[..*n].partition_point(|m| m.freq_hz <= mode.freq_hz);
    if at >= MAX_PLATE_MODES {
        return;
    }
    let end = (*n + 1).min(MAX_PLATE_MODES);
    out.copy_within(at..end - 1, at + 1);
    out[at] = mode;
    *n = end;
}

/// A plate's modes ringing: each a complex one-pole z <- z e^{(-sigma + j omega) T} + J, its
/// sound `gain` Im(z) (a damped sine per impulse, `Plate::mode`'s amplitude), the modes side
/// by side in each sample's loop (arrays the compiler vectorises). No allocation.
pub struct PlateBank {
    sample_rate: f32,
    n: usize,
    modes: [PlateMode; MAX_PLATE_MODES],
    pole_re: [f32; MAX_PLATE_MODES],
    pole_im: [f32; MAX_PLATE_MODES],
    gain: [f32; MAX_PLATE_MODES],
    z_re: [f32; MAX_PLATE_MODES],
    z_im: [f32; MAX_PLATE_MODES],
}

impl PlateBank {
    pub fn new(sample_rate: f32) -> PlateBank {
        PlateBank {
            sample_rate,
            n: 0,
            modes: [PlateMode::ZERO; MAX_PLATE_MODES],
            pole_re: [0.0; MAX_PLATE_MODES],
            pole_im: [0.0; MAX_PLATE_MODES],
            gain: [0.0; MAX_PLATE_MODES],
            z_re: [0.0; MAX_PLATE_MODES],
            z_im: [0.0; MAX_PLATE_MODES],
        }
    }

    /// No modes (a half-space surface), silent.
    pub fn clear(&mut self) {
        self.n = 0;
        self.reset();
    }

    /// Silent.
    pub fn reset(&mut self) {
        self.z_re = [0.0; MAX_PLATE_MODES];
        self.z_im = [0.0; MAX_PLATE_MODES];
    }

    /// States that have decayed under 1e-20 set to 0 (every window, as the cup's modes).
    pub fn flush_denormals(&mut self) {
        for (r, i) in self.z_re.iter_mut().zip(&mut self.z_im) {
            if r.abs() < 1e-20 && i.abs() < 1e-20 {
                *r = 0.0;
                *i = 0.0;
            }
        }
    }

    /// How many modes ring.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The modes that ring.
    pub fn modes(&self) -> &[PlateMode] {
        &self.modes[..self.n]
    }

    /// Rings `modes` from now on (mode i keeps its state when the listener moves).
    pub fn set(&mut self, modes: &[PlateMode]) {
        let t = 1.0 / self.sample_rate as f64;
        self.n = modes.len().min(MAX_PLATE_MODES);
        self.modes[..self.n].copy_from_slice(&modes[..self.n]);
        for (i, m) in modes[..self.n].iter().enumerate() {
            let r = (-(m.decay_s as f64) * t).exp();
            let w = 2.0 * PI * m.freq_hz as f64 * t;
            self.pole_re[i] = (r * w.cos()) as f32;
            self.pole_im[i] = (r * w.sin()) as f32;
            self.gain[i] = m.gain;
        }
        for i in self.n..MAX_PLATE_MODES {
            self.z_re[i] = 0.0;
            self.z_im[i] = 0.0;
            self.gain[i] = 0.0;
        }
    }

    /// Adds the plate's sound for the force `force` (N, one sample per sample) to `out`.
    pub fn process(&mut self, force: &[f32], out: &mut [f32]) {
        let t = 1.0 / self.sample_rate;
        // whole groups of 8 modes (the unused ones silent), for the vector loop
        let n = self.n.div_ceil(8) * 8;
        let (pr, pi, g) = (&self.pole_re[..n], &self.pole_im[..n], &self.gain[..n]);
        let (zr, zi) = (&mut self.z_re[..n], &mut self.z_im[..n]);
        for (f, y) in force.iter().zip(out.iter_mut()) {
            let x = f * t;
            let mut acc = [0.0f32; 8];
            for ((((zr, zi), pr), pi), g) in zr
                .chunks_exact_mut(8)
                .zip(zi.chunks_exact_mut(8))
                .zip(pr.chunks_exact(8))
                .zip(pi.chunks_exact(8))
                .zip(g.chunks_exact(8))
            {
                for l in 0..8 {
                    let (r, im) = (zr[l] * pr[l] - zi[l] * pi[l] + x, zr[l] * pi[l] + zi[l] * pr[l]);
                    zr[l] = r;
                    zi[l] = im;
                    acc[l] += g[l] * im;
                }
            }
            *y += acc.iter().sum::<f32>();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::materials::SurfaceMaterial;

    #[test]
    fn a_square_plate_has_leissas_frequency_parameters() {
        // simply supported square plate: omega a^2 sqrt(rho h / D) = pi^2 (m^2 + n^2)
        // (Leissa 1969, Table 4.1: 19.74, 49.35, 78.96, 98.70 for (1,1), (1,2), (2,2), (1,3))
        let mut p = SurfaceMaterial::CeramicTile.plate().unwrap();
        p.length_m = 0.3;
        p.width_m = 0.3;
        let scale = (p.surface_density() / p.bending_stiffness()).sqrt() * 0.09;
        for ((m, n), want) in [((1, 1), 19.74), ((1, 2), 49.35), ((2, 2), 78.96), ((1, 3), 98.70)] {
            let lambda = 2.0 * PI * p.mode_hz(m, n) * scale;
            assert!((lambda / want - 1.0).abs() < 1e-3, "({m},{n}): {lambda} against {want}");
        }
    }

    #[test]
    fn the_shape_transform_is_the_integral() {
        for (m, l, alpha) in [
            (1, 0.8, 0.0),
            (2, 0.8, 3.0),
            (3, 1.2, 7.853_981_6),
            (5, 0.45, 20.0),
            (4, 0.3, 41.0),
        ] {
            let steps = 20_000;
            let dx = l / steps as f64;
            let (mut re, mut im) = (0.0, 0.0);
            for i in 0..steps {
                let x = (i as f64 + 0.5) * dx;
                let s = (m as f64 * PI * x / l).sin();
                re += s * (alpha * x).cos() * dx;
                im += s * (alpha * x).sin() * dx;
            }
            let numeric = re.hypot(im);
            let closed = shape_transform(m, l, alpha);
            assert!(
                (closed - numeric).abs() < 1e-4 * l,
                "m {m} alpha {alpha}: {closed} against {numeric}"
            );
        }
    }

    #[test]
    fn the_lowest_modes_are_kept_in_order() {
        for surface in SurfaceMaterial::ALL {
            let Some(p) = surface.plate() else { continue };
            let mut out = [PlateMode::ZERO; MAX_PLATE_MODES];
            let n = p.modes(0.2, 0.4, 20_000.0, &mut out);
            assert!(n > 10, "{surface:?}: {n} modes");
            assert!(out[..n].windows(2).all(|w| w[0].freq_hz <= w[1].freq_hz));
            assert_eq!(out[0].order, [1, 1]);
            assert!((out[0].freq_hz as f64 / p.mode_hz(1, 1) - 1.0).abs() < 1e-6);
            assert!(out[..n].iter().all(|m| m.gain.is_finite() && m.decay_s > 0.0));
            println!(
                "{surface:?}: {n} modes from {:.0} Hz to {:.0} Hz",
                out[0].freq_hz,
                out[n - 1].freq_hz
            );
        }
    }

    #[test]
    fn an_impulse_rings_each_mode_at_its_frequency_and_decay() {
        // one mode, 1 N s: the damped sine of `Plate::mode`'s amplitude and decay
        let fs = 48_000.0;
        let mode = PlateMode {
            freq_hz: 440.0,
            decay_s: 20.0,
            gain: 0.5,
            order: [1, 1],
        };
        let mut bank = PlateBank::new(fs);
        bank.set(&[mode]);
        let mut force = vec![0.0f32; 4800];
        force[0] = fs; // 1 N s in one sample
        let mut out = vec![0.0f32; 4800];
        bank.process(&force, &mut out);
        for (i, y) in out.iter().enumerate().step_by(97) {
            let t = i as f64 / fs as f64;
            let want = 0.5 * (-20.0 * t).exp() * (2.0 * PI * 440.0 * t).sin();
            assert!((*y as f64 - want).abs() < 1e-4, "sample {i}: {y} against {want}");
        }
    }
}
