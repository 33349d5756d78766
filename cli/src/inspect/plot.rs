//! PNG plots of inspected physics (plotters, text in egui's bundled Ubuntu font so that no
//! system font is needed).

use super::contact::ContactSetup;
use super::table::{loglog_slope, PressureRow};
use granary_engine::resonators::ground::{push_displacement, BallDrop, BallDropSound, Grid, Waveform};
use plotters::coord::Shift;
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

/// Draws with `draw` on an RGB canvas of `size` px and writes it to `path` as a PNG
/// (`output::write_png`: plotters' own file output would bring the `image` crate, with its
/// JPEG and BMP codecs, into every build for this one format).
fn png_plot(
    path: &Path,
    size: (u32, u32),
    draw: impl for<'a> FnOnce(DrawingArea<BitMapBackend<'a>, Shift>) -> Result<(), PlotError>,
) -> Result<(), PlotError> {
    let mut px = vec![0u8; size.0 as usize * size.1 as usize * 3];
    draw(BitMapBackend::with_buffer(&mut px, size).into_drawing_area())?;
    let file = std::fs::File::create(path).map_err(|x| perr(path, crate::output::io_message(&x)))?;
    crate::output::write_png(&file, size, &px).map_err(|x| perr(path, x))
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
    png_plot(path, SIZE, |root| {
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
        root.present().map_err(|x| perr(path, x))
    })
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
    png_plot(path, SIZE, |root| {
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
        root.present().map_err(|x| perr(path, x))
    })
}

/// The distance of the push responses of `ground`'s left panel, m (seed 002 Fig. 2).
pub const PUSH_DISTANCE_M: f64 = 1.0;

/// The regularisation lengths eps = c_s t_c / 4 of the left panel, m: at 1 m they give one
/// picture on every ground (the response is a function of c_s t / r), from nearly the
/// unregularised solution to a smooth one.
pub const PUSH_EPSILONS_M: [f64; 3] = [0.01, 0.03, 0.1];

/// One ball dropped on the ground (`inspect ground --plot`), two panels: (a) the ground's
/// vertical displacement 1 m from a push (a unit force held from t = 0), unregularised (the
/// Pekeris solution, seed 002 eq. 3) and regularised for a few eps (eq. 5, `push_displacement`),
/// scaled by the static displacement, like the paper's Fig. 2; (b) the drop's pressure at the
/// listener: the ground's (eq. 12), the ball's (eq. 16–17) and their sum (`BallDrop::run`).
/// `sound` is drawn as computed (a finer grid than the printed numbers' draws a smoother
/// curve); `ratio_db` is the ground-to-ball ratio printed with them.
pub fn ground(
    drop: &BallDrop,
    sound: &BallDropSound,
    ratio_db: f64,
    title: &str,
    path: &Path,
) -> Result<(), PlotError> {
    staged(path, |tmp| draw_ground(drop, sound, ratio_db, title, tmp))
}

/// The colours of successive curves (matplotlib's first four).
const COLOURS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
];

fn draw_ground(
    drop: &BallDrop,
    sound: &BallDropSound,
    ratio_db: f64,
    title: &str,
    path: &Path,
) -> Result<(), PlotError> {
    fonts();
    png_plot(path, (1200, 1300), |root| {
        root.fill(&WHITE).map_err(|x| perr(path, x))?;
        let root = root.titled(title, (FONT, 32)).map_err(|x| perr(path, x))?;
        let (top, bottom) = root.split_vertically(640);
        draw_push_panel(drop, &top, path)?;
        draw_drop_panel(drop, sound, ratio_db, &bottom, path)?;
        root.present().map_err(|x| perr(path, x))
    })
}

fn draw_push_panel(drop: &BallDrop, area: &DrawingArea<BitMapBackend, Shift>, path: &Path) -> Result<(), PlotError> {
    let g = &drop.ground;
    let r = PUSH_DISTANCE_M;
    let nu = g.poisson.clamp(0.0, 0.499);
    let static_m_n = (1.0 - nu) / (2.0 * std::f64::consts::PI * g.shear_modulus() * r);
    let ts = r / g.shear_speed();
    // computed from well before the P wave to long after the R wave (the regularised
    // force's Lorentzian tails), drawn around the fronts, about a point per pixel
    let (t0, t1) = (0.3 * ts, 1.7 * ts);
    let n = 8192;
    let grid = Grid {
        t0: -ts,
        dt: 4.0 * ts / n as f64,
        n,
    };
    let scaled = |w: &Waveform| -> Vec<(f64, f64)> {
        w.samples
            .iter()
            .enumerate()
            .map(|(k, u)| (w.t0 + k as f64 * w.dt, u / static_m_n))
            .filter(|(t, _)| (t0..=t1).contains(t))
            .map(|(t, u)| (t * 1e3, u))
            .collect()
    };
    let exact = scaled(&push_displacement(g, r, None, grid));
    let smooth: Vec<(f64, Vec<(f64, f64)>)> = PUSH_EPSILONS_M
        .iter()
        .map(|&eps| {
            let tc = 4.0 * eps / g.shear_speed();
            (eps, scaled(&push_displacement(g, r, Some(tc), grid)))
        })
        .collect();
    // the y range from the regularised curves (the unregularised one is singular at the
    // Rayleigh front and is clipped to it)
    let (lo, hi) = smooth
        .iter()
        .flat_map(|(_, c)| c.iter().map(|p| p.1))
        .chain([0.0, 1.0])
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
    let pad = 0.08 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("(a) Ground's displacement {r} m from a push (Lamb's problem, seed 002 eq. 3 and 5, Fig. 2)"),
            (FONT, 26),
        )
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d(t0 * 1e3..t1 * 1e3, lo..hi)
        .map_err(|x| perr(path, x))?;
    chart
        .configure_mesh()
        .x_desc("time after the push starts (ms)")
        .y_desc("displacement / static displacement")
        .label_style((FONT, 20))
        .axis_desc_style((FONT, 24))
        .draw()
        .map_err(|x| perr(path, x))?;
    let black = BLACK;
    chart
        .draw_series(LineSeries::new(
            exact.iter().map(|&(t, u)| (t, u.clamp(lo, hi))),
            black.stroke_width(2),
        ))
        .map_err(|x| perr(path, x))?
        .label("unregularised (Pekeris)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], black.stroke_width(3)));
    for ((eps, curve), color) in smooth.iter().zip(COLOURS) {
        let tc = 4.0 * eps / g.shear_speed();
        chart
            .draw_series(LineSeries::new(curve.iter().copied(), color.stroke_width(2)))
            .map_err(|x| perr(path, x))?
            .label(format!("eps = {eps} m (t_c = {:.3} ms)", tc * 1e3))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], color.stroke_width(3)));
    }
    // the fronts: P at a r / c_s, S at r / c_s, R at r / c_R
    let fronts = [
        ("P", r / g.pressure_speed()),
        ("S", r / g.shear_speed()),
        ("R", r / g.rayleigh_speed()),
    ];
    let grey = RGBColor(120, 120, 120);
    for (name, t) in fronts {
        let t = t * 1e3;
        chart
            .draw_series(DashedLineSeries::new([(t, lo), (t, hi)], 6, 4, grey.stroke_width(1)))
            .map_err(|x| perr(path, x))?;
        chart
            .draw_series(std::iter::once(Text::new(
                name.to_string(),
                (t, hi - 0.02 * (hi - lo)),
                (FONT, 22).into_font().color(&grey),
            )))
            .map_err(|x| perr(path, x))?;
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 20))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|x| perr(path, x))?;
    Ok(())
}

/// The span holding a pressure's sound: from where 0.05 % of the energy of `x` has arrived
/// to where 99.5 % has, as sample indices.
fn sounding_span(x: &[f64]) -> (usize, usize) {
    let total: f64 = x.iter().map(|p| p * p).sum();
    let mut acc = 0.0;
    let (mut first, mut last) = (0, x.len().saturating_sub(1));
    let mut started = false;
    for (k, p) in x.iter().enumerate() {
        acc += p * p;
        if !started && acc >= 5e-4 * total {
            first = k;
            started = true;
        }
        if acc >= 0.995 * total {
            last = k;
            break;
        }
    }
    (first, last)
}

fn draw_drop_panel(
    drop: &BallDrop,
    sound: &BallDropSound,
    ratio_db: f64,
    area: &DrawingArea<BitMapBackend, Shift>,
    path: &Path,
) -> Result<(), PlotError> {
    let sum = super::ground::sum(sound);
    // the span of what the listener hears (a quiet part's low-level tail would stretch it)
    let (k0, k1) = sounding_span(&sum);
    let pad = (k1 - k0) / 5 + 1;
    let (k0, k1) = (k0.saturating_sub(pad), (k1 + pad).min(sum.len() - 1));
    let (dt, tg, tb) = (sound.ground.dt, sound.ground.t0, sound.ball.t0);
    let ms = |t: f64| t * 1e3;
    let peak = sum
        .iter()
        .chain(&sound.ground.samples)
        .chain(&sound.ball.samples)
        .fold(0.0f64, |m, p| m.max(p.abs()))
        .max(1e-30);
    let l = drop.listener;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "(b) Pressure at the listener ({}, {}, {}) m: t_c = {:.3} ms, ground / ball {:.2} dB",
                l[0],
                l[1],
                l[2],
                sound.contact_s * 1e3,
                ratio_db
            ),
            (FONT, 26),
        )
        .margin(20)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d(
            ms(tb + k0 as f64 * dt)..ms(tb + k1 as f64 * dt),
            -1.1 * peak..1.1 * peak,
        )
        .map_err(|x| perr(path, x))?;
    chart
        .configure_mesh()
        .x_desc("time after the impact (ms)")
        .y_desc("pressure (Pa)")
        .label_style((FONT, 20))
        .axis_desc_style((FONT, 24))
        .y_label_formatter(&|y| {
            if y.abs() < peak * 1e-6 {
                "0".into()
            } else {
                format!("{y:.2}")
            }
        })
        .draw()
        .map_err(|x| perr(path, x))?;
    let series: [(&[f64], f64, RGBColor, u32, &str); 3] = [
        (&sound.ground.samples, tg, COLOURS[0], 2, "ground (seed 002 eq. 12)"),
        (
            &sound.ball.samples,
            tb,
            COLOURS[3],
            2,
            "ball: dipole and its image (eq. 16-17)",
        ),
        (&sum, tb, BLACK, 3, "ground + ball"),
    ];
    for (data, t0, color, width, label) in series {
        chart
            .draw_series(LineSeries::new(
                (k0..=k1).map(|k| (ms(t0 + k as f64 * dt), data[k])),
                color.stroke_width(width),
            ))
            .map_err(|x| perr(path, x))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 30, y)], color.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 20))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|x| perr(path, x))?;
    Ok(())
}
