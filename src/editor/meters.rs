//! Level meters (main output and each stem: peak with hold, RMS; the limiter's gain
//! reduction on the main output) and the scene view's
//! collision flashes, from telemetry snapshots. Ballistics are in seconds, so they look the
//! same at any frame rate.

use crate::telemetry::{Meter, Snapshot, CELL_COUNT, METERS};
use granary_engine::base::window::{CollisionKind, CELLS};

/// Meter scale, dBFS.
pub const METER_FLOOR_DB: f32 = -72.0;
/// Full scale of the gain-reduction meter, dB.
pub const GR_SCALE_DB: f32 = 24.0;
/// Peak display fall rate, dB/s, and how long the peak-hold tick stays, s.
pub const PEAK_FALL_DB_PER_S: f32 = 24.0;
pub const HOLD_S: f32 = 1.5;
/// A flash fades with this time constant, s.
pub const FLASH_DECAY_S: f32 = 0.12;
/// Collisions per frame at which a cell's flash is at full strength (log scale below).
pub const FLASH_FULL: f32 = 2000.0;

pub fn to_db(x: f32) -> f32 {
    if x > 0.0 && x.is_finite() {
        (20.0 * x.log10()).max(METER_FLOOR_DB)
    } else {
        METER_FLOOR_DB
    }
}

/// One meter's display state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeterState {
    pub peak_db: f32,
    pub rms_db: f32,
    pub hold_db: f32,
    hold_left_s: f32,
}

impl Default for MeterState {
    fn default() -> Self {
        MeterState {
            peak_db: METER_FLOOR_DB,
            rms_db: METER_FLOOR_DB,
            hold_db: METER_FLOOR_DB,
            hold_left_s: 0.0,
        }
    }
}

impl MeterState {
    /// New reading (peak since the last frame, current RMS) after `dt` seconds.
    pub fn update(&mut self, peak: f32, rms: f32, dt: f32) {
        let dt = dt.clamp(0.0, 0.5);
        let p = to_db(peak);
        self.peak_db = p.max(self.peak_db - PEAK_FALL_DB_PER_S * dt);
        self.rms_db = to_db(rms);
        if p >= self.hold_db {
            self.hold_db = p;
            self.hold_left_s = HOLD_S;
        } else {
            self.hold_left_s -= dt;
            if self.hold_left_s <= 0.0 {
                self.hold_db = self.peak_db;
            }
        }
    }
}

/// The limiter's gain reduction as shown: the largest since the last frame, falling back
/// at the peak meters' rate, and held for `HOLD_S`, dB (>= 0).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GainReduction {
    pub now_db: f32,
    pub hold_db: f32,
    hold_left_s: f32,
}

impl GainReduction {
    pub fn update(&mut self, reduction_db: f32, dt: f32) {
        let dt = dt.clamp(0.0, 0.5);
        let r = if reduction_db.is_finite() {
            reduction_db.clamp(0.0, -METER_FLOOR_DB)
        } else {
            0.0
        };
        self.now_db = r.max(self.now_db - PEAK_FALL_DB_PER_S * dt);
        if r >= self.hold_db {
            self.hold_db = r;
            self.hold_left_s = HOLD_S;
        } else {
            self.hold_left_s -= dt;
            if self.hold_left_s <= 0.0 {
                self.hold_db = self.now_db;
            }
        }
    }
}

/// Meters for the main output and every stem, and the limiter's gain reduction.
#[derive(Debug, Clone, Copy, Default)]
pub struct Meters {
    pub state: [MeterState; METERS],
    pub gain_reduction: GainReduction,
}

/// Height of one meter row, points.
const ROW_H: f32 = 18.0;

impl Meters {
    pub fn update(&mut self, s: &Snapshot, dt: f32) {
        for m in Meter::ALL {
            let k = m as usize;
            self.state[k].update(s.peak[k], s.rms[k], dt);
        }
        self.gain_reduction.update(s.gain_reduction_db, dt);
    }

    /// The caption under the meters.
    pub const CAPTION: &'static str =
        "bar: RMS (300 ms), shade: peak, tick: peak hold; figures: peak / RMS, dBFS. Limiter: gain reduction on Main, dB";

    /// The height `draw` takes at `width` points (a row per meter, the limiter's row and the
    /// wrapped caption).
    pub fn height(ui: &egui::Ui, width: f32) -> f32 {
        let caption = ui.painter().layout(
            Self::CAPTION.into(),
            egui::FontId::proportional(12.0),
            egui::Color32::WHITE,
            width,
        );
        let rows = (METERS + 1) as f32;
        rows * ROW_H + rows * ui.spacing().item_spacing.y + caption.size().y + 10.0
    }

    /// Draws a horizontal meter per `Meter` and the limiter's, `width` points wide.
    pub fn draw(&self, ui: &mut egui::Ui, width: f32) {
        use egui::{pos2, vec2, Align2, Color32, FontId, Rect, Sense, Stroke};
        let label_w = 60.0;
        let value_w = 124.0;
        for m in Meter::ALL {
            let st = self.state[m as usize];
            let (rect, _) = ui.allocate_exact_size(vec2(width, ROW_H), Sense::hover());
            let painter = ui.painter_at(rect);
            let text = ui.visuals().text_color();
            let font = FontId::proportional(13.0);
            painter.text(
                pos2(rect.left(), rect.center().y),
                Align2::LEFT_CENTER,
                m.label(),
                font.clone(),
                text,
            );
            let bar = Rect::from_min_max(
                pos2(rect.left() + label_w, rect.top() + 3.0),
                pos2(rect.right() - value_w, rect.bottom() - 3.0),
            );
            painter.rect_filled(bar, 2.0, ui.visuals().extreme_bg_color);
            let x_of = |db: f32| egui::remap_clamp(db, METER_FLOOR_DB..=0.0, bar.left()..=bar.right());
            let colour = |db: f32| {
                if db > -3.0 {
                    Color32::from_rgb(235, 80, 60)
                } else if db > -12.0 {
                    Color32::from_rgb(230, 200, 70)
                } else {
                    Color32::from_rgb(90, 200, 120)
                }
            };
            let peak = Rect::from_min_max(bar.min, pos2(x_of(st.peak_db), bar.max.y));
            painter.rect_filled(peak, 2.0, colour(st.peak_db).gamma_multiply(0.45));
            let rms = Rect::from_min_max(
                pos2(bar.left(), bar.top() + 3.0),
                pos2(x_of(st.rms_db), bar.bottom() - 3.0),
            );
            painter.rect_filled(rms, 1.0, colour(st.rms_db));
            let hx = x_of(st.hold_db);
            painter.line_segment([pos2(hx, bar.top()), pos2(hx, bar.bottom())], Stroke::new(2.0, text));
            for db in [-60.0, -48.0, -36.0, -24.0, -12.0, -6.0] {
                let x = x_of(db);
                painter.line_segment(
                    [pos2(x, bar.bottom() - 3.0), pos2(x, bar.bottom())],
                    Stroke::new(1.0, ui.visuals().weak_text_color()),
                );
            }
            let show = |db: f32| {
                if db <= METER_FLOOR_DB {
                    "-inf".to_string()
                } else {
                    format!("{db:.1}")
                }
            };
            painter.text(
                pos2(rect.right(), rect.center().y),
                Align2::RIGHT_CENTER,
                format!("{} / {} dB", show(st.hold_db), show(st.rms_db)),
                FontId::monospace(12.0),
                text,
            );
        }
        self.draw_gain_reduction(ui, width, label_w, value_w);
        ui.add(
            egui::Label::new(
                egui::RichText::new(Self::CAPTION)
                    .size(12.0)
                    .color(ui.visuals().weak_text_color()),
            )
            .wrap(),
        );
    }

    /// The gain-reduction row: a red bar from the right end, 0 to `GR_SCALE_DB`.
    fn draw_gain_reduction(&self, ui: &mut egui::Ui, width: f32, label_w: f32, value_w: f32) {
        use egui::{pos2, vec2, Align2, Color32, FontId, Rect, Sense, Stroke};
        let gr = self.gain_reduction;
        let (rect, _) = ui.allocate_exact_size(vec2(width, ROW_H), Sense::hover());
        let painter = ui.painter_at(rect);
        let text = ui.visuals().text_color();
        painter.text(
            pos2(rect.left(), rect.center().y),
            Align2::LEFT_CENTER,
            "Limiter",
            FontId::proportional(13.0),
            text,
        );
        let bar = Rect::from_min_max(
            pos2(rect.left() + label_w, rect.top() + 3.0),
            pos2(rect.right() - value_w, rect.bottom() - 3.0),
        );
        painter.rect_filled(bar, 2.0, ui.visuals().extreme_bg_color);
        let x_of = |db: f32| egui::remap_clamp(db, 0.0..=GR_SCALE_DB, bar.right()..=bar.left());
        if gr.now_db > 0.01 {
            let r = Rect::from_min_max(pos2(x_of(gr.now_db), bar.top()), bar.max);
            painter.rect_filled(r, 2.0, Color32::from_rgb(235, 80, 60));
        }
        if gr.hold_db > 0.01 {
            let hx = x_of(gr.hold_db);
            painter.line_segment([pos2(hx, bar.top()), pos2(hx, bar.bottom())], Stroke::new(2.0, text));
        }
        for db in [1.0, 3.0, 6.0, 12.0] {
            let x = x_of(db);
            painter.line_segment(
                [pos2(x, bar.bottom() - 3.0), pos2(x, bar.bottom())],
                Stroke::new(1.0, ui.visuals().weak_text_color()),
            );
        }
        painter.text(
            pos2(rect.right(), rect.center().y),
            Align2::RIGHT_CENTER,
            format!("GR {:.1} dB", gr.hold_db),
            FontId::monospace(12.0),
            text,
        );
    }
}

/// Flash strength of each generator cell, 0..1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Flashes {
    pub level: [f32; CELL_COUNT],
}

impl Flashes {
    /// New collisions per cell since the last frame, `dt` seconds ago.
    pub fn update(&mut self, cell_delta: &[u64; CELL_COUNT], dt: f32) {
        let decay = (-dt.clamp(0.0, 1.0) / FLASH_DECAY_S).exp();
        for (l, &d) in self.level.iter_mut().zip(cell_delta) {
            *l = (*l * decay).max(flash_strength(d));
        }
    }
}

/// Flash strength for `n` collisions in one frame: 0 for none, at least 0.3 for one, 1 at
/// `FLASH_FULL`, logarithmic in between.
pub fn flash_strength(n: u64) -> f32 {
    if n == 0 {
        0.0
    } else {
        (0.3 + 0.7 * (n as f32).ln_1p() / FLASH_FULL.ln_1p()).min(1.0)
    }
}

/// The kind of collision each cell holds (for its flash colour).
pub fn cell_kind(cell: usize) -> CollisionKind {
    CELLS.get(cell).map(|c| c.kind()).unwrap_or(CollisionKind::GrainGrain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_ballistics() {
        let mut m = MeterState::default();
        m.update(1.0, 0.5, 1.0 / 60.0);
        assert_eq!(m.peak_db, 0.0);
        assert_eq!(m.hold_db, 0.0);
        assert!((m.rms_db + 6.02).abs() < 0.01);
        // silence: the peak falls at its rate, the hold stays for HOLD_S then follows
        m.update(0.0, 0.0, 0.5);
        assert!((m.peak_db + 12.0).abs() < 1e-4);
        assert_eq!(m.hold_db, 0.0);
        assert_eq!(m.rms_db, METER_FLOOR_DB);
        for _ in 0..3 {
            m.update(0.0, 0.0, 0.5);
        }
        assert_eq!(m.hold_db, m.peak_db);
        assert!(m.peak_db < -40.0);
        m.update(f32::NAN, f32::INFINITY, 0.1);
        assert!(m.peak_db.is_finite() && m.rms_db == METER_FLOOR_DB);
    }

    #[test]
    fn each_stem_moves_its_own_meter() {
        for m in Meter::ALL {
            let mut snap = Snapshot::default();
            snap.peak[m as usize] = 0.5;
            snap.rms[m as usize] = 0.25;
            let mut meters = Meters::default();
            meters.update(&snap, 1.0 / 60.0);
            for (k, st) in meters.state.iter().enumerate() {
                if k == m as usize {
                    assert!(
                        (st.peak_db + 6.02).abs() < 0.01 && (st.rms_db + 12.04).abs() < 0.01,
                        "{m:?}"
                    );
                } else {
                    assert_eq!(st.peak_db, METER_FLOOR_DB, "{m:?} moved meter {k}");
                }
            }
        }
        assert_eq!(
            Meter::ALL.map(|m| m.label()),
            ["Main", "Grains", "Cup", "Surface", "Friction"]
        );
    }

    #[test]
    fn gain_reduction_shows_the_largest_and_falls_back() {
        let mut g = GainReduction::default();
        g.update(0.0, 1.0 / 60.0);
        assert_eq!((g.now_db, g.hold_db), (0.0, 0.0));
        g.update(6.0, 1.0 / 60.0);
        assert_eq!((g.now_db, g.hold_db), (6.0, 6.0));
        // no more limiting: the bar falls at the peak rate, the hold stays for HOLD_S
        g.update(0.0, 0.125);
        assert!((g.now_db - 3.0).abs() < 1e-4 && g.hold_db == 6.0);
        for _ in 0..4 {
            g.update(0.0, 0.5);
        }
        assert_eq!((g.now_db, g.hold_db), (0.0, 0.0));
        g.update(f32::NAN, 0.1);
        assert_eq!(g.now_db, 0.0);
    }

    #[test]
    fn flashes_follow_collisions_and_fade() {
        assert_eq!(flash_strength(0), 0.0);
        assert!((flash_strength(1) - 0.365).abs() < 0.01);
        assert!(flash_strength(100) > flash_strength(10));
        assert_eq!(flash_strength(1_000_000), 1.0);
        let mut f = Flashes::default();
        let mut hits = [0u64; CELL_COUNT];
        hits[1] = 2000;
        f.update(&hits, 1.0 / 60.0);
        assert!((f.level[1] - 1.0).abs() < 1e-6);
        assert_eq!(f.level[0], 0.0);
        f.update(&[0; CELL_COUNT], FLASH_DECAY_S);
        assert!((f.level[1] - (-1.0f32).exp()).abs() < 1e-4);
        assert_eq!(cell_kind(1), CollisionKind::GrainCup);
        assert_eq!(cell_kind(0), CollisionKind::GrainGrain);
    }
}
