//! `granary spectrogram`, run as a user runs it: the PNG is decoded and read the way a person
//! reads it — find the plot's frame, its ticks, and where the bright line is.

use std::path::{Path, PathBuf};

use crate::support::{granary, names, stderr};

const RATE: u32 = 48_000;

/// A 32-bit float WAV at 48 kHz, `seconds` long; `sample(t, channel)`.
fn write_wav(path: &Path, channels: u16, seconds: f64, sample: impl Fn(f64, u16) -> f32) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: RATE,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for i in 0..(seconds * RATE as f64) as usize {
        let t = i as f64 / RATE as f64;
        for c in 0..channels {
            w.write_sample(sample(t, c)).unwrap();
        }
    }
    w.finalize().unwrap();
}

fn sine(hz: f64, t: f64) -> f32 {
    (0.5 * (std::f64::consts::TAU * hz * t).sin()) as f32
}

/// A decoded 8-bit RGB PNG.
struct Png {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Png {
    fn read(path: &Path) -> Png {
        let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut px = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut px).unwrap();
        assert_eq!(
            (info.color_type, info.bit_depth),
            (png::ColorType::Rgb, png::BitDepth::Eight)
        );
        px.truncate(info.buffer_size());
        Png {
            w: info.width as usize,
            h: info.height as usize,
            px,
        }
    }

    fn luma(&self, x: usize, y: usize) -> f64 {
        let i = 3 * (y * self.w + x);
        let p = &self.px[i..i + 3];
        0.2126 * p[0] as f64 + 0.7152 * p[1] as f64 + 0.0722 * p[2] as f64
    }

    /// Ink: the frame, ticks and text (the background is white).
    fn ink(&self, x: usize, y: usize) -> bool {
        self.luma(x, y) < 100.0
    }
}

/// The plot as a reader finds it: its frame, the frequency ticks on its left edge (row and
/// length, bottom first) and the time ticks under it (columns, left first).
struct Axes {
    /// The plot's first and last columns and rows, inside the frame.
    x0: usize,
    x1: usize,
    y0: usize,
    y1: usize,
    freq_ticks: Vec<(usize, usize)>,
    time_ticks: Vec<usize>,
}

impl Axes {
    fn find(img: &Png) -> Axes {
        // the frame's left side: the first column with a run of ink over half the height
        let run = |x: usize| {
            let (mut best, mut cur, mut end) = (0, 0, 0);
            for y in 0..img.h {
                cur = if img.ink(x, y) { cur + 1 } else { 0 };
                if cur > best {
                    (best, end) = (cur, y);
                }
            }
            (best, end + 1 - best, end)
        };
        let fx = (0..img.w / 2).find(|&x| run(x).0 > img.h / 2).expect("a frame");
        let (_, top, bottom) = run(fx);
        let right = (fx..img.w).take_while(|&x| img.ink(x, top)).last().unwrap();
        let mut freq_ticks: Vec<(usize, usize)> = (top..=bottom)
            .filter(|&y| img.ink(fx - 1, y))
            .map(|y| (y, (1..fx).take_while(|&d| img.ink(fx - d, y)).count()))
            .collect();
        freq_ticks.reverse();
        let time_ticks = (fx..=right).filter(|&x| img.ink(x, bottom + 1)).collect();
        Axes {
            x0: fx + 1,
            x1: right - 1,
            y0: top + 1,
            y1: bottom - 1,
            freq_ticks,
            time_ticks,
        }
    }

    /// Rows of the ticks at 100 Hz, 1 kHz, 10 kHz (the long ones, bottom first) and the short
    /// ones between 1 and 10 kHz (2, 3, … 9 kHz), for the default 50 Hz – 20 kHz axis.
    fn decade_ticks(&self) -> (Vec<usize>, Vec<usize>) {
        let longest = self.freq_ticks.iter().map(|t| t.1).max().unwrap();
        let major: Vec<usize> = self.freq_ticks.iter().filter(|t| t.1 == longest).map(|t| t.0).collect();
        assert_eq!(major.len(), 3, "ticks at 100, 1k and 10k Hz: {:?}", self.freq_ticks);
        let minor = self
            .freq_ticks
            .iter()
            .filter(|t| t.1 < longest && t.0 < major[1] && t.0 > major[2])
            .map(|t| t.0)
            .collect::<Vec<_>>();
        assert_eq!(minor.len(), 8, "ticks at 2..9 kHz: {:?}", self.freq_ticks);
        (major, minor)
    }

    /// The plot row whose mean brightness over plot columns `from..to` (fractions of the plot's
    /// width) is highest.
    fn brightest_row(&self, img: &Png, from: f64, to: f64) -> usize {
        let w = (self.x1 - self.x0 + 1) as f64;
        let cols = self.x0 + (from * w) as usize..self.x0 + (to * w) as usize;
        (self.y0..=self.y1)
            .max_by(|&a, &b| {
                let sum = |y: usize| cols.clone().map(|x| img.luma(x, y)).sum::<f64>();
                sum(a).total_cmp(&sum(b))
            })
            .unwrap()
    }
}

fn near(row: usize, tick: usize, what: &str) {
    assert!(row.abs_diff(tick) <= 3, "{what}: brightest row {row}, tick at {tick}");
}

#[test]
fn a_tone_sits_at_its_tick_and_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let (wav, png) = (dir.path().join("tones.wav"), dir.path().join("tones.png"));
    // 1 kHz for two seconds, then 5 kHz for two
    write_wav(&wav, 1, 4.0, |t, _| sine(if t < 2.0 { 1000.0 } else { 5000.0 }, t));
    let out = granary(&["spectrogram", wav.to_str().unwrap(), png.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("wrote") && text.contains("1200x500"), "{text}");

    let img = Png::read(&png);
    assert_eq!((img.w, img.h), (1200, 500));
    let axes = Axes::find(&img);
    let (major, minor) = axes.decade_ticks();
    near(axes.brightest_row(&img, 0.05, 0.45), major[1], "first half, 1 kHz");
    near(axes.brightest_row(&img, 0.55, 0.95), minor[3], "second half, 5 kHz");

    // a tick every second, 0 to 4 s, evenly across the plot
    let t = &axes.time_ticks;
    assert_eq!(t.len(), 5, "time ticks {t:?}");
    let w = (axes.x1 - axes.x0 + 1) as f64;
    for (i, &x) in t.iter().enumerate() {
        let want = axes.x0 as f64 + (i as f64 * w / 4.0).min(w - 1.0);
        assert!((x as f64 - want).abs() <= 1.0, "{i} s tick at {x}, want {want}");
    }
}

#[test]
fn channels_are_analysed_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("stereo.wav");
    write_wav(&wav, 2, 2.0, |t, c| sine(if c == 0 { 1000.0 } else { 5000.0 }, t));
    for (channel, want_5k) in [("left", false), ("right", true)] {
        let png = dir.path().join(format!("{channel}.png"));
        let out = granary(&[
            "spectrogram",
            wav.to_str().unwrap(),
            png.to_str().unwrap(),
            "--channel",
            channel,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let img = Png::read(&png);
        let axes = Axes::find(&img);
        let (major, minor) = axes.decade_ticks();
        let tick = if want_5k { minor[3] } else { major[1] };
        near(axes.brightest_row(&img, 0.1, 0.9), tick, channel);
    }
}

#[test]
fn the_image_has_the_size_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("tone.wav");
    write_wav(&wav, 1, 0.5, |t, _| sine(1000.0, t));
    for (w, h) in [(640, 320), (320, 160), (2000, 900)] {
        let png = dir.path().join(format!("{w}x{h}.png"));
        let (ws, hs) = (w.to_string(), h.to_string());
        let out = granary(&[
            "spectrogram",
            wav.to_str().unwrap(),
            png.to_str().unwrap(),
            "--width",
            &ws,
            "--height",
            &hs,
            "--fft",
            "1024",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let img = Png::read(&png);
        assert_eq!((img.w, img.h), (w, h));
    }
}

/// Runs `spectrogram` with `args` after IN and OUT; expects a failure whose message contains
/// `message`, and no file in `dir` but `keep`.
fn fails(dir: &Path, input: &Path, output: &Path, args: &[&str], message: &str, keep: &[&str]) {
    let mut all = vec!["spectrogram", input.to_str().unwrap(), output.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = granary(&all);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
    assert!(err.contains(message), "{all:?}: {err}");
    assert!(
        !err.contains("Os {") && !err.contains("Error {"),
        "a Rust value in {err}"
    );
    assert_eq!(names(dir), keep, "{all:?} left files behind");
}

#[test]
fn bad_inputs_and_outputs_fail_clearly_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let png = d.join("out.png");
    let p = |name: &str| -> PathBuf { d.join(name) };

    fails(
        d,
        &p("missing.wav"),
        &png,
        &[],
        "missing.wav: No such file or directory",
        &[],
    );

    std::fs::write(p("text.wav"), "not a WAV file\n").unwrap();
    fails(d, &p("text.wav"), &png, &[], "text.wav: not a WAV file", &["text.wav"]);

    write_wav(&p("empty.wav"), 2, 0.0, |_, _| 0.0);
    fails(
        d,
        &p("empty.wav"),
        &png,
        &[],
        "empty.wav: the file has no samples",
        &["empty.wav", "text.wav"],
    );

    // cut short after the PNG's temporary is made: it goes too
    write_wav(&p("cut.wav"), 1, 1.0, |t, _| sine(440.0, t));
    let len = std::fs::metadata(p("cut.wav")).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(p("cut.wav"))
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let keep = ["cut.wav", "empty.wav", "text.wav"];
    fails(d, &p("cut.wav"), &png, &[], "cut.wav: the file ends early", &keep);

    write_wav(&p("mono.wav"), 1, 0.5, |t, _| sine(440.0, t));
    let keep = ["cut.wav", "empty.wav", "mono.wav", "text.wav"];
    let mono = p("mono.wav");
    fails(d, &mono, &png, &["--channel", "right"], "needs two channels", &keep);
    fails(
        d,
        &mono,
        &png,
        &["--fft", "1000"],
        "--fft must be a power of two",
        &keep,
    );
    fails(
        d,
        &mono,
        &png,
        &["--max-hz", "30000"],
        "Nyquist frequency (24000 Hz)",
        &keep,
    );
    fails(d, &mono, &png, &["--min-hz", "-5"], "--min-hz must be above 0", &keep);
    fails(
        d,
        &mono,
        &png,
        &["--min-hz", "8000", "--max-hz", "4000"],
        "must be below",
        &keep,
    );
    fails(
        d,
        &mono,
        &png,
        &["--width", "100"],
        "--width must be within 320..=8192",
        &keep,
    );
    fails(d, &mono, &png, &["--range-db", "0"], "--range-db must be within", &keep);

    // unwritable outputs: a missing directory, a directory in the way
    fails(
        d,
        &mono,
        &p("no/such/dir/out.png"),
        &[],
        "No such file or directory",
        &keep,
    );
    std::fs::create_dir(p("taken.png")).unwrap();
    let keep = ["cut.wav", "empty.wav", "mono.wav", "taken.png", "text.wav"];
    fails(d, &mono, &p("taken.png"), &[], "is a directory", &keep);
    assert!(names(&p("taken.png")).is_empty());

    // and the same file, well formed, is drawn
    let out = granary(&["spectrogram", mono.to_str().unwrap(), png.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(Png::read(&png).w, 1200);
}
