//! `granary-bank-check`: the thesis's §6.2 check of the databank for factory presets' own
//! scenes (`cargo xtask bank-check [--preset ID]…`; docs/dem.md, "The §6.2 check for every
//! factory preset"). Each preset's scene is simulated (as `granary-dem --preset ID`) and
//! rendered from its raw contacts against the engine sampling the bank
//! (`granary_dem::check`); prints each preset's figures and a table, and exits non-zero if a
//! checked preset is outside the bounds.

use clap::Parser;
use granary_dem::check::{self, Grains, Options, PresetCase, Report};
use granary_engine::control::choices::Statistics;
use granary_engine::control::params::STATISTICS_IDS;
use granary_engine::control::preset;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "granary-bank-check",
    about = "The §6.2 check of the databank for factory presets: each preset's scene simulated (rapier3d) and rendered from its contacts against the engine sampling the bank"
)]
struct Args {
    /// A factory preset id or name, or a preset file (repeatable). Default: every factory preset.
    #[arg(long)]
    preset: Vec<String>,
    /// Simulated seeds a preset (1, 2, …).
    #[arg(long, default_value_t = 6)]
    seeds: u64,
    /// The generator's takes a simulated seed.
    #[arg(long, default_value_t = 4)]
    takes: u64,
    /// The grains' shape: `own` (the material's, as `granary-dem` pours it) or `sphere` (of
    /// the material's volume, as the bank's sweep).
    #[arg(long, default_value = "own", value_parser = ["own", "sphere"])]
    shape: String,
    /// What the engine draws from: `bank` (the check's subject) or `model` (the hand-written
    /// model most factory presets play: which of the two is nearer the simulated
    /// scene; its rates are not compared).
    #[arg(long, default_value = "bank", value_parser = STATISTICS_IDS)]
    statistics: String,
    /// The bed under the pour: `placed` (a flat layer of fixed grains at the fill the
    /// preset's pour has reached a second in, as the sweep's beds) or `poured` (the preset's
    /// own pour from its empty cup or bare ground at its own rate for 1.5 s, the heap built
    /// by the simulated grains; presets of more than 5,000 grains, or that start with a
    /// bed, are not checked so; the rates are reported, not checked).
    #[arg(long, default_value = "placed", value_parser = ["placed", "poured"])]
    bed: String,
    /// Seeds simulated side by side.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Print each cell's rate, each band and the envelope too.
    #[arg(long)]
    verbose: bool,
}

/// A preset's line of the table.
enum Row {
    Checked(Box<Report>),
    /// Why it has no case (a gesture preset).
    NotChecked(String),
    Error(String),
}

fn main() {
    let args = Args::parse();
    if args.seeds == 0 || args.takes == 0 || args.jobs == 0 {
        eprintln!("granary-bank-check: --seeds, --takes and --jobs must be at least 1");
        std::process::exit(2);
    }
    let ids: Vec<String> = if args.preset.is_empty() {
        preset::factory().iter().map(|(id, _)| id.to_string()).collect()
    } else {
        args.preset.clone()
    };
    let grains = if args.shape == "own" {
        Grains::Own
    } else {
        Grains::Sphere
    };
    let options = Options {
        seeds: (1..=args.seeds).collect(),
        takes: args.takes,
        jobs: args.jobs,
        statistics: Statistics::from_id(&args.statistics).expect("clap's value parser keeps to the ids"),
    };
    let poured = args.bed == "poured";
    println!(
        "§6.2 check: {} seeds simulated a preset ({}), {} generator takes a seed on the {}; grains {}",
        args.seeds,
        if poured {
            format!("its own pour from empty for {} s", check::POURED_S)
        } else {
            format!("{:.0} grains each on a placed bed", check::PRESET_GRAINS)
        },
        args.takes,
        args.statistics,
        if grains == Grains::Own {
            "of their own shape"
        } else {
            "as spheres"
        }
    );
    let mut rows: Vec<(String, Row)> = Vec::new();
    let mut failed = false;
    for id in &ids {
        let start = Instant::now();
        let case = if poured {
            check::poured_case(id, grains)
        } else {
            check::preset_case(id, grains)
        };
        let row = match case {
            Ok(PresetCase::Checked(case)) => {
                let grains = if case.rates_comparable {
                    format!("{:.0} grains", check::PRESET_GRAINS)
                } else {
                    "poured from it".to_string()
                };
                println!(
                    "{id}: {:.2} s of pour ({grains}) at {} g/s, the bed at {} of the depth",
                    case.pour_s,
                    case.values.float("pour_rate"),
                    case.values.float("fill")
                );
                check::run(&case, &options).map_or_else(Row::Error, |r| Row::Checked(Box::new(r)))
            }
            Ok(PresetCase::NotChecked(why)) => Row::NotChecked(why),
            Err(e) => Row::Error(e),
        };
        match &row {
            Row::Checked(r) => {
                if args.verbose {
                    print!("{}", r.details());
                }
                println!("{}", r.summary());
                println!(
                    "{id}: {} in {:.0} s",
                    if r.passes() {
                        "within the bounds"
                    } else {
                        "OUTSIDE the bounds"
                    },
                    start.elapsed().as_secs_f64()
                );
                failed |= !r.passes();
            }
            Row::NotChecked(why) => println!("{id}: {why}"),
            Row::Error(e) => {
                println!("{id}: error: {e}");
                failed = true;
            }
        }
        rows.push((id.clone(), row));
    }
    println!();
    println!(
        "| preset | rates (≤ {:.0} %) | spectrum (≤ {} dB) | steady envelope (≤ {} dB) | bank axes clamped |",
        100.0 * check::RATE_BOUND,
        check::SPECTRUM_BOUND_DB,
        check::ENVELOPE_BOUND_DB
    );
    println!("|---|---|---|---|---|");
    for (id, result) in &rows {
        match result {
            Row::Checked(r) => {
                let clamped = r.clamped();
                let rates = if r.rates_checked() {
                    format!("{:.1} %", 100.0 * r.worst_rate())
                } else {
                    "not compared".to_string()
                };
                println!(
                    "| {id} | {rates} | {:.2} dB | {:.2} dB | {} |",
                    r.spectrum_db,
                    r.steady_db,
                    if clamped.is_empty() {
                        "none".to_string()
                    } else {
                        clamped.join(", ")
                    }
                );
            }
            Row::NotChecked(e) | Row::Error(e) => println!("| {id} | {e} | | | |"),
        }
    }
    if failed {
        std::process::exit(1);
    }
}
