//! The host parameters (nice-plug), built from the engine's one parameter table
//! (`granary_engine::control::params::SPECS`), and the editor size persisted with the state.
//!
//! Ids are stable: DAW projects and presets store them. Never rename one.

use granary_engine::control::params::{choice_name, spec, Kind, Param, ParamValues, Plain};
use granary_engine::Settings;
use nice_plug::prelude::*;
use std::sync::{Arc, Mutex};

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
    #[id = "flow_variation"]
    pub flow_variation: FloatParam,
    #[id = "aim"]
    pub aim: FloatParam,
    #[id = "pour_target"]
    pub pour_target: IntParam,
    #[id = "surface_material"]
    pub surface_material: IntParam,
    #[id = "surface_level"]
    pub surface_level: FloatParam,
    #[id = "gesture"]
    pub gesture: IntParam,
    #[id = "gesture_amount"]
    pub gesture_amount: FloatParam,
    #[id = "shake_rate"]
    pub shake_rate: FloatParam,
    #[id = "friction_level"]
    pub friction_level: FloatParam,
    #[id = "quality"]
    pub quality: IntParam,
    #[id = "grain_shape"]
    pub grain_shape: IntParam,
    #[id = "statistics"]
    pub statistics: IntParam,
    #[persist = "editor_size"]
    pub editor_size: Mutex<EditorSize>,
}

fn float_param(id: &str) -> FloatParam {
    let s = spec(id).expect("parameter id in SPECS");
    let Kind::Float {
        min, max, default, log, ..
    } = s.kind
    else {
        panic!("{id} is not a float")
    };
    let range = if log {
        // a range that starts at 0 (pour rate) is a cube law, 200 n^3 g/s: the default
        // 20 g/s sits near the middle, 1 g/s at a sixth and 0.1 g/s at a twelfth
        FloatRange::Skewed {
            min,
            max,
            factor: if min > 0.0 {
                FloatRange::skew_factor(-1.5)
            } else {
                1.0 / 3.0
            },
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
        "%" => " %",
        "Hz" => " Hz",
        _ => "",
    };
    // two decimals for small ranges and for log ranges that start below 1 (0.35 m, not 0.4 m)
    let digits = if max - min <= 4.0 || (log && min > 0.0 && min < 1.0) {
        2
    } else {
        1
    };
    let to_string = if log && min == 0.0 {
        // down to the table's step (0.01) below 10, so a trickle never reads as 0
        significant_v2s(digits)
    } else {
        formatters::v2s_f32_rounded(digits)
    };
    FloatParam::new(s.name, default, range)
        .with_unit(unit)
        .with_value_to_string(to_string)
}

/// `digits` decimals from 10 up, one more below 10 (0.02 g/s, 9.95 g/s, 10.0 g/s): the
/// decimals are chosen on the rounded text, so a text parses back to itself.
fn significant_v2s(digits: usize) -> Arc<dyn Fn(f32) -> String + Send + Sync> {
    Arc::new(move |v| {
        let fine = format!("{v:.*}", digits + 1);
        if fine.parse::<f32>().is_ok_and(|x| x.abs() < 10.0) {
            fine
        } else {
            format!("{v:.digits$}")
        }
    })
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

fn bool_param(id: &str) -> BoolParam {
    let s = spec(id).expect("parameter id in SPECS");
    let Kind::Bool { default } = s.kind else {
        panic!("{id} is not a bool")
    };
    BoolParam::new(s.name, default)
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
            auto_fill: bool_param("auto_fill"),
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
            seed: IntParam::new(
                spec("seed").expect("seed in SPECS").name,
                default,
                IntRange::Linear { min, max },
            ),
            cup_shape: enum_param("cup_shape"),
            flow_variation: float_param("flow_variation")
                .with_unit(" %")
                .with_value_to_string(formatters::v2s_f32_percentage(0))
                .with_string_to_value(formatters::s2v_f32_percentage()),
            aim: float_param("aim")
                .with_unit(" %")
                .with_value_to_string(formatters::v2s_f32_percentage(0))
                .with_string_to_value(formatters::s2v_f32_percentage()),
            pour_target: enum_param("pour_target"),
            surface_material: enum_param("surface_material"),
            surface_level: float_param("surface_level"),
            gesture: enum_param("gesture"),
            gesture_amount: float_param("gesture_amount"),
            shake_rate: float_param("shake_rate"),
            friction_level: float_param("friction_level"),
            quality: enum_param("quality"),
            grain_shape: enum_param("grain_shape"),
            statistics: enum_param("statistics"),
            editor_size: Mutex::new(EditorSize::DEFAULT),
        }
    }
}

impl GranaryParams {
    /// The plain value of one parameter as the host holds it (enums as their index).
    fn plain(&self, p: Param) -> Plain {
        let choice = |x: &IntParam| Plain::Choice(x.value().max(0) as usize);
        let float = |x: &FloatParam| Plain::Float(x.value());
        match p {
            Param::GrainMaterial => choice(&self.grain_material),
            Param::GrainSize => float(&self.grain_size),
            Param::Density => float(&self.density),
            Param::CupMaterial => choice(&self.cup_material),
            Param::CupSize => float(&self.cup_size),
            Param::Fill => float(&self.fill),
            Param::AutoFill => Plain::Bool(self.auto_fill.value()),
            Param::PourRate => float(&self.pour_rate),
            Param::FallHeight => float(&self.fall_height),
            Param::ListenerAngle => float(&self.listener_angle),
            Param::ListenerDistance => float(&self.listener_distance),
            Param::StereoWidth => float(&self.stereo_width),
            Param::GrainsLevel => float(&self.grains_level),
            Param::CupLevel => float(&self.cup_level),
            Param::OutputGain => float(&self.output_gain),
            Param::TriggerMode => choice(&self.trigger_mode),
            Param::Seed => Plain::Int(self.seed.value()),
            Param::CupShape => choice(&self.cup_shape),
            Param::FlowVariation => float(&self.flow_variation),
            Param::Aim => float(&self.aim),
            Param::PourTarget => choice(&self.pour_target),
            Param::SurfaceMaterial => choice(&self.surface_material),
            Param::SurfaceLevel => float(&self.surface_level),
            Param::Gesture => choice(&self.gesture),
            Param::GestureAmount => float(&self.gesture_amount),
            Param::ShakeRate => float(&self.shake_rate),
            Param::FrictionLevel => float(&self.friction_level),
            Param::Quality => choice(&self.quality),
            Param::GrainShape => choice(&self.grain_shape),
            Param::Statistics => choice(&self.statistics),
        }
    }

    /// Current plain values (what a preset stores), floats on the table's step (`Spec::snap`:
    /// a value a VST3 host restored through its normalised 0..1 value, a unit in the last
    /// place off, is the value it saved); a value outside the table's range (which
    /// nice-plug's ranges rule out) keeps the default. Real-time safe (no allocation).
    pub fn values(&self) -> ParamValues {
        ParamValues::from_fn(|s| s.snap(self.plain(s.param)))
    }

    /// Engine settings straight from the parameters, through the table's one mapping
    /// (`ParamValues::to_settings`). Real-time safe (no allocation): the audio thread calls
    /// this every block.
    pub fn settings(&self) -> Settings {
        self.values().to_settings()
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
    use granary_engine::base::materials::{CupMaterial, GrainMaterial};
    use granary_engine::control::choices::CupShape;
    use granary_engine::control::choices::Shape;
    use granary_engine::control::params::{
        cup_shape_choice, grain_shape_choice, CUP_IDS, CUP_SHAPE_IDS, GRAIN_IDS, GRAIN_SHAPE_IDS, SPECS,
    };

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
            "flow_variation",
            "aim",
            "pour_target",
            "surface_material",
            "surface_level",
            "gesture",
            "gesture_amount",
            "shake_rate",
            "friction_level",
            "quality",
            "grain_shape",
            "statistics",
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
        for (i, s) in Shape::ALL.iter().enumerate() {
            assert_eq!(GRAIN_SHAPE_IDS[i + 1], s.id());
            assert_eq!(grain_shape_choice(i + 1), Some(*s));
        }
        assert_eq!(grain_shape_choice(0), None);
    }

    #[test]
    fn plugin_defaults_match_the_table() {
        let p = GranaryParams::default();
        assert_eq!(p.values(), ParamValues::default());
        assert_eq!(p.settings(), Settings::default());
    }

    #[test]
    fn each_host_parameter_is_read_as_its_row_of_the_table() {
        // `plain` maps each row to the struct field with the row's id: set every parameter
        // to a value of its own, then read it back through `values`
        let p = GranaryParams::default();
        let mut expected = ParamValues::default();
        for (i, s) in SPECS.iter().enumerate() {
            let ptr = p.ptr(s.id).unwrap();
            // a normalized value per parameter, distinct from its default and its neighbours'
            let normalized = 0.05 + 0.9 * (i as f32 + 0.5) / SPECS.len() as f32;
            unsafe { ptr._internal_set_normalized_value(normalized) };
            let plain = unsafe { ptr.modulated_plain_value() };
            let text = match s.kind {
                Kind::Enum { ids, .. } => ids[plain as usize].to_string(),
                Kind::Bool { .. } => (plain > 0.5).to_string(),
                _ => plain.to_string(),
            };
            expected.set_text(s.id, &text).unwrap();
        }
        assert_ne!(expected, ParamValues::default());
        assert_eq!(p.values(), expected);
        assert_eq!(p.settings(), expected.to_settings());
    }

    #[test]
    fn a_vst3_hosts_normalised_round_trip_restores_every_factory_preset_exactly() {
        // A VST3 host stores a parameter as the normalised value the plugin reports (f32
        // widened to f64) and restores it through that value; the plugin must then hold the
        // preset's value exactly, or the bounce differs from `granary render` of the preset.
        let presets = granary_engine::control::preset::factory();
        assert_eq!(presets.len(), 21);
        let p = GranaryParams::default();
        let mut off_before_snap = 0;
        for (stem, preset) in &presets {
            for s in &SPECS {
                let ptr = p.ptr(s.id).unwrap();
                let want = preset.values.get(s.id).unwrap();
                let normalized = unsafe { ptr.preview_normalized(want.as_f32()) };
                let stored = normalized as f64;
                unsafe { ptr._internal_set_normalized_value(stored as f32) };
                let held = unsafe { ptr.modulated_plain_value() };
                off_before_snap += usize::from(held != want.as_f32());
            }
            assert_eq!(&p.values(), &preset.values, "{stem}");
            assert_eq!(p.settings(), preset.values.to_settings(), "{stem}");
        }
        // the round trip alone leaves some values off (the test checks the snapping)
        assert!(off_before_snap > 0);
    }
}
