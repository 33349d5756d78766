//! Preset files: JSON (serde), versioned, human-readable.
//!
//! ```json
//! { "format": "granary-preset", "version": 2, "name": "…", "description": "…",
//!   "tags": ["…"], "params": { "grain_material": "sugar", "pour_rate": 20.0, … } }
//! ```
//! Parameters left out take their defaults. A bad file (not JSON, another format, a
//! version this build does not know, an unknown field or parameter id, a value of the wrong
//! type, out of range) is rejected with an error that names the problem; nothing is applied.
//! The document is read by serde (`PresetFile`, unknown fields refused); its `params` by
//! `ParamValues`, whose schema is the parameter table (`params::SPECS`).
//!
//! Format versions (one line each; older ones migrate through [`MIGRATIONS`], newer ones are
//! refused with an error that names the version):
//! - 0: pre-release development builds (never in a release). Parameters under `parameters`,
//!   keyed by the engine's `Settings` field names in SI units: `pour_rate_g_s`,
//!   `fall_height_m` (metres), `listener_angle_deg`, `listener_distance_m`,
//!   `grains_level_db`, `cup_level_db`, `output_gain_db`; `tags` did not exist.
//! - 1: first release format: `params` keyed by the stable parameter ids.
//! - 2: `statistics` defaults to `bank` (the databank); a version-1 file that leaves it out
//!   meant the hand-written model, its default then, and is read so.
//!
//! The plugin state a host saves is checked and migrated by the plugin crate (`state.rs`),
//! with the same version-0 renames ([`v0_id`]).

use crate::control::params::ParamValues;
use serde::{de, Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::path::Path;

pub const FORMAT: &str = "granary-preset";
pub const VERSION: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a Granary preset (`format` is {}, expected \"{FORMAT}\")", .0.as_deref().unwrap_or("missing or not a string"))]
    Format(Option<String>),
    #[error(
        "preset format version {0} is not supported (this build reads 0..={VERSION}; newer files need a newer Granary)"
    )]
    Version(i64),
    #[error("missing or empty `{0}`")]
    Missing(&'static str),
    #[error("`{field}` must be {expected}")]
    Field {
        field: &'static str,
        expected: &'static str,
    },
    /// The document does not fit the format (a field of the wrong type, an unknown field,
    /// a bad parameter value).
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("no preset named `{0}` (see `granary presets list`; a preset file is read by its path: with a `/` or ending in `.json`)")]
    NotFound(String),
    /// A preset file that cannot be read, named.
    #[error("{path}: {source}")]
    File { path: String, source: Box<PresetError> },
    #[error("preset format version {from}: {problem}")]
    Migration { from: u32, problem: String },
}

/// One step of the preset format's history: turns a version-`from` document into a
/// version-`from + 1` one (in place), or says why it cannot.
pub struct Migration {
    pub from: u32,
    pub what: &'static str,
    pub apply: fn(&mut Map<String, Value>) -> Result<(), String>,
}

/// Every format change, oldest first; `MIGRATIONS[i].from == i`.
pub const MIGRATIONS: [Migration; 2] = [
    Migration {
        from: 0,
        what: "parameters -> params; Settings field names (SI units) -> stable ids (fall height m -> cm)",
        apply: migrate_v0,
    },
    Migration {
        from: 1,
        what: "statistics, output_gain left out -> model, 41.74 dB (their defaults until format 2)",
        apply: migrate_v1,
    },
];

/// The defaults format 2 changed (the databank became the default statistics, and the
/// default preset's output gain followed its level): `statistics` was the model
/// (`params::STATISTICS_IDS`' "model") and `output_gain` 41.74 dB. A version-1 file, or a
/// plugin state saved before format 2 (`state.rs`), that leaves either out was heard with
/// these and keeps them.
pub const V1_STATISTICS: &str = "model";
pub const V1_OUTPUT_GAIN_DB: f32 = 41.74;

/// Version 1 -> 2: the defaults of `statistics` and `output_gain` changed; a file that left
/// them out keeps the sound it was made with (`V1_STATISTICS`, `V1_OUTPUT_GAIN_DB`).
fn migrate_v1(doc: &mut Map<String, Value>) -> Result<(), String> {
    if let Some(Value::Object(params)) = doc.get_mut("params") {
        params.entry("statistics").or_insert_with(|| Value::from(V1_STATISTICS));
        params
            .entry("output_gain")
            .or_insert_with(|| Value::from(V1_OUTPUT_GAIN_DB as f64));
    }
    Ok(())
}

/// Version-0 parameter names (the engine's `Settings` fields) -> (stable id, factor to the
/// id's unit). Names not listed were the same in both versions.
pub const V0_RENAMES: [(&str, &str, f64); 7] = [
    ("pour_rate_g_s", "pour_rate", 1.0),
    ("fall_height_m", "fall_height", 100.0),
    ("listener_angle_deg", "listener_angle", 1.0),
    ("listener_distance_m", "listener_distance", 1.0),
    ("grains_level_db", "grains_level", 1.0),
    ("cup_level_db", "cup_level", 1.0),
    ("output_gain_db", "output_gain", 1.0),
];

/// The stable id and unit factor of a version-0 parameter name (itself if unchanged).
pub fn v0_id(name: &str) -> (&str, f64) {
    V0_RENAMES
        .iter()
        .find(|(old, _, _)| *old == name)
        .map_or((name, 1.0), |(_, new, k)| (*new, *k))
}

fn migrate_v0(doc: &mut Map<String, Value>) -> Result<(), String> {
    if doc.contains_key("params") {
        return Err("has `params`, which version 0 did not have (is the version wrong?)".into());
    }
    let old = match doc.remove("parameters") {
        Some(Value::Object(m)) => m,
        Some(_) => return Err("`parameters` must be an object".into()),
        None => return Err("missing `parameters`".into()),
    };
    let mut params = Map::new();
    for (name, value) in old {
        let (id, factor) = v0_id(&name);
        let value = if factor == 1.0 {
            value
        } else {
            value
                .as_f64()
                .and_then(|x| serde_json::Number::from_f64(x * factor))
                .map(Value::Number)
                .ok_or_else(|| format!("`{name}`: expected a number, got {value}"))?
        };
        if params.insert(id.to_string(), value).is_some() {
            return Err(format!("`{id}` is given twice"));
        }
    }
    doc.insert("params".into(), Value::Object(params));
    Ok(())
}

/// A loaded, validated preset.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    pub tags: Vec<String>,
    pub values: ParamValues,
}

/// The file, current format (after migration). `params` is checked against the parameter
/// table by `ParamValues`' `Deserialize`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    format: String,
    version: u32,
    #[serde(default, deserialize_with = "field_name")]
    name: String,
    #[serde(default, deserialize_with = "field_description")]
    description: String,
    #[serde(default, deserialize_with = "field_tags")]
    tags: Vec<String>,
    /// Its errors name the parameter.
    params: ParamValues,
}

/// Deserializes one field of the document, naming it in the error.
fn named<'de, D: Deserializer<'de>, T: Deserialize<'de>>(field: &str, d: D) -> Result<T, D::Error> {
    T::deserialize(d).map_err(|e| de::Error::custom(format!("`{field}`: {e}")))
}

fn field_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    named("name", d)
}

fn field_description<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    named("description", d)
}

fn field_tags<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    named("tags", d)
}

impl Preset {
    /// Parses and validates preset JSON. On error nothing is returned.
    ///
    /// `format` and `version` are read first (they decide how the rest is read), older
    /// versions go through [`MIGRATIONS`], then serde reads the current format.
    pub fn from_json(text: &str) -> Result<Preset, PresetError> {
        // a byte-order mark, as some editors save UTF-8
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Value::Object(mut doc) = serde_json::from_str(text)? else {
            return Err(PresetError::Field {
                field: "preset",
                expected: "a JSON object",
            });
        };
        let format = doc.get("format").and_then(Value::as_str);
        if format != Some(FORMAT) {
            return Err(PresetError::Format(format.map(|f| Value::from(f).to_string())));
        }
        let version = match doc.get("version") {
            None | Some(Value::Null) => return Err(PresetError::Missing("version")),
            Some(v) => v.as_i64().ok_or(PresetError::Field {
                field: "version",
                expected: "a whole number",
            })?,
        };
        if version < 0 || version > VERSION as i64 {
            return Err(PresetError::Version(version));
        }
        for m in &MIGRATIONS[version as usize..] {
            (m.apply)(&mut doc).map_err(|problem| PresetError::Migration { from: m.from, problem })?;
            doc.insert("version".into(), Value::from(m.from + 1));
        }
        let file = PresetFile::deserialize(Value::Object(doc)).map_err(|e| PresetError::Invalid(e.to_string()))?;
        let name = file.name.trim().to_string();
        if name.is_empty() {
            return Err(PresetError::Missing("name"));
        }
        Ok(Preset {
            name,
            description: file.description,
            tags: file.tags,
            values: file.params,
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
        let file = PresetFile {
            format: FORMAT.into(),
            version: VERSION,
            name: self.name.clone(),
            description: self.description.clone(),
            tags: self.tags.clone(),
            params: self.values.clone(),
        };
        let mut s = serde_json::to_string_pretty(&file).expect("preset serialises");
        s.push('\n');
        s
    }

    /// Writes the preset; the file is written whole (via a temporary) or not at all (the
    /// temporary is removed on an error).
    pub fn save(&self, path: &Path) -> Result<(), PresetError> {
        let tmp = path.with_extension("json.tmp");
        let io = |source| PresetError::Io {
            path: path.display().to_string(),
            source,
        };
        let written = std::fs::write(&tmp, self.to_json()).and_then(|()| std::fs::rename(&tmp, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(io)
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
pub const FACTORY_FILES: [(&str, &str); 21] = [
    (
        "sugar_ceramic_mug",
        include_str!("../../../presets/sugar_ceramic_mug.json"),
    ),
    (
        "glass_beads_steel_cup",
        include_str!("../../../presets/glass_beads_steel_cup.json"),
    ),
    (
        "rice_plastic_bowl",
        include_str!("../../../presets/rice_plastic_bowl.json"),
    ),
    (
        "coffee_beans_glass_jar",
        include_str!("../../../presets/coffee_beans_glass_jar.json"),
    ),
    ("steel_shot_tin", include_str!("../../../presets/steel_shot_tin.json")),
    (
        "sand_wooden_bowl",
        include_str!("../../../presets/sand_wooden_bowl.json"),
    ),
    (
        "salt_porcelain_cup",
        include_str!("../../../presets/salt_porcelain_cup.json"),
    ),
    (
        "lentils_aluminium_pot",
        include_str!("../../../presets/lentils_aluminium_pot.json"),
    ),
    (
        "gravel_large_wooden_bowl",
        include_str!("../../../presets/gravel_large_wooden_bowl.json"),
    ),
    (
        "plastic_discs_ceramic_cup",
        include_str!("../../../presets/plastic_discs_ceramic_cup.json"),
    ),
    (
        "fine_glass_beads_tumbler",
        include_str!("../../../presets/fine_glass_beads_tumbler.json"),
    ),
    (
        "sugar_top_up_full_mug",
        include_str!("../../../presets/sugar_top_up_full_mug.json"),
    ),
    (
        "sugar_overflowing_a_mug",
        include_str!("../../../presets/sugar_overflowing_a_mug.json"),
    ),
    (
        "sand_onto_concrete",
        include_str!("../../../presets/sand_onto_concrete.json"),
    ),
    (
        "rice_spilled_on_a_wooden_table",
        include_str!("../../../presets/rice_spilled_on_a_wooden_table.json"),
    ),
    (
        "gravel_onto_soil",
        include_str!("../../../presets/gravel_onto_soil.json"),
    ),
    (
        "steel_shot_onto_a_steel_plate",
        include_str!("../../../presets/steel_shot_onto_a_steel_plate.json"),
    ),
    (
        "stirring_sugar_in_a_mug",
        include_str!("../../../presets/stirring_sugar_in_a_mug.json"),
    ),
    (
        "shaking_a_jar_of_rice",
        include_str!("../../../presets/shaking_a_jar_of_rice.json"),
    ),
    (
        "lentils_tilted_in_a_steel_bowl",
        include_str!("../../../presets/lentils_tilted_in_a_steel_bowl.json"),
    ),
    (
        "sand_avalanching_in_a_bowl",
        include_str!("../../../presets/sand_avalanching_in_a_bowl.json"),
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

/// Whether a `--preset` argument is a file's path (it has a `/` or ends in `.json`) rather
/// than a factory preset's id or name.
pub fn is_path(name_or_path: &str) -> bool {
    name_or_path.contains('/')
        || name_or_path.contains(std::path::MAIN_SEPARATOR)
        || name_or_path.to_ascii_lowercase().ends_with(".json")
}

/// Loads a preset file ([`is_path`]; its errors name the file), or finds a factory preset by
/// id or by name (case-insensitive). A file in the working directory never stands in for a
/// factory preset.
pub fn find(name_or_path: &str) -> Result<Preset, PresetError> {
    if is_path(name_or_path) {
        let path = Path::new(name_or_path);
        return Preset::load(path).map_err(|e| match e {
            e @ PresetError::Io { .. } => e,
            e => PresetError::File {
                path: path.display().to_string(),
                source: Box::new(e),
            },
        });
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
    use crate::control::params::{Plain, SPECS};

    /// The version line of a preset written now.
    fn version_line() -> String {
        format!("\"version\": {VERSION}")
    }

    #[test]
    fn every_file_in_presets_is_embedded_and_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../presets");
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
            (ok.replace(&version_line(), "\"version\": 99"), "version 99"),
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

    /// Format 2 made the databank the default statistics (and lowered the default output
    /// gain with the default preset's level): a version-1 file that leaves them out is still
    /// heard with the model and the gain it was made with, one that names them keeps its
    /// choice, and a version-2 file that leaves them out takes the new defaults.
    #[test]
    fn a_version_1_file_keeps_the_statistics_and_gain_it_was_made_with() {
        use crate::control::choices::Statistics;
        let file = |version: u32, params: serde_json::Value| {
            let doc = serde_json::json!({"format": FORMAT, "version": version, "name": "x", "params": params});
            let s = Preset::from_json(&doc.to_string()).unwrap().values.to_settings();
            (s.statistics, s.output_gain_db)
        };
        let fill = serde_json::json!({"fill": 0.2});
        assert_eq!(file(1, fill.clone()), (Statistics::Model, V1_OUTPUT_GAIN_DB));
        let chosen = serde_json::json!({"statistics": "bank", "output_gain": 30.0});
        assert_eq!(file(1, chosen), (Statistics::Bank, 30.0));
        let defaults = ParamValues::default().to_settings();
        assert_eq!(file(2, fill), (defaults.statistics, defaults.output_gain_db));
        assert_eq!(defaults.statistics, Statistics::Bank);
        assert_ne!(defaults.output_gain_db, V1_OUTPUT_GAIN_DB);
    }

    #[test]
    fn unknown_fields_and_fields_of_the_wrong_type_are_refused_by_name() {
        let ok = factory().remove(0).1.to_json();
        let with = |from: &str, to: &str| {
            assert!(ok.contains(from), "{from}");
            Preset::from_json(&ok.replacen(from, to, 1)).unwrap_err().to_string()
        };
        let err = with("\"tags\"", "\"colour\": \"red\",\n  \"tags\"");
        assert!(err.starts_with("unknown field `colour`"), "{err}");
        let err = with("\"description\": \"", "\"description\": 3, \"x\": \"");
        assert!(err.starts_with("`description`: invalid type"), "{err}");
        let err = with("\"tags\": [", "\"tags\": [1, ");
        assert!(err.starts_with("`tags`: invalid type"), "{err}");
        let no_name = ok
            .lines()
            .filter(|l| !l.contains("\"name\""))
            .collect::<Vec<_>>()
            .join("\n");
        let err = Preset::from_json(&no_name).unwrap_err().to_string();
        assert_eq!(err, "missing or empty `name`");
        let no_params = serde_json::json!({"format": FORMAT, "version": 1, "name": "x"}).to_string();
        let err = Preset::from_json(&no_params).unwrap_err().to_string();
        assert_eq!(err, "missing field `params`");
        // every error is one line
        for e in [
            with("\"tags\": [", "\"tags\": [1, "),
            with(&version_line(), "\"version\": 9"),
        ] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    /// The default preset written in the pre-release format 0.
    fn v0_text() -> String {
        let p = factory().remove(0).1;
        let mut parameters = Map::new();
        let Value::Object(current) = serde_json::to_value(&p.values).unwrap() else {
            panic!()
        };
        for (id, v) in current {
            let old = V0_RENAMES.iter().find(|(_, new, _)| *new == id);
            match old {
                Some((name, _, k)) => {
                    parameters.insert(name.to_string(), Value::from(v.as_f64().unwrap() / k));
                }
                None => {
                    parameters.insert(id, v);
                }
            }
        }
        let doc = serde_json::json!({
            "format": FORMAT, "version": 0, "name": p.name, "description": p.description,
            "parameters": parameters,
        });
        serde_json::to_string_pretty(&doc).unwrap()
    }

    #[test]
    fn version_0_presets_migrate() {
        let text = v0_text();
        assert!(text.contains("\"fall_height_m\": 0.15") && text.contains("\"pour_rate_g_s\""));
        let p = Preset::from_json(&text).unwrap();
        let current = factory().remove(0).1;
        assert_eq!(p.name, current.name);
        assert!(p.tags.is_empty(), "version 0 had no tags");
        for (id, v) in current.values.iter() {
            let got = p.values.get(id).unwrap();
            match (got, v) {
                // fall height went through m -> cm
                (Plain::Float(a), Plain::Float(b)) => {
                    assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{id}: {a} vs {b}")
                }
                _ => assert_eq!(got, v, "{id}"),
            }
        }
        // the migrated preset saves as the current format
        assert!(p.to_json().contains(&version_line()));
        // a version-0 file must really be version 0
        let mixed = text.replace("\"parameters\"", "\"params\"");
        let err = Preset::from_json(&mixed).unwrap_err().to_string();
        assert!(
            err.contains("format version 0") && err.contains("has `params`"),
            "{err}"
        );
        let none = text.replace("\"parameters\"", "\"other\"");
        let err = Preset::from_json(&none).unwrap_err().to_string();
        assert!(err.contains("missing `parameters`"), "{err}");
        let bad = text.replace("\"fall_height_m\": 0.15", "\"fall_height_m\": \"high\"");
        let err = Preset::from_json(&bad).unwrap_err().to_string();
        assert!(
            err.contains("fall_height_m") && err.contains("expected a number"),
            "{err}"
        );
        // out of range after conversion: 2 m is 200 cm
        let far = text.replace("\"fall_height_m\": 0.15", "\"fall_height_m\": 2.0");
        let err = Preset::from_json(&far).unwrap_err().to_string();
        assert!(err.contains("`fall_height`: 200 is outside"), "{err}");
    }

    #[test]
    fn newer_versions_are_refused_by_name() {
        let ok = factory().remove(0).1.to_json();
        for v in [VERSION + 1, 17] {
            let err = Preset::from_json(&ok.replace(&version_line(), &format!("\"version\": {v}")))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("version {v} is not supported")) && err.contains("newer"),
                "{err}"
            );
        }
        for v in ["-1", "1.5", "\"1\"", "null"] {
            assert!(
                Preset::from_json(&ok.replace(&version_line(), &format!("\"version\": {v}"))).is_err(),
                "{v}"
            );
        }
    }

    #[test]
    fn truncated_and_corrupted_presets_never_panic_or_load_wrong_values() {
        use rand::{Rng, SeedableRng};
        let good = factory().remove(3).1;
        let text = good.to_json();
        // every truncation: an error, except cutting only trailing whitespace
        for cut in 0..text.len() {
            if !text.is_char_boundary(cut) {
                continue;
            }
            match Preset::from_json(&text[..cut]) {
                Err(e) => assert!(!e.to_string().is_empty()),
                Ok(p) => {
                    assert!(text[cut..].trim().is_empty(), "a file cut at {cut} loaded");
                    assert_eq!(p, good);
                }
            }
        }
        // random byte corruption: an error, or a preset whose every value is valid
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut loaded = 0;
        for _ in 0..3000 {
            let mut bytes = text.clone().into_bytes();
            for _ in 0..rng.random_range(1..4) {
                let i = rng.random_range(0..bytes.len());
                bytes[i] = rng.random();
            }
            let Ok(corrupt) = String::from_utf8(bytes) else {
                continue;
            };
            if let Ok(p) = Preset::from_json(&corrupt) {
                loaded += 1;
                for (s, (id, v)) in SPECS.iter().zip(p.values.iter()) {
                    assert_eq!(s.id, id);
                    assert!(s.accepts(v), "a loaded preset holds only valid values");
                }
            }
        }
        assert!(loaded < 3000);
        // the same through a file
        let dir = std::env::temp_dir().join(format!("granary-trunc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cut.json");
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        let err = Preset::load(&path).unwrap_err().to_string();
        assert!(err.contains("not valid JSON") && err.contains("EOF"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
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

    #[test]
    fn files_are_named_in_errors_read_with_a_bom_and_never_shadow_factory_presets() {
        let dir = std::env::temp_dir().join(format!("granary-find-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = factory().remove(2).1;
        // a UTF-8 byte-order mark before the JSON
        let bom = dir.join("bom.json");
        std::fs::write(&bom, format!("\u{feff}{}", ok.to_json())).unwrap();
        assert_eq!(find(bom.to_str().unwrap()).unwrap(), ok);
        // a bad file is named
        let bad = dir.join("bad.json");
        std::fs::write(&bad, ok.to_json().replace("\"fill\": 0.0", "\"fill\": 7.0")).unwrap();
        let err = find(bad.to_str().unwrap()).unwrap_err().to_string();
        assert_eq!(err, format!("{}: `fill`: 7 is outside 0..=1", bad.display()));
        // a name is a factory id, whatever lies in the working directory
        assert!(!is_path("sugar_ceramic_mug") && is_path("./sugar_ceramic_mug") && is_path("x.JSON"));
        let cwd = std::env::current_dir().unwrap();
        std::fs::write(cwd.join("sugar_ceramic_mug"), "not a preset").unwrap();
        let found = find("sugar_ceramic_mug");
        std::fs::remove_file(cwd.join("sugar_ceramic_mug")).unwrap();
        assert_eq!(found.unwrap().name, factory().remove(0).1.name);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn wrong_types_are_wrong_types_and_no_rust_values_show() {
        let ok = factory().remove(0).1.to_json();
        let err = Preset::from_json(&ok.replace(&version_line(), "\"version\": \"1\"")).unwrap_err();
        assert_eq!(err.to_string(), "`version` must be a whole number");
        let err = Preset::from_json(&ok.replace("granary-preset", "other")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "not a Granary preset (`format` is \"other\", expected \"granary-preset\")"
        );
        let err = Preset::from_json(&ok.replace("\"format\": \"granary-preset\"", "\"format\": 3")).unwrap_err();
        assert!(err.to_string().contains("`format` is missing or not a string"), "{err}");
    }

    #[test]
    fn a_save_that_fails_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("granary-save-fail-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("x.json")).unwrap();
        // the target is a directory: the rename fails
        assert!(factory().remove(0).1.save(&dir.join("x.json")).is_err());
        assert!(!dir.join("x.json.tmp").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn migrated_presets_save_without_rounding_noise() {
        let text = v0_text().replace(
            "\"listener_distance_m\": 0.4",
            "\"listener_distance_m\": 0.4000000059604645",
        );
        let json = Preset::from_json(&text).unwrap().to_json();
        assert!(
            json.contains("\"listener_distance\": 0.4,") && json.contains("\"fall_height\": 15.0,"),
            "{json}"
        );
    }
}
