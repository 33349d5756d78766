//! `granary`: render pours, list and validate presets, without a DAW.

use ::clap::{Parser, Subcommand};
use granary_cli::inspect::cli::InspectCommand;
use granary_cli::levels;
use granary_cli::output::{check_target, Interrupt, Staged};
use granary_cli::render::{self, Failure};
use granary_engine::params::ParamValues;
use granary_engine::preset::{self, Preset};
use granary_engine::render::{NoteEvent, PourCurve, RenderOptions};
use std::path::PathBuf;
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
    /// left. Only regular files are replaced.
    #[command(allow_negative_numbers = true)]
    Render {
        /// Factory preset id or name (see `presets list`), or a preset file: a path (with a
        /// `/` or ending in `.json`). Default: the default preset.
        #[arg(long)]
        preset: Option<String>,
        /// Override a parameter: ID=VALUE (repeatable), e.g. --set pour_rate=40 --set cup_material=steel.
        /// Booleans: on/off, true/false, yes/no, 1/0.
        #[arg(long = "set", value_name = "ID=VALUE")]
        set: Vec<String>,
        /// Length in seconds, (0, 3600] (and what fits a 4 GiB WAV file: up to 2796 s at 192 kHz).
        #[arg(long, default_value_t = 6.0)]
        seconds: f64,
        /// Sample rate, a whole number of Hz within 8000..=384000.
        #[arg(long, default_value_t = 48_000.0, value_name = "HZ")]
        sample_rate: f64,
        /// Processing block size, 1..=65536 samples (the output does not depend on it).
        #[arg(long, default_value_t = 512, value_name = "N")]
        block_size: i64,
        /// Random seed, 0..=999999 (overrides the preset's).
        #[arg(long, value_name = "N")]
        seed: Option<i64>,
        /// Pour-rate curve in g/s over seconds: T:RATE,T:RATE,... (piecewise linear).
        /// Without it: the preset's pour_rate until one second before the end.
        #[arg(long)]
        pour: Option<String>,
        /// Play a MIDI note instead of a pour curve: START:END[:VEL] in seconds, MIDI
        /// velocity 1..=127 (default 100); repeatable, notes may overlap. The result equals a
        /// DAW bounce of the same notes, settings and seed (after the host's latency compensation).
        /// Refused with trigger_mode=continuous, where the plugin ignores notes.
        #[arg(long = "note", value_name = "START:END[:VEL]", conflicts_with = "pour")]
        notes: Vec<String>,
        /// Also write FILE.grains.wav and FILE.cup.wav.
        #[arg(long)]
        stems: bool,
        /// The WAV file to write (replaced if it is a regular file).
        #[arg(long, short, value_name = "FILE.wav")]
        output: PathBuf,
    },
    /// Physics you can check: one collision's numbers, the seeds' published tables.
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

/// The preset named on the command line (or the default one) with `--set` changes applied.
fn preset_with_changes(preset: Option<&str>, set: &[String]) -> Result<Preset, String> {
    let mut p = preset::find(preset.unwrap_or(preset::DEFAULT_PRESET)).map_err(|e| e.to_string())?;
    for kv in set {
        let (id, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected ID=VALUE"))?;
        p.values
            .set_text(id.trim(), v)
            .map_err(|e| format!("--set {kv}: {e}"))?;
    }
    Ok(p)
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
        Command::Render {
            preset,
            set,
            seconds,
            sample_rate,
            block_size,
            seed,
            pour,
            notes,
            stems,
            output,
        } => {
            let p = preset_with_changes(preset.as_deref(), &set)?;
            let mut values: ParamValues = p.values.clone();
            let mut changes = set.clone();
            if let Some(seed) = seed {
                values
                    .set_text("seed", &seed.to_string())
                    .map_err(|e| format!("--seed: {e}"))?;
                changes.push(format!("seed={seed}"));
            }
            let rate = render::sample_rate(sample_rate)?;
            let seconds = render::seconds(seconds, rate)?;
            let block_size = render::block_size(block_size)?;
            let pour = pour
                .as_deref()
                .map(PourCurve::parse)
                .transpose()
                .map_err(|e| format!("--pour: {e}"))?;
            let notes = notes
                .iter()
                .map(|n| NoteEvent::parse(n))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("--note: {e}"))?;
            let job = render::Job {
                values,
                opts: RenderOptions {
                    seconds,
                    sample_rate: rate as f32,
                    block_size,
                    pour,
                },
                sample_rate: rate,
                notes,
                stems,
                output,
            };
            job.check()?;
            for w in job.warnings() {
                eprintln!("granary: warning: {w}");
            }
            let interrupt = Interrupt::install()?;
            let started = std::time::Instant::now();
            let r = job.run(&interrupt)?;
            let cpu = started.elapsed().as_secs_f64();
            let l = &r.levels;
            if l.silent() {
                eprintln!("granary: warning: the render is silent (every sample is zero)");
            }
            let what = if changes.is_empty() {
                p.name.clone()
            } else {
                format!("{} ({})", p.name, changes.join(", "))
            };
            out!(
                "{what}: {seconds} s at {rate} Hz, {} collisions ({} grain-grain, {} grain-cup)",
                r.stats.collisions,
                r.stats.grain_grain,
                r.stats.grain_cup,
            );
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
            out!("rendered in {cpu:.2} s ({:.0}x real time)", seconds / cpu.max(1e-9));
            let written: Vec<String> = r.written.iter().map(|p| p.display().to_string()).collect();
            out!("wrote {}", written.join(", "));
            Ok(())
        }
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
            let mut p = preset_with_changes(preset.as_deref(), &set)?;
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
