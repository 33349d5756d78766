//! Offline rendering: the engine driven by a pour-rate curve, as `granary render` does.
//!
//! Control changes (the pour curve) are applied at the engine's window boundaries, so the
//! result is identical for every block size.

use crate::engine::{Engine, Outputs, Settings, Stats, TriggerMode};
use crate::params::ParamValues;

/// A piecewise-linear pour-rate curve: (time s, rate g/s) points, times non-decreasing.
/// Before the first point the first rate holds; after the last, the last rate.
#[derive(Debug, Clone, PartialEq)]
pub struct PourCurve {
    points: Vec<(f64, f32)>,
}

impl PourCurve {
    /// Pour at `rate` until `stop_s`, then stop.
    pub fn until(rate: f32, stop_s: f64) -> Self {
        PourCurve {
            points: vec![(0.0, rate), (stop_s.max(0.0), rate), (stop_s.max(0.0), 0.0)],
        }
    }

    /// Parses `T:RATE,T:RATE,...` (seconds, g/s).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut points = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (t, r) = part
                .split_once(':')
                .ok_or_else(|| format!("`{part}`: expected TIME:RATE, e.g. 0.5:20"))?;
            let t: f64 = t
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: time `{t}` is not a number"))?;
            let r: f32 = r
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: rate `{r}` is not a number"))?;
            if !t.is_finite() || t < 0.0 {
                return Err(format!("`{part}`: time must be a finite number of seconds >= 0"));
            }
            if !r.is_finite() || !(0.0..=200.0).contains(&r) {
                return Err(format!("`{part}`: rate must be within 0..=200 g/s"));
            }
            if let Some(&(prev, _)) = points.last() {
                if t < prev {
                    return Err(format!("`{part}`: times must not decrease"));
                }
            }
            points.push((t, r));
        }
        if points.is_empty() {
            return Err("the pour curve has no points".into());
        }
        Ok(PourCurve { points })
    }

    pub fn rate_at(&self, t: f64) -> f32 {
        let p = &self.points;
        if t < p[0].0 {
            return p[0].1;
        }
        // the last segment containing t (so a step at equal times takes the later value)
        for w in p.windows(2).rev() {
            let ((t0, r0), (t1, r1)) = (w[0], w[1]);
            if t >= t0 && t <= t1 {
                if t1 - t0 <= 0.0 {
                    return r1;
                }
                return r0 + (r1 - r0) * ((t - t0) / (t1 - t0)) as f32;
            }
        }
        p[p.len() - 1].1
    }
}

#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub seconds: f64,
    pub sample_rate: f32,
    pub block_size: usize,
    /// `None`: pour at the preset's rate until one second before the end.
    pub pour: Option<PourCurve>,
}

/// Rendered audio, aligned: the main output's limiter latency is removed.
pub struct Rendered {
    pub sample_rate: f32,
    pub main: [Vec<f32>; 2],
    pub grains: [Vec<f32>; 2],
    pub cup: [Vec<f32>; 2],
    pub stats: Stats,
}

/// Renders a pour of `values` (trigger mode is forced to Continuous: the curve pours).
pub fn render(values: &ParamValues, opts: &RenderOptions) -> Rendered {
    let mut settings: Settings = values.to_settings();
    settings.trigger_mode = TriggerMode::Continuous;
    let curve = opts
        .pour
        .clone()
        .unwrap_or_else(|| PourCurve::until(settings.pour_rate_g_s, opts.seconds - 1.0));
    settings.pour_rate_g_s = curve.rate_at(0.0);
    let fs = opts.sample_rate;
    let block = opts.block_size.max(1);
    let mut engine = Engine::new(settings, fs, block);
    let latency = engine.latency_samples();
    let frames = (opts.seconds.max(0.0) * fs as f64).round() as usize;
    let total = frames + latency;
    let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; total]);
    let mut pos = 0;
    while pos < total {
        let block_end = (pos + block).min(total);
        while pos < block_end {
            if engine.samples_to_window() == 0 {
                settings.pour_rate_g_s = curve.rate_at(pos as f64 / fs as f64);
                engine.set_settings(&settings);
            }
            let to_window = match engine.samples_to_window() {
                0 => engine.window_len(),
                n => n,
            };
            let end = (pos + to_window).min(block_end);
            let [ml, mr, gl, gr, cl, cr] = &mut out;
            engine.process(Outputs {
                main: [&mut ml[pos..end], &mut mr[pos..end]],
                grains: [&mut gl[pos..end], &mut gr[pos..end]],
                cup: [&mut cl[pos..end], &mut cr[pos..end]],
            });
            pos = end;
        }
    }
    let [mut ml, mut mr, mut gl, mut gr, mut cl, mut cr] = out;
    ml.drain(..latency);
    mr.drain(..latency);
    for v in [&mut gl, &mut gr, &mut cl, &mut cr] {
        v.truncate(frames);
    }
    Rendered {
        sample_rate: fs,
        main: [ml, mr],
        grains: [gl, gr],
        cup: [cl, cr],
        stats: engine.stats(),
    }
}

/// Writes a stereo 32-bit float WAV.
pub fn write_wav(path: &std::path::Path, sample_rate: f32, channels: &[Vec<f32>; 2]) -> Result<(), hound::Error> {
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: sample_rate.round() as u32,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(path, spec)?;
    for (l, r) in channels[0].iter().zip(&channels[1]) {
        w.write_sample(*l)?;
        w.write_sample(*r)?;
    }
    w.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_parsing_and_interpolation() {
        let c = PourCurve::parse("0:0, 1:20, 2:20, 2:0").unwrap();
        assert_eq!(c.rate_at(0.5), 10.0);
        assert_eq!(c.rate_at(1.5), 20.0);
        assert_eq!(c.rate_at(2.0), 0.0);
        assert_eq!(c.rate_at(9.0), 0.0);
        assert!(PourCurve::parse("1:10,0:5").is_err());
        assert!(PourCurve::parse("0:500").is_err());
        assert!(PourCurve::parse("x").is_err());
        assert!(PourCurve::parse("").is_err());
        let u = PourCurve::until(20.0, 3.0);
        assert_eq!(u.rate_at(2.99), 20.0);
        assert_eq!(u.rate_at(3.5), 0.0);
    }
}
