//! The editor (nice-plug-egui): a sound designer's window onto the pour.
//!
//! Left: the preset browser. Middle: every parameter, grouped (`panel`). Right: the live
//! scene (`scene`), the collisions-per-second readout, the spectrum analyser (`analyser`)
//! and the level meters (`meters`). Top: the Pour button (press and hold to audition
//! without a keyboard) and previous/next preset.
//!
//! Threads: the GUI reads telemetry (`crate::telemetry`) once per frame and never blocks
//! the audio thread; parameter changes go through the host (begin/set/end gestures).
//! The window is resizable (drag the corner); its size and zoom (Ctrl +/-) are saved with
//! the plugin state (`params.editor_size`).

pub mod analyser;
pub mod meters;
pub mod panel;
pub mod presets;
pub mod scene;

use crate::params::{EditorSize, GranaryParams};
use crate::telemetry::{collisions_per_second, Snapshot, TelemetryReader};
use granary_engine::params::SPECS;
use granary_engine::preset::Preset;
use nice_plug::context::gui::{GuiContext, ParamSetter};
use nice_plug::editor::dpi::LogicalSize;
use nice_plug::editor::ResizeHint;
use nice_plug_egui::resizable_window::ResizableWindow;
use nice_plug_egui::{create_egui_editor, EguiEditor, EguiEditorState, EguiNiceSettings, NiceEguiApp, RepaintNotifier};
use presets::{PresetBrowser, Status};
use std::sync::Arc;
use std::time::Duration;

pub use panel::GROUPS;

/// Frames per second the live views are drawn at while the editor is open.
pub const FRAME_RATE: f32 = 60.0;
/// Collisions per second are averaged over this long, s (a steady readout).
const RATE_WINDOW_S: f32 = 0.5;

/// The editor's window state for a saved size (size in logical points, zoom).
pub fn default_state(size: EditorSize) -> Arc<EguiEditorState> {
    let size = size.sanitized();
    EguiEditorState::from_size(LogicalSize::new(size.width as f64, size.height as f64), size.zoom)
}

pub fn create(
    params: Arc<GranaryParams>,
    state: Arc<EguiEditorState>,
    telemetry: TelemetryReader,
) -> Option<EguiEditor<GranaryEditor>> {
    let min = EditorSize::MIN;
    create_egui_editor(
        state.clone(),
        RepaintNotifier::new(),
        EguiNiceSettings::new()
            .with_tile("Granary")
            .with_resize_hint(
                ResizeHint::resizable().with_min_logical_size(LogicalSize::new(min.0 as f32, min.1 as f32)),
            )
            .with_repaint_poll_interval(Duration::from_secs_f32(1.0 / FRAME_RATE)),
        GranaryEditor::new(params, state, telemetry),
    )
}

pub struct GranaryEditor {
    params: Arc<GranaryParams>,
    state: Arc<EguiEditorState>,
    telemetry: TelemetryReader,
    gui: Option<GuiContext>,
    browser: PresetBrowser,
    save_name: String,
    save_tags: String,
    analyser: analyser::Analyser,
    meters: meters::Meters,
    flashes: meters::Flashes,
    samples: Vec<f32>,
    snapshot: Snapshot,
    /// Snapshots of the last `RATE_WINDOW_S`, for the collision rate: (time, snapshot).
    rate_history: std::collections::VecDeque<(f64, Snapshot)>,
    collisions_per_s: f32,
    grain_grain_share: f32,
    last_time: Option<f64>,
    opened_at: Option<f64>,
}

impl GranaryEditor {
    fn new(params: Arc<GranaryParams>, state: Arc<EguiEditorState>, telemetry: TelemetryReader) -> Self {
        GranaryEditor {
            params,
            state,
            telemetry,
            gui: None,
            browser: PresetBrowser::new(presets::user_dir()),
            save_name: String::new(),
            save_tags: String::new(),
            analyser: analyser::Analyser::new(),
            meters: meters::Meters::default(),
            flashes: meters::Flashes::default(),
            samples: Vec::with_capacity(crate::telemetry::SCOPE_CAPACITY),
            snapshot: Snapshot::default(),
            rate_history: Default::default(),
            collisions_per_s: 0.0,
            grain_grain_share: 0.0,
            last_time: None,
            opened_at: None,
        }
    }

    /// Reads the telemetry published since the last frame.
    fn read_telemetry(&mut self, now: f64) -> f32 {
        let dt = self.last_time.map(|t| (now - t) as f32).unwrap_or(0.0);
        self.last_time = Some(now);
        let snap = self.telemetry.snapshot();
        self.samples.clear();
        self.telemetry.drain_samples(&mut self.samples);
        self.analyser.push(&self.samples);
        self.meters.update(&snap, dt);
        self.flashes.update(&snap.cell_delta, dt);
        if snap.collisions < self.snapshot.collisions {
            self.rate_history.clear(); // the engine was reset
        }
        self.rate_history.push_back((now, snap));
        while self.rate_history.len() > 2 && now - self.rate_history[0].0 > RATE_WINDOW_S as f64 {
            self.rate_history.pop_front();
        }
        if let Some((_, first)) = self.rate_history.front() {
            self.collisions_per_s = collisions_per_second(first, &snap);
        }
        let gg: u64 = snap
            .cell_delta
            .iter()
            .enumerate()
            .filter(|(i, _)| meters::cell_kind(*i) == granary_engine::generator::CollisionKind::GrainGrain)
            .map(|(_, d)| d)
            .sum();
        let all: u64 = snap.cell_delta.iter().sum();
        if all > 0 {
            let share = gg as f32 / all as f32;
            self.grain_grain_share += 0.1 * (share - self.grain_grain_share);
        }
        self.snapshot = snap;
        dt
    }

    fn header(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new("Granary").heading().strong());
            ui.add_space(12.0);
            // press and hold; the Space bar does the same while no text field has the focus
            let pour = ui
                .add(
                    egui::Button::new(egui::RichText::new("  Pour  ").size(16.0).strong())
                        .min_size(egui::vec2(96.0, 30.0))
                        .selected(self.telemetry.pour_held())
                        .sense(egui::Sense::click_and_drag()),
                )
                .on_hover_text("Press and hold to pour (or hold the Space bar)");
            let space = ui.ctx().input(|i| i.key_down(egui::Key::Space)) && ui.ctx().memory(|m| m.focused().is_none());
            self.telemetry.set_pour_held(pour.is_pointer_button_down_on() || space);
            ui.add_space(16.0);
            if ui.button("< Prev").on_hover_text("Previous preset").clicked() {
                if let Some(p) = self.browser.step(-1).cloned() {
                    apply_preset(&self.params, setter, &p);
                }
            }
            if ui.button("Next >").on_hover_text("Next preset").clicked() {
                if let Some(p) = self.browser.step(1).cloned() {
                    apply_preset(&self.params, setter, &p);
                }
            }
            let name = self
                .browser
                .current()
                .map(|e| e.preset.name.clone())
                .unwrap_or_else(|| "(no preset loaded)".into());
            let name = if self.params_differ_from_current() {
                format!("{name} (edited)")
            } else {
                name
            };
            ui.label(egui::RichText::new(name).size(15.0));
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let zoom = ui.ctx().zoom_factor();
                if ui.button("+").on_hover_text("Larger (Ctrl +)").clicked() {
                    ui.ctx().set_zoom_factor((zoom + 0.25).min(3.0));
                }
                ui.label(format!("{:.0} %", 100.0 * zoom));
                if ui.button("-").on_hover_text("Smaller (Ctrl -)").clicked() {
                    ui.ctx().set_zoom_factor((zoom - 0.25).max(0.5));
                }
                ui.label("Zoom");
            });
        });
    }

    /// Whether the parameters differ from the selected preset (shown as "edited").
    fn params_differ_from_current(&self) -> bool {
        let Some(entry) = self.browser.current() else {
            return false;
        };
        let now = self.params.values();
        SPECS.iter().any(
            |s| match (presets::plain(&now, s.id), presets::plain(&entry.preset.values, s.id)) {
                (Some(a), Some(b)) => (a - b).abs() > 1e-4 * (1.0 + b.abs()),
                _ => false,
            },
        )
    }

    fn preset_column(&mut self, ui: &mut egui::Ui, setter: &ParamSetter) {
        ui.label(egui::RichText::new("Presets").strong().size(15.0));
        ui.add(
            egui::TextEdit::singleline(&mut self.browser.query)
                .hint_text("Search name or tag")
                .desired_width(f32::INFINITY),
        );
        let list_h = (ui.available_height() - 190.0).max(80.0);
        let shown = self.browser.filtered();
        let mut clicked = None;
        egui::ScrollArea::vertical()
            .id_salt("preset list")
            .max_height(list_h)
            .auto_shrink([false, false])
            .show(ui, |ui| {
                for i in shown {
                    let entry = &self.browser.entries()[i];
                    let user = matches!(entry.source, presets::Source::User(_));
                    let label = if user {
                        format!("{}  (yours)", entry.preset.name)
                    } else {
                        entry.preset.name.clone()
                    };
                    let selected = self.browser.current_index() == Some(i);
                    let mut tip = entry.preset.tags.join(", ");
                    if !entry.preset.description.is_empty() {
                        tip = format!("{}\n{tip}", entry.preset.description);
                    }
                    if ui.selectable_label(selected, label).on_hover_text(tip).clicked() {
                        clicked = Some(i);
                    }
                }
                for bad in self.browser.unreadable() {
                    ui.colored_label(ui.visuals().error_fg_color, format!("{}: {}", bad.file, bad.error));
                }
            });
        if let Some(i) = clicked {
            if let Some(p) = self.browser.select(i).cloned() {
                apply_preset(&self.params, setter, &p);
            }
        }
        ui.separator();
        ui.label(egui::RichText::new("Save as…").strong());
        egui::Grid::new("save as").num_columns(2).show(ui, |ui| {
            ui.label("Name");
            ui.add(egui::TextEdit::singleline(&mut self.save_name).desired_width(150.0));
            ui.end_row();
            ui.label("Tags");
            ui.add(
                egui::TextEdit::singleline(&mut self.save_tags)
                    .hint_text("comma, separated")
                    .desired_width(150.0),
            );
            ui.end_row();
        });
        ui.horizontal(|ui| {
            if ui.button("Save").clicked() {
                let values = self.params.values();
                let _ = self.browser.save_as(&self.save_name, &self.save_tags, &values);
            }
            if ui
                .button("Rescan")
                .on_hover_text("Read the preset folder again")
                .clicked()
            {
                self.browser.rescan();
            }
        });
        match &self.browser.status {
            Status::None => {}
            Status::Info(m) => {
                ui.label(egui::RichText::new(m).size(12.0));
            }
            Status::Error(m) => {
                ui.colored_label(ui.visuals().error_fg_color, m);
            }
        }
        if let Some(dir) = self.browser.user_dir() {
            ui.label(
                egui::RichText::new(format!("Folder: {}", dir.display()))
                    .size(12.0)
                    .color(ui.visuals().weak_text_color()),
            );
        }
    }

    fn live_column(&mut self, ui: &mut egui::Ui, dt: f32, now: f64) {
        let w = ui.available_width();
        let h = ui.available_height();
        let scene_h = (0.46 * h).max(180.0);
        let (rect, _) = ui.allocate_exact_size(egui::vec2(w, scene_h), egui::Sense::hover());
        let info = scene::SceneInfo {
            fall_height_m: self.params.fall_height.value() * 0.01,
            cup: granary_engine::cups::Cup::for_settings(&self.params.settings()),
            grain_colour: scene::grain_colour(self.params.grain_material.value().max(0) as usize),
            time_s: now - self.opened_at.unwrap_or(now),
        };
        scene::draw(ui, rect, &self.snapshot, &self.flashes, &info);
        ui.horizontal(|ui| {
            ui.set_max_width(w);
            ui.label(
                egui::RichText::new(format_rate(self.collisions_per_s))
                    .monospace()
                    .size(15.0)
                    .strong(),
            );
            ui.label("collisions/s");
        });
        ui.label(
            egui::RichText::new(format!(
                "grain–grain {:.0} %  ·  grain–cup {:.0} %  ·  flow {:.1} g/s",
                100.0 * self.grain_grain_share,
                100.0 * (1.0 - self.grain_grain_share),
                1e3 * self.snapshot.flow_kg_s
            ))
            .size(12.0),
        );
        let analyser_h = (ui.available_height() - 100.0).max(120.0);
        let (rect, _) = ui.allocate_exact_size(egui::vec2(w, analyser_h), egui::Sense::hover());
        let points = (rect.width() / 3.0).clamp(32.0, 400.0) as usize;
        let sample_rate = if self.snapshot.sample_rate > 0.0 {
            self.snapshot.sample_rate
        } else {
            48_000.0
        };
        let levels = self.analyser.update(sample_rate, points, dt).to_vec();
        analyser::draw(ui, rect, &levels);
        ui.add_space(6.0);
        self.meters.draw(ui, w);
    }
}

/// "12 345" style thousands for the collision rate.
pub fn format_rate(rate: f32) -> String {
    let n = if rate.is_finite() {
        rate.max(0.0).round() as u64
    } else {
        0
    };
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// Sends every value of `preset` to the host as one gesture per parameter, so loading a
/// preset is recorded like any other edit.
pub fn apply_preset(params: &GranaryParams, setter: &ParamSetter, preset: &Preset) {
    for s in SPECS.iter() {
        let (Some(ptr), Some(plain)) = (params.ptr(s.id), presets::plain(&preset.values, s.id)) else {
            continue;
        };
        // Safety: `ptr` points into `params`, which outlives this call.
        unsafe {
            let normalized = ptr.preview_normalized(plain);
            setter.raw_context.raw_begin_set_parameter(ptr);
            setter.raw_context.raw_set_parameter_normalized(ptr, normalized);
            setter.raw_context.raw_end_set_parameter(ptr);
        }
    }
}

impl GranaryEditor {
    /// One frame of the editor (what `ui` draws; separate so tests can run it headless).
    fn draw(&mut self, ui: &mut egui::Ui) {
        let Some(gui) = self.gui.clone() else { return };
        let setter = gui.param_setter();
        let ctx = ui.ctx().clone();
        // a steady frame rate for the live views
        ctx.request_repaint_after(Duration::from_secs_f32(1.0 / FRAME_RATE));
        let now = ctx.input(|i| i.time);
        self.opened_at.get_or_insert(now);
        let dt = self.read_telemetry(now);
        let min = EditorSize::MIN;
        ResizableWindow::new("granary editor")
            .min_size(egui::vec2(min.0 as f32, min.1 as f32))
            .show(ui, |ui| {
                egui::Frame::new().inner_margin(10.0).show(ui, |ui| {
                    self.header(ui, &setter);
                    ui.separator();
                    let h = ui.available_height();
                    let total_w = ui.available_width();
                    let preset_w = (0.23 * total_w).clamp(190.0, 300.0);
                    let params_w = (0.37 * total_w).clamp(300.0, 440.0);
                    ui.horizontal_top(|ui| {
                        ui.allocate_ui_with_layout(
                            egui::vec2(preset_w, h),
                            egui::Layout::top_down(egui::Align::Min),
                            |ui| {
                                ui.set_min_size(egui::vec2(preset_w, h));
                                ui.set_max_width(preset_w);
                                self.preset_column(ui, &setter);
                            },
                        );
                        ui.separator();
                        ui.allocate_ui_with_layout(
                            egui::vec2(params_w, h),
                            egui::Layout::top_down(egui::Align::Min),
                            |ui| {
                                ui.set_min_size(egui::vec2(params_w, h));
                                ui.set_max_width(params_w);
                                egui::ScrollArea::vertical().id_salt("parameters").show(ui, |ui| {
                                    panel::show(ui, &self.params, &setter);
                                });
                            },
                        );
                        ui.separator();
                        let live_w = ui.available_width();
                        ui.allocate_ui_with_layout(
                            egui::vec2(live_w, h),
                            egui::Layout::top_down(egui::Align::Min),
                            |ui| {
                                ui.set_min_size(egui::vec2(live_w, h));
                                ui.set_max_width(live_w);
                                self.live_column(ui, dt, now);
                            },
                        );
                    });
                });
            });
    }
}

impl NiceEguiApp for GranaryEditor {
    fn build(
        &mut self,
        egui_ctx: egui::Context,
        gui: GuiContext,
        _frame: &mut nice_plug_egui::Frame,
    ) -> Result<(), nice_plug_egui::baseview::HandlerError> {
        self.gui = Some(gui);
        self.browser.rescan();
        self.last_time = None;
        self.opened_at = None;
        // A state restored after the editor's window state was made (the host loads the
        // project after creating the plugin): open at the saved size.
        let saved = self.params.editor_size.lock().map(|s| s.sanitized()).ok();
        if let Some(saved) = saved {
            let now = self.state.logical_size();
            if (now.width - saved.width as f32).abs() > 1.0 || (now.height - saved.height as f32).abs() > 1.0 {
                let zoom = self.state.user_scale_factor().max(0.1);
                egui_ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(egui::vec2(
                    saved.width as f32 / zoom,
                    saved.height as f32 / zoom,
                )));
            }
        }
        Ok(())
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut nice_plug_egui::Frame) {
        self.draw(ui);
    }

    fn resized(&mut self, new_size: nice_plug_egui::baseview::WindowSize) {
        // saved with the plugin state (the `editor_size` persistent field)
        if let Ok(mut size) = self.params.editor_size.lock() {
            size.width = new_size.logical.width.round().max(1.0) as u32;
            size.height = new_size.logical.height.round().max(1.0) as u32;
        }
    }

    fn zoom_factor_changed(&mut self, zoom_factor: f32) {
        if let Ok(mut size) = self.params.editor_size.lock() {
            size.zoom = zoom_factor;
        }
    }

    fn editor_closed(&mut self) {
        // a window closed while the Pour button was held must not leave the pour running
        self.telemetry.set_pour_held(false);
        self.gui = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_readout_groups_thousands() {
        assert_eq!(format_rate(0.0), "0");
        assert_eq!(format_rate(999.4), "999");
        assert_eq!(format_rate(12_345.0), "12\u{2009}345");
        assert_eq!(format_rate(1_000_000.0), "1\u{2009}000\u{2009}000");
        assert_eq!(format_rate(f32::NAN), "0");
        assert_eq!(format_rate(-5.0), "0");
    }

    #[test]
    fn saved_window_sizes_are_made_safe() {
        let s = EditorSize {
            width: 10,
            height: 100_000,
            zoom: f32::NAN,
        }
        .sanitized();
        assert_eq!((s.width, s.height, s.zoom), (EditorSize::MIN.0, 8192, 1.0));
        assert_eq!(EditorSize::DEFAULT.sanitized(), EditorSize::DEFAULT);
        // a state saved before `zoom` existed still loads
        let old: EditorSize = serde_json::from_str(r#"{"width":900,"height":700}"#).unwrap();
        assert_eq!(old.zoom, 1.0);
    }

    /// A host that records what the editor sends it and applies it, as a DAW would.
    struct RecordingHost {
        params: Arc<GranaryParams>,
        log: std::sync::Mutex<Vec<(char, String, f32)>>,
    }

    impl RecordingHost {
        fn id(&self, ptr: nice_plug::prelude::ParamPtr) -> String {
            use nice_plug::prelude::Params;
            self.params
                .param_map()
                .into_iter()
                .find(|(_, p, _)| *p == ptr)
                .map(|(id, _, _)| id)
                .unwrap_or_default()
        }
    }

    impl nice_plug::context::gui::GuiContextInner for RecordingHost {
        fn plugin_api(&self) -> nice_plug::context::PluginApi {
            nice_plug::context::PluginApi::Clap
        }
        unsafe fn raw_begin_set_parameter(&self, param: nice_plug::prelude::ParamPtr) {
            let id = self.id(param);
            self.log.lock().unwrap().push(('b', id, 0.0));
        }
        unsafe fn raw_set_parameter_normalized(&self, param: nice_plug::prelude::ParamPtr, normalized: f32) {
            let id = self.id(param);
            self.log.lock().unwrap().push(('s', id, normalized));
            // Safety: the pointer is into `self.params`, alive for the test
            unsafe { param._internal_set_normalized_value(normalized) };
        }
        unsafe fn raw_end_set_parameter(&self, param: nice_plug::prelude::ParamPtr) {
            let id = self.id(param);
            self.log.lock().unwrap().push(('e', id, 0.0));
        }
        fn get_state(&self) -> nice_plug::plugin::PluginState {
            // the editor never asks for the state; an empty one if it ever does
            nice_plug::plugin::PluginState {
                version: String::new(),
                params: Default::default(),
                fields: Default::default(),
            }
        }
        fn set_state(&self, _: nice_plug::plugin::PluginState) {}
        fn request_restart(&self) {}
    }

    fn editor_with_host() -> (GranaryEditor, Arc<RecordingHost>, crate::telemetry::TelemetryWriter) {
        let params = Arc::new(GranaryParams::default());
        let host = Arc::new(RecordingHost {
            params: params.clone(),
            log: Default::default(),
        });
        let (writer, reader) = crate::telemetry::channel();
        let mut editor = GranaryEditor::new(params, default_state(EditorSize::DEFAULT), reader);
        editor.browser = PresetBrowser::new(None);
        editor.gui = Some(GuiContext::new(host.clone()));
        (editor, host, writer)
    }

    #[test]
    fn loading_a_preset_goes_through_the_host_as_gestures() {
        let (editor, host, _) = editor_with_host();
        let preset = granary_engine::preset::find("rice_plastic_bowl").unwrap();
        let gui = editor.gui.clone().unwrap();
        apply_preset(&editor.params, &gui.param_setter(), &preset);
        let log = host.log.lock().unwrap().clone();
        assert_eq!(log.len(), 3 * SPECS.len());
        for (chunk, s) in log.chunks(3).zip(SPECS.iter()) {
            let kinds: String = chunk.iter().map(|e| e.0).collect();
            assert_eq!(kinds, "bse", "{}", s.id);
            assert!(chunk.iter().all(|e| e.1 == s.id), "{chunk:?}");
        }
        // the host applied them: the plugin now holds the preset's values
        let now = editor.params.values();
        for s in SPECS.iter() {
            let (a, b) = (
                presets::plain(&now, s.id).unwrap(),
                presets::plain(&preset.values, s.id).unwrap(),
            );
            assert!((a - b).abs() <= 1e-4 * (1.0 + b.abs()), "{}: {a} vs {b}", s.id);
        }
    }

    #[test]
    fn the_whole_editor_draws_headless_and_reads_telemetry() {
        let (mut editor, host, mut writer) = editor_with_host();
        writer.set_sample_rate(48_000.0);
        let mut engine = granary_engine::Engine::new(editor.params.settings(), 48_000.0, 512);
        engine.note_on(1.0);
        let mut bufs: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 512]);
        let ctx = egui::Context::default();
        for frame in 0..30 {
            for _ in 0..4 {
                let [a, b, c, d, e, f] = &mut bufs;
                engine.process(granary_engine::Outputs {
                    main: [a, b],
                    grains: [c, d],
                    cup: [e, f],
                });
                writer.write_audio([a, b], [c, d], [e, f]);
                writer.write_engine(&engine);
            }
            let input = egui::RawInput {
                screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1060.0, 800.0))),
                time: Some(frame as f64 / 60.0),
                ..Default::default()
            };
            let mut out = ctx.run_ui(input, |ui| editor.draw(ui));
            assert!(!out.shapes.is_empty());
            out.textures_delta.clear(); // no renderer here to upload the font atlas to
        }
        assert!(editor.collisions_per_s > 0.0, "the readout shows the pour");
        assert!(editor.meters.state[0].peak_db > meters::METER_FLOOR_DB);
        assert!(editor.snapshot.fill > 0.0);
        // drawing alone never changes a parameter
        assert!(host.log.lock().unwrap().is_empty());
    }

    #[test]
    fn window_size_and_zoom_are_saved_with_the_plugin_state() {
        use nice_plug::prelude::Params;
        let p = GranaryParams::default();
        assert_eq!(*p.editor_size.lock().unwrap(), EditorSize::DEFAULT);
        let resized = EditorSize {
            width: 1300,
            height: 900,
            zoom: 1.5,
        };
        *p.editor_size.lock().unwrap() = resized;
        let saved = p.serialize_fields();
        assert!(saved.contains_key("editor_size"), "{saved:?}");
        let restored = GranaryParams::default();
        restored.deserialize_fields(&saved);
        assert_eq!(*restored.editor_size.lock().unwrap(), resized);
        // the editor opens at the saved size and zoom
        let state = default_state(*restored.editor_size.lock().unwrap());
        let size = state.logical_size();
        assert_eq!((size.width, size.height), (1300.0, 900.0));
        assert_eq!(state.user_scale_factor(), 1.5);
    }
}
