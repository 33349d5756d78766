//! One collision, inspected: Hertz contact, accelerations and acceleration-noise pressure,
//! computed with the engine's own functions (`engine::contact`, `engine::accel_noise`,
//! `engine::kernels`).
//!
//! Geometry (thesis 4.1, Figure 4.3): sphere A's centre is the origin and A accelerates
//! along the collision normal `n`. The listener is at `distance` from A's centre, at `angle`
//! from `n`. A sphere B touches A on the other side, its centre at `-(a_A + a_B) n`, and
//! accelerates along `-n`; its distance and angle to the listener follow from that.

use granary_engine::accel_noise::{sphere_amplitudes, SphereFilter, SphereSource};
use granary_engine::contact::{contact, effective, hertz_peak_force, Body, Contact};
use granary_engine::kernels::{PulseKernels, HALF};
use granary_engine::materials::{CupMaterial, Elastic, GrainMaterial, SPEED_OF_SOUND};
use granary_engine::simd::Isa;
use serde::Serialize;

/// Errors in a contact description.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ContactError {
    #[error("unknown material '{0}' (grain materials: {grains}; cup materials: {cups})", grains = grain_ids(), cups = cup_ids())]
    UnknownMaterial(String),
    #[error("{what} must be a finite number > 0, got {value}")]
    NotPositive { what: &'static str, value: f64 },
    #[error("{what} must be within [{lo}, {hi}], got {value}")]
    OutOfRange {
        what: &'static str,
        value: f64,
        lo: f64,
        hi: f64,
    },
    #[error("material '{0}' has no default radius (it is a cup material): give the radius")]
    NoRadius(String),
}

fn grain_ids() -> String {
    GrainMaterial::ALL.map(|m| m.id()).join(", ")
}

fn cup_ids() -> String {
    CupMaterial::ALL.map(|m| m.id()).join(", ")
}

/// A material of the engine's tables: its elastic constants and, for grains, the diameter
/// of the grain's spherical proxy.
pub fn material(name: &str) -> Result<(Elastic, Option<f64>), ContactError> {
    if let Some(g) = GrainMaterial::from_id(name) {
        let d = g.data();
        return Ok((d.elastic, Some(d.diameter_m as f64)));
    }
    if let Some(c) = CupMaterial::from_id(name) {
        return Ok((c.data().elastic, None));
    }
    Err(ContactError::UnknownMaterial(name.to_string()))
}

/// What sphere A hits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Partner {
    /// Another sphere.
    Sphere { elastic: Elastic, radius_m: f64 },
    /// An infinitely stiff, infinitely massive plane.
    Rigid,
    /// An infinitely massive flat half-space of this material.
    Plane { elastic: Elastic },
}

/// One collision to inspect. SI units throughout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactSetup {
    pub a: Elastic,
    pub a_radius_m: f64,
    pub b: Partner,
    /// Normal speed of approach, m/s.
    pub v0: f64,
    /// Coefficient of restitution: impulse m_eff (1 + e) v0.
    pub restitution: f64,
    /// From A's centre to the listener, m.
    pub distance_m: f64,
    /// Between A's acceleration and the direction to the listener, rad.
    pub angle_rad: f64,
}

impl ContactSetup {
    /// Checks every value; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ContactError> {
        let positive = |what, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(ContactError::NotPositive { what, value })
            }
        };
        let elastic = |e: &Elastic, which: &'static [&'static str; 3]| {
            positive(which[0], e.youngs_pa as f64)?;
            positive(which[2], e.density as f64)?;
            let nu = e.poisson as f64;
            if !(nu.is_finite() && (-1.0..0.5).contains(&nu)) {
                return Err(ContactError::OutOfRange {
                    what: which[1],
                    value: nu,
                    lo: -1.0,
                    hi: 0.5,
                });
            }
            Ok(())
        };
        elastic(&self.a, &["A's Young's modulus", "A's Poisson ratio", "A's density"])?;
        positive("A's radius", self.a_radius_m)?;
        match &self.b {
            Partner::Sphere { elastic: e, radius_m } => {
                elastic(e, &["B's Young's modulus", "B's Poisson ratio", "B's density"])?;
                positive("B's radius", *radius_m)?;
            }
            Partner::Plane { elastic: e } => {
                positive("B's Young's modulus", e.youngs_pa as f64)?;
                let nu = e.poisson as f64;
                if !(nu.is_finite() && (-1.0..0.5).contains(&nu)) {
                    return Err(ContactError::OutOfRange {
                        what: "B's Poisson ratio",
                        value: nu,
                        lo: -1.0,
                        hi: 0.5,
                    });
                }
            }
            Partner::Rigid => {}
        }
        positive("v0", self.v0)?;
        positive("distance", self.distance_m)?;
        if !(self.restitution.is_finite() && (0.0..=1.0).contains(&self.restitution)) {
            return Err(ContactError::OutOfRange {
                what: "restitution",
                value: self.restitution,
                lo: 0.0,
                hi: 1.0,
            });
        }
        if !(self.angle_rad.is_finite() && (0.0..=std::f64::consts::PI).contains(&self.angle_rad)) {
            return Err(ContactError::OutOfRange {
                what: "angle",
                value: self.angle_rad.to_degrees(),
                lo: 0.0,
                hi: 180.0,
            });
        }
        if self.distance_m <= self.a_radius_m {
            return Err(ContactError::OutOfRange {
                what: "distance (m; the listener must be outside sphere A)",
                value: self.distance_m,
                lo: self.a_radius_m,
                hi: f64::INFINITY,
            });
        }
        Ok(())
    }

    pub fn body_a(&self) -> Body {
        Body::sphere(self.a, self.a_radius_m as f32)
    }

    pub fn body_b(&self) -> Body {
        match self.b {
            Partner::Sphere { elastic, radius_m } => Body::sphere(elastic, radius_m as f32),
            Partner::Rigid => Body::rigid(),
            Partner::Plane { elastic } => Body::plane(elastic),
        }
    }

    /// The Hertz contact (PAN eq. 5–10) and impulse of the collision.
    pub fn contact(&self) -> Contact {
        contact(&self.body_a(), &self.body_b(), self.v0 as f32, self.restitution as f32)
    }

    /// Peak of the Hertz force law itself (PAN eq. 5; see `engine::contact::hertz_peak_force`), N.
    pub fn hertz_peak_force(&self) -> f64 {
        let (m, r, e) = effective(&self.body_a(), &self.body_b());
        hertz_peak_force(m, r, e, self.v0 as f32)
    }

    /// Sphere A as a radiating source.
    pub fn source_a(&self) -> SphereSource {
        let c = self.contact();
        SphereSource {
            radius_m: self.a_radius_m,
            distance_m: self.distance_m,
            cos_theta: self.angle_rad.cos(),
            peak_accel: c.peak_force_n as f64 / self.body_a().mass_kg as f64,
            duration_s: c.duration_s as f64,
        }
    }

    /// Sphere B as a radiating source (`None` unless B is a sphere): centre at
    /// `-(a_A + a_B) n`, accelerating along `-n`, so its `cos_theta` is the cosine between
    /// `-n` and the direction from its centre to the listener.
    pub fn source_b(&self) -> Option<SphereSource> {
        let Partner::Sphere { radius_m, .. } = self.b else {
            return None;
        };
        let c = self.contact();
        let (along, across) = (
            self.distance_m * self.angle_rad.cos() + self.a_radius_m + radius_m,
            self.distance_m * self.angle_rad.sin(),
        );
        let r = along.hypot(across);
        Some(SphereSource {
            radius_m,
            distance_m: r,
            cos_theta: -along / r,
            peak_accel: c.peak_force_n as f64 / self.body_b().mass_kg as f64,
            duration_s: c.duration_s as f64,
        })
    }

    /// Everything `granary inspect contact` prints.
    pub fn report(&self) -> ContactReport {
        let c = self.contact();
        let b = self.body_b();
        let a_src = self.source_a();
        let pair = self.source_b().map(|b_src| {
            // both waves, on one time grid spanning both arrivals and their ringing
            let l = SPEED_OF_SOUND as f64 / a_src.radius_m.min(b_src.radius_m);
            let t0 = a_src.delay_s().min(b_src.delay_s());
            let span = (a_src.delay_s() - b_src.delay_s()).abs() + c.duration_s as f64 + 12.0 / l;
            let steps = 20_000;
            let dt = span / steps as f64;
            let pa = a_src.waveform(t0, dt, steps + 1);
            let pb = b_src.waveform(t0, dt, steps + 1);
            pa.iter().zip(&pb).fold(0.0f64, |m, (x, y)| m.max((x + y).abs()))
        });
        ContactReport {
            contact_time_s: c.duration_s as f64,
            impulse_n_s: c.impulse_ns as f64,
            peak_force_n: c.peak_force_n as f64,
            hertz_peak_force_n: self.hertz_peak_force(),
            peak_accel_a_m_s2: c.peak_force_n as f64 / self.body_a().mass_kg as f64,
            peak_accel_b_m_s2: b.mass_kg.is_finite().then(|| c.peak_force_n as f64 / b.mass_kg as f64),
            peak_pressure_pa: a_src.peak_pressure(),
            peak_pressure_pair_pa: pair,
        }
    }

    /// Continuous-time pressure of A, of B (zero unless B is a sphere) and their sum, at
    /// `t = t0 + i dt` from the start of the contact (for plots and tests).
    pub fn waveforms(&self, t0: f64, dt: f64, n: usize) -> [Vec<f64>; 3] {
        let pa = self.source_a().waveform(t0, dt, n);
        let pb = match self.source_b() {
            Some(b) => b.waveform(t0, dt, n),
            None => vec![0.0; n],
        };
        let sum = pa.iter().zip(&pb).map(|(x, y)| x + y).collect();
        [pa, pb, sum]
    }

    /// The collision as the engine renders it at `sample_rate`: for each sphere (A along n,
    /// B along -n), the band-limited pulse and derivative kernels (`engine::kernels`)
    /// weighted by `engine::accel_noise::sphere_amplitudes`, through that sphere's radiation
    /// filter `B` (`SphereFilter`). The contact starts `HALF + onset_phase` samples into the
    /// returned `n` samples (`HALF` is the kernels' support before an onset); each sphere's
    /// wave arrives `(r - a)/c` later.
    pub fn render(&self, sample_rate: f32, onset_phase: f32, n: usize) -> Vec<f32> {
        let kernels = PulseKernels::new(sample_rate, Isa::detect());
        let c = self.contact();
        let fs = sample_rate as f64;
        let mut out = vec![0.0f32; n];
        let mut one = |src: SphereSource, mass_kg: f32| {
            let dv = c.impulse_ns / mass_kg;
            let (a0, a1) = sphere_amplitudes(src.radius_m as f32, src.distance_m as f32, src.cos_theta as f32, dv);
            let t = onset_phase as f64 + src.delay_s() * fs;
            let whole = t.floor();
            let mut buf = vec![0.0f32; n + kernels.taps()];
            let start = (whole as usize).min(n);
            kernels.accumulate(
                kernels.select(c.duration_s, (t - whole) as f32),
                a0,
                a1,
                &mut buf[start..],
            );
            let mut filter = SphereFilter::new(sample_rate, src.radius_m as f32);
            for (o, x) in out.iter_mut().zip(&buf) {
                *o += filter.process(*x);
            }
        };
        one(self.source_a(), self.body_a().mass_kg);
        if let Some(b) = self.source_b() {
            one(b, self.body_b().mass_kg);
        }
        out
    }

    /// Where the contact starts in `render`'s output, in samples.
    pub const RENDER_ONSET: usize = HALF;
}

/// What `granary inspect contact` prints. Units in the field names.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContactReport {
    pub contact_time_s: f64,
    pub impulse_n_s: f64,
    /// Peak of the half-sine the engine renders (PAN eq. 10: its area is the impulse).
    pub peak_force_n: f64,
    /// Peak of the Hertz force law (PAN eq. 5), for comparison with sources that use it.
    pub hertz_peak_force_n: f64,
    pub peak_accel_a_m_s2: f64,
    /// `None` for an infinitely massive partner.
    pub peak_accel_b_m_s2: Option<f64>,
    /// Sphere A's acceleration noise alone.
    pub peak_pressure_pa: f64,
    /// Both spheres of a sphere–sphere collision (opposite signs, each at its own distance
    /// and angle); `None` otherwise.
    pub peak_pressure_pair_pa: Option<f64>,
}
