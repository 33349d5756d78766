//! The editor (nice-plug-egui): a sound designer's window onto the pour.
//!
//! Left: the preset browser. Middle: every parameter, grouped (`panel`). Right: the live
//! scene (`scene`), the collisions-per-second readout, the spectrum analyser (`analyser`)
//! and the level meters (`meters`). Top: the Pour button (press and hold to audition
//! without a keyboard) and previous/next preset.
//!
//! Threads: the GUI reads telemetry (`crate::telemetry`) once per frame and never blocks
//! the audio thread; parameter changes go through the host (begin/set/end gestures).
//! The window is resizable (drag the corner); its size and zoom (Ctrl + / Ctrl - / Ctrl 0)
//! are saved with the plugin state (`params.editor_size`). Zooming never makes the window
//! larger than the screen. Only the primary mouse button acts (`PrimaryButtonOnly`).

pub mod analyser;
pub mod meters;
pub mod panel;
pub mod presets;
pub mod scene;

use crate::params::{EditorSize, GranaryParams};
use crate::telemetry::{collisions_per_second, Snapshot, TelemetryReader};
use granary_engine::control::params::SPECS;
use granary_engine::control::preset::Preset;
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

/// Zoom range and step of the zoom buttons and keys.
pub const ZOOM_MIN: f32 = 0.5;
pub const ZOOM_MAX: f32 = 3.0;
pub const ZOOM_STEP: f32 = 0.25;
/// Share of the screen the window may take (window decorations, panels).
const SCREEN_SHARE: [f32; 2] = [0.96, 0.9];

/// The largest zoom at which the editor's minimum size fits on a screen of `screen`
/// pixels with `pixels_per_point` system scale.
pub fn max_zoom(screen: Option<[f32; 2]>, pixels_per_point: f32) -> f32 {
    let Some([w, h]) = screen else { return ZOOM_MAX };
    let min = EditorSize::MIN;
    let ppp = pixels_per_point.max(0.1);
    let fit = (SCREEN_SHARE[0] * w / (min.0 as f32 * ppp)).min(SCREEN_SHARE[1] * h / (min.1 as f32 * ppp));
    fit.clamp(ZOOM_MIN, ZOOM_MAX)
}

/// The window size, in points at `zoom`, that keeps `size` (points) on a screen of `screen`
/// pixels, never below the editor's minimum.
pub fn fit_to_screen(size: egui::Vec2, zoom: f32, screen: Option<[f32; 2]>, pixels_per_point: f32) -> egui::Vec2 {
    let Some([w, h]) = screen else { return size };
    let min = EditorSize::MIN;
    let px = zoom.max(0.1) * pixels_per_point.max(0.1);
    egui::vec2(
        size.x.min(SCREEN_SHARE[0] * w / px).max(min.0 as f32),
        size.y.min(SCREEN_SHARE[1] * h / px).max(min.1 as f32),
    )
}

/// The screen's size in pixels, if the windowing system tells it (the X screen on Linux).
fn screen_size() -> Option<[f32; 2]> {
    #[cfg(target_os = "linux")]
    {
        let (conn, screen) = x11rb::connect(None).ok()?;
        let s = x11rb::connection::Connection::setup(&conn).roots.get(screen)?;
        Some([s.width_in_pixels as f32, s.height_in_pixels as f32])
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// An egui plugin that drops every mouse button but the primary one before the widgets see
/// it: a right or middle click on a slider never changes its value (the framework's
/// `ParamSlider` treats any button as a drag).
pub struct PrimaryButtonOnly;

impl egui::Plugin for PrimaryButtonOnly {
    fn debug_name(&self) -> &'static str {
        "granary: primary button only"
    }

    fn input_hook(&mut self, _ctx: &egui::Context, input: &mut egui::RawInput) {
        input.events.retain(
            |e| !matches!(e, egui::Event::PointerButton { button, .. } if *button != egui::PointerButton::Primary),
        );
    }
}

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
    /// Smoothed shares of the collisions by kind: grain–grain, grain–cup, grain–surface.
    kind_share: [f32; 3],
    last_time: Option<f64>,
    opened_at: Option<f64>,
    /// The fill a loaded preset starts its pour at, shown until the next pour starts (the
    /// engine keeps the last pour's fill until then).
    loaded_fill: Option<f32>,
    /// The screen's size in pixels (read when the window opens).
    screen: Option<[f32; 2]>,
    /// The zoom of the last pass (`None`: the window just opened).
    last_zoom: Option<f32>,
    /// The columns of the last frame (presets, parameters, live view).
    columns: [egui::Rect; 3],
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
            kind_share: [0.0; 3],
            last_time: None,
            opened_at: None,
            loaded_fill: None,
            screen: None,
            last_zoom: None,
            columns: [egui::Rect::NOTHING; 3],
        }
    }

    /// Sends a preset's values to the host; the scene shows its fill until the next pour.
    fn load(&mut self, setter: &ParamSetter, preset: &Preset) {
        apply_preset(&self.params, setter, preset);
        self.loaded_fill = presets::plain(&preset.values, "fill");
    }

    /// Sets the zoom, within `ZOOM_MIN` and the largest that fits the screen, and keeps the
    /// window on the screen.
    fn set_zoom(&self, ctx: &egui::Context, zoom: f32) {
        let ppp = ctx.native_pixels_per_point().unwrap_or(1.0);
        let zoom = zoom.clamp(ZOOM_MIN, max_zoom(self.screen, ppp));
        let old = ctx.zoom_factor();
        if (zoom - old).abs() < 1e-3 {
            return;
        }
        // takes effect in the next pass, where `keep_on_screen` sizes the window
        ctx.set_zoom_factor(zoom);
    }

    /// When the window opens, and in the pass where a new zoom takes effect (where the
    /// window library grows the window by the zoom's ratio; a size sent in the same pass
    /// replaces that): a window size that stays on the screen.
    fn keep_on_screen(&mut self, ctx: &egui::Context) {
        let zoom = ctx.zoom_factor();
        if self.last_zoom == Some(zoom) {
            return;
        }
        let ppp = ctx.native_pixels_per_point().unwrap_or(1.0);
        // egui has scaled the window's size in points by the zoom's ratio already (the same
        // pixels); the window library will grow the pixels by the ratio: the old size in
        // points, unless that leaves the screen
        let size = ctx.content_rect().size() * zoom / self.last_zoom.unwrap_or(zoom);
        let fitted = fit_to_screen(size, zoom, self.screen, ppp);
        if self.last_zoom.is_some() || (fitted - size).length() > 1.0 {
            ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(fitted));
        }
        self.last_zoom = Some(zoom);
    }

    /// Ctrl + (or Ctrl =), Ctrl - and Ctrl 0.
    fn zoom_keys(&self, ctx: &egui::Context) {
        let zoom = ctx.zoom_factor();
        let (plus, minus, reset) = ctx.input_mut(|i| {
            let c = egui::Modifiers::COMMAND;
            let plus = i.consume_key(c, egui::Key::Plus)
                || i.consume_key(c, egui::Key::Equals)
                || i.consume_key(c | egui::Modifiers::SHIFT, egui::Key::Plus)
                || i.consume_key(c | egui::Modifiers::SHIFT, egui::Key::Equals);
            let minus = i.consume_key(c, egui::Key::Minus);
            let reset = i.consume_key(c, egui::Key::Num0);
            (plus, minus, reset)
        });
        if plus {
            self.set_zoom(ctx, zoom + ZOOM_STEP);
        } else if minus {
            self.set_zoom(ctx, zoom - ZOOM_STEP);
        } else if reset {
            self.set_zoom(ctx, 1.0);
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
        // a loaded preset's fill shows until a pour starts (or the fill is edited)
        let fill_edited = self
            .loaded_fill
            .is_some_and(|f| (f - self.params.fill.value()).abs() > 1e-3);
        if snap.flow_kg_s > 0.0 || snap.collisions > self.snapshot.collisions || fill_edited {
            self.loaded_fill = None;
        }
        self.rate_history.push_back((now, snap));
        while self.rate_history.len() > 2 && now - self.rate_history[0].0 > RATE_WINDOW_S as f64 {
            self.rate_history.pop_front();
        }
        if let Some((_, first)) = self.rate_history.front() {
            self.collisions_per_s = collisions_per_second(first, &snap);
        }
        let mut by_kind = [0u64; 3];
        for (i, &d) in snap.cell_delta.iter().enumerate() {
            by_kind[kind_index(meters::cell_kind(i))] += d;
        }
        let all: u64 = by_kind.iter().sum();
        if all > 0 {
            for (share, &n) in self.kind_share.iter_mut().zip(&by_kind) {
                *share += 0.1 * (n as f32 / all as f32 - *share);
            }
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
                    self.load(setter, &p);
                }
            }
            if ui.button("Next >").on_hover_text("Next preset").clicked() {
                if let Some(p) = self.browser.step(1).cloned() {
                    self.load(setter, &p);
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
                    self.set_zoom(ui.ctx(), zoom + ZOOM_STEP);
                }
                ui.label(format!("{:.0} %", 100.0 * zoom))
                    .on_hover_text("Ctrl 0: 100 %");
                if ui.button("-").on_hover_text("Smaller (Ctrl -)").clicked() {
                    self.set_zoom(ui.ctx(), zoom - ZOOM_STEP);
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
        !presets::same_values(&self.params.values(), &entry.preset.values)
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
                self.load(setter, &p);
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
                egui::RichText::new(format!("Folder: {}", shown_path(dir, dirs::home_dir().as_deref())))
                    .size(12.0)
                    .color(ui.visuals().weak_text_color()),
            );
        }
    }

    /// What the scene shows: the snapshot, with a loaded preset's fill until its pour
    /// starts, and where the parameters pour (into the cup or onto the surface), the pile
    /// as the engine will build it from the fill until the engine has rendered that.
    fn scene_snapshot(&self, cup: &granary_engine::derived::cups::Cup) -> Snapshot {
        let mut snap = self.snapshot;
        let settings = self.params.settings();
        let open = settings.pour_target == granary_engine::PourTarget::Surface;
        if let Some(fill) = self.loaded_fill {
            snap.fill = fill;
        }
        if snap.samples == 0 {
            // no audio yet: the gesture the parameters choose
            snap.gesture.gesture = settings.gesture;
        }
        if self.loaded_fill.is_some() || snap.open != open {
            snap.open = open;
            (snap.pile_height_m, snap.pile_radius_m) = if open {
                scene::heap_at(snap.fill, cup, repose_tan(&settings))
            } else {
                let pile = snap.fill * cup.depth;
                (pile, cup.radius_at(pile))
            };
            if open {
                snap.overflow = 0.0;
            }
        }
        snap
    }

    /// The collision mix readout; dashes when nothing collides.
    fn mix_readout(&self) -> String {
        let flow = 1e3 * self.snapshot.flow_kg_s;
        if self.collisions_per_s < 0.5 {
            format!("grain–grain – · grain–cup – · grain–surface – · flow {flow:.1} g/s")
        } else {
            let [gg, gc, gs] = self.kind_share.map(|x| 100.0 * x);
            format!("grain–grain {gg:.0} % · grain–cup {gc:.0} % · grain–surface {gs:.0} % · flow {flow:.1} g/s")
        }
    }

    fn live_column(&mut self, ui: &mut egui::Ui, dt: f32, now: f64) {
        let w = ui.available_width();
        let h = ui.available_height();
        // the scene takes what the readouts, the smallest analyser and the meters leave
        let below = 48.0 + 64.0 + meters::Meters::height(ui, w) + 6.0;
        let scene_h = (0.42 * h).min(h - below).max(160.0);
        let (rect, _) = ui.allocate_exact_size(egui::vec2(w, scene_h), egui::Sense::hover());
        let settings = self.params.settings();
        let cup = granary_engine::derived::cups::Cup::for_settings(&settings);
        let snap = self.scene_snapshot(&cup);
        let info = scene::SceneInfo {
            fall_height_m: self.params.fall_height.value() * 0.01,
            cup,
            grain_colour: scene::grain_colour(self.params.grain_material.value().max(0) as usize),
            cup_material: settings.cup_material,
            surface_material: settings.surface_material,
            repose_tan: repose_tan(&settings),
            time_s: now - self.opened_at.unwrap_or(now),
        };
        scene::draw(ui, rect, &snap, &self.flashes, &info);
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
        ui.add(egui::Label::new(egui::RichText::new(self.mix_readout()).size(12.0)).wrap());
        let meters_h = meters::Meters::height(ui, w) + 6.0;
        let analyser_h = (ui.available_height() - meters_h).max(64.0);
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

/// Tangent of the grains' angle of repose (the slope of a heap on the surface).
fn repose_tan(settings: &granary_engine::Settings) -> f32 {
    settings.grain_material.data().repose_deg.to_radians().tan()
}

/// The mix readout's slot for a collision kind.
fn kind_index(kind: granary_engine::base::window::CollisionKind) -> usize {
    use granary_engine::base::window::CollisionKind;
    match kind {
        CollisionKind::GrainGrain => 0,
        CollisionKind::GrainCup => 1,
        CollisionKind::GrainSurface => 2,
    }
}

/// `path` as the editor shows it: under the user's home as `~/...`, as a shell writes it.
fn shown_path(path: &std::path::Path, home: Option<&std::path::Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

/// Space between two columns (a separator line in the middle), points.
const COLUMN_GAP: f32 = 13.0;

/// The three columns (presets, parameters, live view) of the area below the header: fixed
/// shares of its width, so no column moves with what another draws.
pub fn columns(area: egui::Rect) -> [egui::Rect; 3] {
    let w = area.width();
    let preset_w = (0.23 * w).clamp(170.0, 300.0);
    let params_w = (0.37 * w).clamp(300.0, 440.0);
    let x1 = area.left() + preset_w + COLUMN_GAP;
    let x2 = x1 + params_w + COLUMN_GAP;
    let col = |l: f32, r: f32| egui::Rect::from_x_y_ranges(l..=r.max(l), area.y_range());
    [
        col(area.left(), area.left() + preset_w),
        col(x1, x1 + params_w),
        col(x2, area.right()),
    ]
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
        self.keep_on_screen(&ctx);
        self.zoom_keys(&ctx);
        let min = EditorSize::MIN;
        ResizableWindow::new("granary editor")
            .min_size(egui::vec2(min.0 as f32, min.1 as f32))
            .show(ui, |ui| {
                egui::Frame::new().inner_margin(10.0).show(ui, |ui| {
                    self.header(ui, &setter);
                    ui.separator();
                    // three columns at fixed places: what one draws never moves another
                    let area = ui.available_rect_before_wrap();
                    self.columns = columns(area);
                    let sep = ui.visuals().widgets.noninteractive.bg_stroke;
                    for c in &self.columns[1..] {
                        let x = c.left() - 0.5 * COLUMN_GAP;
                        ui.painter().vline(x, area.y_range(), sep);
                    }
                    let [presets_rect, params_rect, live_rect] = self.columns;
                    let column = |r: egui::Rect| {
                        egui::UiBuilder::new()
                            .max_rect(r)
                            .layout(egui::Layout::top_down(egui::Align::Min))
                    };
                    ui.scope_builder(column(presets_rect), |ui| {
                        ui.set_clip_rect(presets_rect.intersect(ui.clip_rect()));
                        self.preset_column(ui, &setter);
                    });
                    ui.scope_builder(column(params_rect), |ui| {
                        ui.set_clip_rect(params_rect.intersect(ui.clip_rect()));
                        egui::ScrollArea::vertical()
                            .id_salt("parameters")
                            .auto_shrink([false, false])
                            .show(ui, |ui| {
                                panel::show(ui, &self.params, &setter);
                            });
                    });
                    ui.scope_builder(column(live_rect), |ui| {
                        ui.set_clip_rect(live_rect.intersect(ui.clip_rect()));
                        self.live_column(ui, dt, now);
                    });
                    ui.allocate_rect(area, egui::Sense::hover());
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
        self.browser.select_matching(&self.params.values());
        self.last_time = None;
        self.opened_at = None;
        self.last_zoom = None;
        self.screen = screen_size();
        // zoom keys are ours (`zoom_keys`: within the screen); other mouse buttons do nothing
        egui_ctx.options_mut(|o| o.zoom_with_keyboard = false);
        egui_ctx.add_plugin(PrimaryButtonOnly);
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
    fn the_folder_is_shown_as_a_shell_writes_it() {
        use std::path::Path;
        let home = Path::new("/home/ana");
        let shown = |p: &str| shown_path(Path::new(p), Some(home));
        assert_eq!(
            shown("/home/ana/.local/share/granary/presets"),
            "~/.local/share/granary/presets"
        );
        assert_eq!(shown("/home/anabel/presets"), "/home/anabel/presets");
        assert_eq!(shown("/tmp/x"), "/tmp/x");
        assert_eq!(shown_path(Path::new("/tmp/x"), None), "/tmp/x");
    }

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
        let preset = granary_engine::control::preset::find("rice_plastic_bowl").unwrap();
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

    /// Four blocks of `engine` into the telemetry, as the audio thread sends them.
    fn pump(
        engine: &mut granary_engine::Engine,
        writer: &mut crate::telemetry::TelemetryWriter,
        bufs: &mut [Vec<f32>; 10],
    ) {
        for _ in 0..4 {
            let [a, b, c, d, e, f, g, h, i, j] = bufs;
            engine.process(granary_engine::Outputs {
                main: [a, b],
                grains: [c, d],
                cup: [e, f],
                surface: Some([g, h]),
                friction: Some([i, j]),
            });
            writer.write_audio([a, b], [c, d], [e, f], [g, h], [i, j]);
            writer.write_engine(engine);
        }
    }

    #[test]
    fn the_whole_editor_draws_headless_and_reads_telemetry() {
        let (mut editor, host, mut writer) = editor_with_host();
        writer.set_sample_rate(48_000.0);
        let mut engine = granary_engine::Engine::new(editor.params.settings(), 48_000.0, 512);
        engine.note_on(1.0, 60);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 512]);
        let ctx = egui::Context::default();
        for frame in 0..30 {
            pump(&mut engine, &mut writer, &mut bufs);
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

    /// One headless frame of `editor` at `size` points, with `events`.
    fn frame(
        ctx: &egui::Context,
        editor: &mut GranaryEditor,
        size: egui::Vec2,
        time: f64,
        events: Vec<egui::Event>,
    ) -> egui::FullOutput {
        let input = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size)),
            time: Some(time),
            events,
            ..Default::default()
        };
        let mut out = ctx.run_ui(input, |ui| editor.draw(ui));
        out.textures_delta.clear();
        out
    }

    /// The context as `build` sets it up.
    fn context() -> egui::Context {
        let ctx = egui::Context::default();
        ctx.options_mut(|o| o.zoom_with_keyboard = false);
        ctx.add_plugin(PrimaryButtonOnly);
        ctx
    }

    /// Every text drawn: (text, its rectangle, the clip rectangle it was drawn in).
    fn texts(out: &egui::FullOutput) -> Vec<(String, egui::Rect, egui::Rect)> {
        fn walk(shape: &egui::Shape, clip: egui::Rect, found: &mut Vec<(String, egui::Rect, egui::Rect)>) {
            match shape {
                egui::Shape::Text(t) => found.push((t.galley.text().to_string(), t.visual_bounding_rect(), clip)),
                egui::Shape::Vec(v) => v.iter().for_each(|s| walk(s, clip, found)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        for c in &out.shapes {
            walk(&c.shape, c.clip_rect, &mut found);
        }
        found
    }

    fn set(editor: &GranaryEditor, id: &str, plain: f32) {
        let ptr = editor.params.ptr(id).unwrap();
        // Safety: the pointer is into `editor.params`
        unsafe { ptr._internal_set_normalized_value(ptr.preview_normalized(plain)) };
    }

    fn pointer_clicks(button: egui::PointerButton, at: egui::Pos2) -> Vec<Vec<egui::Event>> {
        let press = |pressed| egui::Event::PointerButton {
            pos: at,
            button,
            pressed,
            modifiers: Default::default(),
        };
        vec![
            vec![egui::Event::PointerMoved(at)],
            vec![press(true)],
            vec![egui::Event::PointerMoved(at + egui::vec2(7.0, 0.0))],
            vec![press(false)],
        ]
    }

    /// Clicks with `button` over the whole parameter column; returns the host's log.
    fn click_over_parameters(button: egui::PointerButton) -> Vec<(char, String, f32)> {
        let (mut editor, host, _) = editor_with_host();
        let ctx = context();
        let size = egui::vec2(1060.0, 800.0);
        let mut t = 0.0;
        frame(&ctx, &mut editor, size, t, vec![]);
        let params = editor.columns[1];
        for y in (0..40).map(|k| params.top() + 8.0 + 14.0 * k as f32) {
            for x in [0.55, 0.75] {
                let at = egui::pos2(params.left() + x * params.width(), y);
                for events in pointer_clicks(button, at) {
                    t += 0.05;
                    frame(&ctx, &mut editor, size, t, events);
                }
            }
        }
        let log = host.log.lock().unwrap().clone();
        log
    }

    #[test]
    fn only_the_primary_button_changes_a_parameter() {
        // the control: left clicks over the sliders set values
        assert!(!click_over_parameters(egui::PointerButton::Primary).is_empty());
        for button in [egui::PointerButton::Secondary, egui::PointerButton::Middle] {
            let log = click_over_parameters(button);
            assert!(log.is_empty(), "{button:?} changed {log:?}");
        }
    }

    fn key(key: egui::Key) -> egui::Event {
        egui::Event::Key {
            key,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: egui::Modifiers::COMMAND,
        }
    }

    #[test]
    fn ctrl_plus_minus_and_zero_zoom_within_the_screen() {
        let (mut editor, _, _) = editor_with_host();
        let ctx = context();
        let size = egui::vec2(1060.0, 800.0);
        frame(&ctx, &mut editor, size, 0.0, vec![]);
        let mut t = 0.0;
        // a key, then a pass where the new zoom takes effect
        let mut press = |editor: &mut GranaryEditor, k: egui::Key| {
            t += 0.1;
            frame(&ctx, editor, size, t, vec![key(k)]);
            frame(&ctx, editor, size, t + 0.05, vec![]);
            ctx.zoom_factor()
        };
        assert_eq!(press(&mut editor, egui::Key::Plus), 1.0 + ZOOM_STEP);
        press(&mut editor, egui::Key::Minus);
        assert_eq!(press(&mut editor, egui::Key::Minus), 1.0 - ZOOM_STEP);
        press(&mut editor, egui::Key::Equals);
        assert_eq!(press(&mut editor, egui::Key::Equals), 1.0 + ZOOM_STEP);
        assert_eq!(press(&mut editor, egui::Key::Num0), 1.0);
        // on a large screen the window grows by the zoom's ratio: the same size in points
        frame(&ctx, &mut editor, size, 5.0, vec![key(egui::Key::Plus)]);
        let out = frame(&ctx, &mut editor, size, 5.1, vec![]);
        let asked: Vec<_> = out.viewport_output[&egui::ViewportId::ROOT]
            .commands
            .iter()
            .filter_map(|c| match c {
                egui::ViewportCommand::InnerSize(v) => Some(*v),
                _ => None,
            })
            .collect();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!((asked[0] - size).length() < 0.5, "{asked:?}");
        frame(&ctx, &mut editor, size, 5.2, vec![key(egui::Key::Num0)]);
        frame(&ctx, &mut editor, size, 5.3, vec![]);
        // a 1000-pixel screen: zooming in stops where the minimum size fits, and every size
        // the editor asks for stays on the screen
        editor.screen = Some([1600.0, 1000.0]);
        let mut asked = Vec::new();
        for k in 0..13 {
            let events = if k < 12 { vec![key(egui::Key::Plus)] } else { vec![] };
            let out = frame(&ctx, &mut editor, size, 10.0 + k as f64 * 0.1, events);
            for c in &out.viewport_output[&egui::ViewportId::ROOT].commands {
                if let egui::ViewportCommand::InnerSize(v) = c {
                    asked.push(*v * ctx.zoom_factor());
                }
            }
        }
        let zoom = ctx.zoom_factor();
        assert!(zoom > 1.25 && zoom <= max_zoom(Some([1600.0, 1000.0]), 1.0), "{zoom}");
        assert!(!asked.is_empty());
        for px in asked {
            assert!(px.x <= 1600.0 && px.y <= 1000.0, "{px:?}");
        }
    }

    #[test]
    fn zoom_limits_fit_the_screen() {
        assert_eq!(max_zoom(None, 1.0), ZOOM_MAX);
        // the minimum size (760 x 560) on a 1000-pixel-high screen
        let z = max_zoom(Some([1920.0, 1000.0]), 1.0);
        assert!(z * 560.0 <= 1000.0 && z > 1.5, "{z}");
        assert_eq!(max_zoom(Some([800.0, 600.0]), 2.0), ZOOM_MIN);
        let fitted = fit_to_screen(egui::vec2(1060.0, 800.0), 1.5, Some([1920.0, 1000.0]), 1.0);
        assert!(fitted.y * 1.5 <= 1000.0 && fitted.x == 1060.0, "{fitted:?}");
        let tiny = fit_to_screen(egui::vec2(1060.0, 800.0), 3.0, Some([800.0, 600.0]), 1.0);
        assert_eq!(tiny, egui::vec2(760.0, 560.0));
    }

    #[test]
    fn readouts_are_never_stale() {
        let (mut editor, _, mut writer) = editor_with_host();
        let ctx = context();
        let size = egui::vec2(1060.0, 800.0);
        // before any collision: no mix to show
        frame(&ctx, &mut editor, size, 0.0, vec![]);
        assert!(
            editor.mix_readout().contains("grain–grain –"),
            "{}",
            editor.mix_readout()
        );
        assert!(!editor.mix_readout().contains('%'));
        // a pour with auto fill fills the cup
        set(&editor, "auto_fill", 1.0);
        set(&editor, "pour_rate", 150.0);
        let mut engine = granary_engine::Engine::new(editor.params.settings(), 48_000.0, 512);
        writer.set_sample_rate(48_000.0);
        engine.note_on(1.0, 60);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 512]);
        let mut run = |engine: &mut granary_engine::Engine, blocks: usize| {
            for _ in 0..blocks {
                let [a, b, c, d, e, f, g, h, i, j] = &mut bufs;
                engine.process(granary_engine::Outputs {
                    main: [a, b],
                    grains: [c, d],
                    cup: [e, f],
                    surface: Some([g, h]),
                    friction: Some([i, j]),
                });
                writer.write_audio([a, b], [c, d], [e, f], [g, h], [i, j]);
                writer.write_engine(engine);
            }
        };
        for k in 0..40 {
            run(&mut engine, 20);
            frame(&ctx, &mut editor, size, 0.1 + k as f64 / 60.0, vec![]);
        }
        assert!(editor.snapshot.fill > 0.02, "{}", editor.snapshot.fill);
        assert!(editor.mix_readout().contains('%'));
        // the pour stops (its trickle of last grains, `flow_variation`, runs out within
        // about 6 s); a preset with an empty cup is loaded: the scene shows it empty
        engine.note_off();
        run(&mut engine, 700);
        frame(&ctx, &mut editor, size, 2.0, vec![]);
        let preset = granary_engine::control::preset::find("rice_plastic_bowl").unwrap();
        assert_eq!(presets::plain(&preset.values, "fill"), Some(0.0));
        let gui = editor.gui.clone().unwrap();
        editor.load(&gui.param_setter(), &preset);
        engine.set_settings(&editor.params.settings());
        run(&mut engine, 4);
        frame(&ctx, &mut editor, size, 2.1, vec![]);
        let cup = granary_engine::derived::cups::Cup::for_settings(&editor.params.settings());
        let shown = editor.scene_snapshot(&cup);
        assert_eq!((shown.fill, shown.pile_height_m), (0.0, 0.0));
        let fill_text = texts(&frame(&ctx, &mut editor, size, 2.2, vec![]))
            .into_iter()
            .find(|t| t.0.starts_with("fill "))
            .unwrap();
        assert!(fill_text.0.starts_with("fill 0 %"), "{}", fill_text.0);
        // and the next pour shows the engine's fill again
        engine.note_on(1.0, 60);
        run(&mut engine, 40);
        frame(&ctx, &mut editor, size, 2.3, vec![]);
        assert!(editor.loaded_fill.is_none());
    }

    #[test]
    fn at_start_up_the_default_presets_name_shows() {
        let (mut editor, _, _) = editor_with_host();
        editor.browser = PresetBrowser::new(None);
        assert!(editor.browser.current().is_none());
        assert!(editor.browser.select_matching(&editor.params.values()));
        let default = granary_engine::control::preset::find(granary_engine::control::preset::DEFAULT_PRESET).unwrap();
        assert_eq!(editor.browser.current().unwrap().preset.name, default.name);
        let ctx = context();
        let out = frame(&ctx, &mut editor, egui::vec2(1060.0, 800.0), 0.0, vec![]);
        let all = texts(&out);
        assert!(
            all.iter().any(|t| t.0 == default.name),
            "the header names the default preset"
        );
        assert!(!all.iter().any(|t| t.0.contains("no preset")));
    }

    #[test]
    fn the_live_column_stays_put_and_everything_fits_at_the_minimum_size() {
        let (mut editor, _, _) = editor_with_host();
        let ctx = context();
        let min = egui::vec2(EditorSize::MIN.0 as f32, EditorSize::MIN.1 as f32);
        // the minimum, and as wide as 1536 x 900 pixels at the largest zoom a 1000-pixel screen allows
        for min in [min, egui::vec2(955.0, 560.0)] {
            let mut live_left = Vec::new();
            for (k, material) in ["Sugar", "Glass beads 0.5 mm", "Coffee beans"].iter().enumerate() {
                let p = &editor.params.grain_material;
                use nice_plug::prelude::Param;
                let n = p.string_to_normalized_value(material).unwrap();
                set(&editor, "grain_material", p.preview_plain(n) as f32);
                let out = frame(&ctx, &mut editor, min, k as f64, vec![]);
                live_left.push(editor.columns[2].left());
                let live = editor.columns[2];
                let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, min);
                let all = texts(&out);
                let find = |needle: &str| {
                    all.iter()
                        .find(|t| t.0.contains(needle))
                        .unwrap_or_else(|| panic!("{needle:?} not drawn"))
                        .1
                };
                // the scene's label, the meters' caption: whole, inside the column and window
                let cup = granary_engine::derived::cups::Cup::for_settings(&editor.params.settings());
                let label = scene::cup_label(&cup, editor.params.settings().cup_material);
                for needle in [label.as_str(), "fill ", "gain reduction", "GR ", "Output spectrum"] {
                    let r = find(needle);
                    assert!(
                        live.expand(1.0).contains_rect(r) && screen.contains_rect(r),
                        "{needle:?} at {r:?} is cut (column {live:?})"
                    );
                }
                // the legend is clear of the spout and the fall label
                let legend = find("grain–grain").union(find("grain–cup"));
                assert!(!legend.intersects(find(&label)));
                assert!(!legend.intersects(find("fill ")));
                // the spectrum's labels do not overlap each other
                let labels: Vec<egui::Rect> = all
                    .iter()
                    .filter(|t| ["50", "100", "200", "500", "1k", "2k", "5k", "10k", "20k"].contains(&t.0.as_str()))
                    .map(|t| t.1)
                    .collect();
                assert!(labels.len() >= 3);
                for (i, a) in labels.iter().enumerate() {
                    for b in &labels[i + 1..] {
                        assert!(!a.intersects(*b), "{a:?} and {b:?} overlap");
                    }
                }
            }
            assert!(live_left.windows(2).all(|w| w[0] == w[1]), "{live_left:?}");
        }
    }

    #[test]
    fn the_meters_show_the_limiters_gain_reduction() {
        let (mut editor, _, mut writer) = editor_with_host();
        set(&editor, "output_gain", 80.0);
        set(&editor, "pour_rate", 150.0);
        writer.set_sample_rate(48_000.0);
        let mut engine = granary_engine::Engine::new(editor.params.settings(), 48_000.0, 512);
        engine.note_on(1.0, 60);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 512]);
        let ctx = context();
        let mut out = None;
        for k in 0..40 {
            pump(&mut engine, &mut writer, &mut bufs);
            out = Some(frame(
                &ctx,
                &mut editor,
                egui::vec2(1060.0, 800.0),
                k as f64 / 60.0,
                vec![],
            ));
        }
        let gr = editor.meters.gain_reduction.hold_db;
        assert!(gr > 6.0, "{gr}");
        let all = texts(&out.unwrap());
        let shown = all.iter().find(|t| t.0.starts_with("GR ")).unwrap();
        assert_eq!(shown.0, format!("GR {gr:.1} dB"));
    }

    #[test]
    fn the_live_view_shows_the_surface_its_stem_and_a_heap() {
        use crate::telemetry::Meter;
        let (mut editor, _, mut writer) = editor_with_host();
        let ctx = context();
        let size = egui::vec2(1060.0, 800.0);
        let has = |out: &egui::FullOutput, needle: &str| texts(out).iter().any(|t| t.0.contains(needle));
        // a meter row per stem, Surface among them; the cup stands on its named surface
        let out = frame(&ctx, &mut editor, size, 0.0, vec![]);
        // (the figures: "peak / RMS dB")
        let rows = texts(&out)
            .iter()
            .filter(|t| t.0.ends_with(" dB") && t.0.split(" / ").count() == 2 && t.0.len() < 24)
            .count();
        assert_eq!(rows, Meter::ALL.len());
        assert_eq!(rows, 5);
        assert!(has(&out, "Surface"));
        let settings = editor.params.settings();
        assert!(has(&out, settings.surface_material.data().name));
        let cup = granary_engine::derived::cups::Cup::for_settings(&settings);
        assert!(has(&out, &scene::cup_label(&cup, settings.cup_material)));
        assert!(!has(&out, "Heap on"));
        // a preset that pours onto the surface: no cup, a heap on concrete
        let preset = granary_engine::control::preset::find("sand_onto_concrete").unwrap();
        let gui = editor.gui.clone().unwrap();
        editor.load(&gui.param_setter(), &preset);
        let out = frame(&ctx, &mut editor, size, 0.1, vec![]);
        assert!(has(&out, "Heap on concrete"), "{:?}", texts(&out));
        assert!(has(&out, "Concrete"));
        let cup = granary_engine::derived::cups::Cup::for_settings(&editor.params.settings());
        assert!(!has(
            &out,
            &scene::cup_label(&cup, editor.params.settings().cup_material)
        ));
        // poured onto soil (louder than its grains): the Surface meter and the mix show it
        set(&editor, "surface_material", 6.0);
        assert_eq!(
            editor.params.settings().surface_material,
            granary_engine::base::materials::SurfaceMaterial::Soil
        );
        writer.set_sample_rate(48_000.0);
        let mut engine = granary_engine::Engine::new(editor.params.settings(), 48_000.0, 512);
        engine.note_on(1.0, 60);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 512]);
        for k in 0..40 {
            pump(&mut engine, &mut writer, &mut bufs);
            frame(&ctx, &mut editor, size, 0.2 + k as f64 / 60.0, vec![]);
        }
        let surface = editor.meters.state[Meter::Surface as usize];
        assert!(surface.peak_db > meters::METER_FLOOR_DB + 20.0, "{surface:?}");
        assert!(editor.snapshot.open && editor.snapshot.pile_height_m > 0.0);
        assert!(editor.kind_share[2] > 0.0, "{:?}", editor.kind_share);
        assert!(
            editor.mix_readout().contains("grain–surface"),
            "{}",
            editor.mix_readout()
        );
        let out = frame(&ctx, &mut editor, size, 1.0, vec![]);
        assert!(has(&out, "Heap on soil"), "{:?}", texts(&out));
    }

    #[test]
    fn the_live_view_names_the_gesture_and_meters_the_friction_stem() {
        use crate::telemetry::Meter;
        let (mut editor, _, mut writer) = editor_with_host();
        let ctx = context();
        let size = egui::vec2(1060.0, 800.0);
        let exactly = |out: &egui::FullOutput, text: &str| texts(out).iter().filter(|t| t.0 == text).count();
        // the Friction meter's row, and the gesture the parameters choose before any audio
        let out = frame(&ctx, &mut editor, size, 0.0, vec![]);
        assert_eq!(exactly(&out, "Friction"), 1, "the meter's label");
        assert!(texts(&out).iter().any(|t| t.0 == "Gesture"), "the panel's group");
        set(&editor, "gesture", 2.0);
        let out = frame(&ctx, &mut editor, size, 0.05, vec![]);
        // the panel's value and the scene's name
        assert_eq!(exactly(&out, "Shake"), 2, "{:?}", texts(&out));
        // stirring a half-full mug: the scene names it with the spoon's depth, the Friction
        // meter moves
        set(&editor, "gesture", 1.0);
        set(&editor, "trigger_mode", 1.0);
        set(&editor, "fill", 0.5);
        set(&editor, "gesture_amount", 80.0);
        writer.set_sample_rate(48_000.0);
        let mut engine = granary_engine::Engine::new(editor.params.settings(), 48_000.0, 512);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 512]);
        let mut out = None;
        for k in 0..40 {
            pump(&mut engine, &mut writer, &mut bufs);
            out = Some(frame(&ctx, &mut editor, size, 0.1 + k as f64 / 60.0, vec![]));
        }
        let out = out.unwrap();
        assert!(
            texts(&out)
                .iter()
                .any(|t| t.0.starts_with("Stir · spoon ") && t.0.ends_with(" mm deep")),
            "{:?}",
            texts(&out)
        );
        let friction = editor.meters.state[Meter::Friction as usize];
        assert!(friction.peak_db > meters::METER_FLOOR_DB + 20.0, "{friction:?}");
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
