//! The parameter panel: every parameter in the group a sound designer looks for it in, each
//! with the framework's slider (`nice_plug_egui::widgets::ParamSlider`): the value with its
//! unit, double-click (or Ctrl+click) resets to the default, Shift+drag adjusts finely, a
//! click on the value lets you type one, and every change goes to the host as a
//! begin/set/end gesture, so it is recorded as automation.

use crate::params::GranaryParams;
use nice_plug::context::gui::ParamSetter;
use nice_plug::prelude::Param;
use nice_plug_egui::widgets::ParamSlider;

/// Declares the groups once: the `GROUPS` table (titles and ids, in display order) and the
/// widget of each id (the `GranaryParams` field of the same name). A new parameter goes
/// into its group's list here, and nowhere else.
macro_rules! groups {
    ($($title:literal => [$($field:ident),* $(,)?]),* $(,)?) => {
        /// The editor's groups: (title, parameter ids), in display order.
        pub const GROUPS: &[(&str, &[&str])] = &[$(($title, &[$(stringify!($field)),*])),*];

        /// The parameter behind a widget of the panel, by id.
        pub fn widget_param<'a>(p: &'a GranaryParams, id: &str) -> Option<&'a dyn PanelParam> {
            match id {
                $($(stringify!($field) => Some(&p.$field as &dyn PanelParam),)*)*
                _ => None,
            }
        }
    };
}

groups! {
    "Grain" => [grain_material, grain_shape, grain_size, density],
    "Cup" => [cup_material, cup_shape, cup_size, fill, auto_fill],
    "Pour" => [pour_rate, fall_height, flow_variation, aim, trigger_mode, seed, statistics],
    "Gesture" => [gesture, gesture_amount, shake_rate],
    "Surface" => [pour_target, surface_material],
    "Listener" => [listener_angle, listener_distance, stereo_width],
    "Mix" => [grains_level, cup_level, surface_level, friction_level, output_gain, quality],
}

/// What the panel needs of a parameter, whatever its type.
pub trait PanelParam {
    /// Draws the parameter's slider; changes go through `setter` (host gestures).
    fn slider(&self, ui: &mut egui::Ui, setter: &ParamSetter, width: f32);
    /// The current value as shown, with its unit.
    fn text(&self) -> String;
    /// Parses a typed value (with or without its unit) to a normalized value.
    fn parse(&self, text: &str) -> Option<f32>;
    /// The text of a normalized value, with its unit.
    fn text_of(&self, normalized: f32) -> String;
    fn default_normalized(&self) -> f32;
    fn ptr(&self) -> nice_plug::prelude::ParamPtr;
}

impl<P: Param> PanelParam for P {
    fn slider(&self, ui: &mut egui::Ui, setter: &ParamSetter, width: f32) {
        ui.add(ParamSlider::for_param(self, setter).with_width(width));
    }

    fn text(&self) -> String {
        self.normalized_value_to_string(self.unmodulated_normalized_value(), true)
    }

    fn parse(&self, text: &str) -> Option<f32> {
        self.string_to_normalized_value(text)
    }

    fn text_of(&self, normalized: f32) -> String {
        self.normalized_value_to_string(normalized, true)
    }

    fn default_normalized(&self) -> f32 {
        self.default_normalized_value()
    }

    fn ptr(&self) -> nice_plug::prelude::ParamPtr {
        self.as_ptr()
    }
}

/// Draws every group: a heading and a two-column grid (name, slider) each. The tooltip of
/// a name is the parameter's documentation.
pub fn show(ui: &mut egui::Ui, p: &GranaryParams, setter: &ParamSetter) {
    let label_w = 118.0;
    // room for the longest value text ("Glass beads 0.5 mm") and the scroll bar
    let slider_w = (ui.available_width() - label_w - 150.0).clamp(70.0, 260.0);
    for (title, ids) in GROUPS {
        ui.label(egui::RichText::new(*title).strong().size(15.0));
        egui::Grid::new(("group", *title))
            .num_columns(2)
            .spacing([10.0, 5.0])
            .min_col_width(label_w)
            .show(ui, |ui| {
                for id in *ids {
                    let spec = granary_engine::control::params::spec(id);
                    let name = spec.map(|s| s.name).unwrap_or(id);
                    let label = ui.label(name);
                    if let Some(s) = spec {
                        label.on_hover_text(s.doc);
                    }
                    match widget_param(p, id) {
                        Some(param) => param.slider(ui, setter, slider_w),
                        None => {
                            ui.colored_label(ui.visuals().error_fg_color, "no widget");
                        }
                    }
                    ui.end_row();
                }
            });
        ui.add_space(8.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use granary_engine::control::params::SPECS;

    #[test]
    fn every_parameter_is_in_exactly_one_group_and_has_a_widget() {
        let titles: Vec<&str> = GROUPS.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            titles,
            ["Grain", "Cup", "Pour", "Gesture", "Surface", "Listener", "Mix"]
        );
        let p = GranaryParams::default();
        let in_groups: Vec<&str> = GROUPS.iter().flat_map(|(_, ids)| ids.iter().copied()).collect();
        for s in SPECS.iter() {
            let n = in_groups.iter().filter(|id| **id == s.id).count();
            assert_eq!(n, 1, "`{}` is in {n} groups", s.id);
            let widget = widget_param(&p, s.id).unwrap_or_else(|| panic!("`{}` has no widget", s.id));
            assert!(
                widget.ptr() == p.ptr(s.id).unwrap(),
                "`{}`'s widget drives another parameter",
                s.id
            );
        }
        // and nothing in the groups that is not a parameter (every plugin parameter included)
        for id in &in_groups {
            assert!(
                granary_engine::control::params::spec(id).is_some(),
                "`{id}` is not a parameter"
            );
        }
        use nice_plug::prelude::Params;
        assert_eq!(p.param_map().len(), in_groups.len());
    }

    #[test]
    fn values_show_their_units() {
        let p = GranaryParams::default();
        let text = |id: &str| widget_param(&p, id).unwrap().text();
        assert_eq!(text("pour_rate"), "20.0 g/s");
        assert_eq!(text("fall_height"), "15.0 cm");
        assert_eq!(text("listener_angle"), "30.0 deg");
        assert_eq!(text("listener_distance"), "0.40 m");
        assert_eq!(text("output_gain"), "38.0 dB");
        assert_eq!(text("grain_size"), "1.00 x");
        assert_eq!(text("fill"), "0 %");
        assert_eq!(text("stereo_width"), "70 %");
        assert_eq!(text("grain_material"), "Sugar");
        assert_eq!(text("trigger_mode"), "MIDI");
        assert_eq!(text("gesture"), "Pour");
        assert_eq!(text("gesture_amount"), "50.0 %");
        assert_eq!(text("shake_rate"), "4.0 Hz");
        assert_eq!(text("friction_level"), "0.0 dB");
        // every parameter with a unit in the table shows it
        for s in SPECS.iter().filter(|s| !s.unit.is_empty()) {
            let t = text(s.id);
            assert!(t.ends_with(s.unit), "{}: {t:?} lacks {:?}", s.id, s.unit);
        }
    }

    #[test]
    fn cup_materials_are_named_as_materials() {
        use granary_engine::base::materials::CupMaterial;
        use granary_engine::control::choices::CupShape;
        let p = GranaryParams::default();
        let w = widget_param(&p, "cup_material").unwrap();
        let n = CupMaterial::ALL.len();
        let names: Vec<String> = (0..n).map(|k| w.text_of(k as f32 / (n - 1) as f32)).collect();
        assert_eq!(
            names,
            ["Ceramic", "Porcelain", "Glass", "Steel", "Aluminium", "Plastic", "Wood"]
        );
        for name in &names {
            for word in CupShape::ALL.iter().map(|s| s.name()).chain(["cup", "bowl", "mug"]) {
                assert!(
                    !name.to_lowercase().contains(&word.to_lowercase()),
                    "{name} names a shape"
                );
            }
        }
        // ids are unchanged
        assert_eq!(w.parse("plastic").map(|n| w.text_of(n)).as_deref(), Some("Plastic"));
    }

    #[test]
    fn the_pour_rate_reads_what_pours_and_spreads_over_the_slider() {
        use granary_engine::control::params::{spec, Plain};
        let p = GranaryParams::default();
        let w = widget_param(&p, "pour_rate").unwrap();
        let s = spec("pour_rate").unwrap();
        for k in 0..=1000 {
            let n = k as f32 / 1000.0;
            use nice_plug::prelude::Param;
            let plain = p.pour_rate.preview_plain(n);
            let Plain::Float(poured) = s.snap(Plain::Float(plain)) else {
                unreachable!()
            };
            let text = w.text_of(n);
            let shown: f32 = text.trim_end_matches(" g/s").parse().unwrap();
            // what pours (the value on the table's step) is what reads
            assert!((shown - poured).abs() <= 0.051, "{n}: {text} while {poured} g/s pours");
            assert!(poured == 0.0 || shown > 0.0, "{n}: {text} while {poured} g/s pours");
        }
        assert_eq!(w.text_of(p.pour_rate.preview_normalized(0.02)), "0.02 g/s");
        assert_eq!(w.text_of(p.pour_rate.preview_normalized(9.5)), "9.50 g/s");
        // a range a hand can use: 1 g/s past a tenth of the travel, the default near the middle
        let at = |g: f32| {
            use nice_plug::prelude::Param;
            p.pour_rate.preview_normalized(g)
        };
        assert!(at(0.1) > 0.05 && at(1.0) > 0.15, "{} {}", at(0.1), at(1.0));
        assert!((0.35..0.6).contains(&at(20.0)), "{}", at(20.0));
    }

    #[test]
    fn typed_values_parse_with_or_without_units() {
        let p = GranaryParams::default();
        let parse_plain = |id: &str, text: &str| {
            let w = widget_param(&p, id).unwrap();
            w.parse(text).map(|n| w.text_of(n))
        };
        assert_eq!(parse_plain("pour_rate", "33 g/s").as_deref(), Some("33.0 g/s"));
        assert_eq!(parse_plain("pour_rate", " 33 ").as_deref(), Some("33.0 g/s"));
        assert_eq!(parse_plain("output_gain", "-6 dB").as_deref(), Some("-6.0 dB"));
        assert_eq!(parse_plain("fill", "50 %").as_deref(), Some("50 %"));
        assert_eq!(parse_plain("fill", "25").as_deref(), Some("25 %"));
        assert_eq!(parse_plain("grain_material", "Rice").as_deref(), Some("Rice"));
        assert_eq!(
            parse_plain("grain_material", "coffee_beans").as_deref(),
            Some("Coffee beans")
        );
        assert_eq!(parse_plain("trigger_mode", "continuous").as_deref(), Some("Continuous"));
        assert_eq!(parse_plain("gesture", "stir").as_deref(), Some("Stir"));
        assert_eq!(parse_plain("gesture", "Tilt").as_deref(), Some("Tilt"));
        assert_eq!(parse_plain("gesture_amount", "75 %").as_deref(), Some("75.0 %"));
        assert_eq!(parse_plain("shake_rate", "6 Hz").as_deref(), Some("6.0 Hz"));
        assert_eq!(parse_plain("seed", "42").as_deref(), Some("42"));
        // out of range values clamp to the range; nonsense is refused
        assert_eq!(parse_plain("pour_rate", "5000").as_deref(), Some("200.0 g/s"));
        assert_eq!(parse_plain("pour_rate", "fast"), None);
        assert_eq!(parse_plain("grain_material", "marbles"), None);
    }

    #[test]
    fn every_value_text_parses_back_to_itself() {
        let p = GranaryParams::default();
        for s in SPECS.iter() {
            let w = widget_param(&p, s.id).unwrap();
            for k in 0..=20 {
                let n = k as f32 / 20.0;
                let text = w.text_of(n);
                let back = w
                    .parse(&text)
                    .unwrap_or_else(|| panic!("{}: {text:?} does not parse", s.id));
                assert_eq!(w.text_of(back), text, "{}", s.id);
            }
            assert_eq!(w.text_of(w.default_normalized()), w.text(), "{}", s.id);
        }
    }
}
