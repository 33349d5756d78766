//! The precomputed acceleration-noise files `assets/grains/<shape>.grain` and their
//! computation (seed 001 §4.2: six directional pulse fields, each a radial series per direction).
//!
//! Format (version `FORMAT_VERSION`): one line of UTF-8 JSON (`AssetHeader`), a newline, then
//! `payload_values` little-endian `f32` coefficients `q[field][theta][phi][term][j]` (fields
//! Tx, Ty, Tz, Rx, Ry, Rz as `Motion::ALL`; terms k = 1..N; coefficient j at retarded time
//! `(first + j) dt`). Binary because the coefficients are 190–380 thousand numbers per
//! shape: as f32 they are 0.75–1.5 MB (under the 2 MB budget) where decimal JSON would be
//! about 3x larger; f32 keeps 7 digits, far below the solver's percent-level error; the
//! header stays readable and versioned. Writing is deterministic (scalar single-threaded
//! solver, fixed settings).
//!
//! Field `f` at a listener at distance `R` (m, `R >= R_1`; the series is not meant for
//! closer) in direction `(theta, phi)` of the body frame (theta from +z, phi from +x towards
//! +y), per unit acceleration `psi(t; h)` in that degree of freedom (m/s^2 or rad/s^2, t = 0
//! the pulse centre) is seed 001 eq. 20/22, the coefficients interpolated linearly in theta
//! and phi. Scaling: a grain `s` times larger (same shape) with pulse `s h` gives `s` times
//! the pressure at `s R` and `s t` for translations and `s^2` times for rotations (per
//! rad/s^2).

use crate::fdtd::{quadrupole_from_integrals, sphere_rule, GridSpec, Motion, Solver};
use crate::fit::{FitError, FitSpec, RadialFit};
use crate::pulse::psi;
use crate::shape::{MassProperties, Shape, ShapeKind};
use crate::{AIR_DENSITY, SPEED_OF_SOUND};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version of the file layout; bump on any change to the header's meaning or the payload order.
pub const FORMAT_VERSION: u32 = 2;

/// Settings of a precomputation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Grid cells per equivalent-volume diameter.
    pub cells_per_diameter: f64,
    /// Absorbing-layer cells per side.
    pub pml: usize,
    /// Pulse time scale `h` in units of `d / c` (`d` the equivalent diameter): independent of
    /// the grid, so assets at different resolutions describe the same pulse.
    pub pulse_diameters: f64,
    /// Polar angles (including both poles) and azimuths of the direction grid.
    pub n_theta: usize,
    pub n_phi: usize,
    /// Radial terms `N` and radii `M` (seed 001: 2 and 5, `R_i = 2R 2^((i-1)/4)`). `terms` is
    /// the rotations' (3: a spinning grain's field is a quadrupole, whose static part decays
    /// as `1/R^3`) and the files'; the translations are fitted with `translation_terms` (2:
    /// exact for their dipole; a third term made the sphere's series extrapolated to 0.1 m
    /// depend on the grid, 6.8 % between 16 and 20 cells per diameter against 1.5 %) and
    /// their last terms stored as zeros.
    pub terms: usize,
    pub translation_terms: usize,
    pub radii: usize,
    /// Simulated time after the pulse reaches the outermost radius, in bounding radii / c.
    pub tail_radii: f64,
}

impl Settings {
    /// The settings of the committed assets.
    pub const ASSET: Settings = Settings {
        cells_per_diameter: 20.0,
        pml: 10,
        pulse_diameters: 0.25,
        n_theta: 11,
        n_phi: 20,
        terms: 3,
        translation_terms: 2,
        radii: 5,
        tail_radii: 8.0,
    };
}

/// The JSON header of an asset file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssetHeader {
    pub format_version: u32,
    pub shape: ShapeKind,
    /// Equivalent-volume diameter, m.
    pub diameter_m: f64,
    /// Volume, centre of mass (defining frame) and inertia per unit density (m^3, m, m^5).
    pub mass: MassProperties,
    /// Bounding-sphere radius about the centre of mass, m.
    pub bounding_radius_m: f64,
    /// Air density (kg/m^3) and speed of sound (m/s) used.
    pub air_density: f64,
    pub speed_of_sound: f64,
    /// Pulse time scale `h` of psi, s.
    pub pulse_h_s: f64,
    /// Coefficient interval, s.
    pub dt_s: f64,
    /// Index of the first coefficient (retarded time `first dt`).
    pub first: i64,
    /// Coefficients per term and direction.
    pub coefficients: usize,
    pub terms: usize,
    /// Radii the series was fitted at, m.
    pub radii_m: Vec<f64>,
    pub n_theta: usize,
    pub n_phi: usize,
    /// Low-frequency dipole coefficients `D[i][j]`, m^3 (`fdtd::dipole_coefficients`).
    pub dipole_m3: [[f64; 3]; 3],
    /// Static spin quadrupoles `M[i]` (m^5) of the rotations about the body axes
    /// (`fdtd::spin_quadrupoles`), measured in the same runs.
    pub spin_quadrupole_m5: [[[f64; 3]; 3]; 3],
    /// Static l = 1 moments of the rotations, m^4 (as `dipole_m3`, per rad/s; zero for a
    /// centrally symmetric grain). With `dipole_m3` they fix the first moment of every
    /// field's `q_1` (`FitSpec::fit_with_first_moments`).
    pub spin_dipole_m4: [[f64; 3]; 3],
    /// Relative rms residual of the fit at the sampled radii, per field.
    pub fit_residual: [f64; 6],
    /// Grid: cell side (m), cells per axis, absorbing cells, voxel volume (m^3).
    pub grid: GridSpec,
    pub voxel_volume_m3: f64,
    pub settings: Settings,
    /// Number of f32 values after the header.
    pub payload_values: usize,
}

/// An asset: header and coefficients.
#[derive(Debug, Clone, PartialEq)]
pub struct Asset {
    pub header: AssetHeader,
    /// `q[field][theta][phi][term][j]` flattened (payload order).
    pub q: Vec<f32>,
}

#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("header: {0}")]
    Json(#[from] serde_json::Error),
    #[error("fit: {0}")]
    Fit(#[from] FitError),
    #[error("format version {0}, expected {FORMAT_VERSION}")]
    Version(u32),
    #[error("file is not a grain asset: {0}")]
    Malformed(&'static str),
}

/// Direction of grid node `(i, j)`: theta `i pi / (n_theta - 1)` from +z, phi `2 pi j / n_phi`.
pub fn direction(i: usize, j: usize, n_theta: usize, n_phi: usize) -> [f64; 3] {
    let theta = std::f64::consts::PI * i as f64 / (n_theta - 1) as f64;
    let phi = 2.0 * std::f64::consts::PI * j as f64 / n_phi as f64;
    [theta.sin() * phi.cos(), theta.sin() * phi.sin(), theta.cos()]
}

/// Precomputes the six directional pulse fields of `shape` (seed 001 §4.2, eq. 13–25).
pub fn precompute(shape: &Shape, settings: Settings) -> Result<Asset, AssetError> {
    let c = SPEED_OF_SOUND;
    let big_r = shape.bounding_radius();
    let dx = shape.grid_step(shape.diameter_m / settings.cells_per_diameter);
    let h = settings.pulse_diameters * shape.diameter_m / c;
    let dt = h / 2.0;
    let radii: Vec<f64> = (0..settings.radii)
        .map(|i| 2.0 * big_r * 2f64.powf(i as f64 / 4.0))
        .collect();
    let r_out = radii[settings.radii - 1];
    let spec = GridSpec::around(dx, r_out + 2.0 * dx, settings.pml);
    let solver = Solver::new(shape, spec);
    let (nt, np) = (settings.n_theta, settings.n_phi);
    let mut probes = Vec::new();
    for i in 0..nt {
        for j in 0..np {
            let u = direction(i, j, nt, np);
            for &r in &radii {
                probes.push(u.map(|x| x * r));
            }
        }
    }
    let series_probes = probes.len();
    // the dipole and spin quadrupole quadrature on the innermost radius
    // (`fdtd::dipole_coefficients`, `fdtd::spin_quadrupoles`)
    let rule = sphere_rule(8);
    probes.extend(rule.iter().map(|(u, _)| u.map(|x| x * radii[0])));
    let duration = 4.0 * h + (r_out + settings.tail_radii * big_r) / c;
    let mut series = Vec::new(); // [field * directions + direction][radius][sample]
    let mut dipole = [[0.0; 3]; 3];
    let mut quadrupole = [[[0.0; 3]; 3]; 3];
    let mut spin_dipole = [[0.0; 3]; 3];
    let mut samples = 0;
    let mut t0 = 0.0;
    for motion in Motion::ALL {
        let rec = solver.run(motion, h, duration, dt, 0.9, &probes);
        samples = rec.pressure[0].len();
        t0 = rec.t0;
        for d in 0..nt * np {
            series.push(
                (0..settings.radii)
                    .map(|i| rec.pressure[d * settings.radii + i].clone())
                    .collect::<Vec<_>>(),
            );
        }
        let integrals: Vec<f64> = rec.pressure[series_probes..]
            .iter()
            .map(|p| p.iter().sum::<f64>() * rec.dt)
            .collect();
        // the static l = 1 moment of every field (`fdtd::dipole_coefficients`): a
        // translation's dipole D (m^3), a rotation's own (m^4; zero for a centrally symmetric
        // grain)
        let mut l1 = [0.0; 3];
        for ((u, w), integral) in rule.iter().zip(&integrals) {
            for j in 0..3 {
                l1[j] +=
                    3.0 * radii[0] * radii[0] / (4.0 * std::f64::consts::PI * AIR_DENSITY * h) * w * u[j] * integral;
            }
        }
        match motion {
            Motion::Translation(i) => dipole[i] = l1,
            Motion::Rotation(i) => {
                spin_dipole[i] = l1;
                quadrupole[i] = quadrupole_from_integrals(&rule, &integrals, radii[0], h);
            }
        }
    }
    let fit_spec = FitSpec {
        terms: settings.terms,
        radii: radii.clone(),
        dt,
        first_sample: (t0 / dt).round() as i64,
        samples,
        body_radius: big_r,
        truncation: 1e-8,
    };
    // q_1's first moment per field and direction: -rho0 (l = 1 moment . u) h / c
    // (`FitSpec::fit_with_first_moments`)
    let first_moments: Vec<f64> = Motion::ALL
        .iter()
        .enumerate()
        .flat_map(|(f, _)| {
            let l1 = if f < 3 { dipole[f] } else { spin_dipole[f - 3] };
            (0..nt * np).map(move |d| {
                let u = direction(d / np, d % np, nt, np);
                -AIR_DENSITY * (l1[0] * u[0] + l1[1] * u[1] + l1[2] * u[2]) * h / c
            })
        })
        .collect();
    // translations with their own number of terms, rotations with `terms`; one set of
    // coefficients of `terms` terms (the translations' last ones zero)
    let split = 3 * nt * np;
    let translations = FitSpec {
        terms: settings.translation_terms,
        ..fit_spec.clone()
    }
    .fit_with_first_moments(&series[..split], &first_moments[..split])?;
    let mut fit = fit_spec.fit_with_first_moments(&series[split..], &first_moments[split..])?;
    let nj = fit.q[0][0].len();
    let mut q_all: Vec<Vec<Vec<f64>>> = translations
        .q
        .into_iter()
        .map(|mut terms| {
            terms.resize(settings.terms, vec![0.0; nj]);
            terms
        })
        .collect();
    q_all.append(&mut fit.q);
    fit.q = q_all;
    let residual = fit_residual(&fit, &fit_spec, &series, nt * np);
    let mut q = Vec::with_capacity(fit.q.len() * settings.terms * nj);
    for per_direction in &fit.q {
        for term in per_direction {
            q.extend(term.iter().map(|&x| x as f32));
        }
    }
    let header = AssetHeader {
        format_version: FORMAT_VERSION,
        shape: shape.kind,
        diameter_m: shape.diameter_m,
        mass: shape.mass_properties(),
        bounding_radius_m: big_r,
        air_density: AIR_DENSITY,
        speed_of_sound: SPEED_OF_SOUND,
        pulse_h_s: h,
        dt_s: dt,
        first: fit.first,
        coefficients: nj,
        terms: settings.terms,
        radii_m: radii,
        n_theta: nt,
        n_phi: np,
        dipole_m3: dipole,
        spin_quadrupole_m5: quadrupole,
        spin_dipole_m4: spin_dipole,
        fit_residual: residual,
        grid: spec,
        voxel_volume_m3: solver.voxel_volume(),
        settings,
        payload_values: q.len(),
    };
    Ok(Asset { header, q })
}

/// Relative rms residual of the fit per field over the fitted samples.
fn fit_residual(fit: &RadialFit, spec: &FitSpec, series: &[Vec<Vec<f64>>], directions: usize) -> [f64; 6] {
    let mut out = [0.0; 6];
    for (field, res) in out.iter_mut().enumerate() {
        let (mut err, mut sig) = (0.0, 0.0);
        for d in 0..directions {
            let s = &series[field * directions + d];
            for (i, &r) in spec.radii.iter().enumerate() {
                // the samples the fit covers: retarded time up to the coefficients' end
                let last = (fit.first + fit.q[0][0].len() as i64 - 3) as f64 * spec.dt + r / SPEED_OF_SOUND;
                for (l, &p) in s[i].iter().enumerate() {
                    let t = (spec.first_sample + l as i64) as f64 * spec.dt;
                    if t > last {
                        break;
                    }
                    let e = fit.eval(field * directions + d, r, t) - p;
                    err += e * e;
                    sig += p * p;
                }
            }
        }
        *res = if sig > 0.0 { (err / sig).sqrt() } else { 0.0 };
    }
    out
}

impl Asset {
    /// Writes the header line and the payload.
    pub fn write(&self, path: &Path) -> Result<(), AssetError> {
        let mut bytes = serde_json::to_vec(&self.header)?;
        bytes.push(b'\n');
        for x in &self.q {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        std::fs::write(path, bytes)?;
        Ok(())
    }

    /// Reads and checks a file written by `write`.
    pub fn read(path: &Path) -> Result<Asset, AssetError> {
        let bytes = std::fs::read(path)?;
        let split = bytes
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(AssetError::Malformed("no header line"))?;
        let header: AssetHeader = serde_json::from_slice(&bytes[..split])?;
        if header.format_version != FORMAT_VERSION {
            return Err(AssetError::Version(header.format_version));
        }
        let payload = &bytes[split + 1..];
        let expected = 6 * header.n_theta * header.n_phi * header.terms * header.coefficients;
        if header.payload_values != expected || payload.len() != 4 * expected {
            return Err(AssetError::Malformed("payload length"));
        }
        let q = payload
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(Asset { header, q })
    }

    /// Coefficients `q_k^j` (`term` k - 1) of grid direction `(i, j)` of `field`.
    pub fn coefficients(&self, field: usize, i: usize, j: usize, term: usize) -> &[f32] {
        let h = &self.header;
        let nj = h.coefficients;
        let start = (((field * h.n_theta + i) * h.n_phi + j) * h.terms + term) * nj;
        &self.q[start..start + nj]
    }

    /// Pressure (Pa per unit acceleration) of `field` (index into `Motion::ALL`) at body-frame
    /// position `x` (m, at least `R_1` from the centre of mass) and time `t` (s, 0 = pulse
    /// centre): seed 001 eq. 20 and 22, linear in theta and phi between grid directions.
    pub fn pressure(&self, field: usize, x: [f64; 3], t: f64) -> f64 {
        let h = &self.header;
        let r = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        let theta = (x[2] / r).clamp(-1.0, 1.0).acos();
        let phi = x[1].atan2(x[0]).rem_euclid(2.0 * std::f64::consts::PI);
        let ti = theta / std::f64::consts::PI * (h.n_theta - 1) as f64;
        let pj = phi / (2.0 * std::f64::consts::PI) * h.n_phi as f64;
        let (i0, j0) = ((ti.floor() as usize).min(h.n_theta - 2), pj.floor() as usize % h.n_phi);
        let (fi, fj) = (ti - i0 as f64, pj - pj.floor());
        let tau = t - r / h.speed_of_sound;
        let centre = (tau / h.dt_s).floor() as i64;
        let mut p = 0.0;
        for (i, wi) in [(i0, 1.0 - fi), (i0 + 1, fi)] {
            for (j, wj) in [(j0, 1.0 - fj), ((j0 + 1) % h.n_phi, fj)] {
                let w = wi * wj;
                if w == 0.0 {
                    continue;
                }
                for term in 0..h.terms {
                    let q = self.coefficients(field, i, j, term);
                    let mut sum = 0.0;
                    for jj in centre - 2..=centre + 2 {
                        let idx = jj - h.first;
                        if idx >= 0 && (idx as usize) < q.len() {
                            sum += q[idx as usize] as f64 * psi(tau - jj as f64 * h.dt_s, h.dt_s);
                        }
                    }
                    p += w * sum / r.powi(term as i32 + 1);
                }
            }
        }
        p
    }
}

/// File name of a shape's asset.
pub fn file_name(kind: ShapeKind) -> String {
    format!("{}.grain", kind.name())
}
