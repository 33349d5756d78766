//! `granary render`: a pour streamed to 32-bit float WAV files as it is rendered (memory for
//! one block, whatever the length), metered on the way ([`crate::levels`]), the files written
//! beside their targets and renamed together when complete ([`crate::output`]).

use crate::levels::{Levels, Meter};
use crate::output::{io_message, Interrupt, Staged};
use granary_engine::control::choices::Gesture;
use granary_engine::control::params::{ParamValues, TRIGGER_IDS};
use granary_engine::control::preset;
use granary_engine::control::preset::Preset;
use granary_engine::render::{NoteEvent, PourCurve, RenderOptions, Renderer};
use granary_engine::statistics::logged::Contact;
use granary_engine::Stats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

/// Longest render, s.
pub const MAX_SECONDS: f64 = 3600.0;
/// Sample rates, Hz (whole numbers).
pub const SAMPLE_RATES: (u32, u32) = (8_000, 384_000);
/// Block sizes, samples.
pub const BLOCK_SIZES: (i64, i64) = (1, 65_536);
/// The stems `--stems` writes, `FILE.NAME.wav` each, in this order.
pub const STEM_NAMES: [&str; 4] = ["grains", "cup", "surface", "friction"];
/// Largest WAV data chunk: its size field has 32 bits.
const MAX_WAV_DATA_BYTES: u64 = u32::MAX as u64 - 64;

/// Why a command stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// A bad argument or a failed write: the message.
    Error(String),
    /// A signal (SIGINT, SIGTERM, SIGHUP) stopped it; nothing was written.
    Interrupted(i32),
    /// A signal stopped a batch: the takes finished before it (this many) were kept.
    InterruptedBatch(i32, usize),
    /// The command worked, but a figure exceeds a limit the user set (`compare --max-*`).
    Exceeded(String),
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::Error(e)
    }
}

impl Failure {
    /// The exit code: 1 for a limit exceeded, 2 for an error, 128 + the signal's number when
    /// interrupted.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Exceeded(_) => 1,
            Failure::Error(_) => 2,
            Failure::Interrupted(sig) | Failure::InterruptedBatch(sig, _) => (128 + sig).clamp(0, 255) as u8,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Error(e) | Failure::Exceeded(e) => f.write_str(e),
            Failure::Interrupted(sig) => write!(f, "interrupted by {}: nothing written", signal_name(*sig)),
            Failure::InterruptedBatch(sig, kept) => write!(
                f,
                "interrupted by {}: the {kept} takes finished before it are kept (each with its \
                 sidecar); nothing else written",
                signal_name(*sig)
            ),
        }
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        2 => "SIGINT",
        15 => "SIGTERM",
        1 => "SIGHUP",
        _ => "a signal",
    }
}

/// A hound error as a sentence.
fn wav_message(e: hound::Error) -> String {
    match e {
        hound::Error::IoError(e) => io_message(&e),
        e => e.to_string(),
    }
}

/// The render's sample rate from the command line: a whole number of Hz in range.
pub fn sample_rate(hz: f64) -> Result<u32, String> {
    let (lo, hi) = SAMPLE_RATES;
    if !(hz.is_finite() && hz.fract() == 0.0 && hz >= lo as f64 && hz <= hi as f64) {
        return Err(format!(
            "--sample-rate must be a whole number of Hz within {lo}..={hi}, got {hz}"
        ));
    }
    Ok(hz as u32)
}

/// Checks `--seconds` and that the render fits a WAV file at `rate`.
pub fn seconds(s: f64, rate: u32) -> Result<f64, String> {
    if !(s.is_finite() && s > 0.0 && s <= MAX_SECONDS) {
        return Err(format!("--seconds must be within (0, {MAX_SECONDS}], got {s}"));
    }
    let frames = (s * rate as f64).round() as u64;
    if frames * 8 > MAX_WAV_DATA_BYTES {
        let max = MAX_WAV_DATA_BYTES as f64 / 8.0 / rate as f64;
        return Err(format!(
            "--seconds {s} at {rate} Hz does not fit a WAV file (4 GiB): at most {max:.0} s at this rate"
        ));
    }
    Ok(s)
}

/// Checks `--block-size`.
pub fn block_size(n: i64) -> Result<usize, String> {
    let (lo, hi) = BLOCK_SIZES;
    if !(lo..=hi).contains(&n) {
        return Err(format!("--block-size must be within {lo}..={hi}, got {n}"));
    }
    Ok(n as usize)
}

/// The options of a render other than its parameters, as given on the command line (the
/// pour curve and notes as their text): what a take's sidecar keeps
/// ([`crate::vary::Sidecar`]), checked again when it is read back ([`Options::job`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    pub seconds: f64,
    pub sample_rate: u32,
    pub block_size: usize,
    /// `--pour`, as written (`T:RATE,...`: g/s for a pour, percent of `gesture_amount` for a
    /// stir, shake or tilt).
    pub pour: Option<String>,
    /// `--note`s, as written (`START:END[:VEL[:KEY]]`).
    pub notes: Vec<String>,
    pub stems: bool,
}

impl Options {
    /// The job that renders `values` with these options into `output`: every option checked
    /// (the limits of `--seconds`, `--sample-rate`, `--block-size`, the pour curve, the notes,
    /// notes in continuous mode).
    pub fn job(&self, values: ParamValues, output: PathBuf) -> Result<Job, String> {
        if !output.extension().is_some_and(|e| e.eq_ignore_ascii_case("wav")) {
            return Err(format!(
                "--output {}: Granary writes WAV files only; give a name ending in .wav",
                output.display()
            ));
        }
        let rate = sample_rate(self.sample_rate as f64)?;
        let seconds = seconds(self.seconds, rate)?;
        let block_size = block_size(self.block_size.try_into().unwrap_or(i64::MAX))?;
        // a pour's rate in g/s, or the stir's, shake's or tilt's amount in percent
        let gesture = Gesture::ALL.get(values.choice("gesture")).copied().unwrap_or_default();
        let pour = self
            .pour
            .as_deref()
            .map(|text| PourCurve::parse_for(text, gesture))
            .transpose()
            .map_err(|e| format!("--pour: {e}"))?;
        let notes = self
            .notes
            .iter()
            .map(|n| NoteEvent::parse(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("--note: {e}"))?;
        let job = Job {
            values,
            opts: RenderOptions {
                seconds,
                sample_rate: rate as f32,
                block_size,
                pour,
            },
            sample_rate: rate,
            notes,
            contacts: Vec::new(),
            stems: self.stems,
            output,
            sidecar: None,
        };
        job.check()?;
        Ok(job)
    }
}

/// The preset named on the command line (or the default one) with `--set` changes applied
/// (`ID=VALUE` each).
pub fn preset_with_changes(preset: Option<&str>, set: &[String]) -> Result<Preset, String> {
    let mut p = preset::find(preset.unwrap_or(preset::DEFAULT_PRESET)).map_err(|e| e.to_string())?;
    for kv in set {
        let (id, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected ID=VALUE"))?;
        if id.trim().is_empty() {
            return Err(format!(
                "--set {kv}: no parameter id before `=` (ID=VALUE, e.g. --set pour_rate=40)"
            ));
        }
        if v.trim().is_empty() {
            return Err(format!(
                "--set {kv}: no value after `=` (ID=VALUE, e.g. --set pour_rate=40)"
            ));
        }
        p.values
            .set_text(id.trim(), v)
            .map_err(|e| format!("--set {kv}: {e}"))?;
    }
    Ok(p)
}

/// What to render, checked.
pub struct Job {
    pub values: ParamValues,
    pub opts: RenderOptions,
    pub sample_rate: u32,
    pub notes: Vec<NoteEvent>,
    /// Logged contacts to render instead of a pour (`--collisions`; empty: none).
    pub contacts: Vec<Contact>,
    pub stems: bool,
    pub output: PathBuf,
    /// A JSON sidecar to write with the audio (path, text): it appears with the WAV files or
    /// not at all.
    pub sidecar: Option<(PathBuf, String)>,
}

/// What was rendered.
pub struct Report {
    pub levels: Levels,
    pub stats: Stats,
    pub written: Vec<PathBuf>,
}

impl Job {
    /// The output files: the mix, then (with stems) `FILE.grains.wav`, `FILE.cup.wav`,
    /// `FILE.surface.wav` and `FILE.friction.wav`, then the sidecar if there is one.
    pub fn targets(&self) -> Vec<PathBuf> {
        let mut t = vec![self.output.clone()];
        if self.stems {
            for suffix in STEM_NAMES {
                t.push(self.output.with_extension(format!("{suffix}.wav")));
            }
        }
        if let Some((path, _)) = &self.sidecar {
            t.push(path.clone());
        }
        t
    }

    /// Refuses what the plugin would not play: notes in continuous mode (the plugin then
    /// ignores notes and pours from `pour_rate`).
    pub fn check(&self) -> Result<(), String> {
        let continuous = TRIGGER_IDS[self.values.choice("trigger_mode")] == "continuous";
        if continuous && !self.notes.is_empty() {
            return Err(
                "--note plays MIDI notes, but trigger_mode is continuous, where the plugin ignores \
                 notes and pours from pour_rate: drop --note (and use --pour), or --set trigger_mode=midi"
                    .into(),
            );
        }
        if !self.contacts.is_empty() {
            Renderer::contacts(&self.values, &self.opts, &self.contacts).map_err(|e| format!("--collisions: {e}"))?;
        }
        Ok(())
    }

    /// What the listener would not hear, as warnings for stderr (before rendering).
    pub fn warnings(&self) -> Vec<String> {
        let s = self.opts.seconds;
        let mut w = Vec::new();
        if self.opts.frames() == 0 {
            w.push(format!(
                "--seconds {s} is less than one sample at {} Hz",
                self.sample_rate
            ));
        }
        for n in &self.notes {
            if n.start_s >= s {
                w.push(format!(
                    "--note {}:{}:{} starts after the render ends ({s} s); it is not heard",
                    n.start_s, n.end_s, n.velocity
                ));
            }
        }
        let pours = self.notes.is_empty() && self.contacts.is_empty() && self.opts.pour.is_none();
        if pours && s <= 1.0 && self.opts.frames() > 0 {
            w.push(format!(
                "without --pour the preset pours until one second before the end: --seconds {s} leaves no pour"
            ));
        }
        w
    }

    /// The renderer for this job: an offline render, as a DAW's bounce (`quality` = auto
    /// renders at reference quality; the default, realtime, as everywhere).
    pub fn renderer(&self) -> Renderer {
        let r = if !self.contacts.is_empty() {
            Renderer::contacts(&self.values, &self.opts, &self.contacts).expect("contacts checked by Job::check")
        } else if self.notes.is_empty() {
            Renderer::pour(&self.values, &self.opts)
        } else {
            Renderer::notes(&self.values, &self.opts, &self.notes)
        };
        r.offline(true)
    }

    /// Renders into the targets: temporaries beside them, renamed together at the end; on
    /// an error or a signal nothing is left. `progress` advances by the frames rendered.
    pub fn run(&self, interrupt: &Interrupt, progress: &ProgressBar) -> Result<Report, Failure> {
        let staged = Staged::new(&self.targets())?;
        let mut files = staged.files();
        if let Some((path, text)) = &self.sidecar {
            let mut f = files.pop().expect("the sidecar's temporary is the last");
            f.write_all(text.as_bytes())
                .map_err(|e| format!("{}: {}", path.display(), io_message(&e)))?;
        }
        let targets = staged.targets();
        let sinks: Vec<_> = targets
            .iter()
            .zip(files)
            .map(|(t, f)| (*t, BufWriter::new(f)))
            .collect();
        let mut r = self.renderer();
        let levels = stream(&mut r, sinks, self.sample_rate, interrupt, progress)?;
        if let Some(sig) = interrupt.signal() {
            return Err(Failure::Interrupted(sig));
        }
        let written = staged.targets().into_iter().map(Path::to_path_buf).collect();
        staged.commit()?;
        Ok(Report {
            levels,
            stats: r.stats(),
            written,
        })
    }
}

/// A progress bar on stderr counting `frames` of audio, drawn only when stderr is a terminal
/// (indicatif hides a stderr target that is not one, and on `TERM=dumb`).
pub fn progress_bar(frames: u64, sample_rate: u32, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(frames), ProgressDrawTarget::stderr());
    let rate = f64::from(sample_rate.max(1));
    let style = ProgressStyle::with_template("{msg} [{bar:30}] {percent:>3} % ({speed} real time, {eta} left)")
        .expect("a valid template")
        .with_key(
            "speed",
            move |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&speed_text(state.per_sec() / rate));
            },
        )
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(format!("{what} ({:.0} s of audio)", frames as f64 / sample_rate as f64));
    bar
}

/// Seconds as a person writes them: at most six decimals, no trailing zeros ("1.14", not
/// "1.1400000000000001", the sum of a contact's time and a second).
pub fn seconds_text(seconds: f64) -> String {
    let s = format!("{seconds:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A WAV writer's error as a sentence naming the file written.
fn named(name: &Path) -> impl Fn(hound::Error) -> String + '_ {
    move |e| format!("{}: {}", name.display(), wav_message(e))
}

/// A render's speed as a multiple of real time, with two significant figures below 10
/// ("0.14x", "2.5x", "38x"): a slow render is not "0x".
pub fn speed_text(factor: f64) -> String {
    if factor >= 10.0 {
        format!("{factor:.0}x")
    } else if factor >= 1.0 {
        format!("{factor:.1}x")
    } else if factor.is_nan() || factor <= 0.0 {
        "0x".to_string()
    } else {
        let digits = (1.0 - factor.max(1e-6).log10().floor()) as usize;
        format!("{factor:.digits$}x")
    }
}

/// Streams `renderer` into stereo 32-bit float WAV files, one per sink (the mix, then the
/// grains, cup, surface and friction stems if there are five sinks), metering the mix. Stops at the first
/// write error, which names the sink's file, or when `interrupt` reports a signal. `progress`
/// advances by each block.
pub fn stream<W: Write + Seek>(
    renderer: &mut Renderer,
    sinks: Vec<(&Path, W)>,
    sample_rate: u32,
    interrupt: &Interrupt,
    progress: &ProgressBar,
) -> Result<Levels, Failure> {
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate,
        bits_per_sample: 32,
        sample_format: hound::SampleFormat::Float,
    };
    let mut writers = Vec::with_capacity(sinks.len());
    for (name, sink) in sinks {
        writers.push((name, hound::WavWriter::new(sink, spec).map_err(named(name))?));
    }
    let mut meter = Meter::new(sample_rate)?;
    while let Some(b) = renderer.next_block() {
        if let Some(sig) = interrupt.signal() {
            return Err(Failure::Interrupted(sig));
        }
        meter.add(&b);
        progress.inc(b.len() as u64);
        for ((name, w), [l, r]) in writers.iter_mut().zip([b.main, b.grains, b.cup, b.surface, b.friction]) {
            for (x, y) in l.iter().zip(r) {
                w.write_sample(*x).map_err(named(name))?;
                w.write_sample(*y).map_err(named(name))?;
            }
        }
    }
    for (name, w) in writers {
        w.finalize().map_err(named(name))?;
    }
    Ok(meter.levels())
}

#[cfg(test)]
mod tests {
    use super::*;
    use granary_engine::render::PourCurve;
    use std::io::{self, SeekFrom};

    #[test]
    fn speeds_and_lengths_read_as_written() {
        for (factor, text) in [
            (0.14, "0.14x"),
            (0.046, "0.046x"),
            (2.54, "2.5x"),
            (38.4, "38x"),
            (0.0, "0x"),
            (2e-7, "0.0000002x"),
        ] {
            assert_eq!(speed_text(factor), text);
        }
        for (s, text) in [
            (1.1400000000000001, "1.14"),
            (6.0, "6"),
            (0.5, "0.5"),
            (3599.5, "3599.5"),
        ] {
            assert_eq!(seconds_text(s), text);
        }
    }

    /// A writer on a disk that fills after `room` bytes.
    struct Full<W> {
        inner: W,
        room: usize,
    }

    impl<W: Write> Write for Full<W> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.inner.write(&buf[..n])
        }
        fn flush(&mut self) -> io::Result<()> {
            self.inner.flush()
        }
    }

    impl<W: Seek> Seek for Full<W> {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    fn job(dir: &Path) -> Job {
        let opts = RenderOptions {
            seconds: 1.0,
            sample_rate: 48_000.0,
            block_size: 512,
            pour: Some(PourCurve::parse("0:20").unwrap()),
        };
        Job {
            values: ParamValues::default(),
            opts,
            sample_rate: 48_000,
            notes: Vec::new(),
            contacts: Vec::new(),
            stems: true,
            output: dir.join("pour.wav"),
            sidecar: None,
        }
    }

    fn entries(dir: &Path) -> usize {
        std::fs::read_dir(dir).unwrap().count()
    }

    #[test]
    fn a_full_disk_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let j = job(dir.path());
        // the disk fills while the grains stem is written, 100 kB in
        let err = {
            let staged = Staged::new(&j.targets()).unwrap();
            let names: Vec<PathBuf> = (0..5).map(|i| PathBuf::from(format!("file{i}.wav"))).collect();
            let sinks: Vec<_> = staged
                .files()
                .into_iter()
                .enumerate()
                .map(|(i, f)| {
                    let room = if i == 1 { 100_000 } else { usize::MAX };
                    (
                        names[i].as_path(),
                        Full {
                            inner: BufWriter::new(f),
                            room,
                        },
                    )
                })
                .collect();
            assert_eq!(entries(dir.path()), 5, "five temporaries while writing");
            stream(
                &mut j.renderer(),
                sinks,
                48_000,
                &Interrupt::never(),
                &ProgressBar::hidden(),
            )
            .unwrap_err()
        };
        // named by the stem's file, not the mix's
        assert_eq!(err, Failure::Error("file1.wav: No space left on device".into()));
        assert_eq!(entries(dir.path()), 0, "temporaries removed");
    }

    #[test]
    fn a_signal_stops_the_render_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let j = job(dir.path());
        let stop = Interrupt::never();
        stop.raise(15);
        assert_eq!(
            j.run(&stop, &ProgressBar::hidden()).err(),
            Some(Failure::Interrupted(15))
        );
        assert_eq!(Failure::Interrupted(15).exit_code(), 143);
        assert_eq!(entries(dir.path()), 0);
        // and without one, all five files
        let r = j.run(&Interrupt::never(), &ProgressBar::hidden()).unwrap();
        assert_eq!(r.written.len(), 5);
        assert_eq!(entries(dir.path()), 5);
        assert!(r.levels.integrated_lufs.is_finite() && r.stats.collisions > 0);
    }

    #[test]
    fn limits() {
        assert_eq!(sample_rate(44_100.0), Ok(44_100));
        assert!(sample_rate(44_100.5).unwrap_err().contains("whole number"));
        assert!(seconds(-1.0, 48_000).unwrap_err().contains("(0, 3600], got -1"));
        assert!(seconds(3600.0, 96_000).is_ok());
        assert!(seconds(3600.0, 192_000).unwrap_err().contains("at most 2796 s"));
        assert!(block_size(0).is_err() && block_size(65_537).is_err() && block_size(-3).is_err());
    }
}
