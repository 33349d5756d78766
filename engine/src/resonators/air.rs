//! The air in the vessel: the acoustic resonances of the air column above the grains, which
//! rise in pitch as the vessel fills (issue 44). No seed covers them; the model is the
//! plane-wave (Webster) one of wind instruments, which holds below the first transverse mode
//! of the opening (f < 1.84 c / (2 pi a): 2.5 kHz for a mug's 40 mm radius):
//!
//! - **The column** (`transfer`): the inner profile above the bed, segment by segment, each a
//!   cylinder or a cone with its plane- or spherical-wave transfer matrix (Fletcher & Rossing,
//!   *The Physics of Musical Instruments*, 2nd ed. 1998, §8.2–8.3 and eq. 8.21 for cones),
//!   with the viscothermal losses of the walls (ibid. eqs. 8.18–8.19: attenuation
//!   3e-5 sqrt(f) / a per metre, phase speed c (1 - 1.65e-3 / (a sqrt f))); an abrupt narrowing
//!   (a neck on a shoulder) adds its orifice's mass end correction 0.85 a (1 - 1.25 a / b)
//!   (Ingard, "On the theory and design of acoustic resonators", JASA 25 (1953) 1037).
//! - **The opening** radiates as an unflanged pipe, Z_r = rho c / S ((ka)^2 / 4 + j 0.6133 ka)
//!   (Levine & Schwinger, "On the radiation of sound from an unflanged circular pipe",
//!   Phys. Rev. 73 (1948) 383, low-ka form).
//! - **The bed** closes the column from below: a rigid-frame porous layer on the cup's floor,
//!   Z_s = -j Z_c cot(k_b d) (Allard & Atalla, *Propagation of Sound in Porous Media*, 2nd ed.
//!   2009, eq. 3.16), its equivalent fluid from the Johnson–Champoux–Allard model (ibid.
//!   eqs. 5.50 and 5.52) with parameters that follow from the grain's diameter d_g and the
//!   bed's porosity phi (`Bed::of_grains`): flow resistivity by Kozeny–Carman,
//!   sigma = 180 eta (1 - phi)^2 / (phi^3 d_g^2) (Carman, *Flow of Gases through Porous
//!   Media*, 1956); tortuosity of a packing of spheres 1 + (1 - phi) / (2 phi) (Berryman,
//!   "Confirmation of Biot's theory", Appl. Phys. Lett. 37 (1980) 382); the thermal length
//!   twice the pores' volume over their surface, Lambda' = phi d_g / (3 (1 - phi)) (Allard &
//!   Atalla eq. 5.28), and the viscous one half of it (the ratio they give for fibres).
//! - **The source** is the grains' collisions at the bed, a volume velocity Q there. The
//!   air's transfer `H = U_mouth / Q` is what the column does to their sound relative to the
//!   same source in the open (both radiate as monopoles to a far listener): 1 at low
//!   frequency, peaks at the column's resonances (quarter waves with end corrections; a
//!   Helmholtz resonance for a narrow neck).
//!
//! `air_modes` finds the peaks of |H| (frequency, bandwidth, height) for the column as it
//! stands; `AirBank` plays them as band-passes on the grains' sound, each peak's height less
//! the direct sound's 1, into the cup stem. The column depends on the fill, so the modes are
//! found again whenever the cup's modes are (`CupResonator::update`, at most at every 1/500
//! of fill), in about 300 evaluations of `transfer`: no allocation, a fraction of a
//! millisecond.

use crate::base::materials::{bending_stiffness, AIR_DENSITY, PACKING_FRACTION, SPEED_OF_SOUND};
use crate::base::svf::Svf;
use crate::derived::cups::{Cup, CupState, MAX_PROFILE};
use crate::fft::Complex64 as C;
use std::f64::consts::PI;

/// Air modes played at most.
pub const AIR_MODES: usize = 3;
/// Dynamic viscosity of air at 20 °C, Pa s.
const AIR_VISCOSITY: f64 = 1.81e-5;
/// Prandtl number of air.
const PRANDTL: f64 = 0.71;
/// Ratio of specific heats of air.
const GAMMA: f64 = 1.4;
/// Atmospheric pressure, Pa.
const P0: f64 = 101_325.0;
/// Unflanged pipe's end correction over its radius (Levine & Schwinger 1948).
pub const END_CORRECTION: f64 = 0.6133;
/// The band searched for resonances, Hz.
const LOWEST_HZ: f64 = 80.0;
const HIGHEST_HZ: f64 = 8_000.0;
/// Points of the coarse scan over that band (log-spaced: 4.8 % apart; a peak of Q 30 still
/// stands above its neighbours there).
const SCAN: usize = 100;
/// A peak must rise this far above the direct sound (|H| = 1) to count as a resonance.
const MIN_PEAK: f64 = 1.5;

/// The grain bed as a rigid-frame porous layer (module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bed {
    /// Thickness over the cup's floor, m.
    pub depth_m: f64,
    /// Porosity (void fraction).
    pub porosity: f64,
    /// Static airflow resistivity, Pa s / m^2.
    pub resistivity: f64,
    /// High-frequency tortuosity.
    pub tortuosity: f64,
    /// Viscous and thermal characteristic lengths, m.
    pub viscous_m: f64,
    pub thermal_m: f64,
}

impl Bed {
    /// A bed `depth_m` deep of spheres `diameter_m` across packed to `porosity` (module doc:
    /// Kozeny–Carman, Berryman, Allard & Atalla eq. 5.28).
    pub fn of_grains(depth_m: f64, diameter_m: f64, porosity: f64) -> Bed {
        let phi = porosity.clamp(0.05, 0.95);
        let d = diameter_m.max(1e-6);
        let thermal_m = phi * d / (3.0 * (1.0 - phi));
        Bed {
            depth_m: depth_m.max(0.0),
            porosity: phi,
            resistivity: 180.0 * AIR_VISCOSITY * (1.0 - phi).powi(2) / (phi.powi(3) * d * d),
            tortuosity: 1.0 + (1.0 - phi) / (2.0 * phi),
            viscous_m: 0.5 * thermal_m,
            thermal_m,
        }
    }

    /// The equivalent fluid's density and bulk modulus at `omega` (rad/s), e^{j omega t}:
    /// Johnson–Champoux–Allard, Allard & Atalla (2009) eqs. 5.50 and 5.52, each over the
    /// porosity (the layer's fluid per unit of its whole area).
    fn equivalent_fluid(&self, omega: f64) -> (C, C) {
        let rho0 = AIR_DENSITY as f64;
        let (phi, sigma, alpha) = (self.porosity, self.resistivity, self.tortuosity);
        let j = C::new(0.0, 1.0);
        let viscous = (C::new(1.0, 0.0)
            + j * 4.0 * alpha * alpha * AIR_VISCOSITY * rho0 * omega
                / (sigma * sigma * self.viscous_m * self.viscous_m * phi * phi))
            .sqrt();
        let rho = alpha * rho0 / phi * (C::new(1.0, 0.0) + sigma * phi / (j * omega * rho0 * alpha) * viscous);
        let lt2 = self.thermal_m * self.thermal_m;
        let thermal = (C::new(1.0, 0.0) + j * rho0 * omega * PRANDTL * lt2 / (16.0 * AIR_VISCOSITY)).sqrt();
        let inner = C::new(1.0, 0.0) + 8.0 * AIR_VISCOSITY / (j * lt2 * PRANDTL * omega * rho0) * thermal;
        let k = GAMMA * P0 / phi / (GAMMA - (GAMMA - 1.0) / inner);
        (rho, k)
    }

    /// Surface impedance of the layer on a rigid floor, Pa s / m (specific): Allard & Atalla
    /// (2009) eq. 3.16, Z_s = -j Z_c cot(k_b d). `None` for no layer (a rigid floor).
    pub fn surface_impedance(&self, omega: f64) -> Option<C> {
        if self.depth_m < 1e-5 {
            return None;
        }
        let (rho, k) = self.equivalent_fluid(omega);
        let zc = (rho * k).sqrt();
        let kb = omega * (rho / k).sqrt();
        let x = kb * self.depth_m;
        Some(C::new(0.0, -1.0) * zc * x.cos() / x.sin())
    }

    /// Normal-incidence absorption coefficient of the layer at `f_hz` (a check on the model:
    /// 1 - |R|^2, R = (Z_s - rho c) / (Z_s + rho c)).
    pub fn absorption(&self, f_hz: f64) -> f64 {
        let z0 = AIR_DENSITY as f64 * SPEED_OF_SOUND as f64;
        match self.surface_impedance(2.0 * PI * f_hz) {
            Some(z) => 1.0 - ((z - z0) / (z + z0)).norm_sqr(),
            None => 0.0,
        }
    }
}

/// A 2x2 complex transfer matrix [p_in; U_in] = T [p_out; U_out].
type Matrix = [[C; 2]; 2];

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    std::array::from_fn(|i| std::array::from_fn(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j]))
}

/// The lossy wavenumber in a duct of radius `a_m` at `f_hz`: Fletcher & Rossing (1998)
/// eqs. 8.18–8.19 (air at room temperature), k = omega / v - j alpha.
fn wavenumber(f_hz: f64, a_m: f64) -> C {
    let a = a_m.max(1e-3);
    let sf = f_hz.max(1.0).sqrt();
    let v = SPEED_OF_SOUND as f64 * (1.0 - 1.65e-3 / (a * sf));
    C::new(2.0 * PI * f_hz / v, -3e-5 * sf / a)
}

/// Transfer matrix of a cylinder of radius `a` and length `l` (Fletcher & Rossing §8.2).
fn cylinder(f_hz: f64, a: f64, l: f64) -> Matrix {
    let k = wavenumber(f_hz, a);
    let zc = AIR_DENSITY as f64 * SPEED_OF_SOUND as f64 / (PI * a * a);
    let (c, s) = ((k * l).cos(), (k * l).sin());
    let j = C::new(0.0, 1.0);
    [[c, j * zc * s], [j * s / zc, c]]
}

/// Transfer matrix of a cone from radius `r1` to `r2` over length `l`: spherical waves
/// p = sin(kx)/x, cos(kx)/x from the apex (Fletcher & Rossing eq. 8.21), the volume velocity
/// U = -S(x) / (j omega rho) dp/dx with S = pi r^2, evaluated at both ends: T = M(x1) M(x2)^-1.
fn cone(f_hz: f64, r1: f64, r2: f64, l: f64) -> Matrix {
    let k = wavenumber(f_hz, 0.5 * (r1 + r2));
    let slope = (r2 - r1) / l;
    let omega = 2.0 * PI * f_hz;
    let basis = |r: f64| -> Matrix {
        let x = r / slope;
        let (s, c) = ((k * x).sin(), (k * x).cos());
        let dsin = (k * c * x - s) / (x * x);
        let dcos = (-k * s * x - c) / (x * x);
        let flow = -PI * r * r / (C::new(0.0, omega * AIR_DENSITY as f64));
        [[s / x, c / x], [flow * dsin, flow * dcos]]
    };
    let (m1, m2) = (basis(r1), basis(r2));
    let det = m2[0][0] * m2[1][1] - m2[0][1] * m2[1][0];
    let inv = [[m2[1][1] / det, -m2[0][1] / det], [-m2[1][0] / det, m2[0][0] / det]];
    mul(&m1, &inv)
}

/// The air's transfer H = U_mouth / Q at `f_hz` for a source of volume velocity Q on the
/// bed at height `bed_z` (m) in a vessel whose wall runs through `wall` ((r, z) points, z
/// rising, m, from the floor's edge to the rim) and whose bed is `bed` (`None`: a rigid
/// floor). Module doc: the column's matrices, the opening's radiation, the bed's impedance.
pub fn transfer(wall: &[[f64; 2]], bed_z: f64, bed: Option<&Bed>, f_hz: f64) -> C {
    transfer_to(wall, bed_z, bed, Top::Open, f_hz)
}

/// What closes the column at the rim: nothing (the opening radiates) or a lid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Top {
    Open,
    Lid(Lid),
}

/// `transfer` with the column's top `top`: open, H = U_mouth / Q; under a lid, H = U_lid / Q,
/// the lid's volume velocity (which radiates as the opening's would) over the source's.
pub fn transfer_to(wall: &[[f64; 2]], bed_z: f64, bed: Option<&Bed>, top: Top, f_hz: f64) -> C {
    let one = C::new(1.0, 0.0);
    let zero = C::new(0.0, 0.0);
    let mut t: Matrix = [[one, zero], [zero, one]];
    let mut area_bed = None;
    let omega = 2.0 * PI * f_hz;
    let rho = AIR_DENSITY as f64;
    for w in wall.windows(2) {
        let ([r0, z0], [r1, z1]) = (w[0], w[1]);
        if z1 <= z0 {
            // a flat ledge: an abrupt change of section at z0 (above the bed), whose narrower
            // side's orifice adds its mass (Ingard 1953)
            if z0 > bed_z && r1 != r0 {
                let (a, b) = (r0.min(r1), r0.max(r1));
                let delta = 0.85 * a * (1.0 - 1.25 * a / b).max(0.0);
                let m = C::new(0.0, omega * rho * delta / (PI * a * a));
                t = mul(&t, &[[one, m], [zero, one]]);
            }
            continue;
        }
        if z1 <= bed_z {
            continue;
        }
        let lo = z0.max(bed_z);
        let ra = r0 + (r1 - r0) * (lo - z0) / (z1 - z0);
        area_bed.get_or_insert(PI * ra * ra);
        let l = z1 - lo;
        let seg = if (r1 - ra).abs() < 1e-6 * l {
            cylinder(f_hz, ra, l)
        } else {
            cone(f_hz, ra, r1, l)
        };
        t = mul(&t, &seg);
    }
    let a = wall.last().map_or(0.04, |p| p[0]);
    let s_mouth = PI * a * a;
    let ka = omega / SPEED_OF_SOUND as f64 * a;
    // the opening's radiation, or under a lid the same load on the lid's volume velocity
    let radiation = rho * SPEED_OF_SOUND as f64 / s_mouth * C::new(ka * ka / 4.0, END_CORRECTION * ka);
    let zr = match top {
        Top::Open => radiation,
        Top::Lid(lid) => lid.impedance(omega) + radiation,
    };
    let den = t[1][0] * zr + t[1][1];
    let h = one / den;
    let (Some(bed), Some(s_bed)) = (bed, area_bed) else {
        return h;
    };
    match bed.surface_impedance(omega) {
        // the source drives the bed and the column in parallel: the column takes
        // Z_bed / (Z_bed + Z_up) of it
        Some(zs) => {
            let z_bed = zs / s_bed;
            let z_up = (t[0][0] * zr + t[0][1]) / den;
            h * z_bed / (z_bed + z_up)
        }
        None => h,
    }
}

/// A jar's lid, the closed vessel's top (issue 44): a clamped circular plate of the rim's
/// radius, moved by the air under it in its fundamental (0, 0) mode, whose frequency is
/// f01 = (10.2158 / (2 pi a^2)) sqrt(D / (rho h)), D = E h^3 / (12 (1 - nu^2)) (Leissa,
/// *Vibration of Plates*, NASA SP-160, 1969, §2.1.1 and Table 2.1). For the air it is an
/// equivalent piston: the mode taken as the clamped plate's static deflection
/// w0 (1 - r^2/a^2)^2 (Timoshenko & Woinowsky-Krieger, *Theory of Plates and Shells*, 2nd ed.
/// 1959, §62), which sweeps the volume w0 pi a^2 / 3 (the piston's area S = pi a^2 / 3) with
/// the kinetic energy of a mass M = rho h pi a^2 / 5 at w0; its stiffness M (2 pi f01)^2 with
/// a loss factor (hysteretic, K (1 + j eta)). Its acoustic impedance, pressure under it over
/// the volume velocity it sweeps: Z = (j w M + K (1 + j eta) / (j w)) / S^2. Outside, its
/// volume velocity meets the load the open end's would (Levine & Schwinger's unflanged pipe,
/// above): the lid closes the pipe's end, in no baffle. (The load is a uniform piston's; the
/// clamped shape's radiation mass at the same volume velocity is larger, about 1.4 times,
/// which would lower the lid's mode by under 0.5 %.)
///
/// The lid a shaken jar has (`Lid::twist_off`): a twist-off lid of tinplate, steel
/// 0.2 mm thick (tinplate for closures is 0.14-0.28 mm, EN 10202), loss factor 0.02 (an
/// estimate for a lid with its sealing compound: bare steel's is about 1e-4). Under a lid the
/// vessel's own walls pass far less (glass 3 mm is over ten times the lid's mass a unit area,
/// and stiffer still below its ring frequency); they are left out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lid {
    pub radius_m: f64,
    pub thickness_m: f64,
    /// Steel's density (kg/m^3), Young's modulus (Pa) and Poisson's ratio.
    pub density: f64,
    pub youngs_pa: f64,
    pub poisson: f64,
    pub loss_factor: f64,
}

/// Leissa (1969) Table 2.1: lambda^2 of the clamped circular plate's (0, 0) mode.
const CLAMPED_DISC_LAMBDA2: f64 = 10.2158;

impl Lid {
    /// A tinplate twist-off lid over a rim of radius `radius_m` (the type's doc).
    pub fn twist_off(radius_m: f64) -> Lid {
        Lid {
            radius_m: radius_m.max(1e-3),
            thickness_m: 0.2e-3,
            density: 7850.0,
            youngs_pa: 2.0e11,
            poisson: 0.3,
            loss_factor: 0.02,
        }
    }

    /// The twist-off lid over `cup`'s rim (the engine's, `for_cup_to`, and `granary inspect
    /// cup --closed`'s).
    pub fn over(cup: &Cup) -> Lid {
        Lid::twist_off(cup.rim_radius as f64)
    }

    /// Its bending stiffness D, N m (`materials::bending_stiffness`).
    pub fn bending_stiffness(&self) -> f64 {
        bending_stiffness(self.youngs_pa, self.thickness_m, self.poisson)
    }

    /// The (0, 0) mode's frequency in vacuo, Hz (Leissa Table 2.1).
    pub fn fundamental_hz(&self) -> f64 {
        let (a, h) = (self.radius_m, self.thickness_m);
        let d = self.bending_stiffness();
        CLAMPED_DISC_LAMBDA2 / (2.0 * PI * a * a) * (d / (self.density * h)).sqrt()
    }

    /// The equivalent piston's area (m^2) and mass (kg): pi a^2 / 3 and rho h pi a^2 / 5.
    pub fn piston(&self) -> (f64, f64) {
        let area = PI * self.radius_m * self.radius_m;
        (area / 3.0, self.density * self.thickness_m * area / 5.0)
    }

    /// The lid's acoustic impedance at `omega` (rad/s), Pa s / m^3 (the type's doc).
    pub fn impedance(&self, omega: f64) -> C {
        let (s, m) = self.piston();
        let w01 = 2.0 * PI * self.fundamental_hz();
        let k = m * w01 * w01;
        let w = omega.max(1e-6);
        C::new(k * self.loss_factor / w, w * m - k / w) / (s * s)
    }
}

/// One resonance of the air: its frequency, quality factor and the height of |H| there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AirMode {
    pub freq_hz: f32,
    pub q: f32,
    /// |H| at the peak (1: the direct sound's level).
    pub peak: f32,
}

impl AirMode {
    pub const ZERO: AirMode = AirMode {
        freq_hz: 0.0,
        q: 1.0,
        peak: 1.0,
    };
}

/// The peaks of |H| (`transfer`) between 80 Hz and `max_hz` (at most 8 kHz), lowest first,
/// into `out`; returns how many. A log-spaced scan, each peak refined by golden-section
/// search and its bandwidth found where |H|^2 falls to half its peak's (bisection).
pub fn air_modes(wall: &[[f64; 2]], bed_z: f64, bed: Option<&Bed>, max_hz: f64, out: &mut [AirMode]) -> usize {
    air_modes_to(wall, bed_z, bed, Top::Open, max_hz, out)
}

/// `air_modes` under `top` (`transfer_to`).
pub fn air_modes_to(
    wall: &[[f64; 2]],
    bed_z: f64,
    bed: Option<&Bed>,
    top: Top,
    max_hz: f64,
    out: &mut [AirMode],
) -> usize {
    debug_assert!(out.len() <= AIR_MODES, "at most AIR_MODES modes");
    let mag = |f: f64| transfer_to(wall, bed_z, bed, top, f).norm();
    let mut scan = Scan::new(top, max_hz, out.len(), &mag);
    while !scan.step(&mag) {}
    scan.finish(out)
}

/// `air_modes_to`'s scan, one scan point at a time (each with its peak's refinement where it
/// has one), so that `AirTable` can spread a scan over windows: the same evaluations in the
/// same order however it is stepped, so the same modes.
#[derive(Clone, Copy, Debug)]
struct Scan {
    /// The scan's top, Hz, and its log step.
    hi: f64,
    ratio: f64,
    /// Under a lid: every local maximum refined before it is held to `MIN_PEAK`.
    sharp: bool,
    /// The next scan point, the magnitudes at the two before it, the modes found.
    i: usize,
    prev: [f64; 2],
    n: usize,
    out: [AirMode; AIR_MODES],
    /// At most this many modes (the caller's room, at most `AIR_MODES`).
    room: usize,
}

impl Scan {
    /// A scan of `mag` (|H| at a frequency, Hz) up to `max_hz` (at most 8 kHz) under `top`,
    /// for at most `room` modes; its first two points evaluated.
    fn new(top: Top, max_hz: f64, room: usize, mag: &impl Fn(f64) -> f64) -> Scan {
        let hi = max_hz.min(HIGHEST_HZ);
        let ratio = (hi / LOWEST_HZ).powf(1.0 / (SCAN - 1) as f64);
        let mut scan = Scan {
            hi,
            ratio,
            // a lid's resonance is sharper than the scan (Q 45-110): under a lid every local
            // maximum is refined before it is held to `MIN_PEAK`; an open column's peaks are
            // broad enough to be judged at the scan's points
            sharp: matches!(top, Top::Lid(_)),
            i: 2,
            prev: [0.0; 2],
            n: 0,
            out: [AirMode::ZERO; AIR_MODES],
            room: room.min(AIR_MODES),
        };
        scan.prev = [mag(scan.freq(0)), mag(scan.freq(1))];
        scan
    }

    fn freq(&self, i: usize) -> f64 {
        LOWEST_HZ * self.ratio.powi(i as i32)
    }

    /// Whether the scan is over (all its points, or as many modes as there is room for).
    fn done(&self) -> bool {
        self.i >= SCAN || self.n == self.room
    }

    /// The next scan point; whether the scan is over.
    fn step(&mut self, mag: &impl Fn(f64) -> f64) -> bool {
        if self.done() {
            return true;
        }
        let (i, prev, hi) = (self.i, self.prev, self.hi);
        let next = mag(self.freq(i));
        let candidate = prev[1] > prev[0] && prev[1] >= next && (prev[1] > MIN_PEAK || self.sharp);
        let refined = candidate.then(|| golden_max(mag, self.freq(i - 2), self.freq(i)));
        if let Some((f, peak)) = refined.filter(|&(_, peak)| !self.sharp || peak > MIN_PEAK) {
            let half = peak / std::f64::consts::SQRT_2;
            let lo = edge(mag, f, f / 4.0, half);
            let up = edge(mag, f, (f * 4.0).min(2.0 * hi), half);
            self.out[self.n] = AirMode {
                freq_hz: f as f32,
                q: (f / (up - lo).max(1e-3 * f)).max(0.5) as f32,
                peak: peak as f32,
            };
            self.n += 1;
        }
        self.prev = [prev[1], next];
        self.i += 1;
        self.done()
    }

    /// The modes found into `out`; how many.
    fn finish(&self, out: &mut [AirMode]) -> usize {
        out[..self.n].copy_from_slice(&self.out[..self.n]);
        self.n
    }
}

/// The air modes of the vessel `state` describes (`air_modes`): its wall from the floor's
/// edge to the rim, the bed as deep as the fill, of the grains packed as the scene packs them
/// (porosity 1 - `PACKING_FRACTION`). The engine's (`CupResonator::update`) and `granary
/// inspect cup`'s.
pub fn for_cup(state: &CupState, max_hz: f64, out: &mut [AirMode]) -> usize {
    for_cup_to(state, false, max_hz, out)
}

/// `for_cup`, open or (`closed`) under the twist-off lid the shaken vessel is closed with
/// (`Lid::twist_off` at the rim's radius).
pub fn for_cup_to(state: &CupState, closed: bool, max_hz: f64, out: &mut [AirMode]) -> usize {
    let c = Column::of(state, closed);
    air_modes_to(c.wall(), c.bed_z, Some(&c.bed), c.top, max_hz, out)
}

/// The air column of a vessel (`for_cup_to`'s inputs to `air_modes_to`), kept by a scan in
/// progress (`AirTable`).
#[derive(Clone, Copy, Debug)]
struct Column {
    wall: [[f64; 2]; MAX_PROFILE],
    len: usize,
    bed_z: f64,
    bed: Bed,
    top: Top,
}

impl Column {
    /// `state`'s column: its wall from the floor's edge to the rim, the bed as deep as the
    /// fill, of the grains packed as the scene packs them, open or under the lid.
    fn of(state: &CupState, closed: bool) -> Column {
        let profile = state.cup.profile();
        let mut wall = [[0.0f64; 2]; MAX_PROFILE];
        for (w, p) in wall.iter_mut().zip(&profile[1..]) {
            *w = [p[0] as f64, p[1] as f64];
        }
        let bed_z = (state.fill.clamp(0.0, 1.0) * state.cup.depth) as f64;
        Column {
            wall,
            len: profile.len() - 1,
            bed_z,
            bed: Bed::of_grains(bed_z, state.grain_diameter_m as f64, 1.0 - PACKING_FRACTION as f64),
            top: if closed {
                Top::Lid(Lid::over(&state.cup))
            } else {
                Top::Open
            },
        }
    }

    fn wall(&self) -> &[[f64; 2]] {
        &self.wall[..self.len]
    }

    /// |H| at `f_hz` (`transfer_to`).
    fn mag(&self, f_hz: f64) -> f64 {
        transfer_to(self.wall(), self.bed_z, Some(&self.bed), self.top, f_hz).norm()
    }
}

/// Fill levels the air's modes are computed at (`AirTable`): every 1/64 of the depth.
pub const FILL_GRID: usize = 64;

/// The air's modes over the fill, computed at the grid's two points around the fill (every
/// 1/`FILL_GRID`, when the fill first comes between them) and interpolated between them:
/// frequencies, Qs and peaks linearly; a mode one side has and the other not (none within a
/// quarter of its frequency) fades, its peak to 1, towards the side without it. So a pour
/// computes its air 64 times at most, not at every change of its fill, and its pitch glides.
pub struct AirTable {
    /// The vessel the points were computed for (fill 0), the band's top and whether it is
    /// closed.
    base: Option<(CupState, f64, bool)>,
    /// Two grid points: the index k (fill k / `FILL_GRID`), its modes and their count.
    points: [(usize, [AirMode; AIR_MODES], usize); 2],
    /// The grid point the fill will want next (the one past `points` in the direction the
    /// fill last moved), its column and its scan so far (`advance`).
    next: Option<(usize, Column, Scan)>,
    /// The lower grid point of the last call (`modes`), and whether the fill last moved
    /// down a grid step (kept while it stays in one).
    last_k: Option<usize>,
    falling: bool,
}

/// Scan points `AirTable::advance` takes a window: a grid point's scan (100 points and the
/// peaks' refinements, about 50 us in one piece on the development machine) spreads over
/// about 13 windows, a few microseconds each, well before the fill reaches it.
pub const SCAN_STEPS_PER_WINDOW: usize = 8;

impl Default for AirTable {
    fn default() -> Self {
        AirTable::new()
    }
}

impl AirTable {
    pub fn new() -> AirTable {
        AirTable {
            base: None,
            points: [(usize::MAX, [AirMode::ZERO; AIR_MODES], 0); 2],
            next: None,
            last_k: None,
            falling: false,
        }
    }

    /// The modes at `state`'s fill (interpolated, see the type's doc) into `out`, open or
    /// (`closed`) under the lid; how many. A grid point computed ahead (`advance`) is
    /// finished here if the fill wants it first; the modes are the same either way.
    pub fn modes(&mut self, state: &CupState, closed: bool, max_hz: f64, out: &mut [AirMode; AIR_MODES]) -> usize {
        let fill = state.fill.clamp(0.0, 1.0) as f64 * FILL_GRID as f64;
        let k = (fill.floor() as usize).min(FILL_GRID - 1);
        let t = fill - k as f64;
        let base = (CupState { fill: 0.0, ..*state }, max_hz, closed);
        if self.base != Some(base) {
            self.base = Some(base);
            self.points[0].0 = usize::MAX;
            self.points[1].0 = usize::MAX;
            self.next = None;
            self.last_k = None;
            self.falling = false;
        }
        // a point the table holds goes to its slot (the fill moved one step, either way), so
        // that the one computed next replaces the point the fill has left
        if self.points[1].0 == k || self.points[0].0 == k + 1 {
            self.points.swap(0, 1);
        }
        for (i, want) in [k, k + 1].into_iter().enumerate() {
            if self.points[i].0 == want {
                continue;
            }
            let mut modes = [AirMode::ZERO; AIR_MODES];
            let n = match self.next.take_if(|n| n.0 == want) {
                Some((_, column, mut scan)) => {
                    while !scan.step(&|f| column.mag(f)) {}
                    scan.finish(&mut modes)
                }
                None => for_cup_to(&grid_state(state, want), closed, max_hz, &mut modes),
            };
            self.points[i] = (want, modes, n);
        }
        // the point past these two the way the fill last moved (up at first: a pour fills)
        if let Some(last) = self.last_k.filter(|&last| last != k) {
            self.falling = k < last;
        }
        self.last_k = Some(k);
        let ahead = if self.falling {
            k.checked_sub(1)
        } else {
            Some(k + 2).filter(|&a| a <= FILL_GRID)
        };
        if self.next.as_ref().map(|n| n.0) != ahead {
            self.next = ahead.map(|at| {
                let column = Column::of(&grid_state(state, at), closed);
                let scan = Scan::new(column.top, max_hz, AIR_MODES, &|f| column.mag(f));
                (at, column, scan)
            });
        }
        let (a, b) = (&self.points[0], &self.points[1]);
        interpolate(&a.1[..a.2], &b.1[..b.2], t as f32, out)
    }

    /// `SCAN_STEPS_PER_WINDOW` more of the scan of the grid point the fill wants next (a
    /// window's share; nothing once it is done).
    pub fn advance(&mut self) {
        if let Some((_, column, scan)) = &mut self.next {
            for _ in 0..SCAN_STEPS_PER_WINDOW {
                if scan.step(&|f| column.mag(f)) {
                    break;
                }
            }
        }
    }
}

/// `state` at grid point `k` of the fill (`AirTable`).
fn grid_state(state: &CupState, k: usize) -> CupState {
    CupState {
        fill: (k as f64 / FILL_GRID as f64) as f32,
        ..*state
    }
}

/// Modes `t` of the way from `a` to `b` (`AirTable`), lowest first, at most `AIR_MODES`.
fn interpolate(a: &[AirMode], b: &[AirMode], t: f32, out: &mut [AirMode; AIR_MODES]) -> usize {
    let mut all = [AirMode::ZERO; 2 * AIR_MODES];
    let mut n = 0;
    let near = |x: &AirMode, ys: &[AirMode]| ys.iter().copied().find(|y| (y.freq_hz / x.freq_hz - 1.0).abs() < 0.25);
    let lerp = |x: f32, y: f32| x + (y - x) * t;
    for m in a {
        all[n] = match near(m, b) {
            Some(o) => AirMode {
                freq_hz: lerp(m.freq_hz, o.freq_hz),
                q: lerp(m.q, o.q),
                peak: lerp(m.peak, o.peak),
            },
            None => AirMode {
                peak: lerp(m.peak, 1.0),
                ..*m
            },
        };
        n += 1;
    }
    for m in b {
        if near(m, a).is_none() {
            all[n] = AirMode {
                peak: lerp(1.0, m.peak),
                ..*m
            };
            n += 1;
        }
    }
    let all = &mut all[..n];
    all.sort_by(|x, y| x.freq_hz.total_cmp(&y.freq_hz));
    let n = n.min(AIR_MODES);
    out[..n].copy_from_slice(&all[..n]);
    n
}

/// The maximum of `g` in [a, b] by golden-section search (to 0.03 %), (argmax, max).
fn golden_max(g: &impl Fn(f64) -> f64, mut a: f64, mut b: f64) -> (f64, f64) {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
    let (mut gc, mut gd) = (g(c), g(d));
    for _ in 0..40 {
        if gc > gd {
            b = d;
            d = c;
            gd = gc;
            c = b - r * (b - a);
            gc = g(c);
        } else {
            a = c;
            c = d;
            gc = gd;
            d = a + r * (b - a);
            gd = g(d);
        }
        if b - a < 3e-4 * b {
            break;
        }
    }
    let f = 0.5 * (a + b);
    (f, g(f))
}

/// Where `g` falls to `level` going from the peak at `f` towards `limit` (bisection); the
/// limit if it never does.
fn edge(g: &impl Fn(f64) -> f64, f: f64, limit: f64, level: f64) -> f64 {
    // walk out in steps of 2 % until below the level, then bisect that step
    let step: f64 = if limit > f { 1.02 } else { 1.0 / 1.02 };
    let (mut inside, mut outside) = (f, f * step);
    while g(outside) > level {
        inside = outside;
        outside *= step;
        if (limit > f && outside >= limit) || (limit < f && outside <= limit) {
            return limit;
        }
    }
    // to 2 % / 2^8
    for _ in 0..8 {
        let mid = (inside * outside).sqrt();
        if g(mid) > level {
            inside = mid;
        } else {
            outside = mid;
        }
    }
    (inside * outside).sqrt()
}

/// The air modes as sound: a band-pass per mode (Zavalishin's trapezoidal state-variable
/// filter, *The Art of VA Filter Design* 2012, ch. 3, which keeps its state through the
/// coefficient changes a filling vessel makes), driven by the grains' sound, its gain the
/// peak's height less the direct sound's 1, so that direct plus air reach |H| at each peak.
///
/// The filters run `AIR_BLOCK` samples at a time in their state-space form (below): run
/// sample by sample, each filter's recursion waits on its last sample, and the three
/// filters' chains took about a tenth of a quiet pour's time (`granary bench`, `rate:1k`);
/// a block's outputs and its end state are sums of products that do not wait on each other.
#[derive(Clone)]
pub struct AirBank {
    sample_rate: f32,
    modes: [AirMode; AIR_MODES],
    n: usize,
    /// Per mode: its band-pass (g = tan(pi f / fs), k = 1 / Q) and the output's gain on
    /// the band-pass output, (|H| − 1) k.
    coef: [(Svf, f32); AIR_MODES],
    /// The modes' block matrices (`AirBlock::new`).
    block: AirBlock,
    /// The state at the current block's start: mode m's `[ic1, ic2]` at slots 2m and 2m + 1.
    start: [f32; AIR_SLOTS],
    /// The current block's input so far (`phase` samples; zeros after them).
    input: [f32; AIR_BLOCK],
    /// Samples of the current block already taken.
    phase: usize,
}

/// Samples the air's filters advance together (a divisor of the generator's window, so that
/// blocks start at windows, where the modes change).
const AIR_BLOCK: usize = 8;
/// State slots: two a mode, and padding to a whole vector.
const AIR_SLOTS: usize = 8;
const _: () = assert!(
    crate::base::window::WINDOW.is_multiple_of(AIR_BLOCK) && AIR_SLOTS >= 2 * AIR_MODES && AIR_SLOTS.is_multiple_of(2)
);

/// The modes' filters over a block of `AIR_BLOCK` samples in state-space form. Mode m's
/// filter (`Svf::tick`, state s = [ic1, ic2], band-pass output v1, gain g on it) is
///
/// ```text
/// s[n+1] = A s[n] + b x[n],   A = [[2 a1 - 1, -2 a2], [2 a2, 1 - 2 a3]],  b = [2 a2, 2 a3]
/// y[n]   = c s[n] + d x[n],   c = g [a1, -a2],  d = g a2
/// ```
///
/// (v1 = a1 ic1 + a2 (x - ic2), v2 = ic2 + a2 ic1 + a3 (x - ic2), ic' = 2 v - ic), so over a
/// block from state s with inputs x[0..B]: y[j] = c A^j s + sum_{i <= j} h[j - i] x[i], with
/// h[0] = d and h[k] = c A^(k-1) b, and the state after it A^B s + sum_i A^(B-1-i) b x[i].
/// The modes share their input, so their h add into one. Built in f64 from the filters' f32
/// coefficients; the block's sums then differ from the filters run sample by sample by
/// rounding only (`tests`): within 2e-6 of the peak for the mug's modes at 48 kHz, and
/// 6e-6 for a mode far below the sample rate with a high Q (80 Hz, Q 1000, at 192 kHz,
/// where A^j's entries are close to 1 and the products that cancel are larger than their
/// sum), against the filter run sample by sample in f64.
#[derive(Clone, Copy)]
struct AirBlock {
    /// Output j's weight on state slot k: `from_state[k][j]`.
    from_state: [[f32; AIR_BLOCK]; AIR_SLOTS],
    /// Output j's weight on input i: `from_input[i][j]` = h[j - i], 0 (exactly) for j < i.
    from_input: [[f32; AIR_BLOCK]; AIR_BLOCK],
    /// The state after the block from the state at its start: slot k takes `carry[0][k]`
    /// times its mode's first slot and `carry[1][k]` times its second (A^B's rows).
    carry: [[f32; AIR_SLOTS]; 2],
    /// The state after the block from input i: `drive[i][k]`.
    drive: [[f32; AIR_SLOTS]; AIR_BLOCK],
}

impl AirBlock {
    const ZERO: AirBlock = AirBlock {
        from_state: [[0.0; AIR_BLOCK]; AIR_SLOTS],
        from_input: [[0.0; AIR_BLOCK]; AIR_BLOCK],
        carry: [[0.0; AIR_SLOTS]; 2],
        drive: [[0.0; AIR_SLOTS]; AIR_BLOCK],
    };

    /// The block matrices of the filters `coef` (filter, gain).
    fn new(coef: &[(Svf, f32)]) -> AirBlock {
        type M = [[f64; 2]; 2];
        let mul = |p: &M, q: &M| -> M {
            std::array::from_fn(|r| std::array::from_fn(|c| p[r][0] * q[0][c] + p[r][1] * q[1][c]))
        };
        let apply = |p: &M, v: [f64; 2]| -> [f64; 2] { std::array::from_fn(|r| p[r][0] * v[0] + p[r][1] * v[1]) };
        let mut out = AirBlock::ZERO;
        let mut h = [0.0f64; AIR_BLOCK];
        for (m, &(svf, gain)) in coef.iter().enumerate().take(AIR_MODES) {
            let [a1, a2, a3] = svf.coefficients().map(f64::from);
            let g = f64::from(gain);
            let a: M = [[2.0 * a1 - 1.0, -2.0 * a2], [2.0 * a2, 1.0 - 2.0 * a3]];
            let b = [2.0 * a2, 2.0 * a3];
            let c = [g * a1, -g * a2];
            // A^0 .. A^B
            let mut pow: [M; AIR_BLOCK + 1] = [[[1.0, 0.0], [0.0, 1.0]]; AIR_BLOCK + 1];
            for k in 1..=AIR_BLOCK {
                pow[k] = mul(&a, &pow[k - 1]);
            }
            h[0] += g * a2;
            for j in 0..AIR_BLOCK {
                // c A^j, the output's weights on the block's starting state
                let row = [0, 1].map(|col| c[0] * pow[j][0][col] + c[1] * pow[j][1][col]);
                out.from_state[2 * m][j] = row[0] as f32;
                out.from_state[2 * m + 1][j] = row[1] as f32;
                if j >= 1 {
                    let ab = apply(&pow[j - 1], b);
                    h[j] += c[0] * ab[0] + c[1] * ab[1];
                }
            }
            for (r, row) in pow[AIR_BLOCK].iter().enumerate() {
                out.carry[0][2 * m + r] = row[0] as f32;
                out.carry[1][2 * m + r] = row[1] as f32;
            }
            for i in 0..AIR_BLOCK {
                let ab = apply(&pow[AIR_BLOCK - 1 - i], b);
                out.drive[i][2 * m] = ab[0] as f32;
                out.drive[i][2 * m + 1] = ab[1] as f32;
            }
        }
        for i in 0..AIR_BLOCK {
            for j in i..AIR_BLOCK {
                out.from_input[i][j] = h[j - i] as f32;
            }
        }
        out
    }

    /// The block's outputs from the starting state `s` and the inputs `x` (those not yet
    /// taken 0; all finite: `AirBank::process`). Output j does not depend on inputs after j,
    /// bit for bit: an input after j adds h's exact 0 times it, ±0, which leaves a sum that
    /// is not zero unchanged; a sum that is exactly zero is +0.0 in round-to-nearest (it
    /// starts at +0.0) but where flush-to-zero makes a tiny negative product -0.0, and then
    /// only its sign may differ (the engine adds it to a sum, where it vanishes).
    #[inline(always)]
    fn outputs(&self, s: &[f32; AIR_SLOTS], x: &[f32; AIR_BLOCK]) -> [f32; AIR_BLOCK] {
        let mut y = [0.0f32; AIR_BLOCK];
        add_columns(&mut y, &self.from_state, s);
        add_columns(&mut y, &self.from_input, x);
        y
    }

    /// The state after the block, from the state `s` at its start and its inputs `x`: the
    /// inputs' part first (it does not wait on the state), then the state's two terms.
    #[inline(always)]
    fn next_state(&self, s: &[f32; AIR_SLOTS], x: &[f32; AIR_BLOCK]) -> [f32; AIR_SLOTS] {
        let mut next = [0.0f32; AIR_SLOTS];
        add_columns(&mut next, &self.drive, x);
        // each slot's mode's first and second slot
        let first: [f32; AIR_SLOTS] = std::array::from_fn(|k| s[k & !1]);
        let second: [f32; AIR_SLOTS] = std::array::from_fn(|k| s[k | 1]);
        for k in 0..AIR_SLOTS {
            next[k] += self.carry[0][k] * first[k] + self.carry[1][k] * second[k];
        }
        next
    }
}

/// `acc[j] += columns[i][j] * v[i]`, a column at a time in order (each sum's terms in the
/// order of `i`): a matrix times a vector, added, the lanes of `acc` side by side.
#[inline(always)]
fn add_columns<const N: usize, const M: usize>(acc: &mut [f32; N], columns: &[[f32; N]; M], v: &[f32; M]) {
    for (column, &v) in columns.iter().zip(v) {
        for (a, &w) in acc.iter_mut().zip(column) {
            *a += w * v;
        }
    }
}

impl AirBank {
    pub fn new(sample_rate: f32) -> AirBank {
        AirBank {
            sample_rate,
            modes: [AirMode::ZERO; AIR_MODES],
            n: 0,
            coef: [(Svf::default(), 0.0); AIR_MODES],
            block: AirBlock::ZERO,
            start: [0.0; AIR_SLOTS],
            input: [0.0; AIR_BLOCK],
            phase: 0,
        }
    }

    /// The modes that play.
    pub fn modes(&self) -> &[AirMode] {
        &self.modes[..self.n]
    }

    /// Silent.
    pub fn reset(&mut self) {
        self.start = [0.0; AIR_SLOTS];
        self.input = [0.0; AIR_BLOCK];
        self.phase = 0;
    }

    /// States that have decayed under 1e-20 set to 0 (at every window, as the modal bank's:
    /// what rang before a pour must not reach it as a denormal residue). Blocks start at
    /// windows, so this is the state now.
    pub fn flush_denormals(&mut self) {
        debug_assert!(self.phase == 0, "the air's blocks start at windows");
        for s in self.start.chunks_exact_mut(2) {
            if s[0].abs() < 1e-20 && s[1].abs() < 1e-20 {
                s.fill(0.0);
            }
        }
    }

    /// Plays `modes` from now on (mode i keeps filter i's state).
    pub fn set(&mut self, modes: &[AirMode]) {
        if self.phase > 0 {
            // mid-block (the engine sets the modes at windows, where blocks start): the state
            // now, the block's inputs so far through the filters one by one
            for (m, (svf, _)) in self.coef[..self.n].iter().enumerate() {
                let mut s = [self.start[2 * m], self.start[2 * m + 1]];
                for &x in &self.input[..self.phase] {
                    svf.tick(&mut s, x);
                }
                self.start[2 * m..2 * m + 2].copy_from_slice(&s);
            }
            self.input = [0.0; AIR_BLOCK];
            self.phase = 0;
        }
        self.n = modes.len().min(AIR_MODES);
        for ((slot, coef), m) in self.modes.iter_mut().zip(&mut self.coef).zip(&modes[..self.n]) {
            *slot = *m;
            let f = m.freq_hz.min(0.45 * self.sample_rate);
            let g = (std::f32::consts::PI * f / self.sample_rate).tan();
            let k = 1.0 / m.q.max(0.5);
            *coef = (Svf::new(g, k), (m.peak - 1.0).max(0.0) * k);
        }
        self.start[2 * self.n..].fill(0.0);
        self.block = AirBlock::new(&self.coef[..self.n]);
    }

    /// Adds the air's sound for the grains' sound `input` to `out` (both the span's length),
    /// a block (`AirBlock`) at a time: the samples are the same however the signal is cut
    /// into spans. An input sample that is not finite is taken as 0 (in a block, 0 times
    /// infinity would reach the outputs before it, and which ones would depend on the cut).
    #[inline(always)]
    pub fn process(&mut self, input: &[f32], out: &mut [f32]) {
        if self.n == 0 {
            return;
        }
        let n = input.len().min(out.len());
        let mut t = 0;
        while t < n {
            let (from, k) = (self.phase, (AIR_BLOCK - self.phase).min(n - t));
            for (x, &v) in self.input[from..from + k].iter_mut().zip(&input[t..t + k]) {
                *x = if v.is_finite() { v } else { 0.0 };
            }
            let y = self.block.outputs(&self.start, &self.input);
            for (o, y) in out[t..t + k].iter_mut().zip(&y[from..from + k]) {
                *o += y;
            }
            self.phase += k;
            if self.phase == AIR_BLOCK {
                self.start = self.block.next_state(&self.start, &self.input);
                self.input = [0.0; AIR_BLOCK];
                self.phase = 0;
            }
            t += k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C0: f64 = SPEED_OF_SOUND as f64;

    /// The three test modes: 900, 2300 and 4100 Hz, Q 12-35.
    fn test_modes() -> [AirMode; AIR_MODES] {
        [(900.0, 20.0, 4.0), (2300.0, 35.0, 2.5), (4100.0, 12.0, 1.8)].map(|(f, q, peak)| AirMode {
            freq_hz: f,
            q,
            peak,
        })
    }

    /// A test input: a hash's noise with a silent stretch (where the modes ring alone).
    fn test_input(len: usize) -> Vec<f32> {
        (0..len)
            .map(|n| {
                if (300..500).contains(&n) {
                    0.0
                } else {
                    ((n * 7919 % 263) as f32 / 131.0 - 1.0) * 0.3
                }
            })
            .collect()
    }

    /// The modes' filters run sample by sample (`Svf::tick`), their outputs summed.
    fn filters_one_by_one(bank: &AirBank, n: usize, input: &[f32]) -> Vec<f32> {
        let mut want = vec![0.0f32; input.len()];
        for m in 0..n {
            let (svf, gain) = bank.coef[m];
            let mut s = [0.0; 2];
            for (x, y) in input.iter().zip(want.iter_mut()) {
                *y += gain * svf.tick(&mut s, *x).0;
            }
        }
        want
    }

    /// The bank's blocks give each mode's filter run sample by sample, summed, to rounding
    /// (within 1e-5 of the output's peak, over 900 samples that ring through a silent
    /// stretch), for one, two and three modes; and a bank whose block matrices are wrong
    /// (the state's weights on the output transposed) is far from it.
    #[test]
    fn the_bank_is_its_modes_filters_summed() {
        let input = test_input(900);
        for n in 1..=AIR_MODES {
            let mut bank = AirBank::new(48_000.0);
            bank.set(&test_modes()[..n]);
            let want = filters_one_by_one(&bank, n, &input);
            let peak = want.iter().fold(0.0f32, |p, y| p.max(y.abs()));
            let run = |bank: &mut AirBank| {
                let mut out = vec![0.0f32; input.len()];
                for (x, y) in input.chunks(97).zip(out.chunks_mut(97)) {
                    bank.process(x, y);
                }
                out
            };
            let off = |out: &[f32]| out.iter().zip(&want).fold(0.0f32, |e, (a, b)| e.max((a - b).abs())) / peak;
            let out = run(&mut bank.clone());
            println!("{n} modes: peak {peak:.3}, off by {:.2e} of it", off(&out));
            assert!(peak > 1e-3 && off(&out) < 1e-5, "{n} modes: {}", off(&out));
            let mut wrong = bank.clone();
            for m in 0..n {
                for j in 0..AIR_BLOCK {
                    let b = &mut wrong.block.from_state;
                    (b[2 * m][j], b[2 * m + 1][j]) = (b[2 * m + 1][j], b[2 * m][j]);
                }
            }
            assert!(off(&run(&mut wrong)) > 1e-2, "{n} modes: the check cannot fail");
        }
    }

    /// A mode far below the sample rate with a high Q (80 Hz, Q 1000 at 192 kHz: the hardest
    /// case for the blocks' cancellations) stays within 1e-4 of the peak of the filter run one
    /// sample at a time in f64 (6e-6 measured), over a second that rings.
    #[test]
    fn a_slow_sharp_mode_is_its_filter_to_rounding() {
        let fs = 192_000.0;
        let mode = AirMode {
            freq_hz: 80.0,
            q: 1000.0,
            peak: 3.0,
        };
        let mut bank = AirBank::new(fs);
        bank.set(&[mode]);
        let input: Vec<f32> = (0..192_000)
            .map(|n| {
                // a burst at the mode (0.1 s), then its ring
                let t = n as f32 / fs;
                if n < 19_200 {
                    0.3 * (std::f32::consts::TAU * 80.0 * t).sin()
                } else {
                    0.0
                }
            })
            .collect();
        let mut out = vec![0.0f32; input.len()];
        for (x, y) in input.chunks(100).zip(out.chunks_mut(100)) {
            bank.process(x, y);
        }
        let (svf, gain) = bank.coef[0];
        let [a1, a2, a3] = svf.coefficients().map(f64::from);
        let (mut ic1, mut ic2) = (0.0f64, 0.0f64);
        let want: Vec<f64> = input
            .iter()
            .map(|&x| {
                let x = x as f64;
                let v1 = a1 * ic1 + a2 * (x - ic2);
                let v2 = ic2 + a2 * ic1 + a3 * (x - ic2);
                (ic1, ic2) = (2.0 * v1 - ic1, 2.0 * v2 - ic2);
                gain as f64 * v1
            })
            .collect();
        let peak = want.iter().fold(0.0f64, |p, y| p.max(y.abs()));
        let off = out
            .iter()
            .zip(&want)
            .fold(0.0f64, |e, (&a, b)| e.max((a as f64 - b).abs()))
            / peak;
        println!("80 Hz, Q 1000, 192 kHz: peak {peak:.2e}, off by {off:.2e} of it");
        assert!(peak > 0.0 && off < 1e-4, "{peak} {off}");
    }

    /// A sample that is not finite is taken as 0: the output stays finite and the same
    /// whatever the cut (in a block, 0 times infinity would reach the samples before it).
    #[test]
    fn a_sample_that_is_not_finite_is_silence() {
        let mut input = test_input(300);
        let clean = {
            let mut x = input.clone();
            x[21] = 0.0;
            x
        };
        for bad in [f32::INFINITY, f32::NAN, f32::NEG_INFINITY] {
            input[21] = bad;
            let run = |input: &[f32], cut: usize| {
                let mut bank = AirBank::new(48_000.0);
                bank.set(&test_modes());
                let mut out = vec![0.0f32; input.len()];
                for (x, y) in input.chunks(cut).zip(out.chunks_mut(cut)) {
                    bank.process(x, y);
                }
                out.iter().map(|y| y.to_bits()).collect::<Vec<u32>>()
            };
            let want = run(&clean, 300);
            for cut in [1, 7, 64, 300] {
                assert!(run(&input, cut) == want, "{bad} cut {cut}");
            }
        }
    }

    /// The grid points computed ahead (`AirTable::advance`, a few scan points a window) give
    /// the same modes as a table that computes each point when the fill reaches it, bit for
    /// bit, for a fill that rises and then falls by the engine's steps, open and under a lid,
    /// with 0-20 windows between the calls; and most points come from the scans ahead, both
    /// ways (the first version's fell back to scanning in the window on the way down).
    #[test]
    fn the_points_computed_ahead_are_the_points() {
        use crate::base::materials::CupMaterial;
        use crate::control::choices::CupShape;
        for (shape, closed) in [(CupShape::Mug, false), (CupShape::Jar, true)] {
            let cup = Cup::new(shape, 1.0);
            let state = |fill: f32| CupState {
                material: CupMaterial::Glass,
                cup,
                fill,
                grain_density: 1590.0,
                grain_diameter_m: 5e-4,
            };
            // up at the engine's steps of 1/500 of the depth, then down
            let fills = (0..=500).chain((150..500).rev()).map(|i| i as f32 / 500.0);
            let (mut table, mut rng, mut ahead) = (AirTable::new(), 0x9e37_79b9u32, [0; 2]);
            let mut last = 0.0;
            for fill in fills {
                rng = crate::resonators::diffuse::xorshift(rng);
                for _ in 0..rng % 21 {
                    table.advance();
                }
                let ready = table.next.as_ref().filter(|n| n.2.done()).map(|n| n.0);
                let mut got = [AirMode::ZERO; AIR_MODES];
                let n = table.modes(&state(fill), closed, 8_000.0, &mut got);
                if ready.is_some_and(|at| table.points.iter().any(|p| p.0 == at)) {
                    ahead[(fill < last) as usize] += 1;
                }
                last = fill;
                let mut want = [AirMode::ZERO; AIR_MODES];
                let m = AirTable::new().modes(&state(fill), closed, 8_000.0, &mut want);
                assert_eq!((n, got), (m, want), "{shape:?} at fill {fill}");
            }
            // 64 grid points passed on the way up and 45 on the way down
            println!("{shape:?}: {ahead:?} points from the scans ahead (up, down)");
            assert!(ahead[0] > 55 && ahead[1] > 35, "{shape:?}: {ahead:?}");
        }
    }

    /// The samples do not depend on how the signal is cut into spans (single samples, spans
    /// across blocks, a long one), bit for bit; nor on where in a block the modes change,
    /// beyond the change itself (a change mid-block, which the engine never makes, runs
    /// through the filters one by one to the rounding of the blocks).
    #[test]
    fn the_bank_does_not_hear_the_spans() {
        let input = test_input(900);
        let modes = test_modes();
        let run = |cuts: &[usize]| {
            let mut bank = AirBank::new(44_100.0);
            bank.set(&modes);
            let mut out = vec![0.0f32; input.len()];
            let (mut t, mut c) = (0, 0);
            while t < input.len() {
                let k = cuts[c % cuts.len()].min(input.len() - t);
                bank.process(&input[t..t + k], &mut out[t..t + k]);
                t += k;
                c += 1;
            }
            out
        };
        let whole = run(&[input.len()]);
        assert!(whole.iter().any(|&y| y != 0.0));
        for cuts in [&[1][..], &[3, 5, 1, 13], &[7], &[8], &[64, 37, 128]] {
            let out = run(cuts);
            assert!(
                out.iter().zip(&whole).all(|(a, b)| a.to_bits() == b.to_bits()),
                "cut {cuts:?}"
            );
        }
        // modes set again at sample 203 (mid-block) and at 208 (a block's start)
        for at in [203, 208] {
            let mut bank = AirBank::new(44_100.0);
            bank.set(&modes);
            let mut out = vec![0.0f32; input.len()];
            bank.process(&input[..at], &mut out[..at]);
            bank.set(&modes);
            bank.process(&input[at..], &mut out[at..]);
            let peak = whole.iter().fold(0.0f32, |p, y| p.max(y.abs()));
            let off = out.iter().zip(&whole).fold(0.0f32, |e, (a, b)| e.max((a - b).abs())) / peak;
            assert!(off < 1e-5, "set at {at}: {off}");
            if at % AIR_BLOCK == 0 {
                assert_eq!(out, whole, "set at a block's start");
            }
        }
    }

    fn first_mode(wall: &[[f64; 2]], bed_z: f64, bed: Option<&Bed>) -> AirMode {
        let mut out = [AirMode::ZERO; AIR_MODES];
        let n = air_modes(wall, bed_z, bed, 8_000.0, &mut out);
        assert!(n > 0, "no resonance found");
        out[0]
    }

    #[test]
    fn a_rigid_cylinder_sounds_its_quarter_wave_with_the_end_correction() {
        // closed at the floor, open at the top: f = c / (4 (L + 0.6133 a))
        for (a, l) in [(0.04, 0.09), (0.03, 0.15), (0.02, 0.25), (0.04, 0.03)] {
            let wall = [[a, 0.0], [a, l]];
            let m = first_mode(&wall, 0.0, None);
            let closed = C0 / (4.0 * (l + END_CORRECTION * a));
            let err = (m.freq_hz as f64 / closed - 1.0).abs();
            println!(
                "cylinder a {a} m, L {l} m: {:.1} Hz, closed form {closed:.1} Hz ({:.2} %), Q {:.1}",
                m.freq_hz,
                100.0 * err,
                m.q
            );
            assert!(err < 0.03, "{} Hz against {closed} Hz", m.freq_hz);
            // the next mode is the three-quarter wave
            let mut out = [AirMode::ZERO; AIR_MODES];
            let n = air_modes(&wall, 0.0, None, 8_000.0, &mut out);
            let third = 3.0 * C0 / (4.0 * (l + END_CORRECTION * a));
            if third < 2_500.0 {
                assert!(n >= 2);
                assert!(
                    (out[1].freq_hz as f64 / third - 1.0).abs() < 0.05,
                    "{} against {third}",
                    out[1].freq_hz
                );
            }
        }
    }

    #[test]
    fn a_closed_cylinder_sounds_its_half_waves_under_a_stiff_lid() {
        // a rigid floor and a lid stiff enough (5 mm of steel: its own mode near 8 kHz) to
        // close the column: the pressure at the lid peaks at f = n c / (2 L)
        for (a, l) in [(0.04, 0.10), (0.03, 0.14), (0.045, 0.08)] {
            let lid = Lid {
                thickness_m: 5e-3,
                ..Lid::twist_off(a)
            };
            let wall = [[a, 0.0], [a, l]];
            // the lid barely moves (|H| far under the engine's threshold): the peak of |H|
            // within 15 % of each half wave, on a scan of 0.05 % steps
            for k in 1..=2 {
                let half = k as f64 * C0 / (2.0 * l);
                if half > 0.8 * lid.fundamental_hz() {
                    continue;
                }
                let (peak, _) = (0..600)
                    .map(|i| half * 0.85 * 1.0005f64.powi(i))
                    .map(|f| (f, transfer_to(&wall, 0.0, None, Top::Lid(lid), f).norm()))
                    .fold((0.0, 0.0), |b, x| if x.1 > b.1 { x } else { b });
                println!("closed cylinder a {a} m, L {l} m, n = {k}: {peak:.1} Hz, closed form {half:.1} Hz");
                assert!((peak / half - 1.0).abs() < 0.03, "{peak} Hz against {half} Hz");
            }
        }
    }

    #[test]
    fn the_lids_mode_is_leissas_and_its_piston_rayleighs() {
        // Leissa's lambda^2 = 10.2158 against Rayleigh's quotient of the piston's own shape
        // w = (1 - r^2/a^2)^2, by quadrature: omega^2 = D int (lap w)^2 dA / (rho h int w^2 dA),
        // an upper bound 1.1 % above the exact mode (sqrt(320/3) = 10.328 against 10.2158)
        for a in [0.031, 0.05, 0.08] {
            let lid = Lid::twist_off(a);
            let h = lid.thickness_m;
            let d = lid.bending_stiffness();
            let n = 20_000;
            let (mut strain, mut kinetic) = (0.0, 0.0);
            for i in 0..n {
                let r = (i as f64 + 0.5) / n as f64 * a;
                let u = r * r / (a * a);
                let w = (1.0 - u) * (1.0 - u);
                // lap w = w'' + w'/r for w(r) = (1 - r^2/a^2)^2
                let lap = (-8.0 + 16.0 * u) / (a * a);
                let da = 2.0 * PI * r * a / n as f64;
                strain += lap * lap * da;
                kinetic += w * w * da;
            }
            let rayleigh = (d * strain / (lid.density * h * kinetic)).sqrt() / (2.0 * PI);
            let f = lid.fundamental_hz();
            println!("lid a {a} m: {f:.1} Hz, Rayleigh's quotient of its piston {rayleigh:.1} Hz");
            assert!(rayleigh > f && rayleigh / f - 1.0 < 0.015, "{rayleigh} against {f}");
            // and the piston's mass is the shape's kinetic integral
            assert!((lid.piston().1 / (lid.density * h * kinetic) - 1.0).abs() < 1e-3);
        }
    }

    #[test]
    fn a_lid_over_a_shallow_cavity_rings_as_a_mass_on_two_springs() {
        // a cavity short against the wavelength is a compliance, C = V / (rho c^2), beside the
        // lid's own, C_lid = S^2 / K: the lid's mass (and the air it carries outside, the
        // open end's 0.6133 a) rings on both, f = sqrt((1/C_lid + 1/C) / M) / (2 pi)
        // (the lumped panel-cavity system: Fahy & Gardonio, *Sound and Structural Vibration*,
        // 2nd ed. 2007, §6.3); below it the lid passes the share C_lid / (C_lid + C) of the
        // volume the source displaces
        let rho = AIR_DENSITY as f64;
        for (a, l) in [(0.04, 0.02), (0.031, 0.03), (0.05, 0.015)] {
            let lid = Lid::twist_off(a);
            let wall = [[a, 0.0], [a, l]];
            let (s, m) = lid.piston();
            let k = m * (2.0 * PI * lid.fundamental_hz()).powi(2);
            let (c_lid, c_air) = (s * s / k, PI * a * a * l / (rho * C0 * C0));
            let mass = m / (s * s) + rho * END_CORRECTION / (PI * a);
            let want = ((1.0 / c_lid + 1.0 / c_air) / mass).sqrt() / (2.0 * PI);
            let mut out = [AirMode::ZERO; AIR_MODES];
            let n = air_modes_to(&wall, 0.0, None, Top::Lid(lid), 8_000.0, &mut out);
            assert!(n > 0);
            let got = out[0].freq_hz as f64;
            let low = transfer_to(&wall, 0.0, None, Top::Lid(lid), 80.0).norm();
            let share = c_lid / (c_lid + c_air);
            println!(
                "lid a {a} m over {l} m: {got:.1} Hz (lumped {want:.1} Hz, in vacuo {:.1} Hz), Q {:.1}, |H| at 80 Hz {low:.4} (share {share:.4})",
                lid.fundamental_hz(),
                out[0].q
            );
            assert!((got / want - 1.0).abs() < 0.02, "{got} Hz against {want} Hz");
            // at 80 Hz a little above the static share (the resonance's rise, (f / f0)^2)
            let rise = 1.0 / (1.0 - (80.0 / want).powi(2));
            assert!(
                (low / (share * rise) - 1.0).abs() < 0.02,
                "{low} against {share} x {rise}"
            );
        }
    }

    #[test]
    fn a_jar_with_a_neck_sounds_as_a_helmholtz_resonator() {
        // body radius b, height hb; neck radius a, length l: f = c / (2 pi) sqrt(S / (V L')),
        // L' = l + 0.85 a + 0.61 a (Kinsler, Frey, Coppens & Sanders, Fundamentals of
        // Acoustics, 4th ed. 2000, §10.8: one end flanged inside, one unflanged outside)
        for (b, hb, a, l) in [
            (0.045, 0.12, 0.009, 0.04),
            (0.05, 0.10, 0.008, 0.03),
            (0.04, 0.15, 0.01, 0.05),
        ] {
            let wall = [[b, 0.0], [b, hb], [a, hb], [a, hb + l]];
            let m = first_mode(&wall, 0.0, None);
            let s = PI * a * a;
            let v = PI * b * b * hb;
            let lp = l + (0.85 + 0.61) * a;
            let closed = C0 / (2.0 * PI) * (s / (v * lp)).sqrt();
            let err = (m.freq_hz as f64 / closed - 1.0).abs();
            println!(
                "bottle: {:.1} Hz, Helmholtz {closed:.1} Hz ({:.2} %)",
                m.freq_hz,
                100.0 * err
            );
            assert!(err < 0.05, "{} Hz against {closed} Hz", m.freq_hz);
        }
    }

    #[test]
    fn a_cone_matches_fine_cylinder_steps() {
        let (r1, r2, l) = (0.031, 0.036, 0.102);
        let steps = 400;
        let mut stepped = Vec::new();
        for i in 0..steps {
            let r = r1 + (r2 - r1) * (i as f64 + 0.5) / steps as f64;
            stepped.push([r, l * i as f64 / steps as f64]);
            stepped.push([r, l * (i + 1) as f64 / steps as f64]);
        }
        let cone_wall = [[r1, 0.0], [r2, l]];
        for f in [300.0, 700.0, 1500.0] {
            let (a, b) = (transfer(&cone_wall, 0.0, None, f), transfer(&stepped, 0.0, None, f));
            assert!((a - b).norm() < 0.01 * b.norm(), "{f} Hz: {a} against {b}");
        }
    }

    #[test]
    fn the_bed_absorbs_as_porous_beds_do() {
        // fine grains resist the flow far more (Kozeny–Carman: 1/d^2)
        let sand = Bed::of_grains(0.05, 0.3e-3, 0.4);
        let rice = Bed::of_grains(0.05, 3e-3, 0.4);
        assert!(sand.resistivity > 50.0 * rice.resistivity);
        // a packing of 1 mm glass beads: tens of kPa s/m^2 (measured beds of 1 mm beads are
        // of that order)
        let beads = Bed::of_grains(0.05, 1e-3, 0.38);
        assert!((1e4..1e5).contains(&beads.resistivity), "{}", beads.resistivity);
        for f in [250.0, 1000.0, 4000.0] {
            for b in [sand, rice, beads] {
                let a = b.absorption(f);
                assert!((0.0..=1.0).contains(&a), "{a}");
            }
        }
    }

    #[test]
    fn the_pitch_rises_as_the_vessel_fills() {
        let wall = [[0.040, 0.0], [0.040, 0.089]];
        let mut last = 0.0;
        for fill in [0.0, 0.2, 0.4, 0.6] {
            let z = fill * 0.089;
            let bed = Bed::of_grains(z, 0.5e-3, 0.4);
            let m = first_mode(&wall, z, Some(&bed));
            println!("fill {fill}: {:.0} Hz, Q {:.1}, peak {:.1}", m.freq_hz, m.q, m.peak);
            assert!(m.freq_hz > last);
            last = m.freq_hz;
        }
    }
}
