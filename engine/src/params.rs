//! Parameters: one table of stable ids, ranges and defaults (`SPECS`) and the typed plain
//! values (`ParamValues`: presets, the command line and the plugin's host parameters use it).
//!
//! Ids are stable: DAW projects and presets store them. Never rename one.

use crate::cups::CupShape;
use crate::materials::{CupMaterial, GrainMaterial};
use crate::{Settings, TriggerMode};
use serde_json::Value;

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

pub const GRAIN_IDS: [&str; 12] = {
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

pub const CUP_IDS: [&str; 7] = ["ceramic", "porcelain", "glass", "steel", "aluminium", "plastic", "wood"];
pub const TRIGGER_IDS: [&str; 2] = ["midi", "continuous"];
/// `auto`, then the shapes of `CupShape::ALL` (assets/cups).
pub const CUP_SHAPE_IDS: [&str; 6] = ["auto", "mug", "tumbler", "bowl", "jar", "metal_cup"];

/// The cup shape of a `cup_shape` choice index (0 = auto: the material's usual shape).
pub fn cup_shape_choice(index: usize) -> Option<CupShape> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
