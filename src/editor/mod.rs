//! The editor (nice-plug-egui): every parameter, grouped the way a sound designer thinks.
//! The full editor (scene view, analyser, preset browser) is its own issue.

use crate::params::{EditorSize, GranaryParams};
use nice_plug::context::gui::GuiContext;
use nice_plug::editor::dpi::LogicalSize;
use nice_plug_egui::{
    create_egui_editor, widgets, EguiEditor, EguiEditorState, EguiNiceSettings, NiceEguiApp, RepaintNotifier,
};
use std::sync::Arc;

pub fn default_state(size: EditorSize) -> Arc<EguiEditorState> {
    EguiEditorState::from_size(LogicalSize::new(size.width as f64, size.height as f64), 1.0)
}

pub struct GranaryEditor {
    params: Arc<GranaryParams>,
    gui: Option<GuiContext>,
}

pub fn create(params: Arc<GranaryParams>, state: Arc<EguiEditorState>) -> Option<EguiEditor<GranaryEditor>> {
    create_egui_editor(
        state,
        RepaintNotifier::new(),
        EguiNiceSettings::new().with_tile("Granary"),
        GranaryEditor { params, gui: None },
    )
}

/// The groups of the editor: (title, parameter ids).
pub const GROUPS: [(&str, &[&str]); 5] = [
    ("Grain", &["grain_material", "grain_size", "density"]),
    ("Cup", &["cup_material", "cup_size", "fill", "auto_fill"]),
    ("Pour", &["pour_rate", "fall_height", "trigger_mode", "seed"]),
    ("Listener", &["listener_angle", "listener_distance", "stereo_width"]),
    ("Mix", &["grains_level", "cup_level", "output_gain"]),
];

impl NiceEguiApp for GranaryEditor {
    fn build(
        &mut self,
        _egui_ctx: egui::Context,
        gui: GuiContext,
        _frame: &mut nice_plug_egui::Frame,
    ) -> Result<(), nice_plug_egui::baseview::HandlerError> {
        self.gui = Some(gui);
        Ok(())
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut nice_plug_egui::Frame) {
        let Some(gui) = self.gui.clone() else { return };
        let setter = gui.param_setter();
        let p = &self.params;
        ui.heading("Granary");
        egui::Grid::new("groups")
            .num_columns(2)
            .spacing([24.0, 8.0])
            .show(ui, |ui| {
                for (title, ids) in GROUPS {
                    ui.strong(title);
                    ui.end_row();
                    for id in ids {
                        let name = crate::params::spec(id).map(|s| s.name).unwrap_or(id);
                        ui.label(name);
                        match *id {
                            "grain_material" => ui.add(widgets::ParamSlider::for_param(&p.grain_material, &setter)),
                            "grain_size" => ui.add(widgets::ParamSlider::for_param(&p.grain_size, &setter)),
                            "density" => ui.add(widgets::ParamSlider::for_param(&p.density, &setter)),
                            "cup_material" => ui.add(widgets::ParamSlider::for_param(&p.cup_material, &setter)),
                            "cup_size" => ui.add(widgets::ParamSlider::for_param(&p.cup_size, &setter)),
                            "fill" => ui.add(widgets::ParamSlider::for_param(&p.fill, &setter)),
                            "auto_fill" => ui.add(widgets::ParamSlider::for_param(&p.auto_fill, &setter)),
                            "pour_rate" => ui.add(widgets::ParamSlider::for_param(&p.pour_rate, &setter)),
                            "fall_height" => ui.add(widgets::ParamSlider::for_param(&p.fall_height, &setter)),
                            "trigger_mode" => ui.add(widgets::ParamSlider::for_param(&p.trigger_mode, &setter)),
                            "seed" => ui.add(widgets::ParamSlider::for_param(&p.seed, &setter)),
                            "listener_angle" => ui.add(widgets::ParamSlider::for_param(&p.listener_angle, &setter)),
                            "listener_distance" => {
                                ui.add(widgets::ParamSlider::for_param(&p.listener_distance, &setter))
                            }
                            "stereo_width" => ui.add(widgets::ParamSlider::for_param(&p.stereo_width, &setter)),
                            "grains_level" => ui.add(widgets::ParamSlider::for_param(&p.grains_level, &setter)),
                            "cup_level" => ui.add(widgets::ParamSlider::for_param(&p.cup_level, &setter)),
                            "output_gain" => ui.add(widgets::ParamSlider::for_param(&p.output_gain, &setter)),
                            _ => ui.label("?"),
                        };
                        ui.end_row();
                    }
                }
            });
    }

    fn resized(&mut self, new_size: nice_plug_egui::baseview::WindowSize) {
        // saved with the plugin state (the `editor_size` persistent field)
        if let Ok(mut size) = self.params.editor_size.lock() {
            size.width = new_size.logical.width.round().max(1.0) as u32;
            size.height = new_size.logical.height.round().max(1.0) as u32;
        }
    }

    fn editor_closed(&mut self) {
        self.gui = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_is_in_exactly_one_group() {
        let mut ids: Vec<&str> = GROUPS.iter().flat_map(|(_, ids)| ids.iter().copied()).collect();
        ids.sort();
        let mut all: Vec<&str> = crate::params::SPECS.iter().map(|s| s.id).collect();
        all.sort();
        assert_eq!(ids, all);
    }
}
