//! The cup: a modal resonator bank (thesis ch. 3) driven by grain–cup contact forces.
//!
//! Each mode is a complex one-multiply oscillator (thesis eq. 3.15): its state `y` is the
//! analytic signal of the mode's surface *velocity* (eq. 3.18: pressure depends on surface
//! velocity, so the bank integrates forces into velocity). A force `f` (N) applied at a
//! point where the mode shape has value `phi` adds `phi f dt / M` to `y` (eq. 3.13–3.16:
//! impulses add linearly to the oscillator state), `M` the modal mass. Radiated pressure
//! follows from the radiated power of a vibrating surface, `W = rho0 c sigma S <v^2>`
//! (Cremer & Heckl), spread over a sphere: `p = rho0 c sqrt(A / (4 pi)) v / r` with the
//! effective radiating area `A = sigma S <psi^2>` (radiation efficiency x surface x mean
//! square of the mode shape) and `v` the mode's peak surface velocity.
//!
//! The mode set is analytic until the finite-element analysis lands (issue 4):
//! - wall: Rayleigh's inextensional ring modes of a cylinder of radius R and wall h,
//!   `w_n^2 = E h^2 / (12 rho (1 - nu^2) R^4) * n^2 (n^2 - 1)^2 / (n^2 + 1)`, n = 2..13
//!   (Soedel, *Vibrations of Shells and Plates*, ring bending), each as a slightly split
//!   degenerate pair (cos/sin orientation), amplitude growing linearly up the wall;
//! - floor: clamped circular plate modes `w = lambda^2 / R^2 sqrt(D / (rho h))`,
//!   `D = E h^3 / (12 (1 - nu^2))`, lambda^2 from Leissa, *Vibration of Plates* (NASA SP-160).
//!
//! Decay rate per mode `delta = eta w / 2` with `eta` the material loss factor plus the
//! damping of grains resting on the surface (thesis 7.1; Phya 4.6), and the grains' added
//! mass lowers the frequencies a little.

use super::materials::{
    CupMaterial, CupMaterialData, AIR_DENSITY, CUP_HEIGHT_M, CUP_RADIUS_M, PACKING_FRACTION, SPEED_OF_SOUND,
};
use std::f64::consts::PI;

/// Force buses of the cup, one per place a grain can hit (generator cells x sectors).
pub const CUP_BUSES: usize = 7;
/// Bus index of the floor; walls are `1 + 2 * ring + sector` for ring 0..3, sector 0..2.
pub const FLOOR_BUS: usize = 0;
pub const WALL_RINGS: usize = 3;
/// Maximum number of modes (fixed capacity).
pub const MAX_MODES: usize = 40;

/// Loss factor added by grains in contact with a surface (granular damping). Chosen so
/// that a full steel cup rings for well under a second, as recordings 41/42 of the thesis
/// (MetalFull vs MetalEmpty) show; Phya 4.6 models the same effect as contact damping.
pub const GRAIN_CONTACT_LOSS: f64 = 0.06;
/// Fraction of the grains' mass that moves with the wall (added mass).
const ADDED_MASS_FRACTION: f64 = 0.1;

const RING_ORDERS: std::ops::RangeInclusive<u32> = 2..=13;
/// Clamped circular plate: (nodal diameters m, lambda^2) from Leissa (1969) table 2.1.
const PLATE_MODES: [(u32, f64); 8] = [
    (0, 10.2158),
    (1, 21.26),
    (2, 34.88),
    (0, 39.771),
    (3, 51.04),
    (1, 60.82),
    (4, 69.666),
    (2, 84.58),
];
/// Azimuths (rad) of the two wall sectors a grain can hit.
const SECTOR_AZIMUTH: [f64; 2] = [0.4, 2.1];

/// One mode as used at runtime.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mode {
    pub freq_hz: f32,
    /// Decay rate, 1/s (T60 = ln(1000) / delta).
    pub decay_per_s: f32,
    /// Mode-shape value at each bus (dimensionless, peak 1).
    pub shape: [f32; CUP_BUSES],
    /// Modal mass, kg.
    pub mass_kg: f32,
    /// Effective radiating area sigma S <psi^2>, m^2.
    pub radiating_area_m2: f32,
    /// Stereo position -1..1 (orientation of the mode's lobes relative to the listener).
    pub pan: f32,
}

impl Mode {
    pub const ZERO: Mode = Mode {
        freq_hz: 0.0,
        decay_per_s: 1.0,
        shape: [0.0; CUP_BUSES],
        mass_kg: 1.0,
        radiating_area_m2: 0.0,
        pan: 0.0,
    };

    pub fn t60_s(&self) -> f32 {
        1000f32.ln() / self.decay_per_s
    }
}

/// Geometry and state of the cup that the mode set depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CupState {
    pub material: CupMaterial,
    /// Multiplies every length of the nominal cup.
    pub size: f32,
    /// Fill level 0..1 (height of the pile over the cup height).
    pub fill: f32,
    /// Density of the grains' solid, kg/m^3 (for the added mass).
    pub grain_density: f32,
    /// Grain diameter, m (a layer of a few grains already covers the floor).
    pub grain_diameter_m: f32,
}

/// Cup dimensions for a size factor: (radius, height, wall, floor), m.
pub fn cup_dimensions(m: &CupMaterialData, size: f32) -> (f64, f64, f64, f64) {
    let s = size as f64;
    (
        CUP_RADIUS_M as f64 * s,
        CUP_HEIGHT_M as f64 * s,
        m.wall_m as f64 * s,
        m.floor_m as f64 * s,
    )
}

/// Fraction of the floor covered by grains for a pile of height `h` (m).
pub fn floor_coverage(pile_height_m: f64, grain_diameter_m: f64) -> f64 {
    if pile_height_m <= 0.0 {
        0.0
    } else {
        1.0 - (-pile_height_m / (2.0 * grain_diameter_m.max(1e-5))).exp()
    }
}

/// Radiation efficiency of an order-`n` multipole of size `radius` at wavenumber k,
/// `sigma = x^(2n) / (1 + x^(2n))`, x = k R / n: small below the coincidence of the lobe
/// size with the wavelength, 1 above (a smooth fit of the cylindrical multipole law).
fn radiation_efficiency(k: f64, radius: f64, order: u32) -> f64 {
    let n = order.max(1) as f64;
    let x2n = (k * radius / n).powf(2.0 * n).min(1e30);
    x2n / (1.0 + x2n)
}

/// Builds the analytic mode set (module doc). Modes above `max_freq_hz` are dropped.
/// Returns the number written to `out`.
pub fn build_modes(cup: &CupState, max_freq_hz: f32, out: &mut [Mode; MAX_MODES]) -> usize {
    let md = cup.material.data();
    let el = md.elastic;
    let (e, nu, rho) = (el.youngs_pa as f64, el.poisson as f64, el.density as f64);
    let (radius, height, wall, floor) = cup_dimensions(&md, cup.size);
    let fill = cup.fill.clamp(0.0, 1.0) as f64;
    let pile_h = fill * height;
    let coverage = floor_coverage(pile_h, cup.grain_diameter_m as f64);
    let cup_mass = rho * (2.0 * PI * radius * height * wall + PI * radius * radius * floor);
    let grain_mass = PACKING_FRACTION as f64 * cup.grain_density as f64 * PI * radius * radius * pile_h;
    let freq_scale = 1.0 / (1.0 + ADDED_MASS_FRACTION * grain_mass / cup_mass).sqrt();
    let mut count = 0;
    let mut push = |m: Mode| {
        if count < MAX_MODES && m.freq_hz < max_freq_hz {
            out[count] = m;
            count += 1;
        }
    };
    // Wall ring modes.
    let ring_k = e * wall * wall / (12.0 * rho * (1.0 - nu * nu) * radius.powi(4));
    let wall_mass = rho * wall * 2.0 * PI * radius * height;
    let ring_wet = (fill + 0.3 * coverage).min(1.0);
    for n in RING_ORDERS {
        let nf = n as f64;
        let w = (ring_k * nf * nf * (nf * nf - 1.0).powi(2) / (nf * nf + 1.0)).sqrt() * freq_scale;
        let eta = md.loss_factor as f64 + GRAIN_CONTACT_LOSS * ring_wet;
        let k = w / SPEED_OF_SOUND as f64;
        let sigma = radiation_efficiency(k, radius, n);
        // shape w = cos(n phi) z / H: <psi^2> = 1/6, modal mass = rho h 2 pi R H / 6 (1 + 1/n^2)
        // (the tangential motion of an inextensional mode adds 1/n^2).
        let mass = wall_mass / 6.0 * (1.0 + 1.0 / (nf * nf));
        let area = sigma * 2.0 * PI * radius * height / 6.0;
        let orient = 1.618_034 * nf; // fixed, irrational orientation of the mode pair
        for (pair, split) in [(0usize, 1.0f64), (1, 1.002)] {
            let mut shape = [0f32; CUP_BUSES];
            shape[FLOOR_BUS] = 0.05;
            for ring in 0..WALL_RINGS {
                let z = (ring as f64 + 0.5) / WALL_RINGS as f64;
                for (s, az) in SECTOR_AZIMUTH.iter().enumerate() {
                    let ang = nf * az + orient + pair as f64 * PI / 2.0;
                    shape[1 + 2 * ring + s] = (z * ang.cos()) as f32;
                }
            }
            push(Mode {
                freq_hz: (w * split / (2.0 * PI)) as f32,
                decay_per_s: (eta * w / 2.0) as f32,
                shape,
                mass_kg: mass as f32,
                radiating_area_m2: area as f32,
                pan: ((orient + pair as f64).sin() * 0.8) as f32,
            });
        }
    }
    // Floor plate modes.
    let d = e * floor.powi(3) / (12.0 * (1.0 - nu * nu));
    let plate_mass = rho * floor * PI * radius * radius;
    for (i, &(m_diam, lambda2)) in PLATE_MODES.iter().enumerate() {
        let w = lambda2 / (radius * radius) * (d / (rho * floor)).sqrt() * freq_scale;
        let eta = md.loss_factor as f64 + GRAIN_CONTACT_LOSS * coverage;
        let k = w / SPEED_OF_SOUND as f64;
        let sigma = radiation_efficiency(k, radius, m_diam + 1);
        let mut shape = [0f32; CUP_BUSES];
        shape[FLOOR_BUS] = if m_diam == 0 { 0.6 } else { 0.45 };
        shape[1..].fill(0.08);
        push(Mode {
            freq_hz: (w / (2.0 * PI)) as f32,
            decay_per_s: (eta * w / 2.0) as f32,
            shape,
            // clamped-plate modes: <psi^2> ~ 0.2 of the peak, so M ~ 0.2 of the plate's mass
            mass_kg: (0.2 * plate_mass) as f32,
            radiating_area_m2: (sigma * PI * radius * radius * 0.2) as f32,
            pan: (((i as f64) * 2.4).sin() * 0.3) as f32,
        });
    }
    count
}

/// The resonator bank. Fixed capacity; `set_modes` never allocates.
pub struct ModalBank {
    sample_rate: f32,
    count: usize,
    /// Pole e^{(-delta + i w) T}.
    pole_re: [f32; MAX_MODES],
    pole_im: [f32; MAX_MODES],
    /// Input gain per bus: shape * T / M (m/s per N sample).
    input: [[f32; CUP_BUSES]; MAX_MODES],
    /// Output: pressure per unit surface velocity Re(y), per channel, Pa s/m.
    out: [[f32; MAX_MODES]; 2],
    y_re: [f32; MAX_MODES],
    y_im: [f32; MAX_MODES],
    modes: [Mode; MAX_MODES],
}

impl ModalBank {
    pub fn new(sample_rate: f32) -> Self {
        ModalBank {
            sample_rate,
            count: 0,
            pole_re: [0.0; MAX_MODES],
            pole_im: [0.0; MAX_MODES],
            input: [[0.0; CUP_BUSES]; MAX_MODES],
            out: [[0.0; MAX_MODES]; 2],
            y_re: [0.0; MAX_MODES],
            y_im: [0.0; MAX_MODES],
            modes: [Mode::ZERO; MAX_MODES],
        }
    }

    pub fn reset(&mut self) {
        self.y_re = [0.0; MAX_MODES];
        self.y_im = [0.0; MAX_MODES];
    }

    pub fn modes(&self) -> &[Mode] {
        &self.modes[..self.count]
    }

    /// Installs a mode set. Oscillator states are kept, so frequencies glide without clicks.
    /// `distance_m` is the listener distance, `width` the stereo width 0..1.
    pub fn set_modes(&mut self, modes: &[Mode], distance_m: f32, width: f32) {
        let t = 1.0 / self.sample_rate as f64;
        let n = modes.len().min(MAX_MODES);
        for i in n..self.count {
            self.y_re[i] = 0.0;
            self.y_im[i] = 0.0;
        }
        self.count = n;
        for (i, m) in modes.iter().take(n).enumerate() {
            self.modes[i] = *m;
            let w = 2.0 * PI * m.freq_hz as f64;
            let r = (-(m.decay_per_s as f64) * t).exp();
            self.pole_re[i] = (r * (w * t).cos()) as f32;
            self.pole_im[i] = (r * (w * t).sin()) as f32;
            for b in 0..CUP_BUSES {
                self.input[i][b] = (m.shape[b] as f64 * t / m.mass_kg as f64) as f32;
            }
            // pressure from the surface velocity Re(y) (module doc)
            let g = AIR_DENSITY as f64 * SPEED_OF_SOUND as f64 * (m.radiating_area_m2 as f64 / (4.0 * PI)).sqrt()
                / distance_m.max(0.05) as f64;
            let pan = (m.pan * width.clamp(0.0, 1.0)) as f64;
            let theta = (pan + 1.0) * PI / 4.0;
            let gains = [
                theta.cos() * std::f64::consts::SQRT_2,
                theta.sin() * std::f64::consts::SQRT_2,
            ];
            for (out, gain) in self.out.iter_mut().zip(gains) {
                out[i] = (g * gain) as f32;
            }
        }
    }

    /// Advances the bank by one sample with bus forces `force` (N) and returns (L, R) in Pa.
    #[inline]
    pub fn tick(&mut self, force: &[f32; CUP_BUSES]) -> (f32, f32) {
        let (mut l, mut r) = (0.0f32, 0.0f32);
        for i in 0..self.count {
            let inp = &self.input[i];
            let mut u = 0.0;
            for b in 0..CUP_BUSES {
                u += inp[b] * force[b];
            }
            let (yr, yi) = (self.y_re[i], self.y_im[i]);
            let nr = yr * self.pole_re[i] - yi * self.pole_im[i] + u;
            let ni = yr * self.pole_im[i] + yi * self.pole_re[i];
            self.y_re[i] = nr;
            self.y_im[i] = ni;
            l += self.out[0][i] * nr;
            r += self.out[1][i] * nr;
        }
        (l, r)
    }

    /// Flushes tiny states to zero (no denormals in long tails).
    pub fn flush_denormals(&mut self) {
        for i in 0..self.count {
            if self.y_re[i].abs() < 1e-20 && self.y_im[i].abs() < 1e-20 {
                self.y_re[i] = 0.0;
                self.y_im[i] = 0.0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cup(material: CupMaterial, fill: f32) -> CupState {
        CupState {
            material,
            size: 1.0,
            fill,
            grain_density: 1587.0,
            grain_diameter_m: 0.5e-3,
        }
    }

    #[test]
    fn impulse_through_a_mode_decays_as_analytic() {
        let fs = 48_000.0;
        let mut modes = [Mode::ZERO; MAX_MODES];
        let n = build_modes(&cup(CupMaterial::Glass, 0.0), 20_000.0, &mut modes);
        assert!(n > 10);
        let m = modes[0];
        let mut bank = ModalBank::new(fs);
        bank.set_modes(&modes[..1], 0.5, 0.0);
        let mut f = [0.0; CUP_BUSES];
        f[1] = 1.0 / (1.0 / fs); // 1 N s impulse into bus 1
        bank.tick(&f);
        let v0 = (bank.y_re[0].powi(2) + bank.y_im[0].powi(2)).sqrt();
        let expected = (m.shape[1] / m.mass_kg).abs();
        assert!((v0 / expected - 1.0).abs() < 1e-3);
        let zero = [0.0; CUP_BUSES];
        let steps = (fs * 0.1) as usize;
        for _ in 0..steps {
            bank.tick(&zero);
        }
        let v1 = (bank.y_re[0].powi(2) + bank.y_im[0].powi(2)).sqrt();
        let analytic = expected * (-m.decay_per_s * steps as f32 / fs).exp();
        assert!((v1 / analytic - 1.0).abs() < 1e-2, "{v1} vs {analytic}");
    }

    #[test]
    fn frequencies_scale_inversely_with_size() {
        let mut a = [Mode::ZERO; MAX_MODES];
        let mut b = a;
        build_modes(&cup(CupMaterial::Ceramic, 0.0), 1e9, &mut a);
        let mut big = cup(CupMaterial::Ceramic, 0.0);
        big.size = 2.0;
        build_modes(&big, 1e9, &mut b);
        assert!((a[0].freq_hz / b[0].freq_hz - 2.0).abs() < 1e-3);
    }

    #[test]
    fn steel_rings_longer_than_plastic_and_fill_damps() {
        let mut m = [Mode::ZERO; MAX_MODES];
        build_modes(&cup(CupMaterial::Steel, 0.0), 1e9, &mut m);
        let steel = m[0].t60_s();
        build_modes(&cup(CupMaterial::Plastic, 0.0), 1e9, &mut m);
        let plastic = m[0].t60_s();
        build_modes(&cup(CupMaterial::Steel, 0.5), 1e9, &mut m);
        let steel_full = m[0].t60_s();
        assert!(steel > 10.0 * plastic, "{steel} {plastic}");
        assert!(steel_full < 0.2 * steel, "{steel_full} {steel}");
    }
}
