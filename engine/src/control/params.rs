//! Parameters: the one table (`SPECS`) that defines each parameter once — stable id, name,
//! unit, range, default, whether the control is logarithmic, doc, and the factor from its unit to the engine's SI
//! `Settings` field — and the plain values (`ParamValues`) with the one mapping to
//! `Settings` (`ParamValues::to_settings`).
//!
//! Everything else derives from the table: `Settings::default()` and the engine's safety
//! limits (`settings::limits`), the preset schema (`ParamValues`' serde impls), the command
//! line's `--set`, the plugin's host parameters (`granary::params`) and the README's table
//! (checked by a test below).
//!
//! Ids are stable: DAW projects and presets store them. Never rename one.

use crate::base::materials::{CupMaterial, GrainMaterial, SurfaceMaterial};
use crate::control::choices::CupShape;
use crate::control::choices::Gesture;
use crate::control::choices::Shape;
use crate::control::choices::{PourTarget, Quality, Statistics, TriggerMode};
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The value domain of one parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Continuous, in the table's `unit`; `log` means a skewed (logarithmic-feeling) control.
    /// `Settings` holds the value times `to_si` (its SI unit: cm -> m is 0.01). Values snap to
    /// multiples of `step` (`Spec::snap`): fine enough for sound design, coarse enough that a
    /// host's round trip through a normalised 0..1 value gives back the exact value.
    Float {
        min: f32,
        max: f32,
        default: f32,
        log: bool,
        to_si: f32,
        step: f32,
    },
    Int {
        min: i32,
        max: i32,
        default: i32,
    },
    Bool {
        default: bool,
    },
    /// Choices by stable id, default index.
    Enum {
        ids: &'static [&'static str],
        default: usize,
    },
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    /// The row's name in code; `SPECS[p as usize].param == p`.
    pub param: Param,
    /// Stable id (hosts, presets, the command line).
    pub id: &'static str,
    pub name: &'static str,
    /// Unit of the plain value (what hosts, presets and the README show).
    pub unit: &'static str,
    pub kind: Kind,
    pub doc: &'static str,
}

/// Every parameter, in display order (the order of `SPECS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    GrainMaterial,
    GrainSize,
    Density,
    CupMaterial,
    CupSize,
    Fill,
    AutoFill,
    PourRate,
    FallHeight,
    ListenerAngle,
    ListenerDistance,
    StereoWidth,
    GrainsLevel,
    CupLevel,
    OutputGain,
    TriggerMode,
    Seed,
    CupShape,
    FlowVariation,
    Aim,
    PourTarget,
    SurfaceMaterial,
    SurfaceLevel,
    Gesture,
    GestureAmount,
    ShakeRate,
    FrictionLevel,
    Quality,
    GrainShape,
    Statistics,
}

impl Param {
    /// This parameter's row of the table.
    pub const fn spec(self) -> &'static Spec {
        let table: &'static [Spec; SPECS.len()] = &SPECS;
        &table[self as usize]
    }

    /// The range of a float parameter in `Settings`' SI unit (min and max times `to_si`).
    pub const fn si_range(self) -> (f32, f32) {
        match self.spec().kind {
            Kind::Float { min, max, to_si, .. } => (min * to_si, max * to_si),
            _ => panic!("not a float parameter"),
        }
    }
}

impl Param {
    /// The range of a float parameter in its own unit (what hosts, presets and the README show).
    pub const fn plain_range(self) -> (f32, f32) {
        match self.spec().kind {
            Kind::Float { min, max, .. } => (min, max),
            _ => panic!("not a float parameter"),
        }
    }

    /// The factor from a float parameter's unit to `Settings`' SI unit.
    pub const fn to_si(self) -> f32 {
        match self.spec().kind {
            Kind::Float { to_si, .. } => to_si,
            _ => panic!("not a float parameter"),
        }
    }
}

// The table's rows are in `Param`'s order.
const _: () = {
    let mut i = 0;
    while i < SPECS.len() {
        assert!(SPECS[i].param as usize == i);
        i += 1;
    }
};

/// `GrainMaterial::ALL`'s ids, in its order (`GrainMaterial::id`: the one place they are written).
pub const GRAIN_IDS: [&str; GrainMaterial::ALL.len()] = {
    let mut out = [""; GrainMaterial::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = GrainMaterial::ALL[i].id();
        i += 1;
    }
    out
};

/// `CupMaterial::ALL`'s ids, in its order (`CupMaterial::id`).
pub const CUP_IDS: [&str; CupMaterial::ALL.len()] = {
    let mut out = [""; CupMaterial::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = CupMaterial::ALL[i].id();
        i += 1;
    }
    out
};
/// `SurfaceMaterial::ALL`'s ids, in its order (`SurfaceMaterial::id`).
pub const SURFACE_IDS: [&str; SurfaceMaterial::ALL.len()] = {
    let mut out = [""; SurfaceMaterial::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = SurfaceMaterial::ALL[i].id();
        i += 1;
    }
    out
};
/// The pour targets' ids, in the order of [`POUR_TARGETS`].
pub const POUR_TARGET_IDS: [&str; 2] = ["cup", "surface"];
pub const POUR_TARGETS: [PourTarget; 2] = [PourTarget::Cup, PourTarget::Surface];
/// The trigger modes' ids, in the order of [`TRIGGER_MODES`].
pub const TRIGGER_IDS: [&str; 2] = ["midi", "continuous"];
pub const TRIGGER_MODES: [TriggerMode; 2] = [TriggerMode::Midi, TriggerMode::Continuous];
/// The gestures' ids, in the order of `Gesture::ALL` (`Gesture::id`).
pub const GESTURE_IDS: [&str; Gesture::ALL.len()] = {
    let mut out = [""; Gesture::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = Gesture::ALL[i].id();
        i += 1;
    }
    out
};
/// The qualities' ids, in the order of [`QUALITIES`].
pub const QUALITY_IDS: [&str; 3] = ["auto", "realtime", "reference"];
pub const QUALITIES: [Quality; 3] = [Quality::Auto, Quality::Realtime, Quality::Reference];
/// The cell statistics' ids, in the order of [`STATISTICS`] (`Statistics::id`).
pub const STATISTICS_IDS: [&str; Statistics::ALL.len()] = {
    let mut out = [""; Statistics::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = Statistics::ALL[i].id();
        i += 1;
    }
    out
};
pub const STATISTICS: [Statistics; 2] = Statistics::ALL;
/// `auto`, then the shapes of `CupShape::ALL` (`CupShape::id`; assets/cups).
pub const CUP_SHAPE_IDS: [&str; CupShape::ALL.len() + 1] = {
    let mut out = ["auto"; CupShape::ALL.len() + 1];
    let mut i = 0;
    while i < CupShape::ALL.len() {
        out[i + 1] = CupShape::ALL[i].id();
        i += 1;
    }
    out
};

/// `auto`, then the shapes of `Shape::ALL` (`Shape::id`; assets/grains).
pub const GRAIN_SHAPE_IDS: [&str; Shape::ALL.len() + 1] = {
    let mut out = ["auto"; Shape::ALL.len() + 1];
    let mut i = 0;
    while i < Shape::ALL.len() {
        out[i + 1] = Shape::ALL[i].id();
        i += 1;
    }
    out
};

/// The grain shape of a `grain_shape` choice index (0 = auto: the material's own).
pub fn grain_shape_choice(index: usize) -> Option<Shape> {
    index.checked_sub(1).and_then(|i| Shape::ALL.get(i).copied())
}

/// The cup shape of a `cup_shape` choice index (0 = auto: the material's usual shape).
pub fn cup_shape_choice(index: usize) -> Option<CupShape> {
    index.checked_sub(1).and_then(|i| CupShape::ALL.get(i).copied())
}

/// Every parameter, in display order: the one definition of each.
pub const SPECS: [Spec; 30] = [
    Spec {
        param: Param::GrainMaterial,
        id: "grain_material",
        name: "Grain material",
        unit: "",
        kind: Kind::Enum {
            ids: &GRAIN_IDS,
            default: 0,
        },
        doc: "What is poured; sets E, nu, rho, size and restitution",
    },
    Spec {
        param: Param::GrainSize,
        id: "grain_size",
        name: "Grain size",
        unit: "x",
        kind: Kind::Float {
            min: 0.25,
            max: 4.0,
            default: 1.0,
            log: true,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "Multiplies the material's nominal grain diameter",
    },
    Spec {
        param: Param::Density,
        id: "density",
        name: "Density",
        unit: "x",
        kind: Kind::Float {
            min: 0.25,
            max: 4.0,
            default: 1.0,
            log: true,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "Multiplies the grain material's density",
    },
    Spec {
        param: Param::CupMaterial,
        id: "cup_material",
        name: "Cup material",
        unit: "",
        kind: Kind::Enum {
            ids: &CUP_IDS,
            default: 0,
        },
        doc: "What the cup is made of",
    },
    Spec {
        param: Param::CupSize,
        id: "cup_size",
        name: "Cup size",
        unit: "x",
        kind: Kind::Float {
            min: 0.5,
            max: 2.5,
            default: 1.0,
            log: true,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "Multiplies every length of the cup's shape",
    },
    Spec {
        param: Param::Fill,
        id: "fill",
        name: "Fill",
        unit: "",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            default: 0.0,
            log: false,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "Fill level at pour start, 0 = empty, 1 = full",
    },
    Spec {
        param: Param::AutoFill,
        id: "auto_fill",
        name: "Auto fill",
        unit: "",
        kind: Kind::Bool { default: true },
        doc: "The cup fills as you pour",
    },
    Spec {
        param: Param::PourRate,
        id: "pour_rate",
        name: "Pour rate",
        unit: "g/s",
        kind: Kind::Float {
            min: 0.0,
            max: 200.0,
            default: 20.0,
            log: true,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "Mass flow of the stream",
    },
    Spec {
        param: Param::FallHeight,
        id: "fall_height",
        name: "Fall height",
        unit: "cm",
        kind: Kind::Float {
            min: 1.0,
            max: 100.0,
            default: 15.0,
            log: true,
            to_si: 0.01, // cm -> m (`Settings::fall_height_m`)
            step: 0.01,
        },
        doc: "Height of the spout above the cup's rim",
    },
    Spec {
        param: Param::ListenerAngle,
        id: "listener_angle",
        name: "Listener angle",
        unit: "deg",
        kind: Kind::Float {
            min: 0.0,
            max: 90.0,
            default: 30.0,
            log: false,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "0 = straight above the impact point, 90 = level with it",
    },
    Spec {
        param: Param::ListenerDistance,
        id: "listener_distance",
        name: "Listener distance",
        unit: "m",
        kind: Kind::Float {
            min: 0.1,
            max: 10.0,
            default: 0.4,
            log: true,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "Distance from the impact point",
    },
    Spec {
        param: Param::StereoWidth,
        id: "stereo_width",
        name: "Stereo width",
        unit: "",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            default: 0.7,
            log: false,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "0 = mono, 1 = full width",
    },
    Spec {
        param: Param::GrainsLevel,
        id: "grains_level",
        name: "Grains level",
        unit: "dB",
        kind: Kind::Float {
            min: -60.0,
            max: 24.0,
            default: 0.0,
            log: false,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "Level of the grain (acceleration noise) stem",
    },
    Spec {
        param: Param::CupLevel,
        id: "cup_level",
        name: "Cup level",
        unit: "dB",
        kind: Kind::Float {
            min: -60.0,
            max: 24.0,
            default: 0.0,
            log: false,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "Level of the cup (modal + diffuse) stem",
    },
    Spec {
        param: Param::OutputGain,
        id: "output_gain",
        name: "Output gain",
        unit: "dB",
        kind: Kind::Float {
            min: -20.0,
            max: 80.0,
            default: 38.03,
            log: false,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "Output = pressure in Pa x this gain (0 dB: 1.0 = 1 Pa = 94 dB SPL)",
    },
    Spec {
        param: Param::TriggerMode,
        id: "trigger_mode",
        name: "Trigger mode",
        unit: "",
        kind: Kind::Enum {
            ids: &TRIGGER_IDS,
            default: 0,
        },
        doc: "MIDI: notes pour; Continuous: pour_rate alone pours",
    },
    Spec {
        param: Param::Seed,
        id: "seed",
        name: "Seed",
        unit: "",
        kind: Kind::Int {
            min: 0,
            max: 999_999,
            default: 1,
        },
        doc: "Random seed: the same seed bounces the same pour",
    },
    Spec {
        param: Param::CupShape,
        id: "cup_shape",
        name: "Cup shape",
        unit: "",
        kind: Kind::Enum {
            ids: &CUP_SHAPE_IDS,
            default: 0,
        },
        doc: "The cup's geometry (finite-element model); auto: the material's usual shape",
    },
    Spec {
        param: Param::FlowVariation,
        id: "flow_variation",
        name: "Flow variation",
        unit: "",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            default: 0.4,
            log: false,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "0 = a steady stream; up to 1: the flow wavers, cohesive grains leave in clumps, a pour starts with a surge and ends with a trickle; above 0.5 the hand pours in fits (spurts and gaps)",
    },
    Spec {
        param: Param::Aim,
        id: "aim",
        name: "Aim",
        unit: "",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            default: 0.0,
            log: false,
            to_si: 1.0,
            step: 0.001,
        },
        doc: "Where the stream lands: 0 = the cup's centre, 1 = against its wall (MIDI keys 72-96 set it per note)",
    },
    Spec {
        param: Param::PourTarget,
        id: "pour_target",
        name: "Pour target",
        unit: "",
        kind: Kind::Enum {
            ids: &POUR_TARGET_IDS,
            default: 0,
        },
        doc: "Where the stream lands: the cup (grains that bounce out or overflow fall on the surface) or the bare surface (a heap grows)",
    },
    Spec {
        param: Param::SurfaceMaterial,
        id: "surface_material",
        name: "Surface material",
        unit: "",
        kind: Kind::Enum {
            ids: &SURFACE_IDS,
            default: 4,
        },
        doc: "What the cup stands on, and the ground of a surface pour: it sounds itself (Lamb's problem, seed 002)",
    },
    Spec {
        param: Param::SurfaceLevel,
        id: "surface_level",
        name: "Surface level",
        unit: "dB",
        kind: Kind::Float {
            min: -60.0,
            max: 24.0,
            default: 0.0,
            log: false,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "Level of the surface stem (the ground's own sound)",
    },
    Spec {
        param: Param::Gesture,
        id: "gesture",
        name: "Gesture",
        unit: "",
        kind: Kind::Enum {
            ids: &GESTURE_IDS,
            default: 0,
        },
        doc: "What a note does to the grains: pour them, stir them with a spoon, shake the closed cup, or tilt it (MIDI keys 24-27 switch it)",
    },
    Spec {
        param: Param::GestureAmount,
        id: "gesture_amount",
        name: "Gesture amount",
        unit: "%",
        kind: Kind::Float {
            min: 0.0,
            max: 100.0,
            default: 50.0,
            log: false,
            to_si: 0.01,
            step: 0.1,
        },
        doc: "How hard a stir, shake or tilt goes in continuous mode (spoon speed, shake strength, tilt angle); a note's velocity sets it in MIDI mode",
    },
    Spec {
        param: Param::ShakeRate,
        id: "shake_rate",
        name: "Shake rate",
        unit: "Hz",
        kind: Kind::Float {
            min: 1.0,
            max: 12.0,
            default: 4.0,
            log: false,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "Shakes per second of the shake gesture",
    },
    Spec {
        param: Param::FrictionLevel,
        id: "friction_level",
        name: "Friction level",
        unit: "dB",
        kind: Kind::Float {
            min: -60.0,
            max: 24.0,
            default: 0.0,
            log: false,
            to_si: 1.0,
            step: 0.01,
        },
        doc: "Level of the friction stem (sliding, stirring, avalanches: the contact patches' own sound)",
    },
    Spec {
        param: Param::Quality,
        id: "quality",
        name: "Quality",
        unit: "",
        kind: Kind::Enum {
            ids: &QUALITY_IDS,
            default: 1,
        },
        doc: "realtime (the default): dense pours rendered as energy-preserving groups (a few per cent of a core), the same samples live, in every host's bounce and in granary render; reference: every collision one by one (several times slower on dense pours); auto: realtime while playing, reference when the host says it bounces offline (granary render does, Ardour 7 does not)",
    },
    Spec {
        param: Param::GrainShape,
        id: "grain_shape",
        name: "Grain shape",
        unit: "",
        kind: Kind::Enum {
            ids: &GRAIN_SHAPE_IDS,
            default: 0,
        },
        doc: "The grains' shape (precomputed acceleration noise, assets/grains; same volume); auto: the material's own (rice a rod, lentils a lens, sugar and salt cubes, sand and beads spheres)",
    },
    Spec {
        param: Param::Statistics,
        id: "statistics",
        name: "Statistics",
        unit: "",
        kind: Kind::Enum {
            ids: &STATISTICS_IDS,
            default: 1,
        },
        doc: "Where the collision generator's cells take their rates and speed and angle distributions from: model (hand-written) or bank (measured from rigid-body simulations of pours, assets/bank)",
    },
];

pub fn spec(id: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.id == id)
}

/// Display name of an enum choice.
pub fn choice_name(id: &str, index: usize) -> &'static str {
    match id {
        "grain_material" => GrainMaterial::ALL.get(index).map(|m| m.data().name).unwrap_or("?"),
        "cup_material" => CupMaterial::ALL.get(index).map(|m| m.data().name).unwrap_or("?"),
        "trigger_mode" => ["MIDI", "Continuous"].get(index).copied().unwrap_or("?"),
        "surface_material" => SurfaceMaterial::ALL.get(index).map(|m| m.data().name).unwrap_or("?"),
        "pour_target" => ["Cup", "Surface"].get(index).copied().unwrap_or("?"),
        "gesture" => Gesture::ALL.get(index).map(|g| g.name()).unwrap_or("?"),
        "quality" => ["Auto", "Realtime", "Reference"].get(index).copied().unwrap_or("?"),
        "statistics" => ["Model", "DEM bank"].get(index).copied().unwrap_or("?"),
        "grain_shape" if index == 0 => "Auto",
        "grain_shape" => grain_shape_choice(index).map(Shape::name).unwrap_or("?"),
        "cup_shape" if index == 0 => "Auto",
        "cup_shape" => cup_shape_choice(index).map(CupShape::name).unwrap_or("?"),
        _ => "?",
    }
}

/// The words a boolean parameter takes, true then false: on the command line (`--set
/// auto_fill=yes`, any case) and, as JSON strings, in preset files (which also take the JSON
/// `true` and `false`).
pub const BOOL_WORDS: [[&str; 4]; 2] = [["on", "true", "yes", "1"], ["off", "false", "no", "0"]];

/// A boolean written as one of [`BOOL_WORDS`] (any case, surrounding spaces ignored).
pub fn parse_bool(text: &str) -> Option<bool> {
    let t = text.trim();
    let is = |words: &[&str; 4]| words.iter().any(|w| w.eq_ignore_ascii_case(t));
    if is(&BOOL_WORDS[0]) {
        Some(true)
    } else if is(&BOOL_WORDS[1]) {
        Some(false)
    } else {
        None
    }
}

/// A number as a message shows it: the shortest decimal that reads back as the same f32 (the
/// precision the engine keeps: `0.7`, not `0.699999988079071`), in exponent form when very
/// large or small; numbers beyond f32's range as f64 (`1e300`).
pub fn show_number(x: f64) -> String {
    let f = x as f32;
    if x.is_finite() && !f.is_finite() {
        return format!("{x:e}");
    }
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e7).contains(&a) {
        format!("{f:e}")
    } else {
        format!("{f}")
    }
}

/// A bad parameter value: what and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("unknown parameter id `{0}`")]
    UnknownId(String),
    #[error("`{id}`: expected {expected}, got {got}")]
    WrongType {
        id: String,
        expected: &'static str,
        got: String,
    },
    #[error("`{id}`: {} is outside {}..={}", show_number(*value), show_number(*min as f64), show_number(*max as f64))]
    OutOfRange { id: String, value: f64, min: f32, max: f32 },
    #[error("`{id}`: `{value}` is not one of: {choices}")]
    UnknownChoice { id: String, value: String, choices: String },
}

/// What a boolean parameter expects, in messages.
const BOOL_EXPECTED: &str = "on/off, true/false, yes/no or 1/0";

/// The plain value of one parameter, in the table's unit: what hosts and presets hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plain {
    Float(f32),
    Int(i32),
    Bool(bool),
    /// Index into the parameter's `Kind::Enum::ids`.
    Choice(usize),
}

impl Plain {
    /// As a number: floats and ints as they are, bools as 0/1, choices as their index (how
    /// the plugin's parameters hold them).
    pub fn as_f32(self) -> f32 {
        match self {
            Plain::Float(x) => x,
            Plain::Int(i) => i as f32,
            Plain::Bool(b) => b as u8 as f32,
            Plain::Choice(i) => i as f32,
        }
    }
}

impl Spec {
    pub fn default_plain(&self) -> Plain {
        match self.kind {
            Kind::Float { default, .. } => Plain::Float(default),
            Kind::Int { default, .. } => Plain::Int(default),
            Kind::Bool { default } => Plain::Bool(default),
            Kind::Enum { default, .. } => Plain::Choice(default),
        }
    }

    /// A float on this parameter's step grid, in its range (`Kind::Float`'s `step`): the f32
    /// nearest to the decimal k x `step` (0.7, not the 0.70000005 of `700.0 * 0.001f32`), so
    /// the numbers a preset file writes are fixed points and a value a host sends back a unit
    /// in the last place off lands on the value it came from. Other kinds as they are.
    pub fn snap(&self, value: Plain) -> Plain {
        match (self.kind, value) {
            (Kind::Float { min, max, step, .. }, Plain::Float(x)) if x.is_finite() => {
                // steps are 1/n for a whole n (0.01, 0.001): k / n in f64 is the decimal to
                // within an f64 rounding, far below an f32's
                let per_unit = (1.0 / step as f64).round();
                let snapped = ((x as f64 * per_unit).round() / per_unit) as f32;
                Plain::Float(snapped.clamp(min, max))
            }
            _ => value,
        }
    }

    /// Whether `value` has this parameter's type and lies in its range (floats finite).
    pub fn accepts(&self, value: Plain) -> bool {
        match (self.kind, value) {
            (Kind::Float { min, max, .. }, Plain::Float(x)) => x >= min && x <= max,
            (Kind::Int { min, max, .. }, Plain::Int(x)) => (min..=max).contains(&x),
            (Kind::Bool { .. }, Plain::Bool(_)) => true,
            (Kind::Enum { ids, .. }, Plain::Choice(i)) => i < ids.len(),
            _ => false,
        }
    }

    /// A JSON value (number, bool or choice id) checked against the table.
    pub fn from_json(&self, value: &Value) -> Result<Plain, ValueError> {
        let id = self.id.to_string();
        let describe = |v: &Value| match v {
            Value::Null => "null".to_string(),
            Value::Bool(b) => format!("the boolean {b}"),
            Value::Number(n) => format!("the number {}", n.as_f64().map_or(n.to_string(), show_number)),
            Value::String(t) => format!("the string {v}", v = Value::from(t.as_str())),
            Value::Array(_) => "a list".to_string(),
            Value::Object(_) => "an object".to_string(),
        };
        match self.kind {
            Kind::Float { min, max, .. } => {
                let x = value.as_f64().ok_or_else(|| ValueError::WrongType {
                    id: id.clone(),
                    expected: "a number",
                    got: describe(value),
                })?;
                // the range is checked on the f32 the engine gets, so a range end written
                // in decimal (0.1) is accepted
                let plain = x as f32;
                if !(x.is_finite() && (min..=max).contains(&plain)) {
                    return Err(ValueError::OutOfRange { id, value: x, min, max });
                }
                Ok(self.snap(Plain::Float(plain)))
            }
            Kind::Int { min, max, .. } => {
                let x = value.as_f64().ok_or_else(|| ValueError::WrongType {
                    id: id.clone(),
                    expected: "a whole number",
                    got: describe(value),
                })?;
                if x.fract() != 0.0 {
                    return Err(ValueError::WrongType {
                        id,
                        expected: "a whole number",
                        got: describe(value),
                    });
                }
                if x < min as f64 || x > max as f64 {
                    return Err(ValueError::OutOfRange {
                        id,
                        value: x,
                        min: min as f32,
                        max: max as f32,
                    });
                }
                Ok(Plain::Int(x as i32))
            }
            Kind::Bool { .. } => match value {
                Value::Bool(b) => Ok(Plain::Bool(*b)),
                Value::String(t) if parse_bool(t).is_some() => Ok(Plain::Bool(parse_bool(t) == Some(true))),
                _ => Err(ValueError::WrongType {
                    id,
                    expected: BOOL_EXPECTED,
                    got: describe(value),
                }),
            },
            Kind::Enum { ids, .. } => {
                let v = value.as_str().ok_or_else(|| ValueError::WrongType {
                    id: id.clone(),
                    expected: "a choice name (string)",
                    got: describe(value),
                })?;
                ids.iter()
                    .position(|c| *c == v)
                    .map(Plain::Choice)
                    .ok_or_else(|| ValueError::UnknownChoice {
                        id,
                        value: v.into(),
                        choices: ids.join(", "),
                    })
            }
        }
    }
}

/// Plain values of every parameter, in table order. Always valid (each of its parameter's
/// type and range), so `to_settings` never sees a bad value. A plain array (no heap): the
/// plugin builds one on the audio thread every block.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValues {
    values: [Plain; SPECS.len()],
}

impl Default for ParamValues {
    fn default() -> Self {
        ParamValues {
            values: SPECS.map(|s| s.default_plain()),
        }
    }
}

impl std::ops::Index<Param> for ParamValues {
    type Output = Plain;
    fn index(&self, p: Param) -> &Plain {
        &self.values[p as usize]
    }
}

impl ParamValues {
    /// Values read from `value_of` (e.g. the plugin's host parameters); a value of the wrong
    /// type or out of range keeps the default. Allocation-free.
    pub fn from_fn(mut value_of: impl FnMut(&'static Spec) -> Plain) -> Self {
        let mut v = ParamValues::default();
        for (slot, s) in v.values.iter_mut().zip(SPECS.iter()) {
            let x = value_of(s);
            if s.accepts(x) {
                *slot = x;
            }
        }
        v
    }

    /// The value of `id`.
    pub fn get(&self, id: &str) -> Option<Plain> {
        spec(id).map(|s| self[s.param])
    }

    /// Validates a JSON value (number, bool or choice id) and sets it; on error nothing
    /// changes.
    pub fn set(&mut self, id: &str, value: &Value) -> Result<(), ValueError> {
        let s = spec(id).ok_or_else(|| ValueError::UnknownId(id.to_string()))?;
        self.values[s.param as usize] = s.from_json(value)?;
        Ok(())
    }

    /// Parses a command-line text value (`0.5`, `true`, `sugar`) and sets it.
    pub fn set_text(&mut self, id: &str, text: &str) -> Result<(), ValueError> {
        let s = spec(id).ok_or_else(|| ValueError::UnknownId(id.to_string()))?;
        let value = match s.kind {
            Kind::Float { .. } | Kind::Int { .. } => match text.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Value::from(x),
                _ => {
                    return Err(ValueError::WrongType {
                        id: id.into(),
                        expected: "a finite number",
                        got: text.into(),
                    })
                }
            },
            Kind::Bool { .. } => match parse_bool(text) {
                Some(b) => Value::from(b),
                None => {
                    return Err(ValueError::WrongType {
                        id: id.into(),
                        expected: BOOL_EXPECTED,
                        got: text.into(),
                    })
                }
            },
            Kind::Enum { .. } => Value::from(text.trim()),
        };
        self.set(id, &value)
    }

    pub fn float(&self, id: &str) -> f32 {
        match self.get(id) {
            Some(Plain::Float(x)) => x,
            _ => 0.0,
        }
    }

    pub fn int(&self, id: &str) -> i64 {
        match self.get(id) {
            Some(Plain::Int(x)) => x as i64,
            _ => 0,
        }
    }

    pub fn bool(&self, id: &str) -> bool {
        matches!(self.get(id), Some(Plain::Bool(true)))
    }

    /// Index of an enum value in its `ids`.
    pub fn choice(&self, id: &str) -> usize {
        match self.get(id) {
            Some(Plain::Choice(i)) => i,
            _ => 0,
        }
    }

    /// (id, value) pairs in display order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Plain)> + '_ {
        SPECS.iter().map(|s| s.id).zip(self.values.iter().copied())
    }

    /// A float parameter in `Settings`' SI unit (the plain value times `to_si`).
    pub(crate) fn si(&self, p: Param) -> f32 {
        match (self[p], p.spec().kind) {
            (Plain::Float(x), Kind::Float { to_si, .. }) => x * to_si,
            _ => unreachable!("{p:?} is a float parameter"),
        }
    }

    pub(crate) fn choice_of(&self, p: Param) -> usize {
        match self[p] {
            Plain::Choice(i) => i,
            _ => unreachable!("{p:?} is a choice"),
        }
    }
}

/// The preset schema's `params`: an object of every parameter by id (floats and ints as
/// numbers, bools, choices by id).
impl Serialize for ParamValues {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(SPECS.len()))?;
        for (s, v) in SPECS.iter().zip(&self.values) {
            match (s.kind, *v) {
                (_, Plain::Float(x)) => map.serialize_entry(s.id, &x)?,
                (_, Plain::Int(x)) => map.serialize_entry(s.id, &x)?,
                (_, Plain::Bool(x)) => map.serialize_entry(s.id, &x)?,
                (Kind::Enum { ids, .. }, Plain::Choice(i)) => map.serialize_entry(s.id, ids[i])?,
                (_, Plain::Choice(_)) => unreachable!("{}: a choice of a parameter without choices", s.id),
            }
        }
        map.end()
    }
}

/// Reads the preset schema's `params`: each id must be in the table and its value valid
/// (`Spec::from_json`); ids left out take their defaults.
impl<'de> Deserialize<'de> for ParamValues {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ById;
        impl<'de> Visitor<'de> for ById {
            type Value = ParamValues;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of parameter values by id")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParamValues, A::Error> {
                let mut values = ParamValues::default();
                while let Some(id) = map.next_key::<String>()? {
                    let value: Value = map.next_value()?;
                    values.set(&id, &value).map_err(de::Error::custom)?;
                }
                Ok(values)
            }
        }
        deserializer.deserialize_map(ById)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::settings::Settings;

    #[test]
    fn bad_values_are_rejected_and_change_nothing() {
        let mut v = ParamValues::default();
        let before = v.clone();
        assert!(matches!(
            v.set("pour_rate", &Value::from(1e6)),
            Err(ValueError::OutOfRange { .. })
        ));
        assert!(matches!(
            v.set("pour_rate", &Value::from("fast")),
            Err(ValueError::WrongType { .. })
        ));
        assert!(matches!(
            v.set("grain_material", &Value::from("marbles")),
            Err(ValueError::UnknownChoice { .. })
        ));
        assert!(matches!(v.set("nope", &Value::from(1)), Err(ValueError::UnknownId(_))));
        assert!(v.set_text("pour_rate", "NaN").is_err());
        assert_eq!(v, before);
        v.set_text("grain_material", "rice").unwrap();
        assert_eq!(v.to_settings().grain_material, GrainMaterial::Rice);
    }

    #[test]
    fn floats_snap_to_their_step_and_defaults_and_factory_presets_are_on_it() {
        let mut v = ParamValues::default();
        v.set("pour_rate", &Value::from(20.000_001_9)).unwrap();
        v.set("listener_distance", &Value::from(0.400_000_07)).unwrap();
        v.set_text("fall_height", "14.999998").unwrap();
        assert_eq!(v.float("pour_rate"), 20.0);
        assert_eq!(v.float("listener_distance"), 0.4);
        assert_eq!(v.float("fall_height"), 15.0);
        // a value between steps goes to the nearer one, within the range
        v.set_text("stereo_width", "0.70049").unwrap();
        assert_eq!(v.float("stereo_width"), 0.7);
        v.set_text("fill", "0.9996").unwrap();
        assert_eq!(v.float("fill"), 1.0);
        for s in &SPECS {
            let Kind::Float {
                min,
                max,
                default,
                step,
                ..
            } = s.kind
            else {
                continue;
            };
            assert!(step > 0.0 && step <= (max - min) / 1000.0, "{}: step {step}", s.id);
            let per_unit = 1.0 / step as f64;
            assert!(
                (per_unit - per_unit.round()).abs() < 1e-3,
                "{}: step {step} is not 1/n",
                s.id
            );
            for x in [min, max, default] {
                assert_eq!(
                    s.snap(Plain::Float(x)),
                    Plain::Float(x),
                    "{}: {x} is off its step",
                    s.id
                );
            }
        }
        // the files say what a user gets: their numbers are on the step as written
        for (stem, text) in crate::control::preset::FACTORY_FILES {
            let json: Value = serde_json::from_str(text).unwrap();
            for (id, value) in json["params"].as_object().expect("a params object") {
                let s = spec(id).unwrap();
                if let (Kind::Float { .. }, Some(x)) = (s.kind, value.as_f64()) {
                    let x = Plain::Float(x as f32);
                    assert_eq!(s.snap(x), x, "{stem}: {id} {value} is off its step");
                }
            }
        }
    }

    /// The README's words for the table's units.
    fn readme_unit(unit: &str) -> &str {
        match unit {
            "x" => "×",
            "deg" => "degrees",
            u => u,
        }
    }

    /// A number as the README writes it (`−60` with a minus sign), as the table's f32.
    fn readme_number(text: &str) -> f32 {
        text.replace('−', "-")
            .parse()
            .unwrap_or_else(|_| panic!("README: `{text}` is not a number"))
    }

    /// The rows of the README's `## Parameters` table: (id, range, default, unit).
    fn readme_rows(readme: &str) -> Vec<[String; 4]> {
        let section = readme
            .split("\n## ")
            .find(|s| s.starts_with("Parameters\n"))
            .expect("README has a `## Parameters` section");
        let mut lines = section.lines().filter(|l| l.starts_with('|'));
        let header: Vec<&str> = lines.next().unwrap().split('|').map(str::trim).collect();
        assert_eq!(header[1..5], ["id", "range", "default", "unit"], "README table columns");
        lines
            .skip(1)
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                [cells[1].trim_matches('`'), cells[2], cells[3], cells[4]].map(str::to_string)
            })
            .collect()
    }

    /// Every way the README's table can disagree with `SPECS`.
    fn readme_mismatches(readme: &str) -> Vec<String> {
        let rows = readme_rows(readme);
        let mut bad = Vec::new();
        let ids: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        let spec_ids: Vec<&str> = SPECS.iter().map(|s| s.id).collect();
        if ids != spec_ids {
            bad.push(format!("ids {ids:?}, the table has {spec_ids:?}"));
        }
        for [id, range, default, unit] in &rows {
            let Some(s) = spec(id) else { continue };
            if unit != readme_unit(s.unit) {
                bad.push(format!("{id}: unit `{unit}`, the table has `{}`", s.unit));
            }
            let (want_range, want_default) = match s.kind {
                Kind::Float { min, max, default, .. } => ((min, max), default),
                Kind::Int { min, max, default } => ((min as f32, max as f32), default as f32),
                Kind::Bool { default: on } => {
                    let d = if on { "on" } else { "off" };
                    if range != "on/off" || default != d {
                        bad.push(format!("{id}: `{range}`, `{default}`; the table: on/off, {d}"));
                    }
                    continue;
                }
                Kind::Enum { ids, default: d } => {
                    if *range != ids.join(", ") || default != ids[d] {
                        bad.push(format!("{id}: `{range}`, `{default}`; the table: {ids:?}, {}", ids[d]));
                    }
                    continue;
                }
            };
            let (lo, hi) = range
                .split_once('–')
                .unwrap_or_else(|| panic!("README: {id}'s range `{range}` is not LO–HI"));
            let got = ((readme_number(lo), readme_number(hi)), readme_number(default));
            if got != (want_range, want_default) {
                bad.push(format!("{id}: {got:?}, the table has {:?}", (want_range, want_default)));
            }
        }
        bad
    }

    #[test]
    fn the_readme_table_matches_the_parameter_table() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
        assert_eq!(readme_mismatches(&readme), Vec::<String>::new());
        // the check can fail: a changed range, default, unit or id is caught
        for (from, to) in [
            ("| `pour_rate` | 0–200 | 20 |", "| `pour_rate` | 0–250 | 20 |"),
            (
                "| `fall_height` | 1–100 | 15 | cm |",
                "| `fall_height` | 1–100 | 15 | m |",
            ),
            ("| `output_gain` | −20–80 | 38.03 |", "| `output_gain` | −20–80 | 50 |"),
            ("| `seed` |", "| `random_seed` |"),
            ("glass, steel, aluminium", "glass, aluminium, steel"),
            ("| on/off | on |", "| on/off | off |"),
        ] {
            assert!(readme.contains(from), "{from}");
            let edited = readme.replacen(from, to, 1);
            assert!(!readme_mismatches(&edited).is_empty(), "{to} passes");
        }
    }

    #[test]
    fn defaults_and_limits_come_from_the_table() {
        use crate::limits;
        let d = Settings::default();
        assert_eq!(d.fall_height_m, 15.0 * 0.01);
        assert_eq!(d.pour_rate_g_s, 20.0);
        assert_eq!(d.output_gain_db, 38.03);
        assert_eq!(limits::FALL_HEIGHT_M, (0.01, 1.0));
        assert_eq!(limits::POUR_RATE_G_S, (0.0, 200.0));
        assert_eq!(limits::LISTENER_DISTANCE_M, (0.1, 10.0));
        // the engine clamps to exactly the table's range, in SI units
        let wild = Settings {
            fall_height_m: 5.0,
            pour_rate_g_s: -1.0,
            grain_size: 100.0,
            output_gain_db: f32::NAN,
            ..d
        }
        .sanitized();
        assert_eq!(wild.fall_height_m, 1.0);
        assert_eq!(wild.pour_rate_g_s, 0.0);
        assert_eq!(wild.grain_size, 4.0);
        assert_eq!(wild.output_gain_db, 38.03);
    }

    /// `Statistics::id` spells each as the parameter does: set by its id, the settings
    /// hold it.
    #[test]
    fn statistics_ids_are_the_parameters() {
        for (s, id) in STATISTICS.into_iter().zip(STATISTICS_IDS) {
            assert_eq!(s.id(), id);
            let mut v = ParamValues::default();
            v.set_text("statistics", s.id()).unwrap();
            assert_eq!(v.to_settings().statistics, s);
        }
    }

    #[test]
    fn a_range_end_written_in_decimal_is_accepted() {
        let mut v = ParamValues::default();
        v.set_text("listener_distance", "0.1").unwrap();
        assert_eq!(v.to_settings().listener_distance_m, 0.1);
        let err = v.set_text("listener_distance", "0.0999").unwrap_err().to_string();
        assert!(err.ends_with("0.0999 is outside 0.1..=10"), "{err}");
        assert!(v.set_text("listener_distance", "1e300").is_err());
    }

    #[test]
    fn preset_params_serialize_by_id_and_read_back() {
        let mut v = ParamValues::default();
        v.set_text("cup_shape", "bowl").unwrap();
        v.set_text("seed", "42").unwrap();
        v.set_text("fill", "0.3").unwrap();
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["cup_shape"], "bowl");
        assert_eq!(json["seed"], 42);
        assert_eq!(json["auto_fill"], true);
        assert_eq!(json.to_string().matches(':').count(), SPECS.len());
        assert!(serde_json::to_string(&v).unwrap().contains("\"fill\":0.3,"));
        let back: ParamValues = serde_json::from_value(json).unwrap();
        assert_eq!(back, v);
        let err = serde_json::from_str::<ParamValues>(r#"{"seed": 1.5}"#).unwrap_err();
        assert!(err.to_string().contains("`seed`: expected a whole number"), "{err}");
        let err = serde_json::from_str::<ParamValues>(r#"{"colour": 1}"#).unwrap_err();
        assert!(err.to_string().contains("unknown parameter id `colour`"), "{err}");
    }

    #[test]
    fn booleans_take_one_documented_set_of_words_everywhere() {
        let mut v = ParamValues::default();
        for (words, want) in BOOL_WORDS.iter().zip([true, false]) {
            for w in words.iter().flat_map(|w| [w.to_string(), w.to_uppercase()]) {
                v.set_text("auto_fill", "off").unwrap();
                v.set_text("auto_fill", if want { "off" } else { "on" }).unwrap();
                v.set_text("auto_fill", &w).unwrap();
                assert_eq!(v.bool("auto_fill"), want, "--set auto_fill={w}");
                v.set_text("auto_fill", if want { "off" } else { "on" }).unwrap();
                v.set("auto_fill", &Value::from(w.as_str())).unwrap();
                assert_eq!(v.bool("auto_fill"), want, "\"{w}\" in a preset");
            }
        }
        v.set("auto_fill", &Value::from(false)).unwrap();
        assert!(!v.bool("auto_fill"));
        let err = v.set_text("auto_fill", "maybe").unwrap_err().to_string();
        assert_eq!(
            err,
            "`auto_fill`: expected on/off, true/false, yes/no or 1/0, got maybe"
        );
        // a JSON number is a number, not a boolean
        let err = v.set("auto_fill", &Value::from(1)).unwrap_err().to_string();
        assert_eq!(
            err,
            "`auto_fill`: expected on/off, true/false, yes/no or 1/0, got the number 1"
        );
    }

    #[test]
    fn messages_show_numbers_as_written_and_types_by_name() {
        let mut v = ParamValues::default();
        // an f32 widened to f64 (as a host or a converted preset hands it) shows as the f32
        let err = v
            .set("stereo_width", &Value::from(1.7f32 as f64))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "`stereo_width`: 1.7 is outside 0..=1");
        let err = v
            .set("fall_height", &Value::from(0.15 * 1000.0))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "`fall_height`: 150 is outside 1..=100");
        let err = v.set_text("pour_rate", "1e300").unwrap_err().to_string();
        assert_eq!(err, "`pour_rate`: 1e300 is outside 0..=200");
        let err = v.set("pour_rate", &Value::from("fast")).unwrap_err().to_string();
        assert_eq!(err, "`pour_rate`: expected a number, got the string \"fast\"");
        let err = v.set("grain_material", &Value::from(3)).unwrap_err().to_string();
        assert_eq!(
            err,
            "`grain_material`: expected a choice name (string), got the number 3"
        );
        assert_eq!(show_number(1e9), "1e9");
        assert_eq!(show_number(0.0005000000237487257), "0.0005");
        assert_eq!(show_number(1000.0000000000001), "1000");
    }
}
