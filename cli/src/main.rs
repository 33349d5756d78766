//! `granary`: render pours, list and validate presets, without a DAW.

use ::clap::{Parser, Subcommand};
use granary_cli::inspect::cli::InspectCommand;
use granary_cli::wav::write_wav;
use granary_engine::params::ParamValues;
use granary_engine::preset::{self, Preset};
use granary_engine::render::{render, render_notes, NoteEvent, PourCurve, RenderOptions};
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
    /// Render a pour to a 32-bit float WAV file.
    Render {
        /// Factory preset name (see `presets list`) or a preset JSON file. Default: the default preset.
        #[arg(long)]
        preset: Option<String>,
        /// Override a parameter: ID=VALUE (repeatable), e.g. --set pour_rate=40 --set cup_material=steel.
        #[arg(long = "set", value_name = "ID=VALUE")]
        set: Vec<String>,
        /// Length in seconds.
        #[arg(long, default_value_t = 6.0)]
        seconds: f64,
        #[arg(long, default_value_t = 48_000.0)]
        sample_rate: f32,
        /// Processing block size (the output does not depend on it).
        #[arg(long, default_value_t = 512)]
        block_size: usize,
        /// Random seed (overrides the preset's).
        #[arg(long)]
        seed: Option<u32>,
        /// Pour-rate curve in g/s over seconds: T:RATE,T:RATE,... (piecewise linear).
        /// Without it: the preset's pour_rate until one second before the end.
        #[arg(long)]
        pour: Option<String>,
        /// Play a MIDI note instead of a pour curve: START:END[:VEL] in seconds, MIDI
        /// velocity 1..=127 (default 100); repeatable, notes may overlap. The result equals a
        /// DAW bounce of the same notes, settings and seed (after the host's latency compensation).
        #[arg(long = "note", value_name = "START:END[:VEL]", conflicts_with = "pour")]
        notes: Vec<String>,
        /// Also write FILE.grains.wav and FILE.cup.wav.
        #[arg(long)]
        stems: bool,
        #[arg(long, short)]
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
        /// Starting point: factory preset name or preset file. Default: the default preset.
        #[arg(long)]
        preset: Option<String>,
        /// Change a parameter: ID=VALUE (repeatable).
        #[arg(long = "set", value_name = "ID=VALUE")]
        set: Vec<String>,
        #[arg(long)]
        name: String,
        #[arg(long, default_value = "")]
        description: String,
        /// Comma-separated tags.
        #[arg(long, default_value = "")]
        tags: String,
        /// Refuse to overwrite unless given.
        #[arg(long)]
        force: bool,
        #[arg(long, short)]
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
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<(), String> {
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
            if let Some(seed) = seed {
                values.set_text("seed", &seed.to_string()).map_err(|e| e.to_string())?;
            }
            if !(seconds.is_finite() && seconds > 0.0 && seconds <= 3600.0) {
                return Err("--seconds must be within (0, 3600]".into());
            }
            if !(sample_rate.is_finite() && (8_000.0..=384_000.0).contains(&sample_rate)) {
                return Err("--sample-rate must be within 8000..=384000 Hz".into());
            }
            if block_size == 0 || block_size > 1 << 16 {
                return Err("--block-size must be within 1..=65536".into());
            }
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
            let started = std::time::Instant::now();
            let opts = RenderOptions {
                seconds,
                sample_rate,
                block_size,
                pour,
            };
            let r = if notes.is_empty() {
                render(&values, &opts)
            } else {
                render_notes(&values, &opts, &notes)
            };
            let cpu = started.elapsed().as_secs_f64();
            write_wav(&output, sample_rate, &r.main).map_err(|e| format!("{}: {e}", output.display()))?;
            let mut written = vec![output.display().to_string()];
            if stems {
                for (suffix, data) in [("grains", &r.grains), ("cup", &r.cup)] {
                    let path = output.with_extension(format!("{suffix}.wav"));
                    write_wav(&path, sample_rate, data).map_err(|e| format!("{}: {e}", path.display()))?;
                    written.push(path.display().to_string());
                }
            }
            let peak = r.main.iter().flatten().fold(0.0f32, |m, x| m.max(x.abs()));
            let rms = (r.main[0].iter().map(|x| (x * x) as f64).sum::<f64>() / r.main[0].len().max(1) as f64).sqrt();
            out!(
                "{}: {:.2} s at {} Hz, {} collisions ({} grain-grain, {} grain-cup), peak {:.1} dBFS, rms {:.1} dBFS",
                p.name,
                seconds,
                sample_rate,
                r.stats.collisions,
                r.stats.grain_grain,
                r.stats.grain_cup,
                20.0 * peak.max(1e-12).log10(),
                20.0 * rms.max(1e-12).log10()
            );
            out!("rendered in {cpu:.2} s ({:.0}x real time)", seconds / cpu.max(1e-9));
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
        } => bench(json, &cases, list, seconds),
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
                return Err("--name must not be empty".into());
            }
            if output.exists() && !force {
                return Err(format!("{} exists; pass --force to overwrite", output.display()));
            }
            p.name = name.trim().to_string();
            p.description = description;
            p.tags = tags
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect();
            p.save(&output).map_err(|e| e.to_string())?;
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
                Err(format!("{bad} of {} preset files are bad", files.len()))
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
