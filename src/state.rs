//! The plugin state a host saves (nice-plug's JSON: plugin version, parameter values by id,
//! persisted fields) goes through [`check_plugin_state`] before it is applied: it is migrated
//! from pre-release builds like preset format 0 (`granary_engine::control::preset::v0_id`), and a state
//! with an unknown id, a value of the wrong type, a non-finite or out-of-range value is
//! refused whole (logged; nothing changes).

use granary_engine::control::params::{spec, Kind, SPECS, STATISTICS_IDS};
use granary_engine::control::preset::{v0_id, V1_OUTPUT_GAIN_DB, V1_STATISTICS};
use nice_plug::plugin::{ParamValue, PluginState};
use semver::Version;

/// Why a plugin state from the host was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateError {
    #[error("saved by Granary version {0:?}, which is not a version number")]
    BadVersion(String),
    #[error("saved by Granary {saved}, newer than this build ({this}): {problem}")]
    Newer {
        saved: String,
        this: &'static str,
        problem: Box<StateError>,
    },
    #[error("unknown parameter id `{0}`")]
    UnknownId(String),
    #[error("`{id}`: {problem}")]
    BadValue { id: String, problem: String },
}

/// The plugin's version, as nice-plug writes it into every saved state.
pub const PLUGIN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `major.minor.patch` of a semantic version (its pre-release and build parts are
/// ignored: `0.0.9-dev` is 0.0.9); `""` is the pre-release state that had no version (0.0.0).
fn parse_version(v: &str) -> Option<Version> {
    if v.is_empty() {
        return Some(Version::new(0, 0, 0));
    }
    let v = Version::parse(v).ok()?;
    Some(Version::new(v.major, v.minor, v.patch))
}

/// Checks, migrates and completes a plugin state before it is applied:
/// - states from pre-release builds (version `0.0.x` or none) get their parameter names
///   migrated like preset format 0 (`granary_engine::control::preset::V0_RENAMES`);
/// - every value must have its parameter's type and be finite and within range; enum
///   choices may be given by index or by stable id;
/// - parameters the state lacks (saved before they existed) take their defaults, so the
///   state alone decides every value;
/// - a state from a newer Granary is accepted only if it passes all of this.
///
/// Returns the state to apply (stamped with this build's version) or why it was refused.
pub fn check_plugin_state(state: &PluginState) -> Result<PluginState, StateError> {
    let saved = parse_version(&state.version).ok_or_else(|| StateError::BadVersion(state.version.clone()))?;
    let this = parse_version(PLUGIN_VERSION).expect("the crate version is a version");
    let pre_release = saved < Version::new(0, 1, 0);
    let mut params = std::collections::BTreeMap::new();
    let result = (|| {
        for (name, value) in &state.params {
            let (id, factor) = if pre_release { v0_id(name) } else { (name.as_str(), 1.0) };
            let spec = spec(id).ok_or_else(|| StateError::UnknownId(name.clone()))?;
            let bad = |problem: String| StateError::BadValue {
                id: id.to_string(),
                problem,
            };
            let checked = match (spec.kind, value) {
                (Kind::Float { min, max, .. }, ParamValue::F32(x)) => {
                    let x = (*x as f64 * factor) as f32;
                    if !x.is_finite() || x < min || x > max {
                        return Err(bad(format!("{x} is outside {min}..={max}")));
                    }
                    ParamValue::F32(x)
                }
                (Kind::Int { min, max, .. }, ParamValue::I32(x)) => {
                    if !(min..=max).contains(x) {
                        return Err(bad(format!("{x} is outside {min}..={max}")));
                    }
                    ParamValue::I32(*x)
                }
                (Kind::Bool { .. }, ParamValue::Bool(b)) => ParamValue::Bool(*b),
                (Kind::Enum { ids, .. }, ParamValue::I32(i)) => {
                    if *i < 0 || *i as usize >= ids.len() {
                        return Err(bad(format!("choice {i} is outside 0..={}", ids.len() - 1)));
                    }
                    ParamValue::I32(*i)
                }
                (Kind::Enum { ids, .. }, ParamValue::String(choice)) => {
                    let i = ids
                        .iter()
                        .position(|c| c == choice)
                        .ok_or_else(|| bad(format!("`{choice}` is not one of: {}", ids.join(", "))))?;
                    ParamValue::I32(i as i32)
                }
                (kind, value) => return Err(bad(format!("{value:?} has the wrong type for {kind:?}"))),
            };
            if params.insert(id.to_string(), checked).is_some() {
                return Err(bad("given twice".into()));
            }
        }
        Ok(())
    })();
    if let Err(problem) = result {
        return Err(if saved > this {
            StateError::Newer {
                saved: state.version.clone(),
                this: PLUGIN_VERSION,
                problem: Box::new(problem),
            }
        } else {
            problem
        });
    }
    // a state without `statistics` or `output_gain` was saved before their defaults changed
    // (preset format 2: the databank, and the default preset's lower gain), and was heard
    // with the hand-written model and 41.74 dB (`preset::V1_STATISTICS`, `V1_OUTPUT_GAIN_DB`)
    let model = STATISTICS_IDS.iter().position(|&id| id == V1_STATISTICS).unwrap_or(0) as i32;
    params.entry("statistics".to_string()).or_insert(ParamValue::I32(model));
    params
        .entry("output_gain".to_string())
        .or_insert(ParamValue::F32(V1_OUTPUT_GAIN_DB));
    for s in &SPECS {
        params.entry(s.id.to_string()).or_insert(match s.kind {
            Kind::Float { default, .. } => ParamValue::F32(default),
            Kind::Int { default, .. } => ParamValue::I32(default),
            Kind::Bool { default } => ParamValue::Bool(default),
            Kind::Enum { default, .. } => ParamValue::I32(default as i32),
        });
    }
    Ok(PluginState {
        version: PLUGIN_VERSION.to_string(),
        params,
        fields: state.fields.clone(),
    })
}

/// `Plugin::filter_state`: applies [`check_plugin_state`]; a refused state is logged and
/// emptied, so loading it changes nothing.
pub fn filter_plugin_state(state: &mut PluginState) {
    match check_plugin_state(state) {
        Ok(checked) => *state = checked,
        Err(e) => {
            nice_plug::nice_error!("Granary: refused the saved state, nothing was changed: {e}");
            state.params.clear();
            state.fields.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use granary_engine::control::params::ParamValues;
    use granary_engine::control::preset::{factory, V0_RENAMES};
    use serde::Serialize;
    use serde_json::Value;

    /// ParamValue has no PartialEq: compare through JSON.
    fn json<T: Serialize>(x: &T) -> Value {
        serde_json::to_value(x).unwrap()
    }

    /// A state as nice-plug saves it: floats as F32, enums as their index.
    fn state_of(values: &ParamValues, version: &str) -> PluginState {
        let params = SPECS
            .iter()
            .map(|s| {
                let v = match s.kind {
                    Kind::Float { .. } => ParamValue::F32(values.float(s.id)),
                    Kind::Int { .. } => ParamValue::I32(values.int(s.id) as i32),
                    Kind::Bool { .. } => ParamValue::Bool(values.bool(s.id)),
                    Kind::Enum { .. } => ParamValue::I32(values.choice(s.id) as i32),
                };
                (s.id.to_string(), v)
            })
            .collect();
        PluginState {
            version: version.into(),
            params,
            fields: [("editor_size".to_string(), "{\"width\":720,\"height\":560}".to_string())].into(),
        }
    }

    #[test]
    fn valid_states_pass_unchanged_and_missing_values_take_defaults() {
        for (_, p) in factory() {
            let state = state_of(&p.values, PLUGIN_VERSION);
            let checked = check_plugin_state(&state).unwrap();
            assert_eq!(json(&checked.params), json(&state.params));
            assert_eq!(checked.fields, state.fields);
        }
        let mut partial = state_of(&factory().remove(2).1.values, PLUGIN_VERSION);
        partial.params.remove("stereo_width");
        partial.params.remove("seed");
        let checked = check_plugin_state(&partial).unwrap();
        assert_eq!(json(&checked.params["stereo_width"]), json(&ParamValue::F32(0.7)));
        assert_eq!(json(&checked.params["seed"]), json(&ParamValue::I32(1)));
        // a state without `statistics` and `output_gain` predates their new defaults (the
        // databank, 38.03 dB): the model and 41.74 dB, as it was heard
        partial.params.remove("statistics");
        partial.params.remove("output_gain");
        let checked = check_plugin_state(&partial).unwrap();
        let model = STATISTICS_IDS.iter().position(|&id| id == "model").unwrap() as i32;
        assert_eq!(json(&checked.params["statistics"]), json(&ParamValue::I32(model)));
        assert_eq!(json(&checked.params["output_gain"]), json(&ParamValue::F32(41.74)));
        // enum choices by stable id are accepted too
        partial
            .params
            .insert("cup_material".into(), ParamValue::String("steel".into()));
        assert_eq!(
            json(&check_plugin_state(&partial).unwrap().params["cup_material"]),
            json(&ParamValue::I32(3))
        );
        // a newer build's state that we fully understand is accepted
        let newer = state_of(&ParamValues::default(), "0.9.0");
        assert_eq!(check_plugin_state(&newer).unwrap().version, PLUGIN_VERSION);
    }

    #[test]
    fn pre_release_states_migrate() {
        let mut v = ParamValues::default();
        v.set_text("fall_height", "42").unwrap();
        v.set_text("pour_rate", "77").unwrap();
        let current = state_of(&v, PLUGIN_VERSION);
        for version in ["", "0.0.3", "0.0.9-dev"] {
            let mut old = current.clone();
            old.version = version.into();
            for (name, new, k) in V0_RENAMES {
                let ParamValue::F32(x) = old.params.remove(new).unwrap() else {
                    panic!()
                };
                old.params.insert(name.into(), ParamValue::F32((x as f64 / k) as f32));
            }
            let checked = check_plugin_state(&old).unwrap();
            assert_eq!(checked.version, PLUGIN_VERSION);
            for (id, value) in &current.params {
                match (value, &checked.params[id]) {
                    (ParamValue::F32(a), ParamValue::F32(b)) => assert!((a - b).abs() <= 1e-5 * a.abs(), "{id}"),
                    (a, b) => assert_eq!(json(a), json(b), "{id}"),
                }
            }
        }
    }

    #[test]
    fn corrupted_states_are_refused_whole_and_change_nothing() {
        let good = state_of(&ParamValues::default(), PLUGIN_VERSION);
        let with = |id: &str, v: ParamValue| {
            let mut s = good.clone();
            s.params.insert(id.into(), v);
            s
        };
        let cases = [
            (
                with("pour_rate", ParamValue::F32(f32::NAN)),
                "`pour_rate`: NaN is outside",
            ),
            (
                with("pour_rate", ParamValue::F32(f32::INFINITY)),
                "`pour_rate`: inf is outside",
            ),
            (with("fill", ParamValue::F32(7.0)), "`fill`: 7 is outside 0..=1"),
            (with("seed", ParamValue::I32(-5)), "`seed`: -5 is outside"),
            (
                with("grain_material", ParamValue::I32(12)),
                "`grain_material`: choice 12 is outside 0..=11",
            ),
            (
                with("cup_material", ParamValue::String("gold".into())),
                "`gold` is not one of",
            ),
            (
                with("auto_fill", ParamValue::F32(1.0)),
                "`auto_fill`: F32(1.0) has the wrong type",
            ),
            (
                with("pour_speed", ParamValue::F32(1.0)),
                "unknown parameter id `pour_speed`",
            ),
        ];
        for (state, needle) in cases {
            let err = check_plugin_state(&state).unwrap_err().to_string();
            assert!(err.contains(needle), "{err:?} should mention {needle:?}");
            let mut filtered = state.clone();
            filter_plugin_state(&mut filtered);
            assert!(
                filtered.params.is_empty() && filtered.fields.is_empty(),
                "{needle}: nothing may be applied"
            );
        }
        for version in ["one", "1.2", "1.2.3.4", "x.1.0", "v1.2.3"] {
            let mut s = good.clone();
            s.version = version.into();
            let err = check_plugin_state(&s).unwrap_err().to_string();
            assert!(err.contains("not a version number"), "{err}");
        }
        let mut newer = with("grain_wetness", ParamValue::F32(0.2));
        newer.version = "3.0.0".into();
        let err = check_plugin_state(&newer).unwrap_err().to_string();
        assert!(
            err.contains("saved by Granary 3.0.0, newer than this build") && err.contains("`grain_wetness`"),
            "{err}"
        );
    }
}
