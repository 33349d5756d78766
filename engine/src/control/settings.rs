//! Engine settings in physical units, and the limits the engine enforces whatever it is sent.
//! Defaults and limits come from the parameter table (`params::SPECS`); the mapping from
//! parameter values to settings is `params::ParamValues::to_settings`.

use crate::base::materials::{CupMaterial, GrainMaterial, SurfaceMaterial};
use crate::control::choices::CupShape;
use crate::control::choices::Gesture;
use crate::control::choices::Shape;
use crate::control::params::ParamValues;

/// How the pour is triggered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TriggerMode {
    /// Note-on starts the stream, velocity scales it, note-off stops it.
    #[default]
    Midi,
    /// `pour_rate` alone drives the pour (0 = silent).
    Continuous,
}

/// Where the stream lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PourTarget {
    /// Into the cup; what bounces out or overflows falls on the surface it stands on.
    #[default]
    Cup,
    /// Onto the bare surface: a heap grows at the grains' angle of repose.
    Surface,
}

/// Where the generator's cells take their collision rates and their speed and normal-angle
/// distributions from (thesis 5.5–5.6 and 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Statistics {
    /// The hand-written model of each cell (`generator::cell_pdf`, `generator::Shapes`).
    #[default]
    Model,
    /// The databank measured from rigid-body simulations of pours (`bank`,
    /// `assets/bank/bank.json`), looked up each window; settling stays the model's.
    Bank,
}

/// How many of the generator's collisions are rendered one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Quality {
    /// Realtime while playing, reference when the host renders offline (a DAW's bounce, the
    /// command line's `granary render`): `Engine::set_offline` says which.
    #[default]
    Auto,
    /// Dense cells rendered as energy-preserving groups and texture masking
    /// (`generator::RENDERED_PER_CELL_PER_S`, `BED_PULSES_PER_CELL_PER_S`): a dense pour in a
    /// live session at a few per cent of a core.
    Realtime,
    /// Every collision the generator produces rendered one by one (no groups, no texture
    /// masking; the thesis 6.1 audibility culling stays): for the final bounce.
    Reference,
}

impl Quality {
    /// Whether the engine renders at reference quality, for an engine that is (`offline`) or
    /// is not rendering offline.
    pub fn is_reference(self, offline: bool) -> bool {
        match self {
            Quality::Auto => offline,
            Quality::Realtime => false,
            Quality::Reference => true,
        }
    }
}

/// Engine settings in physical units. `sanitized` makes any value safe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub grain_material: GrainMaterial,
    /// Multiplies the material's nominal grain diameter.
    pub grain_size: f32,
    /// Multiplies the material's density.
    pub density: f32,
    pub cup_material: CupMaterial,
    /// Multiplies every length of the cup's shape (its finite-element asset, `cups::Cup`).
    pub cup_size: f32,
    /// The cup's shape (its finite-element model); `None`: the material's usual shape.
    pub cup_shape: Option<CupShape>,
    /// The grains' shape (`shape`); `None`: the material's own.
    pub grain_shape: Option<Shape>,
    /// Fill level at pour start, 0..1.
    pub fill: f32,
    /// The cup fills as grains arrive.
    pub auto_fill: bool,
    /// Mass flow, g/s.
    pub pour_rate_g_s: f32,
    /// Spout height above the cup rim, m.
    pub fall_height_m: f32,
    /// How unsteady the stream is, 0 (steady) .. 1 (`stream`).
    pub flow_variation: f32,
    /// Where the stream lands, 0 (the cup's axis) .. 1 (against its wall).
    pub aim: f32,
    /// Listener direction from the vertical through the impact point, degrees.
    pub listener_angle_deg: f32,
    /// Listener distance from the impact point, m.
    pub listener_distance_m: f32,
    /// 0 = mono, 1 = full width.
    pub stereo_width: f32,
    pub grains_level_db: f32,
    pub cup_level_db: f32,
    /// Where the stream lands.
    pub pour_target: PourTarget,
    /// What the cup stands on, and the ground of a surface pour.
    pub surface_material: SurfaceMaterial,
    pub surface_level_db: f32,
    /// What a note (or continuous mode) does to the grains.
    pub gesture: Gesture,
    /// How hard a stir, shake or tilt goes in continuous mode, 0..1.
    pub gesture_amount: f32,
    /// Shakes per second, Hz.
    pub shake_rate_hz: f32,
    pub friction_level_db: f32,
    /// How many collisions are rendered one by one (`Quality`).
    pub quality: Quality,
    /// Where the generator's cell statistics come from (`Statistics`).
    pub statistics: Statistics,
    /// Output = pressure in Pa times 10^(output_gain_db / 20).
    pub output_gain_db: f32,
    pub trigger_mode: TriggerMode,
    pub seed: u64,
}

impl Default for Settings {
    /// The parameter table's defaults (`params::SPECS`), mapped as every preset is.
    fn default() -> Self {
        ParamValues::default().to_settings()
    }
}

/// Physical limits the engine enforces whatever it is sent: the parameter table's ranges
/// (`params::SPECS`) in `Settings`' SI units.
pub mod limits {
    use crate::control::params::Param;

    pub const GRAIN_SIZE: (f32, f32) = Param::GrainSize.si_range();
    pub const DENSITY: (f32, f32) = Param::Density.si_range();
    pub const CUP_SIZE: (f32, f32) = Param::CupSize.si_range();
    pub const FILL: (f32, f32) = Param::Fill.si_range();
    pub const POUR_RATE_G_S: (f32, f32) = Param::PourRate.si_range();
    pub const FALL_HEIGHT_M: (f32, f32) = Param::FallHeight.si_range();
    pub const LISTENER_ANGLE_DEG: (f32, f32) = Param::ListenerAngle.si_range();
    pub const LISTENER_DISTANCE_M: (f32, f32) = Param::ListenerDistance.si_range();
    pub const STEREO_WIDTH: (f32, f32) = Param::StereoWidth.si_range();
    pub const GRAINS_LEVEL_DB: (f32, f32) = Param::GrainsLevel.si_range();
    pub const CUP_LEVEL_DB: (f32, f32) = Param::CupLevel.si_range();
    pub const SURFACE_LEVEL_DB: (f32, f32) = Param::SurfaceLevel.si_range();
    pub const OUTPUT_GAIN_DB: (f32, f32) = Param::OutputGain.si_range();
    pub const FLOW_VARIATION: (f32, f32) = Param::FlowVariation.si_range();
    pub const AIM: (f32, f32) = Param::Aim.si_range();
    pub const GESTURE_AMOUNT: (f32, f32) = Param::GestureAmount.si_range();
    pub const SHAKE_RATE_HZ: (f32, f32) = Param::ShakeRate.si_range();
    pub const FRICTION_LEVEL_DB: (f32, f32) = Param::FrictionLevel.si_range();
}

fn clamp_or(x: f32, (lo, hi): (f32, f32), fallback: f32) -> f32 {
    if x.is_finite() {
        x.clamp(lo, hi)
    } else {
        fallback
    }
}

impl Settings {
    /// Clamps every value to its physical range; NaN and infinities become the default.
    pub fn sanitized(&self) -> Settings {
        let d = Settings::default();
        Settings {
            grain_size: clamp_or(self.grain_size, limits::GRAIN_SIZE, d.grain_size),
            density: clamp_or(self.density, limits::DENSITY, d.density),
            cup_size: clamp_or(self.cup_size, limits::CUP_SIZE, d.cup_size),
            fill: clamp_or(self.fill, limits::FILL, d.fill),
            pour_rate_g_s: clamp_or(self.pour_rate_g_s, limits::POUR_RATE_G_S, 0.0),
            fall_height_m: clamp_or(self.fall_height_m, limits::FALL_HEIGHT_M, d.fall_height_m),
            flow_variation: clamp_or(self.flow_variation, limits::FLOW_VARIATION, 0.0),
            aim: clamp_or(self.aim, limits::AIM, d.aim),
            listener_angle_deg: clamp_or(
                self.listener_angle_deg,
                limits::LISTENER_ANGLE_DEG,
                d.listener_angle_deg,
            ),
            listener_distance_m: clamp_or(
                self.listener_distance_m,
                limits::LISTENER_DISTANCE_M,
                d.listener_distance_m,
            ),
            stereo_width: clamp_or(self.stereo_width, limits::STEREO_WIDTH, d.stereo_width),
            grains_level_db: clamp_or(self.grains_level_db, limits::GRAINS_LEVEL_DB, 0.0),
            cup_level_db: clamp_or(self.cup_level_db, limits::CUP_LEVEL_DB, 0.0),
            surface_level_db: clamp_or(self.surface_level_db, limits::SURFACE_LEVEL_DB, 0.0),
            gesture_amount: clamp_or(self.gesture_amount, limits::GESTURE_AMOUNT, 0.0),
            shake_rate_hz: clamp_or(self.shake_rate_hz, limits::SHAKE_RATE_HZ, d.shake_rate_hz),
            friction_level_db: clamp_or(self.friction_level_db, limits::FRICTION_LEVEL_DB, 0.0),
            output_gain_db: clamp_or(self.output_gain_db, limits::OUTPUT_GAIN_DB, d.output_gain_db),
            ..*self
        }
    }

    /// The cup shape in use: the chosen one, or the material's usual shape.
    pub fn resolved_cup_shape(&self) -> CupShape {
        self.cup_shape.unwrap_or_else(|| CupShape::usual_for(self.cup_material))
    }

    /// The grain shape in use: the chosen one, or the material's own (`Shape::of`).
    pub fn resolved_grain_shape(&self) -> Shape {
        self.grain_shape.unwrap_or_else(|| Shape::of(self.grain_material))
    }

    /// The radius of the sphere-radiation filter `B` the grains' sound goes through
    /// (`accel_noise::SphereFilter`), m: the grain's, or for a grain with its own field
    /// (`Shape::has_own_field`) a micrometre, where B is 1 in the audio band: the fitted
    /// terms (`shape`) already hold the grain's size.
    pub fn radiation_radius_m(&self) -> f32 {
        if self.resolved_grain_shape().has_own_field() {
            1e-6
        } else {
            self.grain_radius_m()
        }
    }

    /// Grain radius, m: half the material's nominal diameter times `grain_size`.
    pub fn grain_radius_m(&self) -> f32 {
        0.5 * self.grain_material.data().diameter_m * self.grain_size
    }

    /// Grain density, kg/m³: the material's times `density`.
    pub fn grain_density(&self) -> f32 {
        self.grain_material.data().elastic.density * self.density
    }
}
