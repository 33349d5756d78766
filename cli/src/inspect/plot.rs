//! PNG plots of inspected physics (plotters, text in egui's bundled Ubuntu font so that no
//! system font is needed).

use super::contact::ContactSetup;
use super::table::{loglog_slope, PressureRow};
use plotters::prelude::*;
use std::path::Path;

const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (1200, 750);

/// One line of the Table 6.1 plot: colour, legend label and the column it draws.
type Series = (RGBColor, String, fn(&PressureRow) -> f64);

fn fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Only fails on a malformed font; the bundled one is valid.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT);
    });
}

/// A plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PlotError {
    pub path: String,
    pub message: String,
}

/// A drawing error; `crate::output` has checked the file can be written, so this is rare.
fn perr(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        path: path.display().to_string(),
        message: format!("{}: cannot draw the plot ({e})", path.display()),
    }
}

/// Pressure waveform of one collision: sphere A, sphere B and their sum in continuous time
/// (thesis eq. 4.1–4.2, Figure 4.3), and the engine's band-limited rendering of the sum at
/// `sample_rate` as points.
pub fn collision_waveform(setup: &ContactSetup, sample_rate: f32, path: &Path) -> Result<(), PlotError> {
    staged(path, |tmp| draw_collision_waveform(setup, sample_rate, tmp))
}

/// Draws into a temporary beside `path` (`crate::output`) and renames it onto `path` when
/// complete; errors name `path`.
fn staged(path: &Path, draw: impl FnOnce(&Path) -> Result<(), PlotError>) -> Result<(), PlotError> {
    let fail = |message: String| PlotError {
        path: path.display().to_string(),
        message,
    };
    let staged = crate::output::Staged::with_suffix(&[path.to_path_buf()], ".png").map_err(fail)?;
    draw(staged.temp_paths()[0]).map_err(|e| fail(e.message))?;
    staged.commit().map_err(fail)
}

fn draw_collision_waveform(setup: &ContactSetup, sample_rate: f32, path: &Path) -> Result<(), PlotError> {
    fonts();
    let a = setup.source_a();
    let b = setup.source_b();
    let first = b.map_or(a.delay_s(), |b| b.delay_s().min(a.delay_s()));
    let last = b.map_or(a.delay_s(), |b| b.delay_s().max(a.delay_s()));
    let tail = 4.0 * a.duration_s + 40.0 * a.radius_m / 343.0;
    let (t0, t1) = (first - 0.5 * a.duration_s, last + tail);
    let n = 2000;
    let dt = (t1 - t0) / n as f64;
    let [pa, pb, sum] = setup.waveforms(t0, dt, n);
    // the engine's rendering: contact onset at `RENDER_ONSET` samples
    let fs = sample_rate as f64;
    let onset = ContactSetup::RENDER_ONSET as f64;
    let samples = ((t1 * fs).ceil() as usize + ContactSetup::RENDER_ONSET + 2).max(8);
    let rendered = setup.render(sample_rate, 0.0, samples);
    let rendered: Vec<(f64, f64)> = rendered
        .iter()
        .enumerate()
        .map(|(i, &p)| ((i as f64 - onset) / fs, p as f64))
        .filter(|(t, _)| (t0..=t1).contains(t))
        .collect();
    let us = |t: f64| t * 1e6;
    let peak = sum
        .iter()
        .chain(&pa)
        .chain(&pb)
        .chain(rendered.iter().map(|(_, p)| p))
        .fold(0.0f64, |m, p| m.max(p.abs()))
        .max(1e-30);
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|x| perr(path, x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "One collision: v0 = {} m/s, listener {} m at {:.0} deg",
                setup.v0,
                setup.distance_m,
                setup.angle_rad.to_degrees()
            ),
            (FONT, 30),
        )
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(110)
        .build_cartesian_2d(us(t0)..us(t1), -1.1 * peak..1.1 * peak)
        .map_err(|x| perr(path, x))?;
    chart
        .configure_mesh()
        .x_desc("time after the contact starts (us)")
        .y_desc("pressure (Pa)")
        .label_style((FONT, 20))
        .axis_desc_style((FONT, 24))
        .y_label_formatter(&|y| {
            if y.abs() < peak * 1e-6 {
                "0".into()
            } else {
                format!("{y:.2e}")
            }
        })
        .draw()
        .map_err(|x| perr(path, x))?;
    let t = |i: usize| us(t0 + i as f64 * dt);
    let series = [
        (&pa, RGBColor(31, 119, 180), "sphere A (continuous)"),
        (&pb, RGBColor(214, 39, 40), "sphere B (continuous)"),
        (&sum, BLACK, "A + B (continuous, thesis Fig. 4.3)"),
    ];
    for (data, color, label) in series {
        if b.is_none() && !label.starts_with("sphere A") {
            continue;
        }
        let width = if label.starts_with("A + B") { 3 } else { 2 };
        chart
            .draw_series(LineSeries::new(
                data.iter().enumerate().map(|(i, &p)| (t(i), p)),
                color.stroke_width(width),
            ))
            .map_err(|x| perr(path, x))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], color.stroke_width(3)));
    }
    let green = RGBColor(44, 160, 44);
    chart
        .draw_series(LineSeries::new(
            rendered.iter().map(|&(tt, p)| (us(tt), p)),
            green.stroke_width(1),
        ))
        .map_err(|x| perr(path, x))?;
    chart
        .draw_series(
            rendered
                .iter()
                .map(|&(tt, p)| Circle::new((us(tt), p), 5, green.filled())),
        )
        .map_err(|x| perr(path, x))?
        .label(format!("engine, band-limited at {} kHz", sample_rate / 1000.0))
        .legend(move |(x, y)| Circle::new((x + 15, y), 5, green.filled()));
    chart
        .configure_series_labels()
        .label_font((FONT, 22))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| perr(path, x))?;
    root.present().map_err(|x| perr(path, x))?;
    Ok(())
}

/// Peak pressure against v0, log-log: the thesis's Table 6.1 beside the engine's values in
/// both peak-force conventions.
pub fn table_6_1(rows: &[PressureRow], path: &Path) -> Result<(), PlotError> {
    staged(path, |tmp| draw_table_6_1(rows, tmp))
}

fn draw_table_6_1(rows: &[PressureRow], path: &Path) -> Result<(), PlotError> {
    fonts();
    let (vmin, vmax) = rows
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), r| (a.min(r.v0_m_s), b.max(r.v0_m_s)));
    let (pmin, pmax) = rows.iter().fold((f64::INFINITY, 0.0f64), |(a, b), r| {
        (
            a.min(r.thesis_pa).min(r.granary_pa),
            b.max(r.thesis_pa).max(r.granary_hertz_peak_pa),
        )
    });
    let slope = |f: fn(&PressureRow) -> f64| loglog_slope(rows.iter().map(|r| (r.v0_m_s, f(r))));
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|x| perr(path, x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Peak pressure of one glass sphere (a = 1 mm, r = 0.15 m, theta = 0)",
            (FONT, 30),
        )
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(110)
        .build_cartesian_2d(
            (vmin * 0.8..vmax * 1.25).log_scale(),
            (pmin * 0.6..pmax * 1.6).log_scale(),
        )
        .map_err(|x| perr(path, x))?;
    chart
        .configure_mesh()
        .x_desc("collision speed v0 (m/s)")
        .y_desc("peak pressure (Pa)")
        .label_style((FONT, 20))
        .axis_desc_style((FONT, 24))
        .x_label_formatter(&|x| format!("{x:.0e}"))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()
        .map_err(|x| perr(path, x))?;
    let black = BLACK;
    chart
        .draw_series(
            rows.iter()
                .map(|r| Cross::new((r.v0_m_s, r.thesis_pa), 9, black.stroke_width(3))),
        )
        .map_err(|x| perr(path, x))?
        .label(format!("thesis Table 6.1 (slope {:.3})", slope(|r| r.thesis_pa)))
        .legend(move |(x, y)| Cross::new((x + 15, y), 9, black.stroke_width(3)));
    let series: [Series; 2] = [
        (
            RGBColor(214, 39, 40),
            format!(
                "Granary, Hertz peak force (thesis convention; slope {:.3})",
                slope(|r| r.granary_hertz_peak_pa)
            ),
            |r| r.granary_hertz_peak_pa,
        ),
        (
            RGBColor(31, 119, 180),
            format!(
                "Granary engine, impulse-preserving half-sine (slope {:.3})",
                slope(|r| r.granary_pa)
            ),
            |r| r.granary_pa,
        ),
    ];
    for (color, label, f) in series {
        chart
            .draw_series(LineSeries::new(
                rows.iter().map(|r| (r.v0_m_s, f(r))),
                color.stroke_width(3),
            ))
            .map_err(|x| perr(path, x))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], color.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 22))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|x| perr(path, x))?;
    root.present().map_err(|x| perr(path, x))?;
    Ok(())
}
