//! `granary`: render pours and batches of takes, compare renders, list and validate presets,
//! without a DAW.

use ::clap::{Args, Parser, Subcommand};
use granary_cli::contacts::ContactFile;
use granary_cli::inspect::cli::InspectCommand;
use granary_cli::levels;
use granary_cli::library::Ucs;
use granary_cli::output::{check_target, Interrupt, Staged};
use granary_cli::render::{self, Failure, Normalise};
use granary_cli::vary::{self, Batch, Request, Sidecar};
use granary_engine::control::params::{ParamValues, GESTURE_IDS, QUALITY_IDS};
use granary_engine::control::preset;
use granary_engine::control::preset::Preset;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `println!` that ends quietly when stdout is closed (e.g. piped into `head`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

#[derive(Parser)]
#[command(
    name = "granary",
    version,
    about = "Granary: the sound of grains poured into a cup, from physics",
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render a pour to 32-bit float WAV files, streamed to disk; prints the levels
    /// (integrated loudness, true peak, the limiter's gain reduction).
    ///
    /// Files appear whole or not at all: each is written beside its target and renamed when
    /// every one is complete; on an error or Ctrl+C (exit code 130; SIGTERM 143) nothing is
    /// left. Only regular files are replaced. A progress bar shows on a terminal (stderr).
    #[command(allow_negative_numbers = true)]
    Render(Box<RenderArgs>),
    /// Compare two renders with the figures of a transparency check: third-octave spectra
    /// (100 Hz to 16 kHz), the level envelope (50 ms windows) and the crest factor of each
    /// octave band's envelope.
    ///
    /// spectrum: the largest |B - A| in dB over the third-octave bands, band powers from one
    /// FFT of each whole file (channels added). envelope: the largest |B - A| in dB of the
    /// 50 ms RMS levels (both channels), over the windows where either file is within 20 dB
    /// of the louder file's loudest window (the pour's body, not its sparse first and last
    /// grains). crest: for each octave band from 125 Hz to 16 kHz
    /// (cut from the FFT), the peak / RMS of its 50 ms envelope; the largest |B/A - 1| over
    /// the bands within 60 dB of the loudest band.
    ///
    /// Exit code 0 when the files compared (whatever the figures), 1 when a --max-* limit is
    /// exceeded, 2 on an error (unreadable file, different sample rates or channel counts).
    #[command(allow_negative_numbers = true)]
    Compare(CompareArgs),
    /// Physics you can check: one collision's numbers, the seeds' published tables, a cup's
    /// modes, a ball dropped on the ground.
    Inspect {
        #[command(subcommand)]
        command: InspectCommand,
    },
    /// Factory and user presets.
    Presets {
        #[command(subcommand)]
        command: PresetsCommand,
    },
    /// How fast the engine renders: per case, collisions per second, CPU per second of audio,
    /// real-time factor, worst block, peak memory (48 kHz, 64-sample blocks unless the case
    /// says otherwise).
    Bench {
        /// One JSON array, one object per case, instead of the table.
        #[arg(long)]
        json: bool,
        /// Run only this case (see --list); repeatable.
        #[arg(long = "case", value_name = "NAME")]
        cases: Vec<String>,
        /// List the cases and exit.
        #[arg(long)]
        list: bool,
        /// Seconds of audio timed per case.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
    },
    /// Draw a WAV file's spectrogram as a PNG: log-frequency axis, dB colour scale, labelled axes.
    Spectrogram(granary_cli::spectrogram::Args),
}

#[derive(Args)]
struct RenderArgs {
    /// Factory preset id or name (see `presets list`), or a preset file: a path (with a
    /// `/` or ending in `.json`). Default: the default preset.
    #[arg(long)]
    preset: Option<String>,
    /// Override a parameter: ID=VALUE (repeatable), e.g. --set pour_rate=40 --set cup_material=steel.
    /// Booleans: on/off, true/false, yes/no, 1/0.
    #[arg(long = "set", value_name = "ID=VALUE")]
    set: Vec<String>,
    /// Length in seconds, (0, 3600] (and what fits a 4 GiB WAV file: up to 2796 s at 192 kHz).
    /// Default: 6, or with --collisions the last contact's time plus 1 s.
    #[arg(long)]
    seconds: Option<f64>,
    /// Sample rate, a whole number of Hz within 8000..=384000.
    #[arg(long, default_value_t = 48_000.0, value_name = "HZ")]
    sample_rate: f64,
    /// Processing block size, 1..=65536 samples (the output does not depend on it).
    #[arg(long, default_value_t = 512, value_name = "N")]
    block_size: i64,
    /// Random seed, 0..=999999 (overrides the preset's). With --variations: the base seed.
    #[arg(long, value_name = "N")]
    seed: Option<i64>,
    /// What the grains undergo: pour, stir, shake or tilt (sets the gesture parameter, as
    /// --set gesture=ID does; an error if a --set gesture=... says otherwise). Notes and
    /// --pour play it.
    #[arg(long, value_name = "ID", value_parser = GESTURE_IDS)]
    gesture: Option<String>,
    /// realtime (the default), reference or auto (sets the quality parameter, as --set
    /// quality=ID does; an error if a --set quality=... says otherwise). realtime renders as
    /// the plugin plays live and bounces in every host; reference renders every collision one
    /// by one (several times slower for dense pours); a render is offline, so auto is
    /// reference here.
    #[arg(long, value_name = "ID", value_parser = QUALITY_IDS)]
    quality: Option<String>,
    /// The gesture's curve over seconds: T:VALUE,T:VALUE,... (piecewise linear): a pour's rate
    /// in g/s, or for stir, shake and tilt the gesture's amount in percent (0..=100, the
    /// gesture_amount parameter). Without it: the preset's pour_rate (or gesture_amount) until
    /// one second before the end.
    #[arg(long, value_name = "T:VALUE,...")]
    pour: Option<String>,
    /// Play a MIDI note (of the gesture) instead of a curve: START:END[:VEL[:KEY]] in seconds, MIDI
    /// velocity 1..=127 (default 100), MIDI key 0..=127 (default 60; keys 72-96 aim the
    /// stream from the cup's axis to its wall); repeatable, notes may overlap. The result equals a
    /// DAW bounce of the same notes, settings and seed (after the host's latency compensation).
    /// Refused with trigger_mode=continuous, where the plugin ignores notes.
    #[arg(long = "note", value_name = "START:END[:VEL[:KEY]]", conflicts_with = "pour")]
    notes: Vec<String>,
    /// Also write FILE.grains.wav, FILE.cup.wav, FILE.surface.wav and FILE.friction.wav.
    #[arg(long)]
    stems: bool,
    /// Render N takes, 1..=100000: --output DIR/NAME.wav writes DIR/NAME_001.wav ... (numbers
    /// zero-padded to the width N needs, at least 3 digits), each with a JSON sidecar
    /// NAME_001.json (every parameter, the seed, the other options, Granary's version) that
    /// `render --from` renders again bit for bit, and its stems if asked. Take k has seed
    /// (base + k - 1) mod 1000000, the base being --seed or the preset's. Takes render in
    /// parallel (see --jobs) and the files do not depend on the number of threads. Each take
    /// appears whole with its sidecar or not at all; takes finished before an error or
    /// Ctrl+C are kept.
    #[arg(long, value_name = "N")]
    variations: Option<i64>,
    /// With --variations: give a parameter a random offset in each take (repeatable):
    /// ID=±X (uniform within ±X, in the parameter's unit; +-X also works), ID=±X% (within ±X
    /// percent of its value), or for a choice or on/off parameter ID=a,b,c (one of them, each
    /// as likely). An offset that would take a parameter outside its range is refused, not
    /// clamped. The offsets are drawn, in the order given, from a Xoshiro256++ stream seeded
    /// with the take's seed xor 0x6772616e61727976, so a batch is the same every time.
    #[arg(long = "vary", value_name = "ID=±X|ID=±X%|ID=a,b,c")]
    vary: Vec<String>,
    /// With --variations: takes rendered at once, one per thread (default: one per core). At
    /// most the number of takes and the machine's cores: more threads would not render
    /// faster.
    #[arg(long, value_name = "N")]
    jobs: Option<i64>,
    /// Render a take again, bit for bit, from any WAV file Granary wrote (its iXML holds the
    /// take: parameters, seed, options, normalising gain) or from a take's sidecar
    /// (NAME_001.json). Written to --output, or by default to the take's own file beside it
    /// (with its stems if the take had them).
    #[arg(
        long,
        value_name = "TAKE.wav|SIDECAR.json",
        conflicts_with_all = ["preset", "set", "gesture", "quality", "seconds", "sample_rate", "block_size", "seed", "pour", "notes", "stems", "variations", "vary", "jobs", "loop_s", "loudness", "peak", "loudness_batch", "name_style"]
    )]
    from: Option<PathBuf>,
    /// Render a seamless loop of SECONDS (1..=600) of a steady pour (or stir, shake, tilt) at
    /// the preset's rate, for beds and ambiences: the pour runs 2 s before the loop starts,
    /// and the loop's last 0.5 s (a quarter of it at most) crossfade into what was rendered
    /// just before its first sample, so its end runs into its start. The cup fills as in any
    /// render: for a bed that stays the same, hold it (--set auto_fill=off --set fill=0.3).
    /// The file has a sampler loop (smpl) over its whole length.
    #[arg(long = "loop", value_name = "SECONDS", conflicts_with_all = ["seconds", "pour", "notes", "collisions"])]
    loop_s: Option<f64>,
    /// Normalise each take to this integrated loudness, LUFS (EBU R 128; -70..=0), by one gain
    /// measured in a first render (each take is rendered twice). With --peak too, the smaller
    /// of the two gains.
    #[arg(long, value_name = "LUFS", allow_negative_numbers = true)]
    loudness: Option<f64>,
    /// Normalise each take so that its true peak is this, dBTP (-60..=0); with --loudness, at
    /// most this.
    #[arg(long, value_name = "DBTP", allow_negative_numbers = true)]
    peak: Option<f64>,
    /// With --variations and --loudness or --peak: one gain for the whole batch, the one its
    /// loudest take needs, so the takes keep their levels relative to each other.
    #[arg(long, requires = "variations")]
    loudness_batch: bool,
    /// How the files are named: plain (--output's name, NAME_001.wav for takes) or ucs
    /// (Universal Category System: CatID_FXName_CreatorID_SourceID.wav, the CatID from the
    /// grain, the FXName from the grain, gesture and vessel and the take's number, into the
    /// folder --output names; stems add _grains, _cup, ...).
    #[arg(long, value_enum, default_value_t = NameStyle::Plain)]
    name_style: NameStyle,
    /// With --name-style ucs: the CreatorID (who made the sound; default GRANARY).
    #[arg(long, value_name = "ID")]
    ucs_creator: Option<String>,
    /// With --name-style ucs: the SourceID (the project or library; default NONE, UCS's word
    /// for none).
    #[arg(long, value_name = "ID")]
    ucs_source: Option<String>,
    /// Render a contact file instead of a pour: a CSV of logged contacts (a rigid-body
    /// simulation's, an animation's: time, position, normal, normal speed, the bodies and their
    /// materials, SI units; see docs/contacts.md), each rendered one by one through the same
    /// collision physics at its own time. The file sets the grain, cup and surface materials;
    /// everything else comes from the preset and --set.
    #[arg(long, value_name = "FILE.csv", conflicts_with_all = ["pour", "notes", "variations", "from"])]
    collisions: Option<PathBuf>,
    /// The WAV file to write (replaced if it is a regular file); with --variations, the
    /// takes' pattern DIR/NAME.wav; with --name-style ucs, the folder to write into.
    #[arg(long, short, value_name = "FILE.wav", required_unless_present = "from")]
    output: Option<PathBuf>,
}

/// `--name-style`.
#[derive(Clone, Copy, PartialEq, ::clap::ValueEnum)]
enum NameStyle {
    Plain,
    Ucs,
}

#[derive(Args)]
struct CompareArgs {
    /// The reference file (figures are B relative to A), or a folder of takes (`render
    /// --variations`: its NAME_001.wav ..., stems left out), compared by their means.
    a: PathBuf,
    /// The file compared with it, or a folder of takes.
    b: PathBuf,
    /// Also print the per-band tables.
    #[arg(long, short)]
    verbose: bool,
    /// Print the figures and tables as one JSON object instead (crest figures as ratios).
    #[arg(long, conflicts_with = "verbose")]
    json: bool,
    /// Exit with code 1 if the spectrum difference exceeds this many dB.
    #[arg(long, value_name = "DB")]
    max_spectrum_db: Option<f64>,
    /// Exit with code 1 if the envelope difference exceeds this many dB.
    #[arg(long, value_name = "DB")]
    max_envelope_db: Option<f64>,
    /// Exit with code 1 if the crest-factor difference exceeds this many percent.
    #[arg(long, value_name = "PERCENT")]
    max_crest: Option<f64>,
}

#[derive(Subcommand)]
enum PresetsCommand {
    /// One factory preset per line: id, name, tags.
    List,
    /// Check preset files; exits non-zero if any is bad.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Write a preset file: a factory preset or file, with changes, under a new name.
    Save {
        /// Starting point: factory preset id or name, or a preset file (a path: with a `/` or
        /// ending in `.json`). Default: the default preset.
        #[arg(long)]
        preset: Option<String>,
        /// Change a parameter: ID=VALUE (repeatable). Booleans: on/off, true/false, yes/no, 1/0.
        #[arg(long = "set", value_name = "ID=VALUE")]
        set: Vec<String>,
        /// The preset's display name (shown in the editor's list).
        #[arg(long)]
        name: String,
        /// One line on how it sounds.
        #[arg(long, default_value = "")]
        description: String,
        /// Comma-separated tags.
        #[arg(long, default_value = "")]
        tags: String,
        /// Overwrite FILE if it exists (regular files only; anything else is never replaced).
        #[arg(long)]
        force: bool,
        /// The preset file to write.
        #[arg(long, short, value_name = "FILE.json")]
        output: PathBuf,
    },
}

/// `--set` with `--ID VALUE` (a choice parameter's own option: `--gesture`, `--quality`)
/// added as `ID=VALUE`; an error if a `--set ID=...` names another choice.
fn with_choice(set: &[String], id: &str, choice: Option<&str>) -> Result<Vec<String>, String> {
    let mut set = set.to_vec();
    let Some(g) = choice else {
        return Ok(set);
    };
    let index = |text: &str| -> Result<usize, String> {
        let mut v = ParamValues::default();
        v.set_text(id, text).map_err(|e| e.to_string())?;
        Ok(v.choice(id))
    };
    let wanted = index(g).map_err(|e| format!("--{id} {g}: {e}"))?;
    let mut given = false;
    for kv in &set {
        if let Some((_, v)) = kv.split_once('=').filter(|(k, _)| k.trim() == id) {
            given = true;
            if index(v).map_err(|e| format!("--set {kv}: {e}"))? != wanted {
                return Err(format!("--{id} {g} and --set {kv} disagree: give one of them"));
            }
        }
    }
    if !given {
        set.push(format!("{id}={g}"));
    }
    Ok(set)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("granary: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Render(args) => render(*args),
        Command::Compare(args) => compare(args),
        Command::Inspect { command } => {
            // written whole at the end, so a closed stdout (`| head`) ends quietly
            let mut buf = Vec::new();
            granary_cli::inspect::cli::run(&command, &mut buf)?;
            use std::io::Write as _;
            let _ = std::io::stdout().lock().write_all(&buf);
            Ok(())
        }
        Command::Bench {
            json,
            cases,
            list,
            seconds,
        } => Ok(bench(json, &cases, list, seconds)?),
        Command::Spectrogram(args) => {
            out!("{}", granary_cli::spectrogram::run(&args)?);
            Ok(())
        }
        Command::Presets {
            command:
                PresetsCommand::Save {
                    preset,
                    set,
                    name,
                    description,
                    tags,
                    force,
                    output,
                },
        } => {
            let mut p = render::preset_with_changes(preset.as_deref(), &set)?;
            if name.trim().is_empty() {
                return Err(Failure::Error("--name must not be empty".into()));
            }
            if check_target(&output)? && !force {
                return Err(format!("{} exists; pass --force to overwrite it", output.display()).into());
            }
            p.name = name.trim().to_string();
            p.description = description;
            p.tags = tags
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect();
            let staged = Staged::new(std::slice::from_ref(&output))?;
            {
                use std::io::Write as _;
                let mut f = staged.files()[0];
                f.write_all(p.to_json().as_bytes())
                    .map_err(|e| format!("{}: {}", output.display(), granary_cli::output::io_message(&e)))?;
            }
            staged.commit()?;
            out!("wrote {}", output.display());
            Ok(())
        }
        Command::Presets {
            command: PresetsCommand::List,
        } => {
            for (stem, p) in preset::factory() {
                out!("{stem}\t{}\t{}", p.name, p.tags.join(","));
            }
            Ok(())
        }
        Command::Presets {
            command: PresetsCommand::Validate { files },
        } => {
            let mut bad = 0;
            for f in &files {
                match Preset::load(f) {
                    Ok(p) => out!("ok\t{}\t{}", f.display(), p.name),
                    Err(e) => {
                        bad += 1;
                        out!("bad\t{}\t{e}", f.display());
                    }
                }
            }
            if bad > 0 {
                Err(format!("{bad} of {} preset files are bad", files.len()).into())
            } else {
                Ok(())
            }
        }
    }
}

/// Gain reduction beyond which a render's report warns that the limiter shapes the sound, dB.
const SQUASHED_DB: f64 = 3.0;

/// `granary render`: one pour, a batch of takes (`--variations`), or a take again (`--from`).
fn render(a: RenderArgs) -> Result<(), Failure> {
    if let Some(sidecar) = &a.from {
        return render_from(sidecar, a.output);
    }
    let output = a.output.expect("clap requires --output without --from");
    if a.variations.is_none() {
        if let Some(v) = a.vary.first() {
            return Err(format!("--vary {v}: needs --variations N (the offsets are drawn per take)").into());
        }
        if a.jobs.is_some() {
            return Err(Failure::Error(
                "--jobs needs --variations N (a single render uses one thread)".into(),
            ));
        }
    }
    let ucs = match a.name_style {
        NameStyle::Ucs => Some(Ucs::new(
            a.ucs_creator.as_deref().unwrap_or("GRANARY"),
            a.ucs_source.as_deref().unwrap_or("NONE"),
        )?),
        NameStyle::Plain => {
            if let Some((flag, _)) = [("--ucs-creator", &a.ucs_creator), ("--ucs-source", &a.ucs_source)]
                .into_iter()
                .find(|(_, v)| v.is_some())
            {
                return Err(format!("{flag} names UCS files: it needs --name-style ucs").into());
            }
            None
        }
    };
    if let Some(l) = a.loop_s {
        if !(l.is_finite() && (render::MIN_LOOP_SECONDS..=render::MAX_LOOP_SECONDS).contains(&l)) {
            return Err(format!(
                "--loop must be within {}..={} s, got {l}",
                render::MIN_LOOP_SECONDS,
                render::MAX_LOOP_SECONDS
            )
            .into());
        }
    }
    if ucs.is_some() && !output.is_dir() {
        return Err(format!(
            "--name-style ucs names the files itself: --output must be a folder that exists, got {}",
            output.display()
        )
        .into());
    }
    let normalise = (a.loudness.is_some() || a.peak.is_some() || a.loudness_batch).then_some(Normalise {
        loudness_lufs: a.loudness,
        peak_dbtp: a.peak,
        batch: a.loudness_batch,
        gain_db: None,
    });
    if let Some(n) = &normalise {
        n.check()?;
    }
    let set = with_choice(&a.set, "gesture", a.gesture.as_deref())?;
    let set = with_choice(&set, "quality", a.quality.as_deref())?;
    let p = render::preset_with_changes(a.preset.as_deref(), &set)?;
    let mut values: ParamValues = p.values.clone();
    let mut changes = set.clone();
    if let Some(seed) = a.seed {
        values
            .set_text("seed", &seed.to_string())
            .map_err(|e| format!("--seed: {e}"))?;
        changes.push(format!("seed={seed}"));
    }
    let contacts = match &a.collisions {
        Some(path) => {
            let (file, digest) = ContactFile::read_with_digest(path)?;
            file.apply(&mut values)?;
            // the take keeps where the file is, wherever `--from` runs, and what it held
            let absolute = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let source = render::ContactSource {
                file: absolute.to_string_lossy().into_owned(),
                digest,
            };
            Some((path, file, source))
        }
        None => None,
    };
    let seconds = match (a.seconds.or(a.loop_s), &contacts) {
        (Some(s), _) => s,
        (None, None) => 6.0,
        (None, Some((path, file, _))) => {
            // until a second after the last contact
            let last = file.last_s();
            if last + 1.0 > render::MAX_SECONDS {
                return Err(format!(
                    "{}: the last contact is at {} s, and a contact file renders until 1 s after its last contact: longer than a render's {} s; give --seconds (at most {}) to render the file's start",
                    path.display(),
                    render::seconds_text(last),
                    render::MAX_SECONDS,
                    render::MAX_SECONDS
                )
                .into());
            }
            last + 1.0
        }
    };
    let rate = render::sample_rate(a.sample_rate)?;
    let options = render::Options {
        seconds: render::seconds(seconds, rate)?,
        sample_rate: rate,
        block_size: render::block_size(a.block_size)?,
        pour: a.pour,
        notes: a.notes,
        stems: a.stems,
        collisions: contacts.as_ref().map(|(_, _, source)| source.clone()),
        loop_s: a.loop_s,
        ucs: ucs.clone(),
        normalise,
    };
    // with UCS names, the folder and the name of the (first) take's file
    let output = match &ucs {
        Some(u) => output.join(u.file_name(&values, None)),
        None => output,
    };
    // a contact file's render is named by the file and its materials, not by the preset
    // that supplies its other settings
    let title = match &contacts {
        Some((path, file, _)) => format!("{} ({})", path.display(), file.materials()),
        None => p.name.clone(),
    };
    let what = if changes.is_empty() {
        title
    } else {
        format!("{title} ({})", changes.join(", "))
    };
    match a.variations {
        Some(n) => {
            let asked = match a.jobs {
                None => None,
                Some(j) if j >= 1 => Some(usize::try_from(j).unwrap_or(usize::MAX)),
                Some(j) => return Err(format!("--jobs must be at least 1, got {j}").into()),
            };
            let mut batch = Batch::plan(&Request {
                base: &values,
                preset: &p.name,
                set: &set,
                vary: &a.vary,
                takes: n,
                options: &options,
                output: &output,
            })?;
            let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
            let threads = asked.unwrap_or(cores).min(cores).min(batch.takes.len()).max(1);
            if let Some(j) = asked.filter(|&j| j > threads) {
                eprintln!(
                    "granary: --jobs {j}: rendering {threads} takes at a time ({} takes, {cores} cores here)",
                    batch.takes.len()
                );
            }
            if ucs.is_some() {
                for job in &batch.takes {
                    keep_ucs_files(&job.targets())?;
                }
            }
            render_batch(&mut batch, threads, &what)
        }
        None => {
            let take = Sidecar::single(&p.name, &set, &options, &values, &output);
            let mut job = take.job(output)?;
            if ucs.is_some() {
                keep_ucs_files(&job.targets())?;
            }
            render_one(&mut job, &what)
        }
    }
}

/// Refuses to replace a file with a UCS name: the name is made from the take (its grain,
/// gesture, vessel and number), so another take can have it too.
fn keep_ucs_files(targets: &[PathBuf]) -> Result<(), String> {
    match targets.iter().find(|t| t.exists()) {
        Some(t) => Err(format!(
            "{} exists: UCS names are made from the take, so another take's file has this one's name; \
             render into another folder (or move that file) rather than replace it",
            t.display()
        )),
        None => Ok(()),
    }
}

/// What a normalisation did, in words: "+4.31 dB (was -27.31 LUFS, true peak -9.20 dBTP)".
fn normalised_text(gain_db: f64, before: &levels::Levels) -> String {
    format!(
        "{gain_db:+.2} dB (was {:.2} LUFS, true peak {:.2} dBTP)",
        before.integrated_lufs, before.true_peak_dbtp
    )
}

/// Renders one job and prints what was rendered and its levels.
fn render_one(job: &mut render::Job, what: &str) -> Result<(), Failure> {
    for w in job.warnings() {
        eprintln!("granary: warning: {w}");
    }
    let interrupt = Interrupt::install()?;
    let started = std::time::Instant::now();
    let mut normalised = None;
    if job.needs_measuring() {
        let bar = render::progress_bar(job.opts.frames() as u64, job.sample_rate, "measuring");
        let before = job.measure(&interrupt, &bar);
        bar.finish_and_clear();
        let before = before?;
        let gain = job.gain_for(&before);
        if gain.is_none() {
            eprintln!(
                "granary: warning: the render cannot be normalised (silent, or an integrated loudness needs 400 ms above -70 LUFS): left at 0 dB"
            );
        }
        let gain = gain.unwrap_or(0.0);
        job.set_gain_db(gain);
        normalised = Some(normalised_text(gain, &before));
    }
    let bar = render::progress_bar(job.opts.frames() as u64, job.sample_rate, "rendering");
    let r = job.run(&interrupt, &bar);
    bar.finish_and_clear();
    let r = r?;
    let cpu = started.elapsed().as_secs_f64();
    let l = &r.levels;
    if l.silent() {
        eprintln!("granary: warning: the render is silent (every sample is zero)");
    }
    if l.max_gain_reduction_db > SQUASHED_DB {
        // a contact file plays at the preset's output gain, the default's unless --preset
        // names another: a simulated pour of a quieter preset is far too loud at the default's
        let contacts_hint = if job.contacts.is_empty() {
            ""
        } else {
            "; a contact file simulated for a preset (cargo xtask dem --preset ID) plays at that \
             preset's level with --preset ID"
        };
        eprintln!(
            "granary: warning: the limiter took up to {:.1} dB off the peaks (active on {:.0} % of the \
             samples): for a render it leaves alone, lower output_gain by about that much \
             (--set output_gain=...){contacts_hint}",
            l.max_gain_reduction_db,
            100.0 * l.limiter_active
        );
    }
    // the file's length (a loop renders more than it keeps)
    let (seconds, rate) = (job.take.render.seconds, job.sample_rate);
    let length = render::seconds_text(seconds);
    if job.contacts.is_empty() {
        out!(
            "{what}: {length} s at {rate} Hz, {} collisions ({} grain-grain, {} grain-cup)",
            r.stats.collisions,
            r.stats.grain_grain,
            r.stats.grain_cup,
        );
    } else {
        let heard = job.contacts.iter().filter(|c| c.time_s < seconds).count();
        out!(
            "{what}: {length} s at {rate} Hz, {heard} of {} logged contacts rendered one by one",
            job.contacts.len()
        );
    }
    out!(
        "levels: {:.1} LUFS integrated, true peak {:.1} dBTP, peak {:.1} dBFS, rms {:.1} dBFS (both channels)",
        l.integrated_lufs,
        l.true_peak_dbtp,
        l.peak_dbfs,
        l.rms_dbfs
    );
    out!(
        "limiter: largest gain reduction {:.2} dB, active (more than {} dB) on {:.2} % of the samples",
        l.max_gain_reduction_db,
        levels::ACTIVE_DB,
        100.0 * l.limiter_active
    );
    out!(
        "rendered in {cpu:.2} s ({} real time)",
        render::speed_text(seconds / cpu.max(1e-9))
    );
    if let Some(n) = normalised {
        out!("normalised: {n}");
        if l.true_peak_dbtp > 0.0 {
            eprintln!(
                "granary: warning: the true peak is now {:+.1} dBTP, above full scale: add --peak -1 (at most -1 dBTP)",
                l.true_peak_dbtp
            );
        }
    }
    let written: Vec<String> = r.written.iter().map(|p| p.display().to_string()).collect();
    out!("wrote {}", written.join(", "));
    Ok(())
}

/// Renders a batch of takes and prints one line per take.
fn render_batch(batch: &mut Batch, threads: usize, what: &str) -> Result<(), Failure> {
    let mut warned = Vec::new();
    for job in &batch.takes {
        for w in job.warnings() {
            if !warned.contains(&w) {
                eprintln!("granary: warning: {w}");
                warned.push(w);
            }
        }
    }
    let interrupt = Interrupt::install()?;
    let started = std::time::Instant::now();
    let first = &batch.takes[0];
    let n = batch.takes.len();
    let rate = first.sample_rate;
    let bar = render::progress_bar(batch.frames(), rate, &format!("measuring {n} takes"));
    let one = batch.normalise(threads, &interrupt, &bar);
    bar.finish_and_clear();
    let one = one?;
    let first = &batch.takes[0];
    let bar = render::progress_bar(batch.frames(), first.sample_rate, &format!("{n} takes"));
    let reports = batch.run(threads, &interrupt, &bar);
    bar.finish_and_clear();
    let reports = reports?;
    let cpu = started.elapsed().as_secs_f64();
    out!(
        "{what}: {n} takes of {} s at {} Hz",
        render::seconds_text(first.take.render.seconds),
        first.sample_rate
    );
    for (job, r) in batch.takes.iter().zip(&reports) {
        let sidecar = &job.take;
        let name = job.output.file_name().unwrap_or_default().to_string_lossy();
        let drawn: Vec<String> = sidecar
            .vary
            .iter()
            .filter_map(|v| v.split_once('=').map(|(id, _)| id.trim()))
            .map(|id| format!("{id}={}", vary::show_value(&sidecar.params, id)))
            .collect();
        let drawn = if drawn.is_empty() {
            String::new()
        } else {
            format!(" ({})", drawn.join(", "))
        };
        let gain = match sidecar.render.normalise.as_ref().and_then(|n| n.gain_db) {
            Some(g) if one.is_none() => format!(", normalised {g:+.2} dB"),
            _ => String::new(),
        };
        out!(
            "{name}: seed {}{drawn}, {} collisions, {:.1} LUFS, true peak {:.1} dBTP{gain}",
            sidecar.seed,
            r.stats.collisions,
            r.levels.integrated_lufs,
            r.levels.true_peak_dbtp
        );
        if r.levels.silent() {
            eprintln!("granary: warning: {name} is silent (every sample is zero)");
        }
        let normalised = !gain.is_empty() || one.is_some();
        if normalised && r.levels.true_peak_dbtp > 0.0 {
            eprintln!(
                "granary: warning: {name}'s true peak is {:+.1} dBTP after normalising, above full scale: add --peak -1",
                r.levels.true_peak_dbtp
            );
        }
    }
    if let Some(g) = one {
        out!("normalised the batch by one gain: {g:+.2} dB (what its loudest take needed)");
    }
    let audio = batch.frames() as f64 / first.sample_rate as f64;
    out!(
        "rendered in {cpu:.2} s ({} real time, {threads} thread{})",
        render::speed_text(audio / cpu.max(1e-9)),
        if threads == 1 { "" } else { "s" }
    );
    let dir = first.output.parent().map_or(String::new(), |d| d.display().to_string());
    let dir = if dir.is_empty() { ".".into() } else { dir };
    out!("wrote {n} takes and their sidecars in {dir}");
    Ok(())
}

/// `granary render --from SIDECAR [--output FILE]`.
fn render_from(path: &std::path::Path, output: Option<PathBuf>) -> Result<(), Failure> {
    let (sidecar, warnings) = Sidecar::load(path)?;
    for w in warnings {
        eprintln!("granary: warning: {w}");
    }
    let output = output.unwrap_or_else(|| path.with_file_name(&sidecar.file));
    let mut job = sidecar.job(output).map_err(|e| format!("{}: {e}", path.display()))?;
    let what = format!(
        "{} take {} of {} (seed {})",
        sidecar.preset, sidecar.take, sidecar.takes, sidecar.seed
    );
    render_one(&mut job, &what)
}

/// A WAV file, or the takes in a folder: its `*.wav` files that are not stems (`NAME_001.wav`,
/// not `NAME_001.grains.wav` or, UCS-named, `..._NONE_grains.wav`), in name order.
fn read_takes(path: &Path) -> Result<Vec<granary_cli::compare::Audio>, String> {
    use granary_cli::compare::Audio;
    if !path.is_dir() {
        return Ok(vec![Audio::read(path)?]);
    }
    let entries =
        std::fs::read_dir(path).map_err(|e| format!("{}: {}", path.display(), granary_cli::output::io_message(&e)))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            // a stem is NAME.grains.wav, or with UCS names NAME_grains.wav
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            p.is_file()
                && p.extension().is_some_and(|x| x == "wav")
                && !stem.contains('.')
                // a UCS name has four blocks and a stem's a fifth, its name
                && !(stem.split('_').count() == 5 && render::STEM_NAMES.iter().any(|s| stem.ends_with(&format!("_{s}"))))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no takes (NAME.wav files) in this folder", path.display()));
    }
    files.iter().map(|f| Audio::read(f)).collect()
}

/// `granary compare A B`.
fn compare(a: CompareArgs) -> Result<(), Failure> {
    use granary_cli::compare::{self, Audio};
    for (flag, max) in [
        ("--max-spectrum-db", a.max_spectrum_db),
        ("--max-envelope-db", a.max_envelope_db),
        ("--max-crest", a.max_crest),
    ] {
        if max.is_some_and(|m| !(m.is_finite() && m >= 0.0)) {
            return Err(format!("{flag} must be a number >= 0, got {}", max.unwrap_or(0.0)).into());
        }
    }
    let x = read_takes(&a.a)?;
    let y = read_takes(&a.b)?;
    let c = compare::compare_takes(&x, &y).map_err(|e| format!("{} and {}: {e}", a.a.display(), a.b.display()))?;
    let lengths: Vec<usize> = x.iter().chain(&y).map(Audio::frames).collect();
    if lengths.iter().any(|&n| n != lengths[0]) {
        eprintln!(
            "granary: warning: the files differ in length ({} to {} frames): the spectra are per sample, the envelopes compared over the shortest",
            lengths.iter().min().unwrap_or(&0),
            lengths.iter().max().unwrap_or(&0)
        );
    }
    if a.json {
        out!("{}", serde_json::to_string_pretty(&c).map_err(|e| e.to_string())?);
    } else {
        out!("{}", c.summary());
    }
    if a.verbose {
        out!("{}", c.tables());
    }
    let mut over = Vec::new();
    let mut limit = |what: &str, figure: f64, max: Option<f64>, unit: &str| {
        if let Some(m) = max {
            if figure > m || figure.is_nan() {
                over.push(format!("{what} {figure:.2} {unit} exceeds {m} {unit}"));
            }
        }
    };
    limit("spectrum", c.spectrum_db, a.max_spectrum_db, "dB");
    limit("envelope", c.envelope_db, a.max_envelope_db, "dB");
    limit("crest", 100.0 * c.crest, a.max_crest, "%");
    if over.is_empty() {
        Ok(())
    } else {
        Err(Failure::Exceeded(over.join("; ")))
    }
}

/// `granary bench`.
fn bench(json: bool, names: &[String], list: bool, seconds: f64) -> Result<(), String> {
    use granary_cli::bench;
    let all = bench::cases();
    if list {
        for c in &all {
            out!("{}", c.name);
        }
        return Ok(());
    }
    if !(seconds.is_finite() && (0.01..=600.0).contains(&seconds)) {
        return Err("--seconds must be within 0.01..=600".into());
    }
    for n in names {
        if !all.iter().any(|c| &c.name == n) {
            return Err(format!("no bench case `{n}` (see granary bench --list)"));
        }
    }
    let chosen: Vec<_> = all
        .iter()
        .filter(|c| names.is_empty() || names.contains(&c.name))
        .collect();
    if !json {
        out!("{}", bench::machine());
    }
    let mut figures = Vec::new();
    for c in chosen {
        let f = bench::run(c, seconds);
        if !json {
            let table = bench::table(std::slice::from_ref(&f));
            let mut lines = table.lines();
            let header = lines.next().unwrap_or("");
            if figures.is_empty() {
                out!("{header}");
            }
            out!("{}", lines.next().unwrap_or(""));
        }
        figures.push(f);
    }
    if json {
        out!("{}", serde_json::to_string_pretty(&figures).map_err(|e| e.to_string())?);
    } else {
        for (what, slope) in bench::slopes(&figures) {
            out!("cost against {what}: log-log slope {slope:.2} (1 = linear)");
        }
    }
    Ok(())
}
