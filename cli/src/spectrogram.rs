//! `granary spectrogram`: a WAV file's short-time spectrum as a PNG fit for a manual — a
//! log-frequency axis, the inferno colour map over a range of dB below the file's loudest bin,
//! frequency and time ticks, a labelled colour bar, text in a built-in 5×7 pixel font.
//!
//! The file is read once, sample by sample: one Hann-windowed FFT frame per column of the plot,
//! centred on that column's share of the file (hop = length / columns; zeros beyond the ends),
//! so memory is one frame and the plot whatever the length. The PNG appears whole or not at
//! all ([`crate::output`]).

use crate::output::{io_message, write_png, Interrupt, Staged};
use crate::render::Failure;
use granary_engine::fft::{Complex, RealToComplex};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Image width, px (plot and margins).
pub const WIDTHS: (u32, u32) = (320, 8192);
/// Image height, px (plot and margins).
pub const HEIGHTS: (u32, u32) = (160, 4096);
/// FFT lengths, samples (powers of two).
pub const FFT_SIZES: (usize, usize) = (64, 65_536);
/// Colour ranges, dB.
pub const RANGES_DB: (f64, f64) = (10.0, 200.0);
/// Default top of the frequency axis, Hz (lowered to the file's Nyquist frequency).
pub const MAX_HZ: f64 = 20_000.0;

/// Which channel is analysed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Channel {
    /// The mean of all channels.
    Mix,
    /// The first channel.
    Left,
    /// The second channel.
    Right,
}

/// `granary spectrogram`'s arguments.
#[derive(Debug, clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// The WAV file to read (integer or 32-bit float samples, any number of channels).
    #[arg(value_name = "IN.wav")]
    pub input: PathBuf,
    /// The PNG file to write (replaced if it is a regular file).
    #[arg(value_name = "OUT.png")]
    pub output: PathBuf,
    /// The channel to analyse.
    #[arg(long, value_enum, default_value_t = Channel::Mix)]
    pub channel: Channel,
    /// Image width, plot and margins, 320..=8192 px.
    #[arg(long, default_value_t = 1200, value_name = "PX")]
    pub width: i64,
    /// Image height, plot and margins, 160..=4096 px.
    #[arg(long, default_value_t = 500, value_name = "PX")]
    pub height: i64,
    /// FFT length, a power of two within 64..=65536 samples (longer: finer in frequency,
    /// coarser in time).
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub fft: i64,
    /// Bottom of the frequency axis, Hz.
    #[arg(long, default_value_t = 50.0, value_name = "F")]
    pub min_hz: f64,
    /// Top of the frequency axis, Hz, up to the file's Nyquist frequency [default: 20000 or
    /// the Nyquist frequency, whichever is lower].
    #[arg(long, value_name = "F")]
    pub max_hz: Option<f64>,
    /// Colour range below the loudest bin, 10..=200 dB: quieter is black.
    #[arg(long, default_value_t = 90.0, value_name = "D")]
    pub range_db: f64,
}

/// Reads `args.input`, writes `args.output`; returns the summary to print.
pub fn run(args: &Args) -> Result<String, Failure> {
    let (width, height, n) = check_options(args)?;
    let input = &args.input;
    let reader = hound::WavReader::open(input).map_err(|e| wav_error(input, e))?;
    let spec = reader.spec();
    let frames = reader.duration() as u64;
    if frames == 0 {
        return Err(format!("{}: the file has no samples", input.display()).into());
    }
    if args.channel == Channel::Right && spec.channels < 2 {
        let msg = format!(
            "{}: --channel right needs two channels; the file has one",
            input.display()
        );
        return Err(msg.into());
    }
    let rate = spec.sample_rate as f64;
    let max_hz = axis_top(args, rate)?;

    let layout = Layout::new(width, height);
    let staged = Staged::with_suffix(std::slice::from_ref(&args.output), ".png")?;
    let interrupt = Interrupt::install()?;
    let rows = row_bands(layout.plot_h, args.min_hz, max_hz);
    let mut stft = Stft::new(n, frames, layout.plot_w, rate, rows);
    analyse(reader, input, args.channel, &mut stft, &interrupt)?;
    let seconds = frames as f64 / rate;
    let image = draw(&layout, &stft, args.min_hz, max_hz, args.range_db, seconds);
    write_png(staged.files()[0], (image.w as u32, image.h as u32), &image.px)
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    if let Some(sig) = interrupt.signal() {
        return Err(Failure::Interrupted(sig));
    }
    staged.commit()?;

    let what = match (args.channel, spec.channels) {
        (_, 1) => "mono".to_string(),
        (Channel::Mix, c) => format!("mix of {c} channels"),
        (Channel::Left, _) => "left channel".to_string(),
        (Channel::Right, _) => "right channel".to_string(),
    };
    let loudest = if stft.loudest > 0.0 {
        // a full-scale sine's bin under a Hann window: (N/4)^2
        let full_scale = (n as f64 / 4.0).powi(2);
        format!(
            "loudest bin {:.1} dB re a full-scale sine",
            10.0 * (stft.loudest / full_scale).log10()
        )
    } else {
        "silent".to_string()
    };
    Ok(format!(
        "{}: {seconds:.2} s at {} Hz, {what}, {loudest}; {n}-point FFT every {:.0} samples ({} columns), {}-{max_hz} Hz, {} dB range\nwrote {} ({}x{})",
        input.display(),
        spec.sample_rate,
        frames as f64 / layout.plot_w as f64,
        layout.plot_w,
        args.min_hz,
        args.range_db,
        args.output.display(),
        image.w,
        image.h,
    ))
}

/// The options that do not depend on the file: (width, height, FFT length).
fn check_options(args: &Args) -> Result<(usize, usize, usize), String> {
    let width = in_range("--width", args.width, WIDTHS)?;
    let height = in_range("--height", args.height, HEIGHTS)?;
    let n = args.fft;
    let (lo, hi) = FFT_SIZES;
    if !(n >= lo as i64 && n <= hi as i64 && (n as u64).is_power_of_two()) {
        return Err(format!("--fft must be a power of two within {lo}..={hi}, got {n}"));
    }
    let (lo, hi) = RANGES_DB;
    if !(args.range_db.is_finite() && (lo..=hi).contains(&args.range_db)) {
        return Err(format!(
            "--range-db must be within {lo}..={hi} dB, got {}",
            args.range_db
        ));
    }
    if !(args.min_hz.is_finite() && args.min_hz > 0.0) {
        return Err(format!("--min-hz must be above 0 Hz, got {}", args.min_hz));
    }
    Ok((width, height, n as usize))
}

/// The top of the frequency axis for a file at `rate`, checked against `--min-hz`.
fn axis_top(args: &Args, rate: f64) -> Result<f64, String> {
    let nyquist = rate / 2.0;
    let max_hz = match args.max_hz {
        None => MAX_HZ.min(nyquist),
        Some(f) if f.is_finite() && f <= nyquist => f,
        Some(f) => {
            return Err(format!(
                "--max-hz must be at most the file's Nyquist frequency ({nyquist} Hz), got {f}"
            ))
        }
    };
    if args.min_hz >= max_hz {
        let min = args.min_hz;
        return Err(format!(
            "--min-hz ({min}) must be below the top of the axis ({max_hz} Hz)"
        ));
    }
    Ok(max_hz)
}

/// Feeds the chosen channel (or the mean of all) through `stft`, sample by sample, then pads
/// it to the last column. A signal stops it.
fn analyse<R: std::io::Read>(
    mut reader: hound::WavReader<R>,
    input: &Path,
    channel: Channel,
    stft: &mut Stft,
    interrupt: &Interrupt,
) -> Result<(), Failure> {
    let spec = reader.spec();
    let frames = reader.duration() as u64;
    let channels = spec.channels as usize;
    let samples: Box<dyn Iterator<Item = hound::Result<f32>>> = match spec.sample_format {
        hound::SampleFormat::Float => Box::new(reader.samples::<f32>()),
        hound::SampleFormat::Int => {
            let scale = 1.0 / (1u64 << (spec.bits_per_sample.clamp(1, 64) - 1)) as f32;
            Box::new(reader.samples::<i32>().map(move |s| s.map(|v| v as f32 * scale)))
        }
    };
    let (first, count) = match channel {
        Channel::Mix => (0, channels),
        Channel::Left => (0, 1),
        Channel::Right => (1, 1),
    };
    let gain = 1.0 / count as f32;
    let (mut sum, mut k, mut read) = (0.0f32, 0usize, 0u64);
    for s in samples {
        let s = s.map_err(|e| {
            let e = match e {
                hound::Error::IoError(e) => io_message(&e),
                e => e.to_string(),
            };
            let at = format!("after {read} of {frames} frames");
            format!("{}: the file ends early or is damaged {at} ({e})", input.display())
        })?;
        if k >= first && k < first + count {
            sum += s;
        }
        k += 1;
        if k == channels {
            stft.push(sum * gain);
            (sum, k, read) = (0.0, 0, read + 1);
            if read % 65_536 == 0 {
                if let Some(sig) = interrupt.signal() {
                    return Err(Failure::Interrupted(sig));
                }
            }
        }
    }
    if read < frames {
        return Err(format!("{}: the file ends early ({read} of {frames} frames)", input.display()).into());
    }
    stft.finish();
    Ok(())
}

fn in_range(flag: &str, v: i64, (lo, hi): (u32, u32)) -> Result<usize, String> {
    if v < lo as i64 || v > hi as i64 {
        return Err(format!("{flag} must be within {lo}..={hi} px, got {v}"));
    }
    Ok(v as usize)
}

/// A hound error as a sentence naming the file.
fn wav_error(path: &Path, e: hound::Error) -> String {
    match e {
        hound::Error::IoError(e) => format!("{}: {}", path.display(), io_message(&e)),
        e => format!("{}: not a WAV file this command reads ({e})", path.display()),
    }
}

/// Each pixel row's band of frequencies `(low, high)` in Hz, top row first, the rows equal in
/// log frequency from `max_hz` down to `min_hz`.
fn row_bands(rows: usize, min_hz: f64, max_hz: f64) -> Vec<(f64, f64)> {
    let edge = |r: usize| max_hz * (min_hz / max_hz).powf(r as f64 / rows as f64);
    (0..rows).map(|r| (edge(r + 1), edge(r))).collect()
}

/// The row of a plot `rows` high (0 at the top) that holds `hz`: [`row_bands`]' inverse.
fn row_of(hz: f64, rows: usize, min_hz: f64, max_hz: f64) -> usize {
    let y = rows as f64 * (max_hz / hz).ln() / (max_hz / min_hz).ln();
    (y.floor().max(0.0) as usize).min(rows - 1)
}

/// Streaming short-time spectrum: one frame per plot column, each reduced to the mean power
/// of every pixel row's band.
struct Stft {
    n: usize,
    /// Samples in the file.
    len: u64,
    cols: usize,
    /// The next column to compute.
    next: usize,
    /// Samples pushed so far (the file's, then zeros).
    pos: u64,
    /// The last `n` samples pushed; sample `i` at `i % n`.
    ring: Vec<f32>,
    window: Vec<f64>,
    fft: Arc<dyn RealToComplex<f64>>,
    frame: Vec<f64>,
    spectrum: Vec<Complex<f64>>,
    scratch: Vec<Complex<f64>>,
    /// Power per bin of the current frame.
    bins: Vec<f64>,
    /// Integral of the bins' linear interpolation from 0 Hz to each bin centre.
    cumulative: Vec<f64>,
    bin_hz: f64,
    rows: Vec<(f64, f64)>,
    /// Mean power per row and column, row-major, top row first.
    power: Vec<f32>,
    /// Largest bin power in any frame.
    loudest: f64,
}

impl Stft {
    fn new(n: usize, len: u64, cols: usize, rate: f64, rows: Vec<(f64, f64)>) -> Stft {
        let fft = granary_engine::fft::forward(n);
        // periodic Hann window
        let window = (0..n)
            .map(|i| 0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n as f64).cos())
            .collect();
        Stft {
            n,
            len,
            cols,
            next: 0,
            pos: 0,
            ring: vec![0.0; n],
            window,
            frame: fft.make_input_vec(),
            spectrum: fft.make_output_vec(),
            scratch: fft.make_scratch_vec(),
            fft,
            bins: vec![0.0; n / 2 + 1],
            cumulative: vec![0.0; n / 2 + 1],
            bin_hz: rate / n as f64,
            power: vec![0.0; rows.len() * cols],
            rows,
            loudest: 0.0,
        }
    }

    /// One past the last sample of column `i`'s frame, centred on the column's middle.
    fn frame_end(&self, i: usize) -> u64 {
        let centre = (2 * i as u64 + 1) * self.len / (2 * self.cols as u64);
        centre + self.n as u64 / 2
    }

    fn push(&mut self, x: f32) {
        let n = self.n as u64;
        self.ring[(self.pos % n) as usize] = x;
        self.pos += 1;
        while self.next < self.cols && self.frame_end(self.next) <= self.pos {
            self.column(self.next);
            self.next += 1;
        }
    }

    /// Pads the file with zeros until every column is computed.
    fn finish(&mut self) {
        while self.next < self.cols {
            self.push(0.0);
        }
    }

    /// The frame ending at `pos` (slots of samples before the file's start were never
    /// written: zeros), windowed, transformed and reduced to rows.
    fn column(&mut self, col: usize) {
        let n = self.n;
        let start = (self.pos % n as u64) as usize;
        for (j, (x, w)) in self.frame.iter_mut().zip(&self.window).enumerate() {
            *x = self.ring[(start + j) % n] as f64 * w;
        }
        // lengths come from the plan itself, so this cannot fail
        let _ = self
            .fft
            .process_with_scratch(&mut self.frame, &mut self.spectrum, &mut self.scratch);
        for (p, c) in self.bins.iter_mut().zip(&self.spectrum) {
            *p = c.norm_sqr();
            self.loudest = self.loudest.max(*p);
        }
        self.cumulative[0] = 0.0;
        for k in 1..self.bins.len() {
            self.cumulative[k] = self.cumulative[k - 1] + 0.5 * (self.bins[k - 1] + self.bins[k]) * self.bin_hz;
        }
        for (r, &(lo, hi)) in self.rows.iter().enumerate() {
            let mean = (integral(&self.bins, &self.cumulative, self.bin_hz, hi)
                - integral(&self.bins, &self.cumulative, self.bin_hz, lo))
                / (hi - lo);
            self.power[r * self.cols + col] = mean.max(0.0) as f32;
        }
    }
}

/// The integral from 0 Hz to `hz` of the linear interpolation between bin centres' powers
/// (`cumulative` holds it at each centre): a row's mean power is this over its band divided by
/// its width, an interpolation where the row is narrower than a bin.
fn integral(bins: &[f64], cumulative: &[f64], bin_hz: f64, hz: f64) -> f64 {
    let x = (hz / bin_hz).max(0.0);
    let k = (x.floor() as usize).min(bins.len() - 2);
    let t = (x - k as f64).min(1.0);
    cumulative[k] + bin_hz * (t * bins[k] + 0.5 * t * t * (bins[k + 1] - bins[k]))
}

/// Where everything goes, in pixels. Text is the 5×7 font scaled by `s`.
struct Layout {
    w: usize,
    h: usize,
    s: usize,
    /// The plot's first column and row (its frame is one pixel outside).
    left: usize,
    top: usize,
    plot_w: usize,
    plot_h: usize,
    /// The colour bar's first column and width.
    bar_x: usize,
    bar_w: usize,
}

impl Layout {
    fn new(w: usize, h: usize) -> Layout {
        let s = (w / 600).min(h / 250).clamp(1, 4);
        let left = 2 * s + text_width("20k", s) + 2 * s + TICK * s + 1;
        let top = 14 * s;
        let bottom = 1 + TICK * s + 2 * s + GLYPH_H * s + 3 * s;
        let right = 1 + 8 * s + 1 + 6 * s + 1 + 3 * s + 2 * s + text_width("-100", s) + 2 * s;
        let plot_w = w - left - right;
        Layout {
            w,
            h,
            s,
            left,
            top,
            plot_w,
            plot_h: h - top - bottom,
            bar_x: left + plot_w + 1 + 8 * s + 1,
            bar_w: 6 * s,
        }
    }
}

/// A major tick's length, in units of the text scale (minor: 3).
const TICK: usize = 5;
const INK: [u8; 3] = [0x1a, 0x1a, 0x1a];
const PAPER: [u8; 3] = [0xff, 0xff, 0xff];

/// An 8-bit RGB image.
struct Image {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Image {
    fn new(w: usize, h: usize) -> Image {
        Image {
            w,
            h,
            px: PAPER.repeat(w * h),
        }
    }

    fn set(&mut self, x: usize, y: usize, c: [u8; 3]) {
        if x < self.w && y < self.h {
            let i = 3 * (y * self.w + x);
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, c: [u8; 3]) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.set(xx, yy, c);
            }
        }
    }

    /// A one-pixel outline around the box `x..x+w`, `y..y+h`.
    fn frame(&mut self, x: usize, y: usize, w: usize, h: usize) {
        self.rect(x - 1, y - 1, w + 2, 1, INK);
        self.rect(x - 1, y + h, w + 2, 1, INK);
        self.rect(x - 1, y - 1, 1, h + 2, INK);
        self.rect(x + w, y - 1, 1, h + 2, INK);
    }

    /// `text` with its top-left corner at `(x, y)`.
    fn text(&mut self, x: usize, y: usize, text: &str, s: usize) {
        for (i, c) in text.chars().enumerate() {
            let rows = glyph(c);
            let x0 = x + i * (GLYPH_W + 1) * s;
            for (gy, bits) in rows.iter().enumerate() {
                for gx in 0..GLYPH_W {
                    if bits & (1 << (GLYPH_W - 1 - gx)) != 0 {
                        self.rect(x0 + gx * s, y + gy * s, s, s, INK);
                    }
                }
            }
        }
    }
}

/// The whole picture: plot, frame, axes, colour bar.
fn draw(l: &Layout, stft: &Stft, min_hz: f64, max_hz: f64, range_db: f64, seconds: f64) -> Image {
    let mut img = Image::new(l.w, l.h);
    let s = l.s;
    let shade = |power: f64| {
        let db = 10.0 * (power / stft.loudest).log10();
        inferno(if db.is_finite() { 1.0 + db / range_db } else { 0.0 })
    };
    for r in 0..l.plot_h {
        for c in 0..l.plot_w {
            img.set(l.left + c, l.top + r, shade(stft.power[r * l.plot_w + c] as f64));
        }
    }
    img.frame(l.left, l.top, l.plot_w, l.plot_h);

    // frequency: a tick at every 1..9 × 10^k Hz (longer at 10^k), labels at 1, 2 and 5 × 10^k
    // where they fit, the powers of ten first
    let decade_px = l.plot_h as f64 / (max_hz / min_hz).log10();
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(min_hz.log10().floor());
    while decade <= max_hz {
        for m in 1..=9 {
            let f = m as f64 * decade;
            if f >= min_hz * (1.0 - 1e-9) && f <= max_hz * (1.0 + 1e-9) {
                ticks.push((m, f));
            }
        }
        decade *= 10.0;
    }
    let mut labelled: Vec<usize> = Vec::new();
    let label_x = l.left - 1 - TICK * s - 2 * s;
    for (pass, marks) in [&[1][..], &[2, 5][..]].into_iter().enumerate() {
        for &(m, f) in &ticks {
            let y = l.top + row_of(f, l.plot_h, min_hz, max_hz);
            if pass == 0 {
                let len = if m == 1 { TICK } else { 3 } * s;
                if m == 1 || decade_px >= 30.0 {
                    img.rect(l.left - 1 - len, y, len, 1, INK);
                }
            }
            if marks.contains(&m) && labelled.iter().all(|&o| o.abs_diff(y) >= (GLYPH_H + 3) * s) {
                let text = hz_label(f);
                img.text(label_x - text_width(&text, s), y - (GLYPH_H * s) / 2, &text, s);
                labelled.push(y);
            }
        }
    }
    img.text(label_x - text_width("Hz", s), 2 * s, "Hz", s);

    // time: ticks at a round step, the smallest whose labels do not crowd (whole seconds
    // unless the file is shorter than two)
    let px_per_s = l.plot_w as f64 / seconds;
    let crowded = |step: f64| {
        let widest = text_width(&time_label((seconds / step).floor() * step, step), s)
            .max(text_width(&time_label(step, step), s));
        step * px_per_s < (widest + 12 * s) as f64
    };
    let step = [
        0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0,
        600.0, 900.0, 1800.0, 3600.0,
    ]
    .into_iter()
    .filter(|&step| step >= 1.0 || seconds < 2.0)
    .find(|&step| !crowded(step))
    .unwrap_or(3600.0);
    let label_y = l.top + l.plot_h + 1 + TICK * s + 2 * s;
    let (mut i, mut labels_end) = (0, 0);
    while i as f64 * step <= seconds * (1.0 + 1e-9) {
        let t = i as f64 * step;
        let x = l.left + ((t * px_per_s).floor() as usize).min(l.plot_w - 1);
        img.rect(x, l.top + l.plot_h + 1, 1, TICK * s, INK);
        let text = time_label(t, step);
        let x = x.saturating_sub(text_width(&text, s) / 2);
        img.text(x, label_y, &text, s);
        labels_end = x + text_width(&text, s);
        i += 1;
    }
    if step < 60.0 {
        // m:ss labels need no unit
        img.text((l.left + l.plot_w + 1 + 7 * s).max(labels_end + 3 * s), label_y, "s", s);
    }

    // colour bar: 0 dB at the top, -range at the bottom
    for r in 0..l.plot_h {
        let c = inferno(1.0 - (r as f64 + 0.5) / l.plot_h as f64);
        img.rect(l.bar_x, l.top + r, l.bar_w, 1, c);
    }
    img.frame(l.bar_x, l.top, l.bar_w, l.plot_h);
    let px_per_db = l.plot_h as f64 / range_db;
    let db_step = [1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 50.0, 100.0]
        .into_iter()
        .find(|step| step * px_per_db >= (3 * GLYPH_H * s) as f64)
        .unwrap_or(100.0);
    let bar_right = l.bar_x + l.bar_w + 1;
    let mut i = 0;
    while i as f64 * db_step <= range_db * (1.0 + 1e-9) {
        let db = i as f64 * db_step;
        let y = l.top + ((db * px_per_db).floor() as usize).min(l.plot_h - 1);
        img.rect(bar_right, y, 3 * s, 1, INK);
        let text = if i == 0 { "0".to_string() } else { format!("-{db}") };
        img.text(bar_right + 5 * s, y - (GLYPH_H * s) / 2, &text, s);
        i += 1;
    }
    let title = "dB";
    img.text(
        (l.bar_x + l.bar_w / 2).saturating_sub(text_width(title, s) / 2),
        2 * s,
        title,
        s,
    );
    img
}

/// `500`, `1k`, `2.5k`, `20k`.
fn hz_label(hz: f64) -> String {
    if hz >= 1000.0 {
        format!("{}k", hz / 1000.0)
    } else {
        format!("{hz}")
    }
}

/// A time tick at `t` seconds, with as many decimals as `step` needs; `m:ss` from minutes up.
fn time_label(t: f64, step: f64) -> String {
    if step >= 60.0 {
        let t = t.round() as u64;
        format!("{}:{:02}", t / 60, t % 60)
    } else if step >= 1.0 {
        format!("{}", t.round())
    } else {
        let decimals = (-step.log10() - 1e-9).ceil() as usize;
        format!("{t:.decimals$}")
    }
}

const GLYPH_W: usize = 5;
const GLYPH_H: usize = 7;

/// 5×7 glyphs of the characters the labels use, one row per byte, the leftmost pixel in bit 4.
const FONT: [(char, [u8; GLYPH_H]); 19] = [
    ('0', [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e]),
    ('1', [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e]),
    ('2', [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f]),
    ('3', [0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e]),
    ('4', [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02]),
    ('5', [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e]),
    ('6', [0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e]),
    ('7', [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08]),
    ('8', [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e]),
    ('9', [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c]),
    ('.', [0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c]),
    ('-', [0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00]),
    (':', [0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00]),
    ('k', [0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12]),
    ('H', [0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11]),
    ('z', [0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f]),
    ('s', [0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e]),
    ('d', [0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f]),
    ('B', [0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e]),
];

/// A character's glyph; a filled box for one the font lacks (so a gap shows in a test).
fn glyph(c: char) -> [u8; GLYPH_H] {
    FONT.iter().find(|(k, _)| *k == c).map_or([0x1f; GLYPH_H], |(_, g)| *g)
}

/// Width of `text` in pixels at scale `s` (one blank column between glyphs).
fn text_width(text: &str, s: usize) -> usize {
    let n = text.chars().count();
    (n * (GLYPH_W + 1)).saturating_sub(1) * s
}

/// The inferno colour map (Smith and van der Walt, matplotlib) at `t` in 0..=1, from Matt
/// Zucker's 6th-degree polynomial fit per channel (public domain; shadertoy.com/view/WlfXRN),
/// within about 1/100 of the published table.
fn inferno(t: f64) -> [u8; 3] {
    const C: [[f64; 3]; 7] = [
        [
            0.000_218_940_369_119_226_5,
            0.001_651_004_631_001_012,
            -0.019_480_898_437_091_84,
        ],
        [0.106_513_419_485_611_6, 0.563_956_436_788_409_1, 3.932_712_388_889_277],
        [11.602_493_082_471_87, -3.972_853_965_665_698, -15.942_394_106_291_4],
        [-41.703_996_131_394_59, 17.436_398_882_053_13, 44.354_145_198_728_13],
        [77.162_935_699_427, -33.402_358_942_100_92, -81.807_309_257_389_93],
        [-71.319_428_244_992_14, 32.626_064_263_977_23, 73.209_519_858_032_02],
        [25.131_126_224_773_41, -12.242_668_952_385_67, -23.070_325_002_871_72],
    ];
    let t = t.clamp(0.0, 1.0);
    let mut rgb = [0u8; 3];
    for (ch, v) in rgb.iter_mut().enumerate() {
        let x = C.iter().rev().fold(0.0, |acc, c| acc * t + c[ch]);
        *v = (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_power_is_the_mean_of_the_interpolated_bins() {
        // power rising linearly with frequency: a band's mean is its middle, whatever its width
        let bin_hz = 10.0;
        let bins: Vec<f64> = (0..=64).map(|k| k as f64 * bin_hz).collect();
        let mut cumulative = vec![0.0; bins.len()];
        for k in 1..bins.len() {
            cumulative[k] = cumulative[k - 1] + 0.5 * (bins[k - 1] + bins[k]) * bin_hz;
        }
        for (lo, hi) in [(3.0, 4.5), (12.0, 300.0), (95.0, 105.0), (0.0, 640.0)] {
            let mean =
                (integral(&bins, &cumulative, bin_hz, hi) - integral(&bins, &cumulative, bin_hz, lo)) / (hi - lo);
            assert!((mean - 0.5 * (lo + hi)).abs() < 1e-9, "{lo}..{hi}: {mean}");
        }
    }

    #[test]
    fn rows_and_ticks_agree() {
        let bands = row_bands(400, 50.0, 20_000.0);
        for f in [50.0, 99.0, 1000.0, 5000.0, 19_999.0] {
            let (lo, hi) = bands[row_of(f, 400, 50.0, 20_000.0)];
            assert!(
                lo <= f * (1.0 + 1e-12) && f <= hi * (1.0 + 1e-12),
                "{f} not in {lo}..{hi}"
            );
        }
        assert_eq!(row_of(20_000.0, 400, 50.0, 20_000.0), 0);
        assert_eq!(row_of(50.0, 400, 50.0, 20_000.0), 399);
    }

    #[test]
    fn every_label_character_has_a_glyph() {
        let mut labels = vec!["Hz".to_string(), "s".into(), "dB".into(), "-100".into()];
        labels.extend([20.0, 50.0, 500.0, 2000.0, 20_000.0].map(hz_label));
        labels.extend([(0.3, 0.1), (15.0, 5.0), (90.0, 60.0), (0.25, 0.05)].map(|(t, s)| time_label(t, s)));
        for l in &labels {
            for c in l.chars() {
                assert!(FONT.iter().any(|(k, _)| *k == c), "no glyph for {c:?} in {l:?}");
            }
        }
        assert_eq!(time_label(90.0, 60.0), "1:30");
        assert_eq!(time_label(0.25, 0.05), "0.25");
        assert_eq!(hz_label(2000.0), "2k");
    }

    #[test]
    fn inferno_runs_from_black_to_pale_yellow_getting_lighter() {
        let luma = |c: [u8; 3]| 0.2126 * c[0] as f64 + 0.7152 * c[1] as f64 + 0.0722 * c[2] as f64;
        assert!(inferno(0.0).iter().all(|&v| v < 8), "{:?}", inferno(0.0));
        let top = inferno(1.0);
        assert!(top[0] > 240 && top[1] > 240 && top[2] > 140 && top[2] < 180, "{top:?}");
        let mut last = -1.0;
        for i in 0..=64 {
            let l = luma(inferno(i as f64 / 64.0));
            assert!(l > last, "not lighter at {i}/64");
            last = l;
        }
    }
}
