//! The validation plots of docs/grains.md (`cargo run --release -p granary-grains -- --plots
//! docs`): the precomputed sphere against the exact rigid sphere, and rice's end-on and
//! broadside pushes, the asset's whole series against the engine's four terms.

use crate::asset::{file_name, Asset};
use crate::moments::{asset_pressure, RaisedCosine, Reduced};
use crate::reference::sphere_pressure;
use crate::shape::ShapeKind;
use crate::SPEED_OF_SOUND;
use plotters::prelude::*;
use std::path::Path;

const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (1200, 700);

fn fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // only fails on a malformed font; the bundled one is valid
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT);
    });
}

/// One line of a plot: colour, dashed, label, points.
type Line = (RGBColor, bool, String, Vec<(f64, f64)>);

/// The plot of `lines` as an 8-bit PNG at `path` (drawn on an RGB canvas, encoded by the png
/// crate: plotters' own file output would bring the `image` crate and its codecs into every
/// build for this one format).
fn draw(path: &Path, caption: &str, x_desc: &str, y_desc: &str, lines: &[Line]) -> Result<(), String> {
    fonts();
    let mut px = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
    let root = BitMapBackend::with_buffer(&mut px, SIZE).into_drawing_area();
    draw_on(root, path, caption, x_desc, y_desc, lines)?;
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, SIZE.0, SIZE.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| format!("{}: {e}", path.display()))?;
    writer
        .write_image_data(&px)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    writer.finish().map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn draw_on(
    root: DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    path: &Path,
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let (x0, x1) = lines
        .iter()
        .flat_map(|l| &l.3)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let peak = lines
        .iter()
        .flat_map(|l| &l.3)
        .fold(0.0f64, |m, p| m.max(p.1.abs()))
        .max(1e-30);
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, (FONT, 28))
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d(x0..x1, -1.1 * peak..1.1 * peak)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style((FONT, 20))
        .axis_desc_style((FONT, 22))
        .draw()
        .map_err(|e| err(&e))?;
    for (color, dashed, label, points) in lines {
        let color = *color;
        let style = color.stroke_width(if *dashed { 2 } else { 3 });
        if *dashed {
            // every other short run of points: a dashed line
            let runs: Vec<Vec<(f64, f64)>> = points.chunks(6).step_by(2).map(|c| c.to_vec()).collect();
            for run in &runs[1..] {
                chart
                    .draw_series(LineSeries::new(run.clone(), style))
                    .map_err(|e| err(&e))?;
            }
            chart
                .draw_series(LineSeries::new(runs[0].clone(), style))
                .map_err(|e| err(&e))?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], color.stroke_width(2)));
        } else {
            chart
                .draw_series(LineSeries::new(points.clone(), style))
                .map_err(|e| err(&e))?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], color.stroke_width(3)));
        }
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 20))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

/// Writes `grains_sphere.png` and `grains_rice.png` into `dir` from the assets in `assets`.
pub fn write(assets: &Path, dir: &Path) -> Result<(), String> {
    let read = |k: ShapeKind| Asset::read(&assets.join(file_name(k))).map_err(|e| format!("{k:?}: {e}"));
    let c = SPEED_OF_SOUND;
    // 1. the sphere: its asset at 2 cm and 10 cm on the axis of the push, against the exact
    //    rigid sphere, for the asset's own pulse; each distance scaled to its exact peak
    let sphere = read(ShapeKind::Sphere)?;
    let (a, h) = (sphere.header.diameter_m / 2.0, sphere.header.pulse_h_s);
    let mut lines: Vec<Line> = Vec::new();
    for (r, color) in [(0.02, RGBColor(31, 119, 180)), (0.1, RGBColor(214, 39, 40))] {
        let n = 400;
        let (t0, dt) = (r / c - 3.0 * h, 12.0 * h / n as f64);
        let exact = sphere_pressure(a, r, 1.0, h, t0, dt, n);
        let fitted: Vec<f64> = (0..n)
            .map(|i| sphere.pressure(2, [0.0, 0.0, r], t0 + i as f64 * dt))
            .collect();
        let peak = exact.iter().fold(0.0f64, |m, p| m.max(p.abs()));
        let us = |i: usize| (t0 + i as f64 * dt - r / c) * 1e6;
        lines.push((
            color,
            false,
            format!("exact rigid sphere, {} cm", r * 100.0),
            exact.iter().enumerate().map(|(i, p)| (us(i), p / peak)).collect(),
        ));
        lines.push((
            color,
            true,
            format!("precomputed asset, {} cm", r * 100.0),
            fitted.iter().enumerate().map(|(i, p)| (us(i), p / peak)).collect(),
        ));
    }
    draw(
        &dir.join("grains_sphere.png"),
        "1 mm sphere pushed by the pulse psi(t; h): asset against the exact solution",
        "time after t - r/c (us)",
        "pressure / exact peak",
        &lines,
    )?;
    // 2. rice: a 40 us raised-cosine push along its length (x) and across it (y), heard at
    //    0.1 m in the direction of the push, tilted 20 degrees off it: the asset's whole series
    //    against the engine's four terms
    let rice = read(ShapeKind::Rice)?;
    let red = Reduced::of(&rice);
    let contact = RaisedCosine { duration_s: 40e-6 };
    let tau = contact.duration_s;
    let r = 0.1;
    let (s20, c20) = 20f64.to_radians().sin_cos();
    let mut lines: Vec<Line> = Vec::new();
    for (field, d, color, what) in [
        (0, [c20, 0.0, s20], RGBColor(31, 119, 180), "along its length"),
        (1, [0.0, c20, s20], RGBColor(214, 39, 40), "across it"),
    ] {
        let n = 300;
        let (t0, dt) = (r / c - 20e-6, (tau + 60e-6) / n as f64);
        let x = d.map(|v| v * r);
        let us = |t: f64| (t - r / c) * 1e6;
        let (mut asset, mut terms) = (Vec::new(), Vec::new());
        for i in 0..n {
            let t = t0 + i as f64 * dt;
            let want = asset_pressure(&rice, field, x, &contact, t);
            let got = red.pressure(field, d, r, contact.derivatives(t - r / c));
            // per 1000 m/s^2 of peak acceleration, in mPa
            asset.push((us(t), want * 1e3 * 1e3));
            terms.push((us(t), got * 1e3 * 1e3));
        }
        lines.push((color, false, format!("pushed {what}: asset"), asset));
        lines.push((color, true, format!("pushed {what}: the engine's terms"), terms));
    }
    draw(
        &dir.join("grains_rice.png"),
        "Rice grain (2.8 mm), a 40 us push of 1000 m/s^2 peak, heard at 0.1 m",
        "time after t - r/c (us)",
        "pressure (mPa)",
        &lines,
    )
}
