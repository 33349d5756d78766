//! Parameters: one table of stable ids, ranges and defaults (`SPECS`), the typed plain
//! values (`ParamValues`, framework-free: presets and the command line use it), and the
//! nice-plug `Params` built from the same table.
//!
//! Ids are stable: DAW projects and presets store them. Never rename one.

use crate::engine::cups::CupShape;
use crate::engine::materials::{CupMaterial, GrainMaterial};
use crate::engine::{Settings, TriggerMode};
use nice_plug::prelude::*;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The value domain of one parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Continuous; `log` means a skewed (logarithmic-feeling) control.
    Float {
        min: f32,
        max: f32,
        default: f32,
        log: bool,
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

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spec {
    pub id: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub kind: Kind,
    pub doc: &'static str,
}

const GRAIN_IDS: [&str; 12] = {
    let mut out = [""; 12];
    let mut i = 0;
    while i < 12 {
        out[i] = grain_id(GrainMaterial::ALL[i]);
        i += 1;
    }
    out
};

const fn grain_id(m: GrainMaterial) -> &'static str {
    match m {
        GrainMaterial::Sugar => "sugar",
        GrainMaterial::Salt => "salt",
        GrainMaterial::FineSand => "fine_sand",
        GrainMaterial::Rice => "rice",
        GrainMaterial::Lentils => "lentils",
        GrainMaterial::CoffeeBeans => "coffee_beans",
        GrainMaterial::GlassBeads05 => "glass_beads_0_5mm",
        GrainMaterial::GlassBeads1 => "glass_beads_1mm",
        GrainMaterial::GlassBeads2 => "glass_beads_2mm",
        GrainMaterial::SteelShot1 => "steel_shot_1mm",
        GrainMaterial::PlasticDiscs4 => "plastic_discs_4mm",
        GrainMaterial::Gravel => "gravel",
    }
}

const CUP_IDS: [&str; 7] = ["ceramic", "porcelain", "glass", "steel", "aluminium", "plastic", "wood"];
const TRIGGER_IDS: [&str; 2] = ["midi", "continuous"];
/// `auto`, then the shapes of `CupShape::ALL` (assets/cups).
const CUP_SHAPE_IDS: [&str; 6] = ["auto", "mug", "tumbler", "bowl", "jar", "metal_cup"];

/// The cup shape of a `cup_shape` choice index (0 = auto: the material's usual shape).
fn cup_shape_choice(index: usize) -> Option<CupShape> {
    index.checked_sub(1).and_then(|i| CupShape::ALL.get(i).copied())
}

/// Every parameter, in display order.
pub const SPECS: [Spec; 18] = [
    Spec {
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
        id: "grain_size",
        name: "Grain size",
        unit: "x",
        kind: Kind::Float {
            min: 0.25,
            max: 4.0,
            default: 1.0,
            log: true,
        },
        doc: "Multiplies the material's nominal grain diameter",
    },
    Spec {
        id: "density",
        name: "Density",
        unit: "x",
        kind: Kind::Float {
            min: 0.25,
            max: 4.0,
            default: 1.0,
            log: true,
        },
        doc: "Multiplies the grain material's density",
    },
    Spec {
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
        id: "cup_size",
        name: "Cup size",
        unit: "x",
        kind: Kind::Float {
            min: 0.5,
            max: 2.5,
            default: 1.0,
            log: true,
        },
        doc: "Multiplies every length of the nominal cup (radius 4 cm, height 9 cm)",
    },
    Spec {
        id: "fill",
        name: "Fill",
        unit: "",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            default: 0.0,
            log: false,
        },
        doc: "Fill level at pour start, 0 = empty, 1 = full",
    },
    Spec {
        id: "auto_fill",
        name: "Auto fill",
        unit: "",
        kind: Kind::Bool { default: true },
        doc: "The cup fills as you pour",
    },
    Spec {
        id: "pour_rate",
        name: "Pour rate",
        unit: "g/s",
        kind: Kind::Float {
            min: 0.0,
            max: 200.0,
            default: 20.0,
            log: true,
        },
        doc: "Mass flow of the stream",
    },
    Spec {
        id: "fall_height",
        name: "Fall height",
        unit: "cm",
        kind: Kind::Float {
            min: 1.0,
            max: 100.0,
            default: 15.0,
            log: true,
        },
        doc: "Height of the spout above the cup's rim",
    },
    Spec {
        id: "listener_angle",
        name: "Listener angle",
        unit: "deg",
        kind: Kind::Float {
            min: 0.0,
            max: 90.0,
            default: 30.0,
            log: false,
        },
        doc: "0 = straight above the impact point, 90 = level with it",
    },
    Spec {
        id: "listener_distance",
        name: "Listener distance",
        unit: "m",
        kind: Kind::Float {
            min: 0.1,
            max: 10.0,
            default: 0.4,
            log: true,
        },
        doc: "Distance from the impact point",
    },
    Spec {
        id: "stereo_width",
        name: "Stereo width",
        unit: "",
        kind: Kind::Float {
            min: 0.0,
            max: 1.0,
            default: 0.7,
            log: false,
        },
        doc: "0 = mono, 1 = full width",
    },
    Spec {
        id: "grains_level",
        name: "Grains level",
        unit: "dB",
        kind: Kind::Float {
            min: -60.0,
            max: 24.0,
            default: 0.0,
            log: false,
        },
        doc: "Level of the grain (acceleration noise) stem",
    },
    Spec {
        id: "cup_level",
        name: "Cup level",
        unit: "dB",
        kind: Kind::Float {
            min: -60.0,
            max: 24.0,
            default: 0.0,
            log: false,
        },
        doc: "Level of the cup (modal + diffuse) stem",
    },
    Spec {
        id: "output_gain",
        name: "Output gain",
        unit: "dB",
        kind: Kind::Float {
            min: -20.0,
            max: 80.0,
            default: 52.0,
            log: false,
        },
        doc: "Output = pressure in Pa x this gain (0 dB: 1.0 = 1 Pa = 94 dB SPL)",
    },
    Spec {
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
        id: "cup_shape",
        name: "Cup shape",
        unit: "",
        kind: Kind::Enum {
            ids: &CUP_SHAPE_IDS,
            default: 0,
        },
        doc: "The cup's geometry (finite-element model); auto: the material's usual shape",
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
        "cup_shape" if index == 0 => "Auto",
        "cup_shape" => cup_shape_choice(index).map(CupShape::name).unwrap_or("?"),
        _ => "?",
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
    #[error("`{id}`: {value} is outside {min}..={max}")]
    OutOfRange { id: String, value: f64, min: f64, max: f64 },
    #[error("`{id}`: `{value}` is not one of: {choices}")]
    UnknownChoice { id: String, value: String, choices: String },
}

/// Plain values of every parameter, by id. Always within range.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValues {
    values: [Value; SPECS.len()],
}

impl Default for ParamValues {
    fn default() -> Self {
        ParamValues {
            values: SPECS.map(|s| match s.kind {
                Kind::Float { default, .. } => Value::from(default as f64),
                Kind::Int { default, .. } => Value::from(default),
                Kind::Bool { default } => Value::from(default),
                Kind::Enum { ids, default } => Value::from(ids[default]),
            }),
        }
    }
}

impl ParamValues {
    fn index(id: &str) -> Option<usize> {
        SPECS.iter().position(|s| s.id == id)
    }

    /// The value of `id` as JSON (number, bool or choice id).
    pub fn get(&self, id: &str) -> Option<&Value> {
        Self::index(id).map(|i| &self.values[i])
    }

    /// Validates and sets one value; on error nothing changes.
    pub fn set(&mut self, id: &str, value: &Value) -> Result<(), ValueError> {
        let i = Self::index(id).ok_or_else(|| ValueError::UnknownId(id.to_string()))?;
        self.values[i] = validate(&SPECS[i], value)?;
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
            Kind::Bool { .. } => match text.trim() {
                "true" | "1" | "on" => Value::from(true),
                "false" | "0" | "off" => Value::from(false),
                _ => {
                    return Err(ValueError::WrongType {
                        id: id.into(),
                        expected: "true or false",
                        got: text.into(),
                    })
                }
            },
            Kind::Enum { .. } => Value::from(text.trim()),
        };
        self.set(id, &value)
    }

    pub fn float(&self, id: &str) -> f32 {
        self.get(id).and_then(Value::as_f64).unwrap_or(0.0) as f32
    }

    pub fn int(&self, id: &str) -> i64 {
        self.get(id).and_then(Value::as_i64).unwrap_or(0)
    }

    pub fn bool(&self, id: &str) -> bool {
        self.get(id).and_then(Value::as_bool).unwrap_or(false)
    }

    /// Index of an enum value in its `ids`.
    pub fn choice(&self, id: &str) -> usize {
        let (Some(s), Some(v)) = (spec(id), self.get(id).and_then(Value::as_str)) else {
            return 0;
        };
        match s.kind {
            Kind::Enum { ids, .. } => ids.iter().position(|x| *x == v).unwrap_or(0),
            _ => 0,
        }
    }

    /// (id, value) pairs in display order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        SPECS.iter().map(|s| s.id).zip(self.values.iter())
    }

    /// Engine settings (SI units) for these values.
    pub fn to_settings(&self) -> Settings {
        Settings {
            grain_material: GrainMaterial::ALL[self.choice("grain_material")],
            grain_size: self.float("grain_size"),
            density: self.float("density"),
            cup_material: CupMaterial::ALL[self.choice("cup_material")],
            cup_size: self.float("cup_size"),
            fill: self.float("fill"),
            auto_fill: self.bool("auto_fill"),
            pour_rate_g_s: self.float("pour_rate"),
            fall_height_m: self.float("fall_height") * 0.01,
            listener_angle_deg: self.float("listener_angle"),
            listener_distance_m: self.float("listener_distance"),
            stereo_width: self.float("stereo_width"),
            grains_level_db: self.float("grains_level"),
            cup_level_db: self.float("cup_level"),
            output_gain_db: self.float("output_gain"),
            trigger_mode: if self.choice("trigger_mode") == 1 {
                TriggerMode::Continuous
            } else {
                TriggerMode::Midi
            },
            seed: self.int("seed").max(0) as u64,
            cup_shape: cup_shape_choice(self.choice("cup_shape")),
        }
    }
}

fn validate(s: &Spec, value: &Value) -> Result<Value, ValueError> {
    let id = s.id.to_string();
    let describe = |v: &Value| v.to_string();
    match s.kind {
        Kind::Float { min, max, .. } => {
            let x = value.as_f64().ok_or_else(|| ValueError::WrongType {
                id: id.clone(),
                expected: "a number",
                got: describe(value),
            })?;
            if !x.is_finite() || x < min as f64 || x > max as f64 {
                return Err(ValueError::OutOfRange {
                    id,
                    value: x,
                    min: min as f64,
                    max: max as f64,
                });
            }
            Ok(Value::from(x))
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
                    min: min as f64,
                    max: max as f64,
                });
            }
            Ok(Value::from(x as i64))
        }
        Kind::Bool { .. } => value.as_bool().map(Value::from).ok_or(ValueError::WrongType {
            id,
            expected: "true or false",
            got: describe(value),
        }),
        Kind::Enum { ids, .. } => {
            let v = value.as_str().ok_or_else(|| ValueError::WrongType {
                id: id.clone(),
                expected: "a choice name (string)",
                got: describe(value),
            })?;
            if ids.contains(&v) {
                Ok(Value::from(v))
            } else {
                Err(ValueError::UnknownChoice {
                    id,
                    value: v.into(),
                    choices: ids.join(", "),
                })
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// nice-plug parameters

/// Editor window size, saved with the plugin state.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EditorSize {
    /// Logical width and height (points at 100 % scale).
    pub width: u32,
    pub height: u32,
    /// The editor's own zoom (egui's zoom factor, Ctrl +/-), on top of the system's scale.
    /// Older states without it open at 1.
    #[serde(default = "EditorSize::default_zoom")]
    pub zoom: f32,
}

impl EditorSize {
    /// The window a new instance opens with.
    pub const DEFAULT: EditorSize = EditorSize {
        width: 1060,
        height: 800,
        zoom: 1.0,
    };
    /// Smallest useful window, logical points.
    pub const MIN: (u32, u32) = (760, 560);

    fn default_zoom() -> f32 {
        1.0
    }

    /// A safe size from whatever a saved state holds (too small, huge, NaN zoom).
    pub fn sanitized(self) -> EditorSize {
        let zoom = if self.zoom.is_finite() {
            self.zoom.clamp(0.5, 3.0)
        } else {
            1.0
        };
        EditorSize {
            width: self.width.clamp(Self::MIN.0, 8192),
            height: self.height.clamp(Self::MIN.1, 8192),
            zoom,
        }
    }
}

#[derive(Params)]
pub struct GranaryParams {
    #[id = "grain_material"]
    pub grain_material: IntParam,
    #[id = "grain_size"]
    pub grain_size: FloatParam,
    #[id = "density"]
    pub density: FloatParam,
    #[id = "cup_material"]
    pub cup_material: IntParam,
    #[id = "cup_size"]
    pub cup_size: FloatParam,
    #[id = "fill"]
    pub fill: FloatParam,
    #[id = "auto_fill"]
    pub auto_fill: BoolParam,
    #[id = "pour_rate"]
    pub pour_rate: FloatParam,
    #[id = "fall_height"]
    pub fall_height: FloatParam,
    #[id = "listener_angle"]
    pub listener_angle: FloatParam,
    #[id = "listener_distance"]
    pub listener_distance: FloatParam,
    #[id = "stereo_width"]
    pub stereo_width: FloatParam,
    #[id = "grains_level"]
    pub grains_level: FloatParam,
    #[id = "cup_level"]
    pub cup_level: FloatParam,
    #[id = "output_gain"]
    pub output_gain: FloatParam,
    #[id = "trigger_mode"]
    pub trigger_mode: IntParam,
    #[id = "seed"]
    pub seed: IntParam,
    #[id = "cup_shape"]
    pub cup_shape: IntParam,
    #[persist = "editor_size"]
    pub editor_size: Mutex<EditorSize>,
}

fn float_param(id: &str) -> FloatParam {
    let s = spec(id).expect("parameter id in SPECS");
    let Kind::Float { min, max, default, log } = s.kind else {
        panic!("{id} is not a float")
    };
    let range = if log {
        // ranges that start at 0 (pour rate) need a stronger skew to feel logarithmic
        FloatRange::Skewed {
            min,
            max,
            factor: FloatRange::skew_factor(if min > 0.0 { -1.5 } else { -2.5 }),
        }
    } else {
        FloatRange::Linear { min, max }
    };
    let unit = match s.unit {
        "x" => " x",
        "g/s" => " g/s",
        "cm" => " cm",
        "deg" => " deg",
        "m" => " m",
        "dB" => " dB",
        _ => "",
    };
    // two decimals for small ranges and for log ranges that start below 1 (0.35 m, not 0.4 m)
    let digits = if max - min <= 4.0 || (log && min > 0.0 && min < 1.0) {
        2
    } else {
        1
    };
    FloatParam::new(s.name, default, range)
        .with_unit(unit)
        .with_value_to_string(formatters::v2s_f32_rounded(digits))
}

fn enum_param(id: &'static str) -> IntParam {
    let s = spec(id).expect("parameter id in SPECS");
    let Kind::Enum { ids, default } = s.kind else {
        panic!("{id} is not an enum")
    };
    IntParam::new(
        s.name,
        default as i32,
        IntRange::Linear {
            min: 0,
            max: ids.len() as i32 - 1,
        },
    )
    .with_value_to_string(Arc::new(move |v| choice_name(id, v.max(0) as usize).to_string()))
    .with_string_to_value(Arc::new(move |text| {
        let t = text.trim().to_lowercase();
        (0..ids.len())
            .find(|&i| ids[i] == t || choice_name(id, i).to_lowercase() == t)
            .map(|i| i as i32)
    }))
}

impl Default for GranaryParams {
    fn default() -> Self {
        let Kind::Int { min, max, default } = spec("seed").unwrap().kind else {
            unreachable!()
        };
        GranaryParams {
            grain_material: enum_param("grain_material"),
            grain_size: float_param("grain_size"),
            density: float_param("density"),
            cup_material: enum_param("cup_material"),
            cup_size: float_param("cup_size"),
            fill: float_param("fill")
                .with_unit(" %")
                .with_value_to_string(formatters::v2s_f32_percentage(0))
                .with_string_to_value(formatters::s2v_f32_percentage()),
            auto_fill: BoolParam::new("Auto fill", true),
            pour_rate: float_param("pour_rate"),
            fall_height: float_param("fall_height"),
            listener_angle: float_param("listener_angle"),
            listener_distance: float_param("listener_distance"),
            stereo_width: float_param("stereo_width")
                .with_unit(" %")
                .with_value_to_string(formatters::v2s_f32_percentage(0))
                .with_string_to_value(formatters::s2v_f32_percentage()),
            grains_level: float_param("grains_level"),
            cup_level: float_param("cup_level"),
            output_gain: float_param("output_gain"),
            trigger_mode: enum_param("trigger_mode"),
            seed: IntParam::new("Seed", default, IntRange::Linear { min, max }),
            cup_shape: enum_param("cup_shape"),
            editor_size: Mutex::new(EditorSize::DEFAULT),
        }
    }
}

impl GranaryParams {
    /// Current plain values (what a preset stores).
    pub fn values(&self) -> ParamValues {
        let mut v = ParamValues::default();
        let choice = |id: &str, i: i32| match spec(id).map(|s| s.kind) {
            Some(Kind::Enum { ids, .. }) => Value::from(ids[(i.max(0) as usize).min(ids.len() - 1)]),
            _ => Value::Null,
        };
        let floats: [(&str, &FloatParam); 12] = [
            ("grain_size", &self.grain_size),
            ("density", &self.density),
            ("cup_size", &self.cup_size),
            ("fill", &self.fill),
            ("pour_rate", &self.pour_rate),
            ("fall_height", &self.fall_height),
            ("listener_angle", &self.listener_angle),
            ("listener_distance", &self.listener_distance),
            ("stereo_width", &self.stereo_width),
            ("grains_level", &self.grains_level),
            ("cup_level", &self.cup_level),
            ("output_gain", &self.output_gain),
        ];
        for (id, p) in floats {
            // the host may send anything; an invalid value keeps the default
            let _ = v.set(id, &Value::from(p.value() as f64));
        }
        let _ = v.set("grain_material", &choice("grain_material", self.grain_material.value()));
        let _ = v.set("cup_material", &choice("cup_material", self.cup_material.value()));
        let _ = v.set("trigger_mode", &choice("trigger_mode", self.trigger_mode.value()));
        let _ = v.set("cup_shape", &choice("cup_shape", self.cup_shape.value()));
        let _ = v.set("auto_fill", &Value::from(self.auto_fill.value()));
        let _ = v.set("seed", &Value::from(self.seed.value()));
        v
    }

    /// Engine settings straight from the parameters. Real-time safe (no allocation): the
    /// audio thread calls this every block.
    pub fn settings(&self) -> Settings {
        let idx = |v: i32, len: usize| (v.max(0) as usize).min(len - 1);
        Settings {
            grain_material: GrainMaterial::ALL[idx(self.grain_material.value(), GrainMaterial::ALL.len())],
            grain_size: self.grain_size.value(),
            density: self.density.value(),
            cup_material: CupMaterial::ALL[idx(self.cup_material.value(), CupMaterial::ALL.len())],
            cup_size: self.cup_size.value(),
            fill: self.fill.value(),
            auto_fill: self.auto_fill.value(),
            pour_rate_g_s: self.pour_rate.value(),
            fall_height_m: self.fall_height.value() * 0.01,
            listener_angle_deg: self.listener_angle.value(),
            listener_distance_m: self.listener_distance.value(),
            stereo_width: self.stereo_width.value(),
            grains_level_db: self.grains_level.value(),
            cup_level_db: self.cup_level.value(),
            output_gain_db: self.output_gain.value(),
            trigger_mode: if self.trigger_mode.value() == 1 {
                TriggerMode::Continuous
            } else {
                TriggerMode::Midi
            },
            seed: self.seed.value().max(0) as u64,
            cup_shape: cup_shape_choice(idx(self.cup_shape.value(), CUP_SHAPE_IDS.len())),
        }
    }

    /// Every parameter as a type-erased pointer, by id (for presets and the editor).
    pub fn ptr(&self, id: &str) -> Option<ParamPtr> {
        self.param_map()
            .into_iter()
            .find(|(pid, _, _)| pid == id)
            .map(|(_, p, _)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_frozen() {
        // Renaming an id breaks every saved project and preset: this list only grows.
        let frozen = [
            "grain_material",
            "grain_size",
            "density",
            "cup_material",
            "cup_size",
            "fill",
            "auto_fill",
            "pour_rate",
            "fall_height",
            "listener_angle",
            "listener_distance",
            "stereo_width",
            "grains_level",
            "cup_level",
            "output_gain",
            "trigger_mode",
            "seed",
            "cup_shape",
        ];
        let ids: Vec<_> = SPECS.iter().map(|s| s.id).collect();
        assert_eq!(ids, frozen);
        let plugin_ids: Vec<String> = GranaryParams::default()
            .param_map()
            .into_iter()
            .map(|(id, _, _)| id)
            .collect();
        assert_eq!(plugin_ids, frozen);
        for (i, m) in GrainMaterial::ALL.iter().enumerate() {
            assert_eq!(GRAIN_IDS[i], m.id());
        }
        for (i, m) in CupMaterial::ALL.iter().enumerate() {
            assert_eq!(CUP_IDS[i], m.id());
        }
        for (i, s) in CupShape::ALL.iter().enumerate() {
            assert_eq!(CUP_SHAPE_IDS[i + 1], s.id());
            assert_eq!(cup_shape_choice(i + 1), Some(*s));
        }
        assert_eq!(cup_shape_choice(0), None);
    }

    #[test]
    fn plugin_defaults_match_the_table() {
        let p = GranaryParams::default();
        assert_eq!(p.values(), ParamValues::default());
        assert_eq!(p.settings(), ParamValues::default().to_settings());
    }

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
}
