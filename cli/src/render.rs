//! `granary render`: a pour streamed to 32-bit float WAV files as it is rendered (memory for
//! one block, whatever the length), metered on the way ([`crate::levels`]), the files written
//! beside their targets and renamed together when complete ([`crate::output`]).

use crate::bwf::{self, Marker, Tail};
use crate::levels::{Levels, Meter, R128};
use crate::library::{self, Made, Ucs};
use crate::output::{io_message, Interrupt, Staged};
use crate::vary::Sidecar;
use granary_engine::control::choices::Gesture;
use granary_engine::control::params::{ParamValues, GESTURE_IDS, TRIGGER_IDS};
use granary_engine::control::preset;
use granary_engine::control::preset::Preset;
use granary_engine::render::{Block, NoteEvent, PourCurve, RenderOptions, Renderer};
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
/// Largest WAV data chunk: its size field has 32 bits, and the file's other chunks (the
/// take's iXML, the markers) need room within the RIFF size's 32 bits too.
const MAX_WAV_DATA_BYTES: u64 = u32::MAX as u64 - (1 << 20);
/// Longest loop, s (`--loop`).
pub const MAX_LOOP_SECONDS: f64 = 600.0;
/// Shortest loop, s.
pub const MIN_LOOP_SECONDS: f64 = 1.0;
/// A loop's pour runs this long before the loop starts, s: the stream has landed and the
/// pile and the cup's modes are in their steady state.
pub const LOOP_WARM_UP_S: f64 = 2.0;
/// A loop's crossfade, s (at most a quarter of the loop).
pub const LOOP_FADE_S: f64 = 0.5;
/// Envelope windows for the −60 dB marker, s.
pub const DECAY_WINDOW_S: f64 = 0.01;
/// The −60 dB marker: where the mix's 10 ms power last exceeds the loudest 10 ms by this
/// much (a power ratio: −60 dB).
pub const DECAY_RATIO: f64 = 1e-6;

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
    /// `--collisions`: the contact file rendered (read again by `--from`, which checks that
    /// it is still the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collisions: Option<ContactSource>,
    /// `--loop`: a seamless loop of `seconds` of a steady pour.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "loop")]
    pub loop_s: Option<f64>,
    /// `--name-style ucs`: the UCS ids (the stems are then named `..._grains.wav`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ucs: Option<Ucs>,
    /// `--loudness`, `--peak`: the normalisation asked for and the gain it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalise: Option<Normalise>,
}

/// The contact file a take rendered: its absolute path and its content's digest
/// ([`crate::contacts::digest`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSource {
    pub file: String,
    pub digest: String,
}

/// Largest normalising gain either way, dB.
pub const MAX_GAIN_DB: f64 = 120.0;

/// A take's normalisation (`--loudness`, `--peak`, `--loudness-batch`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Normalise {
    /// Integrated loudness asked for, LUFS (EBU R 128).
    pub loudness_lufs: Option<f64>,
    /// Largest true peak asked for, dBTP.
    pub peak_dbtp: Option<f64>,
    /// One gain for the whole batch (the one its loudest take needs).
    pub batch: bool,
    /// The gain applied, dB: measured by a first render, then kept (`--from` applies it
    /// again without measuring). `None` until measured.
    pub gain_db: Option<f64>,
}

impl Normalise {
    /// The gain that meets the targets for a take measured at `integrated` LUFS and
    /// `true_peak` dBTP, dB: the smaller of the two gains when both are given. `None` when no
    /// target can be met: the figure it needs was not measured (a silent take; an integrated
    /// loudness needs 400 ms above −70 LUFS) or the gain would exceed [`MAX_GAIN_DB`].
    pub fn gain_for(&self, integrated: f64, true_peak: f64) -> Option<f64> {
        let by_loudness = self
            .loudness_lufs
            .filter(|_| integrated.is_finite())
            .map(|t| t - integrated);
        let by_peak = self.peak_dbtp.filter(|_| true_peak.is_finite()).map(|t| t - true_peak);
        let g = match (by_loudness, by_peak) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return None,
        };
        (g.abs() <= MAX_GAIN_DB).then_some(g)
    }

    /// Checks the targets: loudness within −70..=0 LUFS, peak within −60..=0 dBTP.
    pub fn check(&self) -> Result<(), String> {
        if let Some(l) = self.loudness_lufs {
            if !(l.is_finite() && (-70.0..=0.0).contains(&l)) {
                return Err(format!("--loudness must be within -70..=0 LUFS, got {l}"));
            }
        }
        if let Some(p) = self.peak_dbtp {
            if !(p.is_finite() && (-60.0..=0.0).contains(&p)) {
                return Err(format!("--peak must be within -60..=0 dBTP, got {p}"));
            }
        }
        if self.loudness_lufs.is_none() && self.peak_dbtp.is_none() {
            return Err("--loudness-batch needs --loudness or --peak".into());
        }
        if let Some(g) = self.gain_db.filter(|g| !(g.is_finite() && g.abs() <= MAX_GAIN_DB)) {
            return Err(format!(
                "the normalising gain {g} dB is outside -{MAX_GAIN_DB}..={MAX_GAIN_DB} dB"
            ));
        }
        Ok(())
    }
}

impl Options {
    /// A loop's frames at `rate`: (rendered before the loop and dropped, the crossfade's,
    /// the loop's), or `None` for a render that is not a loop.
    pub fn loop_frames(&self, rate: u32) -> Option<(usize, usize, usize)> {
        let l = self.loop_s?;
        let fs = rate as f64;
        let body = (l * fs).round() as usize;
        let fade = ((LOOP_FADE_S * fs).round() as usize).min(body / 4);
        let warm = (LOOP_WARM_UP_S * fs).round() as usize;
        Some((warm, fade, body))
    }
}

impl Sidecar {
    /// The job that renders this take into `output`: every option checked (the limits of
    /// `--seconds`, `--sample-rate`, `--block-size`, the pour curve, the notes, notes in
    /// continuous mode, a loop's conditions); a contact file named by the take read again.
    pub fn job(&self, output: PathBuf) -> Result<Job, String> {
        let o = &self.render;
        let values = self.params.clone();
        if !output.extension().is_some_and(|e| e.eq_ignore_ascii_case("wav")) {
            return Err(format!(
                "--output {}: Granary writes WAV files only; give a name ending in .wav",
                output.display()
            ));
        }
        let rate = sample_rate(o.sample_rate as f64)?;
        let seconds = seconds(o.seconds, rate)?;
        let block_size = block_size(o.block_size.try_into().unwrap_or(i64::MAX))?;
        // a pour's rate in g/s, or the stir's, shake's or tilt's amount in percent
        let gesture = Gesture::ALL.get(values.choice("gesture")).copied().unwrap_or_default();
        let mut pour = o
            .pour
            .as_deref()
            .map(|text| PourCurve::parse_for(text, gesture))
            .transpose()
            .map_err(|e| format!("--pour: {e}"))?;
        let notes = o
            .notes
            .iter()
            .map(|n| NoteEvent::parse(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("--note: {e}"))?;
        if let Some(n) = &o.normalise {
            n.check()?;
        }
        let mut render_seconds = seconds;
        if let Some(l) = o.loop_s {
            if !(l.is_finite() && (MIN_LOOP_SECONDS..=MAX_LOOP_SECONDS).contains(&l)) {
                return Err(format!(
                    "--loop must be within {MIN_LOOP_SECONDS}..={MAX_LOOP_SECONDS} s, got {l}"
                ));
            }
            if o.pour.is_some() || !o.notes.is_empty() || o.collisions.is_some() {
                return Err(
                    "--loop renders a steady pour at the preset's rate: it takes no --pour, --note or --collisions"
                        .into(),
                );
            }
            // the held rate (or amount) from the first sample past the render's end
            let held = held_amount(&values);
            let (warm, fade, body) = o.loop_frames(rate).expect("a loop");
            render_seconds = (warm + fade + body) as f64 / rate as f64;
            pour = Some(PourCurve::until(held, render_seconds + 1.0));
        }
        let contacts = match &o.collisions {
            Some(source) => {
                let (file, digest) = crate::contacts::ContactFile::read_with_digest(Path::new(&source.file))?;
                if digest != source.digest {
                    return Err(format!(
                        "{}: the contact file changed since the take was rendered from it (digest {digest}, the take's {}): it would not render the same",
                        source.file, source.digest
                    ));
                }
                file.contacts
            }
            None => Vec::new(),
        };
        let gain_db = o.normalise.as_ref().and_then(|n| n.gain_db).unwrap_or(0.0);
        let job = Job {
            values,
            opts: RenderOptions {
                seconds: render_seconds,
                sample_rate: rate as f32,
                block_size,
                pour,
            },
            sample_rate: rate,
            notes,
            contacts,
            stems: o.stems,
            output,
            take: self.clone(),
            write_sidecar: false,
            gain: db_to_gain(gain_db),
        };
        job.check()?;
        Ok(job)
    }
}

/// A gain in dB as the factor the samples are multiplied by (exactly 1 for 0 dB).
pub fn db_to_gain(db: f64) -> f32 {
    if db == 0.0 {
        1.0
    } else {
        10f64.powf(db / 20.0) as f32
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
    /// The take: every file's iXML carries it, and with `write_sidecar` its JSON sidecar
    /// (`NAME.json` beside the WAV), which appears with the WAV files or not at all.
    pub take: Sidecar,
    pub write_sidecar: bool,
    /// Every sample is multiplied by this (`--loudness`, `--peak`; 1: none).
    pub gain: f32,
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
            for stem in STEM_NAMES {
                t.push(stem_path(&self.output, stem, self.take.render.ucs.is_some()));
            }
        }
        if self.write_sidecar {
            t.push(self.output.with_extension("json"));
        }
        t
    }

    /// Where the gesture starts and where it stops (the pour's stream, the notes, the logged
    /// contacts), s; either `None` where there is none (a loop pours throughout).
    pub fn gesture_span(&self) -> (Option<f64>, Option<f64>) {
        if self.take.render.loop_s.is_some() {
            return (None, None);
        }
        if !self.contacts.is_empty() {
            let t = self.contacts.iter().map(|c| c.time_s);
            return (
                Some(t.clone().fold(f64::INFINITY, f64::min)),
                Some(t.fold(0.0, f64::max)),
            );
        }
        if !self.notes.is_empty() {
            let start = self.notes.iter().map(|n| n.start_s).fold(f64::INFINITY, f64::min);
            let stop = self.notes.iter().map(|n| n.end_s).fold(0.0, f64::max);
            return (Some(start), Some(stop));
        }
        let curve = match &self.opts.pour {
            Some(c) => c.clone(),
            None => PourCurve::until(held_amount(&self.values), self.opts.seconds - 1.0),
        };
        match curve.span() {
            Some((start, stop)) => (Some(start), stop),
            None => (None, None),
        }
    }

    /// The markers known before the render: the gesture's start and stop, where they fall
    /// within it (frames).
    fn markers(&self) -> Vec<Marker> {
        let gesture = GESTURE_IDS
            .get(self.values.choice("gesture"))
            .copied()
            .unwrap_or("pour");
        let (first, last) = if self.contacts.is_empty() {
            (format!("{gesture} starts"), format!("{gesture} stops"))
        } else {
            ("first contact".into(), "last contact".into())
        };
        let frames = self.opts.frames() as u64;
        let at = |t: f64| (t * self.sample_rate as f64).round().max(0.0) as u64;
        let (start, stop) = self.gesture_span();
        if let (Some(a), Some(b)) = (start, stop) {
            if b <= a {
                // it stops where it starts: nothing is poured
                return Vec::new();
            }
        }
        let mut m = Vec::new();
        for (t, label) in [(start, first), (stop, last)] {
            if let Some(t) = t.map(at).filter(|&f| f < frames) {
                m.push(Marker { frame: t, label });
            }
        }
        m
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

    /// Renders without writing anything: the levels a normalisation starts from (a loop's
    /// shape included, no gain). `progress` advances by the frames rendered.
    pub fn measure(&self, interrupt: &Interrupt, progress: &ProgressBar) -> Result<Levels, Failure> {
        let mut r = self.renderer();
        let mut shape = Shape::new(self);
        shape.gain = 1.0;
        let mut meter = Meter::new(self.sample_rate)?;
        while let Some(b) = r.next_block() {
            if let Some(sig) = interrupt.signal() {
                return Err(Failure::Interrupted(sig));
            }
            progress.inc(b.len() as u64);
            let b = shape.apply(&b);
            meter.add(&b);
        }
        Ok(meter.levels())
    }

    /// The normalising gain this take's targets ask for, given its levels (`None` when the take
    /// is not normalised, or cannot be: [`Normalise::gain_for`]).
    pub fn gain_for(&self, l: &Levels) -> Option<f64> {
        let n = self.take.render.normalise.as_ref()?;
        n.gain_for(l.integrated_lufs, l.true_peak_dbtp)
    }

    /// Applies a normalising gain of `db` dB and keeps it in the take's record.
    pub fn set_gain_db(&mut self, db: f64) {
        self.gain = db_to_gain(db);
        if let Some(n) = &mut self.take.render.normalise {
            n.gain_db = Some(db);
        }
    }

    /// Whether the take is to be normalised and its gain not yet measured.
    pub fn needs_measuring(&self) -> bool {
        self.take.render.normalise.as_ref().is_some_and(|n| n.gain_db.is_none())
    }

    /// Renders into the targets: temporaries beside them, renamed together at the end; on
    /// an error or a signal nothing is left. `progress` advances by the frames rendered.
    pub fn run(&self, interrupt: &Interrupt, progress: &ProgressBar) -> Result<Report, Failure> {
        let staged = Staged::new(&self.targets())?;
        let mut files = staged.files();
        if self.write_sidecar {
            let path = self.output.with_extension("json");
            let mut f = files.pop().expect("the sidecar's temporary is the last");
            f.write_all(self.take.to_json().as_bytes())
                .map_err(|e| format!("{}: {}", path.display(), io_message(&e)))?;
        }
        let targets = staged.targets();
        let made = Made::now();
        let sinks: Vec<_> = targets
            .iter()
            .zip(files)
            .enumerate()
            .map(|(i, (t, f))| {
                let stem = i.checked_sub(1).map(|i| STEM_NAMES[i]);
                (*t, BufWriter::new(f), library::head(&self.take, stem, &made))
            })
            .collect();
        let mut r = self.renderer();
        let shape = Shape::new(self);
        let levels = stream(
            &mut r,
            sinks,
            shape,
            &self.markers(),
            self.sample_rate,
            interrupt,
            progress,
        )?;
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

/// A write error as a sentence naming the file written.
fn named(name: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {}", name.display(), io_message(&e))
}

/// A stem's file beside the mix `output`: `NAME.grains.wav`, or with UCS names
/// `NAME_grains.wav` (UCS's user-data block: the name's other blocks stay as they are).
pub fn stem_path(output: &Path, stem: &str, ucs: bool) -> PathBuf {
    if ucs {
        let name = output.file_stem().unwrap_or_default().to_string_lossy();
        output.with_file_name(format!("{name}_{stem}.wav"))
    } else {
        output.with_extension(format!("{stem}.wav"))
    }
}

/// What a render without a curve holds (as `Renderer::pour` does): a pour's `pour_rate`, g/s,
/// or a stir's, shake's or tilt's `gesture_amount`, percent.
fn held_amount(values: &ParamValues) -> f32 {
    match Gesture::ALL.get(values.choice("gesture")) {
        Some(Gesture::Pour) | None => values.float("pour_rate"),
        Some(_) => values.float("gesture_amount"),
    }
}

/// What the rendered frames become in the files: a gain on every sample, and for a loop the
/// frames before it dropped, its last `fade` frames crossfaded (equal power: cos and sin)
/// with the `fade` frames rendered just before its first, so that its end runs into its
/// start as the render ran on.
struct Shape {
    gain: f32,
    /// Frames dropped before the crossfade's source (a loop's warm-up).
    skip: usize,
    /// Crossfade, frames (0: none).
    fade: usize,
    /// Frames written (a loop's length; otherwise all).
    body: usize,
    /// Frames handed in so far.
    seen: usize,
    /// The crossfade's source, per channel (main L, R, grains L, R, ... friction R).
    pre: [Vec<f32>; 10],
    out: [Vec<f32>; 10],
}

impl Shape {
    fn new(job: &Job) -> Shape {
        let (skip, fade, body) = job
            .take
            .render
            .loop_frames(job.sample_rate)
            .unwrap_or((0, 0, usize::MAX));
        let block = job.opts.block_size;
        Shape {
            gain: job.gain,
            skip,
            fade,
            body,
            seen: 0,
            pre: std::array::from_fn(|_| Vec::with_capacity(fade)),
            out: std::array::from_fn(|_| Vec::with_capacity(block)),
        }
    }

    /// The frames of `b` that go into the files, shaped; empty while a loop warms up.
    fn apply<'a>(&'a mut self, b: &Block<'_>) -> Block<'a> {
        let chans = [
            b.main[0],
            b.main[1],
            b.grains[0],
            b.grains[1],
            b.cup[0],
            b.cup[1],
            b.surface[0],
            b.surface[1],
            b.friction[0],
            b.friction[1],
        ];
        for o in &mut self.out {
            o.clear();
        }
        let from_fade = self.body.saturating_sub(self.fade);
        if self.skip == 0 && self.fade == 0 && self.seen + b.len() <= self.body {
            // no loop to shape (or its body's middle): every frame, times the gain
            for (o, c) in self.out.iter_mut().zip(&chans) {
                o.extend(c[..b.len()].iter().map(|x| x * self.gain));
            }
            self.seen += b.len();
            return self.shaped();
        }
        for t in 0..b.len() {
            let n = self.seen + t;
            let Some(m) = n.checked_sub(self.skip) else { continue };
            if m < self.fade {
                for (p, c) in self.pre.iter_mut().zip(&chans) {
                    p.push(c[t]);
                }
                continue;
            }
            let k = m - self.fade;
            if k >= self.body {
                continue;
            }
            if k >= from_fade {
                // the end of the loop into what was rendered before its start
                let i = k - from_fade;
                let theta = (i as f64 + 0.5) / self.fade as f64 * std::f64::consts::FRAC_PI_2;
                let (fade_in, fade_out) = (theta.sin() as f32, theta.cos() as f32);
                for ((o, c), p) in self.out.iter_mut().zip(&chans).zip(&self.pre) {
                    o.push((c[t] * fade_out + p[i] * fade_in) * self.gain);
                }
            } else {
                for (o, c) in self.out.iter_mut().zip(&chans) {
                    o.push(c[t] * self.gain);
                }
            }
        }
        self.seen += b.len();
        self.shaped()
    }

    /// The frames shaped last, as a block.
    fn shaped(&self) -> Block<'_> {
        let o = &self.out;
        Block {
            main: [&o[0], &o[1]],
            grains: [&o[2], &o[3]],
            cup: [&o[4], &o[5]],
            surface: [&o[6], &o[7]],
            friction: [&o[8], &o[9]],
        }
    }
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

/// Streams `renderer` into stereo 32-bit float Broadcast WAV files, one per sink (the mix,
/// then the grains, cup, surface and friction stems if there are five sinks), each with its
/// head ([`bwf::Head`]), metering the mix (and each file's loudness for its `bext`), shaped by
/// `shape` (a gain, a loop). Each file ends with the `markers` and the −60 dB point of the
/// mix after the last of them ([`decay_marker`]). Stops at the first write error, which names
/// the sink's file, or when `interrupt` reports a signal. `progress` advances by each block.
fn stream<W: Write + Seek>(
    renderer: &mut Renderer,
    sinks: Vec<(&Path, W, bwf::Head)>,
    mut shape: Shape,
    markers: &[Marker],
    sample_rate: u32,
    interrupt: &Interrupt,
    progress: &ProgressBar,
) -> Result<Levels, Failure> {
    let looped = shape.fade > 0;
    let mut writers = Vec::with_capacity(sinks.len());
    for (name, sink, head) in sinks {
        let w = bwf::Writer::new(sink, sample_rate, &head).map_err(named(name))?;
        writers.push((name, w, R128::new(sample_rate)?));
    }
    let mut meter = Meter::new(sample_rate)?;
    let mut envelope = Envelope::new(sample_rate);
    while let Some(b) = renderer.next_block() {
        if let Some(sig) = interrupt.signal() {
            return Err(Failure::Interrupted(sig));
        }
        progress.inc(b.len() as u64);
        let b = shape.apply(&b);
        if b.is_empty() {
            continue;
        }
        meter.add(&b);
        envelope.add(b.main);
        for (i, ((name, w, r128), [l, r])) in writers
            .iter_mut()
            .zip([b.main, b.grains, b.cup, b.surface, b.friction])
            .enumerate()
        {
            w.write(l, r).map_err(named(name))?;
            // the mix's figures come from `meter`
            if i > 0 {
                r128.add([l, r]);
            }
        }
    }
    let mut marks = markers.to_vec();
    if !looped {
        let after = marks.iter().map(|m| m.frame).max();
        if let Some(m) = after.and_then(|a| envelope.decay_marker(a)) {
            marks.push(m);
        }
    }
    for (i, (name, w, r128)) in writers.into_iter().enumerate() {
        let loudness = if i == 0 {
            meter.r128().loudness()
        } else {
            r128.loudness()
        };
        let tail = Tail {
            loudness,
            markers: marks.clone(),
            looped,
        };
        w.finish(&tail).map_err(named(name))?;
    }
    Ok(meter.levels())
}

/// The mix's power in windows of [`DECAY_WINDOW_S`], counted from the first frame written.
struct Envelope {
    window: usize,
    frames: usize,
    sum: f64,
    /// Mean power of each whole window (both channels).
    power: Vec<f32>,
}

impl Envelope {
    fn new(sample_rate: u32) -> Envelope {
        Envelope {
            window: ((DECAY_WINDOW_S * sample_rate as f64).round() as usize).max(1),
            frames: 0,
            sum: 0.0,
            power: Vec::new(),
        }
    }

    fn add(&mut self, x: [&[f32]; 2]) {
        for (l, r) in x[0].iter().zip(x[1]) {
            self.sum += (*l as f64).powi(2) + (*r as f64).powi(2);
            self.frames += 1;
            if self.frames.is_multiple_of(self.window) {
                self.power.push((self.sum / (2 * self.window) as f64) as f32);
                self.sum = 0.0;
            }
        }
    }

    /// The marker where the mix has decayed to −60 dB below its loudest window for good: the
    /// end of the last window above that, if it lies after frame `after` and before the
    /// render's end (a sound still ringing at the end gets none).
    fn decay_marker(&self, after: u64) -> Option<Marker> {
        let loudest = self.power.iter().copied().fold(0.0f32, f32::max) as f64;
        if loudest <= 0.0 {
            return None;
        }
        let last = self.power.iter().rposition(|&p| p as f64 >= loudest * DECAY_RATIO)?;
        let frame = ((last + 1) * self.window) as u64;
        (frame > after && last + 1 < self.power.len()).then(|| Marker {
            frame,
            label: "decayed to -60 dB".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let options = Options {
            seconds: 1.0,
            sample_rate: 48_000,
            block_size: 512,
            pour: Some("0:20".into()),
            notes: Vec::new(),
            stems: true,
            collisions: None,
            loop_s: None,
            ucs: None,
            normalise: None,
        };
        let output = dir.join("pour.wav");
        Sidecar::single("Default", &[], &options, &ParamValues::default(), &output)
            .job(output)
            .unwrap()
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
                        library::head(&j.take, None, &Made::now()),
                    )
                })
                .collect();
            assert_eq!(entries(dir.path()), 5, "five temporaries while writing");
            stream(
                &mut j.renderer(),
                sinks,
                Shape::new(&j),
                &[],
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
    fn a_loops_end_runs_into_its_start() {
        // a slow sine and a fast one: what a render runs on with, continuous at every sample
        let (skip, fade, body) = (100, 64, 1000);
        let x: Vec<f32> = (0..skip + fade + body)
            .map(|n| (n as f32 * 0.01).sin() + 0.1 * (n as f32 * 0.9).sin())
            .collect();
        let zeros = vec![0.0f32; x.len()];
        let mut shape = Shape {
            gain: 0.5,
            skip,
            fade,
            body,
            seen: 0,
            pre: std::array::from_fn(|_| Vec::with_capacity(fade)),
            out: std::array::from_fn(|_| Vec::new()),
        };
        let mut y = Vec::new();
        for at in (0..x.len()).step_by(77) {
            let end = (at + 77).min(x.len());
            let (c, z) = (&x[at..end], &zeros[at..end]);
            let b = shape.apply(&Block {
                main: [c, c],
                grains: [z, z],
                cup: [c, z],
                surface: [z, z],
                friction: [z, z],
            });
            y.extend_from_slice(b.main[0]);
            assert_eq!(b.cup[0], b.main[0]);
        }
        assert_eq!(y.len(), body);
        // the loop's body is the render after the crossfade's source, with the gain
        assert_eq!(y[0], x[skip + fade] * 0.5);
        // its end runs into its start: the step at the join no larger than the signal's own
        let own = x.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0, f32::max) * 0.5;
        let join = (y[0] - y[body - 1]).abs();
        assert!(join <= own, "{join} > {own}");
        // where a cut without the crossfade jumps
        let cut = (x[skip + fade] - x[skip + fade + body - 1]).abs() * 0.5;
        assert!(cut > 10.0 * own, "{cut}");
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
