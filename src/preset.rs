//! Preset files: JSON (serde), versioned, human-readable.
//!
//! ```json
//! { "format": "granary-preset", "version": 1, "name": "…", "description": "…",
//!   "tags": ["…"], "params": { "grain_material": "sugar", "pour_rate": 20.0, … } }
//! ```
//! Parameters left out take their defaults. A bad file (not JSON, another format, a
//! version this build does not know, an unknown id, a value of the wrong type, out of range)
//! is rejected with an error that names the problem; nothing is applied.
//!
//! Format versions:
//! - 1: first version.

use crate::params::{ParamValues, ValueError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

pub const FORMAT: &str = "granary-preset";
pub const VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a Granary preset (`format` is {0:?}, expected \"{FORMAT}\")")]
    Format(Option<String>),
    #[error("preset format version {0} is not supported (this build reads 1..={VERSION})")]
    Version(i64),
    #[error("missing or empty `{0}`")]
    Missing(&'static str),
    #[error("`{field}` must be {expected}")]
    Field {
        field: &'static str,
        expected: &'static str,
    },
    #[error("{0}")]
    Value(#[from] ValueError),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("no preset named `{0}` (see `granary presets list`)")]
    NotFound(String),
}

/// A loaded, validated preset.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    pub values: ParamValues,
}

#[derive(Serialize, Deserialize)]
struct PresetFile {
    format: String,
    version: u32,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    tags: Vec<String>,
    params: Map<String, Value>,
}

impl Preset {
    /// Parses and validates preset JSON. On error nothing is returned.
    pub fn from_json(text: &str) -> Result<Preset, PresetError> {
        let root: Value = serde_json::from_str(text)?;
        let obj = root.as_object().ok_or(PresetError::Field {
            field: "preset",
            expected: "a JSON object",
        })?;
        let format = obj.get("format").and_then(Value::as_str);
        if format != Some(FORMAT) {
            return Err(PresetError::Format(format.map(str::to_string)));
        }
        let version = obj
            .get("version")
            .and_then(Value::as_i64)
            .ok_or(PresetError::Missing("version"))?;
        if version < 1 || version > VERSION as i64 {
            return Err(PresetError::Version(version));
        }
        let name = obj.get("name").and_then(Value::as_str).unwrap_or("").trim().to_string();
        if name.is_empty() {
            return Err(PresetError::Missing("name"));
        }
        let description = match obj.get("description") {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(PresetError::Field {
                    field: "description",
                    expected: "a string",
                })
            }
        };
        let tags = match obj.get("tags") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|t| t.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or(PresetError::Field {
                    field: "tags",
                    expected: "an array of strings",
                })?,
            Some(_) => {
                return Err(PresetError::Field {
                    field: "tags",
                    expected: "an array of strings",
                })
            }
        };
        let params = obj.get("params").and_then(Value::as_object).ok_or(PresetError::Field {
            field: "params",
            expected: "an object of parameter values by id",
        })?;
        let mut values = ParamValues::default();
        for (id, v) in params {
            values.set(id, v)?;
        }
        Ok(Preset {
            name,
            description,
            tags,
            values,
        })
    }

    pub fn load(path: &Path) -> Result<Preset, PresetError> {
        let text = std::fs::read_to_string(path).map_err(|source| PresetError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Preset::from_json(&text)
    }

    /// Pretty JSON with every parameter, in display order.
    pub fn to_json(&self) -> String {
        let mut params = Map::new();
        for (id, v) in self.values.iter() {
            params.insert(id.to_string(), v.clone());
        }
        let file = PresetFile {
            format: FORMAT.into(),
            version: VERSION,
            name: self.name.clone(),
            description: self.description.clone(),
            tags: self.tags.clone(),
            params,
        };
        let mut s = serde_json::to_string_pretty(&file).expect("preset serialises");
        s.push('\n');
        s
    }

    /// Writes the preset; the file is written whole (via a temporary) or not at all.
    pub fn save(&self, path: &Path) -> Result<(), PresetError> {
        let tmp = path.with_extension("json.tmp");
        let io = |source| PresetError::Io {
            path: path.display().to_string(),
            source,
        };
        std::fs::write(&tmp, self.to_json()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// A file-name-friendly form of the name: `Sugar into a mug` -> `sugar_into_a_mug`.
    pub fn slug(&self) -> String {
        slug(&self.name)
    }
}

pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// Factory presets, embedded in the binary: (file stem, JSON).
pub const FACTORY_FILES: [(&str, &str); 12] = [
    ("sugar_ceramic_mug", include_str!("../presets/sugar_ceramic_mug.json")),
    (
        "glass_beads_steel_cup",
        include_str!("../presets/glass_beads_steel_cup.json"),
    ),
    ("rice_plastic_bowl", include_str!("../presets/rice_plastic_bowl.json")),
    (
        "coffee_beans_glass_jar",
        include_str!("../presets/coffee_beans_glass_jar.json"),
    ),
    ("steel_shot_tin", include_str!("../presets/steel_shot_tin.json")),
    ("sand_wooden_bowl", include_str!("../presets/sand_wooden_bowl.json")),
    ("salt_porcelain_cup", include_str!("../presets/salt_porcelain_cup.json")),
    (
        "lentils_aluminium_pot",
        include_str!("../presets/lentils_aluminium_pot.json"),
    ),
    (
        "gravel_large_wooden_bowl",
        include_str!("../presets/gravel_large_wooden_bowl.json"),
    ),
    (
        "plastic_discs_ceramic_cup",
        include_str!("../presets/plastic_discs_ceramic_cup.json"),
    ),
    (
        "fine_glass_beads_tumbler",
        include_str!("../presets/fine_glass_beads_tumbler.json"),
    ),
    (
        "sugar_top_up_full_mug",
        include_str!("../presets/sugar_top_up_full_mug.json"),
    ),
];

/// The default preset (used when none is named).
pub const DEFAULT_PRESET: &str = "sugar_ceramic_mug";

/// All factory presets, parsed. Panics only if an embedded file is broken, which the
/// test suite rules out.
pub fn factory() -> Vec<(&'static str, Preset)> {
    FACTORY_FILES
        .iter()
        .map(|(stem, json)| {
            (
                *stem,
                Preset::from_json(json).unwrap_or_else(|e| panic!("factory preset {stem}: {e}")),
            )
        })
        .collect()
}

/// Finds a factory preset by file stem or by name (case-insensitive), or loads a file.
pub fn find(name_or_path: &str) -> Result<Preset, PresetError> {
    let path = Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "json") || path.exists() {
        return Preset::load(path);
    }
    let wanted = slug(name_or_path);
    factory()
        .into_iter()
        .find(|(stem, p)| *stem == wanted || p.slug() == wanted)
        .map(|(_, p)| p)
        .ok_or_else(|| PresetError::NotFound(name_or_path.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_presets_is_embedded_and_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FACTORY_FILES.iter().map(|(s, _)| s.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
        let presets = factory();
        assert!(presets.len() >= 10);
        for (stem, p) in &presets {
            assert_eq!(&p.slug(), stem, "file name follows the preset name");
            assert!(!p.description.is_empty() && !p.tags.is_empty(), "{stem}");
        }
        let names: std::collections::HashSet<_> = presets
            .iter()
            .map(|(_, p)| {
                p.values.clone().to_settings().grain_material.id().to_string()
                    + p.values.to_settings().cup_material.id()
            })
            .collect();
        assert!(names.len() >= 9, "factory presets are distinct scenes");
    }

    #[test]
    fn round_trip() {
        let mut p = factory().remove(0).1;
        p.values.set_text("pour_rate", "33.5").unwrap();
        p.tags.push("edited".into());
        let back = Preset::from_json(&p.to_json()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn bad_files_name_the_problem() {
        let ok = factory().remove(0).1.to_json();
        let cases: [(String, &str); 8] = [
            ("{ not json".into(), "not valid JSON"),
            (ok.replace("granary-preset", "other"), "not a Granary preset"),
            (ok.replace("\"version\": 1", "\"version\": 99"), "version 99"),
            (
                ok.replace("\"pour_rate\"", "\"pour_speed\""),
                "unknown parameter id `pour_speed`",
            ),
            (
                ok.replace("\"grain_material\": \"sugar\"", "\"grain_material\": \"marbles\""),
                "`grain_material`",
            ),
            (ok.replace("\"fill\": 0.0", "\"fill\": 7.0"), "`fill`: 7 is outside"),
            (ok.replace("\"fill\": 0.0", "\"fill\": NaN"), "not valid JSON"),
            (
                ok.replace("\"fill\": 0.0", "\"fill\": \"NaN\""),
                "`fill`: expected a number",
            ),
        ];
        for (text, needle) in cases {
            assert_ne!(text, ok, "case for {needle} must change the file");
            let err = Preset::from_json(&text).unwrap_err().to_string();
            assert!(err.contains(needle), "{err:?} should mention {needle:?}");
        }
    }

    #[test]
    fn save_writes_a_file_that_loads() {
        let dir = std::env::temp_dir().join(format!("granary-preset-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = factory().remove(1).1;
        let path = dir.join("x.json");
        p.save(&path).unwrap();
        assert_eq!(Preset::load(&path).unwrap(), p);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
