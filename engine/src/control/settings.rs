//! Engine settings in physical units, and the limits the engine enforces whatever it is sent.
//! Defaults and limits come from the parameter table (`params::SPECS`); the mapping from
//! parameter values to settings is `params::ParamValues::to_settings`.

use crate::base::materials::{CupMaterial, GrainMaterial, SurfaceMaterial};
use crate::control::choices::{CupShape, Gesture, PourTarget, Quality, Shape, Statistics, TriggerMode};
use crate::control::params::{
    cup_shape_choice, grain_shape_choice, Param, ParamValues, Plain, POUR_TARGETS, QUALITIES, STATISTICS, TRIGGER_MODES,
};

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

impl ParamValues {
    /// Engine settings (SI units) for these values: the one parameter -> settings mapping
    /// (presets, the command line and the plugin's host parameters all come through here).
    pub fn to_settings(&self) -> Settings {
        use Param as P;
        Settings {
            grain_material: GrainMaterial::ALL[self.choice_of(P::GrainMaterial)],
            grain_size: self.si(P::GrainSize),
            density: self.si(P::Density),
            cup_material: CupMaterial::ALL[self.choice_of(P::CupMaterial)],
            cup_size: self.si(P::CupSize),
            cup_shape: cup_shape_choice(self.choice_of(P::CupShape)),
            grain_shape: grain_shape_choice(self.choice_of(P::GrainShape)),
            fill: self.si(P::Fill),
            auto_fill: self[P::AutoFill] == Plain::Bool(true),
            pour_rate_g_s: self.si(P::PourRate),
            fall_height_m: self.si(P::FallHeight),
            listener_angle_deg: self.si(P::ListenerAngle),
            listener_distance_m: self.si(P::ListenerDistance),
            stereo_width: self.si(P::StereoWidth),
            grains_level_db: self.si(P::GrainsLevel),
            cup_level_db: self.si(P::CupLevel),
            output_gain_db: self.si(P::OutputGain),
            flow_variation: self.si(P::FlowVariation),
            aim: self.si(P::Aim),
            pour_target: POUR_TARGETS[self.choice_of(P::PourTarget)],
            surface_material: SurfaceMaterial::ALL[self.choice_of(P::SurfaceMaterial)],
            surface_level_db: self.si(P::SurfaceLevel),
            gesture: Gesture::ALL[self.choice_of(P::Gesture)],
            gesture_amount: self.si(P::GestureAmount),
            shake_rate_hz: self.si(P::ShakeRate),
            friction_level_db: self.si(P::FrictionLevel),
            quality: QUALITIES[self.choice_of(P::Quality)],
            statistics: STATISTICS[self.choice_of(P::Statistics)],
            trigger_mode: TRIGGER_MODES[self.choice_of(P::TriggerMode)],
            seed: match self[P::Seed] {
                Plain::Int(x) => x.max(0) as u64,
                _ => unreachable!("the seed is an int"),
            },
        }
    }
}
