//! The editor (nice-plug-egui): every parameter, grouped the way a sound designer thinks.
//! The full editor (scene view, analyser, preset browser) is its own issue.

use crate::params::{EditorSize, GranaryParams};
use nice_plug::context::gui::{GuiContext, ParamSetter};
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
    ("Cup", &["cup_material", "cup_shape", "cup_size", "fill", "auto_fill"]),
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
        egui::ScrollArea::vertical().show(ui, |ui| {
            egui::Frame::new().inner_margin(12.0).show(ui, |ui| {
                ui.heading("Granary");
                ui.add_space(8.0);
                // two columns of groups: Grain, Cup, Pour | Listener, Mix
                ui.columns(2, |cols| {
                    for (col, groups) in cols.iter_mut().zip([&GROUPS[..3], &GROUPS[3..]]) {
                        for (title, ids) in groups {
                            col.strong(*title);
                            egui::Grid::new(*title)
                                .num_columns(2)
                                .spacing([12.0, 6.0])
                                .show(col, |ui| {
                                    for id in *ids {
                                        ui.label(crate::params::spec(id).map(|s| s.name).unwrap_or(id));
                                        param_widget(ui, p, &setter, id);
                                        ui.end_row();
                                    }
                                });
                            col.add_space(10.0);
                        }
                    }
                });
            });
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

/// The parameter's widget: the framework's slider, which shows the value with its unit,
/// resets on double-click, fine-adjusts with a modifier, takes typed values and sends the
/// host begin/set/end gestures.
fn param_widget(ui: &mut egui::Ui, p: &GranaryParams, setter: &ParamSetter, id: &str) {
    let slider = |ui: &mut egui::Ui, param: &dyn SliderParam| param.add_to(ui, setter);
    match id {
        "grain_material" => slider(ui, &p.grain_material),
        "grain_size" => slider(ui, &p.grain_size),
        "density" => slider(ui, &p.density),
        "cup_material" => slider(ui, &p.cup_material),
        "cup_shape" => slider(ui, &p.cup_shape),
        "cup_size" => slider(ui, &p.cup_size),
        "fill" => slider(ui, &p.fill),
        "auto_fill" => slider(ui, &p.auto_fill),
        "pour_rate" => slider(ui, &p.pour_rate),
        "fall_height" => slider(ui, &p.fall_height),
        "trigger_mode" => slider(ui, &p.trigger_mode),
        "seed" => slider(ui, &p.seed),
        "listener_angle" => slider(ui, &p.listener_angle),
        "listener_distance" => slider(ui, &p.listener_distance),
        "stereo_width" => slider(ui, &p.stereo_width),
        "grains_level" => slider(ui, &p.grains_level),
        "cup_level" => slider(ui, &p.cup_level),
        "output_gain" => slider(ui, &p.output_gain),
        _ => {
            ui.label("?");
        }
    }
}

/// Any parameter type the framework's slider takes.
trait SliderParam {
    fn add_to(&self, ui: &mut egui::Ui, setter: &ParamSetter);
}

impl<P: nice_plug::prelude::Param> SliderParam for P {
    fn add_to(&self, ui: &mut egui::Ui, setter: &ParamSetter) {
        ui.add(widgets::ParamSlider::for_param(self, setter));
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
