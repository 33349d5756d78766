//! One collision, inspected: Hertz contact, accelerations and acceleration-noise pressure,
//! computed by the engine's definition of a collision (`engine::collision`: the physics the
//! engine renders), with the exact continuous-time solution of each sphere beside it.
//!
//! Geometry (thesis 4.1, Figure 4.3): sphere A's centre is the origin and A accelerates
//! along the collision normal `n`. The listener is at `distance` from A's centre, at `angle`
//! from `n`. A sphere B touches A on the other side, its centre at `-(a_A + a_B) n`, and
//! accelerates along `-n`; its distance and angle to the listener follow from that. To the
//! engine, A is the grain and B the second grain of a grain–grain collision, or the cup of a
//! grain–cup collision when B is a plane.

use granary_engine::base::materials::{CupMaterial, Elastic, GrainMaterial, SPEED_OF_SOUND};
use granary_engine::base::simd::Isa;
use granary_engine::base::window::{Collision, CollisionKind};
use granary_engine::control::choices::Shape;
use granary_engine::control::params::show_number;
use granary_engine::impact::accel_noise::{SphereFilter, SphereSource};
use granary_engine::impact::collision;
use granary_engine::impact::collision::{CollisionPulses, Constants, Scene};
use granary_engine::impact::contact::{effective, hertz_peak_force, Body, Contact};
use granary_engine::impact::kernels::{PulseKernels, HALF};
use serde::Serialize;

/// The sample rate of the collision behind `ContactSetup::report`. The engine keeps
/// durations and times in samples; the report's numbers do not depend on the rate beyond
/// rounding.
pub const REPORT_SAMPLE_RATE: f32 = 48_000.0;

/// Errors in a contact description.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ContactError {
    #[error("unknown material '{0}' (grain materials: {grains}; cup materials: {cups})", grains = grain_ids(), cups = cup_ids())]
    UnknownMaterial(String),
    #[error("{what} must be a finite number > 0, got {}", show_number(*value))]
    NotPositive { what: &'static str, value: f64 },
    #[error("{what} must be within [{}, {}], got {}", show_number(*lo), show_number(*hi), show_number(*value))]
    OutOfRange {
        what: &'static str,
        value: f64,
        lo: f64,
        hi: f64,
    },
    #[error("material '{0}' has no default radius (it is a cup material): give the radius")]
    NoRadius(String),
    /// A command-line value outside its physical range.
    #[error("{arg} must be within {}{}, got {}", range_text(*lo, *hi, *open_hi), unit_text(unit), show_number(*value))]
    Arg {
        arg: &'static str,
        value: f64,
        lo: f64,
        hi: f64,
        /// The upper end is excluded.
        open_hi: bool,
        unit: &'static str,
    },
    /// Arguments that do not go together.
    #[error("{0}")]
    Combination(String),
}

/// ` unit` after a number, or nothing for a unitless one (error messages).
pub(crate) fn unit_text(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

fn range_text(lo: f64, hi: f64, open_hi: bool) -> String {
    let close = if open_hi { ")" } else { "]" };
    format!("[{}, {}{close}", show_number(lo), show_number(hi))
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
    /// A's shape (`engine::shape`), and B's when B is a sphere: a grain–grain collision's
    /// grains are alike. Not a sphere: the report adds the collision over many orientations
    /// (`ShapeReport`); its other figures are the spheres of the same volume's.
    pub shape: Shape,
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

    /// The collision's scene as the engine sees it: A is the grain, B the second sphere of
    /// a grain–grain collision or the plane of a grain–cup one; the listener at `distance`
    /// from A's centre and `angle` from the normal, in the centre of the stereo image.
    pub fn scene(&self) -> Scene {
        let (d, th) = (self.distance_m, self.angle_rad);
        Scene {
            grain: self.body_a(),
            shape: self.shape,
            partner: self.body_b(),
            cup: self.body_b(),
            surface: self.body_b(),
            surface_delay_s: 0.0,
            restitution: self.restitution as f32,
            listener: [(d * th.sin()) as f32, 0.0, (d * th.cos()) as f32],
            cup_distance_m: d as f32,
            stereo_width: 0.0,
            cup_radius_m: 1.0,
        }
    }

    /// The engine's constants for this collision at `sample_rate`.
    pub fn constants(&self, sample_rate: f32) -> Constants {
        Constants::new(&self.scene(), sample_rate)
    }

    /// The collision as the engine's generator would make it, its contact starting `time`
    /// samples into the window: A's centre at the origin, the normal along z.
    pub fn collision(&self, time: f32) -> Collision {
        let v0 = self.v0 as f32;
        Collision {
            time,
            kind: match self.b {
                Partner::Sphere { .. } => CollisionKind::GrainGrain,
                Partner::Rigid | Partner::Plane { .. } => CollisionKind::GrainCup,
            },
            cell: 0,
            bus: 0,
            // the contact point, so that A's centre, p + a n, is the origin
            position: [0.0, 0.0, -(self.a_radius_m as f32)],
            normal: [0.0, 0.0, 1.0],
            v0,
            ln_v0: v0.ln(),
            weight: 1.0,
            bed_m: 0.0,
            bed_weight: 0.0,
            spread: false,
        }
    }

    /// The collision's physics (`engine::collision::physics`) at `REPORT_SAMPLE_RATE`.
    pub fn pulses(&self) -> CollisionPulses {
        collision::physics(&self.constants(REPORT_SAMPLE_RATE), &self.collision(0.0))
    }

    /// The Hertz contact (PAN eq. 5–10) and impulse of the collision, as the engine renders it.
    pub fn contact(&self) -> Contact {
        self.pulses().contact(REPORT_SAMPLE_RATE)
    }

    /// Peak of the Hertz force law itself (PAN eq. 5; see `engine::contact::hertz_peak_force`), N.
    pub fn hertz_peak_force(&self) -> f64 {
        let (m, r, e) = effective(&self.body_a(), &self.body_b());
        hertz_peak_force(m, r, e, self.v0 as f32)
    }

    /// Sphere A as a radiating source (`engine::collision::sphere_source`).
    pub fn source_a(&self) -> SphereSource {
        collision::sphere_source(&self.constants(REPORT_SAMPLE_RATE), &self.pulses(), 0)
    }

    /// Sphere B as a radiating source (`None` unless B is a sphere): centre at
    /// `-(a_A + a_B) n`, accelerating along `-n`, so its `cos_theta` is the cosine between
    /// `-n` and the direction from its centre to the listener.
    pub fn source_b(&self) -> Option<SphereSource> {
        let p = self.pulses();
        (p.kind == CollisionKind::GrainGrain)
            .then(|| collision::sphere_source(&self.constants(REPORT_SAMPLE_RATE), &p, 1))
    }

    /// Everything `granary inspect contact` prints.
    pub fn report(&self) -> ContactReport {
        // the closed forms are a sphere's: a shaped grain's figures are the spheres' of its
        // volume, beside its own over many orientations (`shape_report`)
        let base = ContactSetup {
            shape: Shape::Sphere,
            ..*self
        };
        let c = base.contact();
        let a_src = base.source_a();
        let b_src = base.source_b();
        let pair = b_src.map(|b_src| {
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
            shape: self.shape_report(),
            contact_time_s: c.duration_s as f64,
            impulse_n_s: c.impulse_ns as f64,
            peak_force_n: c.peak_force_n as f64,
            hertz_peak_force_n: base.hertz_peak_force(),
            peak_accel_a_m_s2: a_src.peak_accel,
            peak_accel_b_m_s2: b_src.map(|b| b.peak_accel),
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

    /// The collision as the engine renders it at `sample_rate`: each sphere's pulse
    /// (`engine::collision::physics`, written by `collision::add_pulse` through the
    /// band-limited kernels) through that sphere's radiation filter `B` (`SphereFilter`; the
    /// engine runs one per channel, its grains being alike). The contact starts
    /// `HALF + onset_phase` samples into the returned `n` samples (`HALF` is the kernels'
    /// support before an onset); each sphere's wave arrives `(r - a)/c` later.
    pub fn render(&self, sample_rate: f32, onset_phase: f32, n: usize) -> Vec<f32> {
        let kernels = PulseKernels::new(sample_rate, Isa::detect());
        let k = self.constants(sample_rate);
        render_collision(&kernels, &k, &self.collision(onset_phase), n)
    }

    /// Where the contact starts in `render`'s output, in samples.
    pub const RENDER_ONSET: usize = HALF;

    /// A shaped grain's collision (`shape` not a sphere) drawn in `SHAPE_ORIENTATIONS`
    /// orientations (each collision draws its grains' own: `engine::collision::draw_shapes`),
    /// rendered as the engine does at 96 kHz, against the spheres of the same volume.
    pub fn shape_report(&self) -> Option<ShapeReport> {
        if self.shape == Shape::Sphere {
            return None;
        }
        let fs = 96_000.0;
        let kernels = PulseKernels::new(fs, Isa::detect());
        let k = self.constants(fs);
        let n = 256 + (self.distance_m * fs as f64 / SPEED_OF_SOUND as f64) as usize;
        let peak = |k: &Constants, c: &Collision| {
            render_collision(&kernels, k, c, n)
                .iter()
                .fold(0.0f64, |m, x| m.max(x.abs() as f64))
        };
        let spheres = ContactSetup {
            shape: Shape::Sphere,
            ..*self
        };
        let sphere_peak = peak(&spheres.constants(fs), &spheres.collision(0.0));
        let (mut ratio, mut time, mut pressure) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..SHAPE_ORIENTATIONS {
            // another orientation: the draw hashes the collision's position (a nanometre apart)
            let mut c = self.collision(0.0);
            c.position[0] = i as f32 * 1e-9;
            ratio.push(collision::draw_shapes(&k, &c).impulse_scale as f64);
            time.push(collision::physics(&k, &c).duration_s(fs));
            pressure.push(peak(&k, &c));
        }
        let sorted = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v
        };
        let at = |v: &[f64], q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        let (ratio, time, pressure) = (sorted(ratio), sorted(time), sorted(pressure));
        Some(ShapeReport {
            shape: self.shape.id(),
            orientations: SHAPE_ORIENTATIONS,
            impulse_over_spheres: [
                ratio[0],
                ratio.iter().sum::<f64>() / ratio.len() as f64,
                at(&ratio, 1.0),
            ],
            contact_time_s: [time[0], at(&time, 0.5), at(&time, 1.0)],
            peak_pressure_pa: [at(&pressure, 0.1), at(&pressure, 0.5), at(&pressure, 0.9)],
            peak_pressure_spheres_pa: sphere_peak,
        })
    }
}

/// Orientations `ContactSetup::shape_report` draws.
pub const SHAPE_ORIENTATIONS: usize = 1000;

/// A shaped grain's collision over many orientations (`ContactSetup::shape_report`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ShapeReport {
    pub shape: &'static str,
    pub orientations: usize,
    /// The impulse over the spheres' of the same volume: least, mean, most (a grain hit off
    /// its centre spins and takes less).
    pub impulse_over_spheres: [f64; 3],
    /// Contact time, s: shortest, median, longest (Hertz with the curvature where it is hit).
    pub contact_time_s: [f64; 3],
    /// Peak pressure of A and B as the engine renders them at 96 kHz through the radiation
    /// filter, Pa: 10th percentile, median, 90th percentile.
    pub peak_pressure_pa: [f64; 3],
    /// The same for the spheres of the same volume.
    pub peak_pressure_spheres_pa: f64,
}

/// Collision `c` as the engine renders it with the constants `k` (`ContactSetup::render`):
/// each grain's pulse through the band-limited kernels and its radiation filter, `n` samples.
fn render_collision(kernels: &PulseKernels, k: &Constants, c: &Collision, n: usize) -> Vec<f32> {
    let sample_rate = kernels.sample_rate();
    let p = collision::physics(k, c);
    let mut out = vec![0.0f32; n];
    for (sphere, s) in k.spheres.iter().zip(p.heard()) {
        // long enough that no pulse wraps around to the start: tap i of a pulse lands
        // on sample floor(time) + i
        let mut buf = vec![0.0f32; n + s.time as usize + kernels.taps()];
        collision::add_pulse(kernels, p.ln_duration, s.time, [s.a0, s.a1, s.a2], 1.0, &mut buf, HALF);
        let mut filter = SphereFilter::new(sample_rate, sphere.radius_m);
        for (o, x) in out.iter_mut().zip(&buf) {
            *o += filter.process(*x);
        }
    }
    out
}

/// What `granary inspect contact` prints. Units in the field names.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContactReport {
    /// A shaped grain over many orientations (`--shape`); `None` for spheres. The other
    /// figures are then the spheres' of the same volume.
    pub shape: Option<ShapeReport>,
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
