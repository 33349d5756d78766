//! Spectrum analyser of the main output, computed on the GUI thread (a real FFT, `granary_engine::fft`) from the
//! samples the audio thread hands over through the telemetry ring; log-frequency axis.

use granary_engine::fft::{Complex64, RealToComplex};
use std::sync::Arc;

/// FFT length: 4096 samples, 11.7 Hz bins at 48 kHz.
pub const FFT_LEN: usize = 4096;
/// Lowest and highest frequency shown, Hz.
pub const F_LO: f32 = 20.0;
pub const F_HI: f32 = 20_000.0;
/// Level range shown, dBFS.
pub const DB_FLOOR: f32 = -108.0;
pub const DB_TOP: f32 = 0.0;
/// How fast the display falls after a peak, dB/s.
pub const FALL_DB_PER_S: f32 = 60.0;

pub struct Analyser {
    fft: Arc<dyn RealToComplex<f64>>,
    /// The last `FFT_LEN` samples, oldest first.
    history: Vec<f32>,
    window: Vec<f32>,
    input: Vec<f64>,
    spectrum: Vec<Complex64>,
    scratch: Vec<Complex64>,
    /// Amplitude per bin, dBFS (a full-scale sine reads 0 dB).
    bins_db: Vec<f32>,
    /// What is drawn, per display point.
    display_db: Vec<f32>,
}

impl Default for Analyser {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyser {
    pub fn new() -> Self {
        let fft = granary_engine::fft::forward(FFT_LEN);
        // Hann window
        let window: Vec<f32> = (0..FFT_LEN)
            .map(|i| 0.5 - 0.5 * (std::f32::consts::TAU * i as f32 / FFT_LEN as f32).cos())
            .collect();
        Analyser {
            input: fft.make_input_vec(),
            spectrum: fft.make_output_vec(),
            scratch: fft.make_scratch_vec(),
            fft,
            history: vec![0.0; FFT_LEN],
            window,
            bins_db: vec![DB_FLOOR; FFT_LEN / 2 + 1],
            display_db: Vec::new(),
        }
    }

    /// Appends new samples (keeps the last `FFT_LEN`).
    pub fn push(&mut self, samples: &[f32]) {
        if samples.len() >= FFT_LEN {
            self.history.copy_from_slice(&samples[samples.len() - FFT_LEN..]);
        } else {
            self.history.rotate_left(samples.len());
            let start = FFT_LEN - samples.len();
            self.history[start..].copy_from_slice(samples);
        }
    }

    /// Transforms the current history into `bins_db`.
    fn transform(&mut self) {
        for ((x, h), w) in self.input.iter_mut().zip(&self.history).zip(&self.window) {
            *x = (h * w) as f64;
        }
        if self
            .fft
            .process_with_scratch(&mut self.input, &mut self.spectrum, &mut self.scratch)
            .is_err()
        {
            return;
        }
        // amplitude of a sine = 2 |X_k| / sum(window)
        let norm = 2.0 / self.window.iter().sum::<f32>();
        for (db, c) in self.bins_db.iter_mut().zip(&self.spectrum) {
            *db = amp_to_db(c.norm() as f32 * norm);
        }
    }

    /// Updates the display (`points` values across the log axis) after `dt` seconds; returns
    /// the levels to draw, dBFS.
    pub fn update(&mut self, sample_rate: f32, points: usize, dt: f32) -> &[f32] {
        self.transform();
        let levels = band_levels(&self.bins_db, sample_rate, FFT_LEN, points);
        if self.display_db.len() != points {
            self.display_db = levels.clone();
        }
        let fall = FALL_DB_PER_S * dt.clamp(0.0, 0.5);
        for (d, l) in self.display_db.iter_mut().zip(levels) {
            *d = l.max(*d - fall).clamp(DB_FLOOR, DB_TOP + 12.0);
        }
        &self.display_db
    }
}

pub fn amp_to_db(a: f32) -> f32 {
    if a > 0.0 && a.is_finite() {
        (20.0 * a.log10()).max(DB_FLOOR)
    } else {
        DB_FLOOR
    }
}

/// Frequency at position `u` (0..1) of the log axis from `F_LO` to `F_HI`.
pub fn freq_at(u: f32) -> f32 {
    F_LO * (F_HI / F_LO).powf(u)
}

/// Position (0..1) of frequency `f` on the log axis.
pub fn axis_pos(f: f32) -> f32 {
    (f / F_LO).ln() / (F_HI / F_LO).ln()
}

/// The level at each of `points` positions of the log axis: the loudest bin of the band the
/// point covers, or, where bands are narrower than a bin (low frequencies), the bin
/// interpolated in dB. Points above Nyquist read the floor.
pub fn band_levels(bins_db: &[f32], sample_rate: f32, fft_len: usize, points: usize) -> Vec<f32> {
    let bin_hz = sample_rate / fft_len as f32;
    let last = bins_db.len().saturating_sub(1);
    (0..points)
        .map(|i| {
            let lo = freq_at(i as f32 / points as f32) / bin_hz;
            let hi = freq_at((i + 1) as f32 / points as f32) / bin_hz;
            let centre = 0.5 * (lo + hi);
            if centre >= last as f32 {
                return DB_FLOOR;
            }
            let (a, b) = (lo.ceil() as usize, (hi.floor() as usize).min(last));
            if b >= a {
                bins_db[a..=b].iter().copied().fold(DB_FLOOR, f32::max)
            } else {
                let k = centre.floor() as usize;
                let t = centre - k as f32;
                bins_db[k] * (1.0 - t) + bins_db[(k + 1).min(last)] * t
            }
        })
        .collect()
}

/// Height of a level label, points (labels closer than this are left out).
const LABEL_H: f32 = 12.0;
/// The frequency axis' grid lines and labels.
const FREQ_LABELS: [(f32, &str); 9] = [
    (50.0, "50"),
    (100.0, "100"),
    (200.0, "200"),
    (500.0, "500"),
    (1000.0, "1k"),
    (2000.0, "2k"),
    (5000.0, "5k"),
    (10000.0, "10k"),
    (20000.0, "20k"),
];

/// The frequency grid of a plot `width` points wide from `left`: (x, label, whether the
/// label is drawn). A label is drawn only where it keeps a gap from the last one drawn and
/// stays inside the plot; `text_width` measures a label.
pub fn freq_labels(left: f32, width: f32, text_width: impl Fn(&str) -> f32) -> Vec<(f32, &'static str, bool)> {
    let mut right_of_last = f32::NEG_INFINITY;
    FREQ_LABELS
        .iter()
        .map(|&(f, label)| {
            let x = left + axis_pos(f) * width;
            let half = 0.5 * text_width(label);
            let shown = x - half >= right_of_last + 4.0 && x + half <= left + width + 14.0;
            if shown {
                right_of_last = x + half;
            }
            (x, label, shown)
        })
        .collect()
}

/// Draws the analyser into `rect`: grid, frequency and level labels, the spectrum.
pub fn draw(ui: &mut egui::Ui, rect: egui::Rect, levels: &[f32]) {
    use egui::{pos2, Align2, Color32, FontId, Stroke};
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 4.0, visuals.extreme_bg_color);
    let plot = egui::Rect::from_min_max(rect.min + egui::vec2(34.0, 6.0), rect.max - egui::vec2(16.0, 18.0));
    let grid = Stroke::new(1.0, visuals.weak_text_color().gamma_multiply(0.35));
    let text = visuals.text_color();
    let font = FontId::proportional(11.0);
    let y_of = |db: f32| egui::remap_clamp(db, DB_FLOOR..=DB_TOP, plot.bottom()..=plot.top());
    let mut last_y = f32::INFINITY;
    for db in (DB_FLOOR as i32..=DB_TOP as i32).step_by(24) {
        let y = y_of(db as f32);
        painter.line_segment([pos2(plot.left(), y), pos2(plot.right(), y)], grid);
        // a label only where it clears the one below (a short window)
        if last_y - y >= LABEL_H {
            painter.text(
                pos2(plot.left() - 4.0, y),
                Align2::RIGHT_CENTER,
                format!("{db}"),
                font.clone(),
                text,
            );
            last_y = y;
        }
    }
    for (x, label, shown) in freq_labels(plot.left(), plot.width(), |t| {
        painter.layout_no_wrap(t.to_string(), font.clone(), text).size().x
    }) {
        painter.line_segment([pos2(x, plot.top()), pos2(x, plot.bottom())], grid);
        if shown {
            painter.text(
                pos2(x, plot.bottom() + 2.0),
                Align2::CENTER_TOP,
                label,
                font.clone(),
                text,
            );
        }
    }
    painter.text(
        pos2(plot.left() + 4.0, plot.top() + 2.0),
        Align2::LEFT_TOP,
        "Output spectrum: dBFS over Hz",
        font,
        text,
    );
    if levels.len() < 2 {
        return;
    }
    let n = levels.len() as f32;
    let line: Vec<egui::Pos2> = levels
        .iter()
        .enumerate()
        .map(|(i, &db)| pos2(plot.left() + (i as f32 + 0.5) / n * plot.width(), y_of(db)))
        .collect();
    let fill = Color32::from_rgba_unmultiplied(90, 170, 255, 40);
    for w in line.windows(2) {
        painter.add(egui::Shape::convex_polygon(
            vec![w[0], w[1], pos2(w[1].x, plot.bottom()), pos2(w[0].x, plot.bottom())],
            fill,
            Stroke::NONE,
        ));
    }
    painter.add(egui::Shape::line(
        line,
        Stroke::new(1.5, Color32::from_rgb(110, 190, 255)),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(freq: f32, amp: f32, fs: f32, n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| amp * (std::f32::consts::TAU * freq * i as f32 / fs).sin())
            .collect()
    }

    #[test]
    fn a_sine_reads_its_level_at_its_frequency() {
        let fs = 48_000.0;
        for (freq, amp) in [(1000.0, 1.0), (150.0, 0.1), (8000.0, 0.5)] {
            let mut a = Analyser::new();
            a.push(&sine(freq, amp, fs, FFT_LEN + 100));
            let levels = a.update(fs, 200, 0.0).to_vec();
            let (peak_i, peak_db) =
                levels
                    .iter()
                    .copied()
                    .enumerate()
                    .fold((0, f32::MIN), |m, (i, d)| if d > m.1 { (i, d) } else { m });
            let expected = 20.0 * amp.log10();
            // Hann scalloping loss is at most 1.42 dB
            assert!(
                peak_db <= expected + 0.1 && peak_db > expected - 1.5,
                "{freq}: {peak_db} vs {expected}"
            );
            let f_peak = freq_at((peak_i as f32 + 0.5) / 200.0);
            assert!((f_peak / freq).log2().abs() < 0.1, "{freq} Hz shows at {f_peak} Hz");
            // far from the tone, the window's sidelobes are far down
            let far = levels[((axis_pos(freq) + 0.3) * 200.0).min(199.0) as usize];
            assert!(far < expected - 60.0 || axis_pos(freq) + 0.3 > 1.0, "{freq}: {far}");
        }
    }

    #[test]
    fn silence_reads_the_floor_and_the_display_falls_steadily() {
        let fs = 44_100.0;
        let mut a = Analyser::new();
        a.push(&sine(440.0, 1.0, fs, FFT_LEN));
        let loud = a.update(fs, 100, 0.0).to_vec();
        a.push(&vec![0.0; FFT_LEN]);
        let after = a.update(fs, 100, 0.1).to_vec();
        for (l, s) in loud.iter().zip(&after) {
            assert!(*s >= DB_FLOOR);
            assert!((*s - (l - 6.0).max(DB_FLOOR)).abs() < 1e-3, "{l} -> {s}");
        }
        let mut quiet = Analyser::new();
        quiet.push(&vec![0.0; 100]);
        assert!(quiet.update(fs, 50, 0.0).iter().all(|&d| d == DB_FLOOR));
    }

    #[test]
    fn frequency_labels_never_overlap() {
        // 7 points a character at the 11-point font, a generous measure
        let width = |t: &str| 7.0 * t.len() as f32;
        for plot_w in [120.0, 180.0, 240.0, 600.0] {
            let labels = freq_labels(0.0, plot_w, width);
            assert_eq!(labels.len(), FREQ_LABELS.len());
            let shown: Vec<_> = labels.iter().filter(|l| l.2).collect();
            assert!(shown.len() >= 3, "{plot_w}: {shown:?}");
            for w in shown.windows(2) {
                let (a, b) = (w[0], w[1]);
                assert!(
                    a.0 + 0.5 * width(a.1) + 4.0 <= b.0 - 0.5 * width(b.1),
                    "{plot_w}: {a:?} and {b:?} overlap"
                );
            }
        }
        // wide enough, every label shows
        assert!(freq_labels(0.0, 2000.0, width).iter().all(|l| l.2));
    }

    #[test]
    fn log_axis_round_trip() {
        for f in [20.0, 100.0, 1000.0, 19_999.0] {
            assert!((freq_at(axis_pos(f)) - f).abs() / f < 1e-4);
        }
        assert_eq!(axis_pos(F_LO), 0.0);
        assert!((axis_pos(1000.0) - 0.566).abs() < 0.01);
    }
}
