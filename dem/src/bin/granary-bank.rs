//! `granary-bank`: the collision databank's sweep (`cargo xtask bank`; docs/dem.md). Runs every
//! scene of `bank::sweep` (or, with `--quick`, the first `--quick N`), each a rapier pour
//! reduced to the generator's cells, on `--jobs` threads, and writes the bank file; or one
//! shard of its runs (`--shard I/N`), or merges the N shards' files (`--merge`: module
//! `shards`). The result depends neither on the threads nor on the shards: every run is seeded
//! and independent.

use clap::{Parser, ValueEnum};
use granary_dem::bank::{self, BankFile, Entry};
use granary_dem::shards::{self, Plan, Run, Shard, ShardDone};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "granary-bank",
    about = "Sweep simulated pours and write the collision databank"
)]
struct Args {
    /// The file to write: the bank (default assets/bank/bank.json), or with --shard the
    /// shard's file (default bank-shards/bank-I-of-N.json).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Threads (one run each at a time).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// The sweep: `full` (the bank's) or `check` (five short scenes, the shards' check).
    #[arg(long, value_enum, default_value_t = Sweep::Full)]
    sweep: Sweep,
    /// Only the first N scenes of the sweep (a quick check).
    #[arg(long)]
    quick: Option<usize>,
    /// Reuse the entries of this bank file that the sweep would simulate again (the same
    /// scene: family, grain, fill, fall height, flow and length; the runs it holds are the
    /// scene's first seeds): a sweep extended by new values or more runs simulates only
    /// the new scenes and seeds. The counts are the same a whole sweep writes. A file of
    /// the version before (3) is read too (`bank::read`).
    #[arg(long, value_name = "BANK.json")]
    reuse: Option<PathBuf>,
    /// Run only shard I of N of the sweep's runs (1 <= I <= N), written to its own file;
    /// run again, a complete shard is left as it is and a stopped one resumes. `--merge`
    /// makes the bank of the N files (docs/dem.md, "Sharded sweeps").
    #[arg(long, value_name = "I/N", conflicts_with_all = ["merge", "normalisation", "costs"])]
    shard: Option<Shard>,
    /// Merge these shard files (all N of one sweep, run with the same --sweep, --quick and
    /// --reuse as given here) into the bank file, byte for byte the file one process writes.
    #[arg(long, value_name = "SHARD.json", num_args = 1.., conflicts_with_all = ["normalisation", "costs"])]
    merge: Vec<PathBuf>,
    /// Print how the sweep divides over 1 to 64 shards, from the wall times its runs took as
    /// this bank file kept them (files written before the shards did: `assets/bank/bank.json`).
    #[arg(long, value_name = "BANK.json", conflicts_with = "normalisation")]
    costs: Option<PathBuf>,
    /// Instead of the sweep: the check that grain size and flow are normalised out (three
    /// runs, a table; nothing written).
    #[arg(long)]
    normalisation: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Sweep {
    Full,
    Check,
}

fn main() {
    let args = Args::parse();
    if args.normalisation {
        normalisation();
        return;
    }
    if let Err(e) = sweep(&args) {
        eprintln!("granary-bank: {e}");
        std::process::exit(1);
    }
}

fn sweep(args: &Args) -> Result<(), String> {
    let (mut name, mut specs) = match args.sweep {
        Sweep::Full => (String::from("full"), bank::sweep()),
        Sweep::Check => (String::from("check"), bank::check_sweep()),
    };
    if let Some(n) = args.quick {
        specs.truncate(n);
        name += &format!(" --quick {n}");
    }
    let reuse = match &args.reuse {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|t| bank::read(&t))
                .map_err(|e| format!("--reuse {}: {e}", path.display()))?,
        ),
        None => None,
    };
    let plan = Plan::new(&name, specs, reuse.as_ref()).with_build(&build_id()?);
    if let Some(path) = &args.costs {
        return costs(&plan, path);
    }
    if !args.merge.is_empty() {
        let files = args
            .merge
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
                shards::read_shard(&text)
                    .map(|s| (p.clone(), s))
                    .map_err(|e| format!("{}: {e}", p.display()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let file = shards::merge(&plan, &files)?;
        return write_bank(args, &file, Instant::now(), files.len());
    }
    // the file the runs end in, refused now rather than after them
    let target = match args.shard {
        Some(shard) => args
            .output
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("bank-shards/bank-{}-of-{}.json", shard.index, shard.count))),
        None => bank_path(args),
    };
    shards::check_target(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let held: u32 = plan.reused.iter().flatten().map(|e| e.runs).sum();
    let started = Instant::now();
    let report = |r: &Run| report(&plan, r);
    if let Some(shard) = args.shard {
        let path = target;
        println!(
            "granary-bank: shard {shard} of sweep `{name}` (plan {}): {} of its {} runs ({held} runs reused) on {} threads",
            plan.fingerprint,
            plan.runs_of(shard).len(),
            plan.todo.len(),
            args.jobs.max(1)
        );
        match shards::run_shard(&plan, shard, &path, args.jobs, &report)? {
            ShardDone::AlreadyComplete => println!("{} is complete: nothing to run", path.display()),
            ShardDone::Ran { now, resumed } => println!(
                "wrote {} ({now} runs now, {resumed} from an earlier attempt) in {:.0} s wall",
                path.display(),
                started.elapsed().as_secs_f64()
            ),
        }
        return Ok(());
    }
    println!(
        "granary-bank: {} runs of {} scenes ({held} runs reused) on {} threads",
        plan.todo.len(),
        plan.specs.len(),
        args.jobs.max(1)
    );
    let all: Vec<usize> = (0..plan.todo.len()).collect();
    let runs: Vec<Run> = plan
        .run_many(&all, args.jobs, &report)
        .iter()
        .map(Run::as_read)
        .collect();
    write_bank(args, &plan.assemble(&runs), started, 0)
}

/// This program's identity: the digest of its executable (a rebuild that could simulate
/// otherwise is another build: its shards are not mixed with this one's).
fn build_id() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("its own executable: {e}"))?;
    let bytes = std::fs::read(&exe).map_err(|e| format!("{}: {e}", exe.display()))?;
    Ok(format!("{:016x}", shards::digest(&bytes)))
}

/// The bank file to write: `--output`, or the shipped bank's.
fn bank_path(args: &Args) -> PathBuf {
    args.output
        .clone()
        .unwrap_or_else(|| PathBuf::from("assets/bank/bank.json"))
}

fn write_bank(args: &Args, file: &BankFile, started: Instant, shards: usize) -> Result<(), String> {
    let path = bank_path(args);
    shards::write_whole(&path, &shards::bank_text(file)).map_err(|e| format!("{}: {e}", path.display()))?;
    let from = if shards > 0 {
        format!(" from {shards} shards")
    } else {
        String::new()
    };
    println!(
        "wrote {} ({} entries){from} in {:.0} s wall",
        path.display(),
        file.entries.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn report(plan: &Plan, r: &Run) {
    let (spec, e) = (&plan.specs[r.scene], &r.entry);
    let rate = |c: &str| e.cell(c).rate;
    println!(
        "[{:>3}/{}] {:<9} {:<15} fill {:.1} fall {:.2} m seed {}: {} grains, {:.1} s wall; per grain: impact {:.2} floor {:.2} walls {:.2} pile {:.2} stream {:.2} surface {:.2}",
        r.scene + 1,
        plan.specs.len(),
        e.family,
        spec.grain,
        spec.fill,
        spec.fall_height_m,
        r.seed,
        e.grains,
        r.wall_s,
        rate("impact_zone"),
        rate("cup_floor"),
        rate("wall_ring_0") + rate("wall_ring_1") + rate("wall_ring_2"),
        rate("pile_surface"),
        rate("stream"),
        rate("surface"),
    );
}

/// `--costs`: each run's wall time from a bank file that kept them (an entry's `wall_s`, the
/// sum of its runs', shared equally among its runs), and the busiest of N shards.
fn costs(plan: &Plan, path: &std::path::Path) -> Result<(), String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    let file = bank::read(&text).map_err(|e| format!("{shown}: {e}"))?;
    let walls = v["entries"].as_array().ok_or(format!("{shown}: no entries"))?;
    let cost: Vec<f64> = plan
        .todo
        .iter()
        .map(|&(i, _)| {
            let spec = &plan.specs[i];
            let k = file
                .entries
                .iter()
                .position(|e: &Entry| bank::runs_held(e, spec) == spec.runs)
                .ok_or(format!(
                    "{shown}: no entry of scene {} with its {} runs",
                    i + 1,
                    spec.runs
                ))?;
            let wall = walls[k]["wall_s"].as_f64().ok_or(format!(
                "{shown}: entry {k} has no wall_s (a file written before the shards keeps them)"
            ))?;
            Ok(wall / spec.runs as f64)
        })
        .collect::<Result<_, String>>()?;
    println!(
        "sweep `{}`: {} runs; their wall times from {shown}",
        plan.name,
        plan.todo.len()
    );
    println!("shards | busiest shard | all runs | speed-up");
    for n in [1, 2, 4, 8, 16, 32, 64] {
        let (busiest, total) = shards::shard_costs(plan, &cost, n);
        println!(
            "{n:>6} | {:>9.0} s | {total:>6.0} s | {:>5.1}x",
            busiest,
            total / busiest
        );
    }
    Ok(())
}

/// Runs `bank::normalisation` and prints each cell's rate per grain, mean speed and energy
/// per grain (units of the impact speed) against the first run's.
fn normalisation() {
    let specs = bank::normalisation();
    let entries: Vec<Entry> = std::thread::scope(|s| {
        let handles: Vec<_> = specs.iter().map(|spec| s.spawn(move || bank::run(spec))).collect();
        handles.into_iter().map(|h| h.join().expect("a run")).collect()
    });
    let names = ["2 mm, 2000 grains/s", "1 mm grains", "4000 grains/s"];
    println!(
        "cell           | {:^32} | {:^32} | {:^32}",
        names[0], names[1], names[2]
    );
    println!("               | rate/grain  mean v  energy/grain | (each against the first)");
    for cell in bank::CELLS {
        let c: Vec<_> = entries.iter().map(|e| e.cell(cell)).collect();
        let row = |x: &bank::CellStats| {
            format!(
                "{:>8.3} {:>8.3} {:>10.4}",
                x.rate,
                x.mean_speed(),
                bank::energy_per_grain(x)
            )
        };
        let rel = |x: f64, y: f64| {
            if y > 0.0 {
                format!("{:+.0} %", 100.0 * (x / y - 1.0))
            } else {
                "-".into()
            }
        };
        println!(
            "{cell:<14} | {} | {} ({}, {}) | {} ({}, {})",
            row(c[0]),
            row(c[1]),
            rel(c[1].rate, c[0].rate),
            rel(bank::energy_per_grain(c[1]), bank::energy_per_grain(c[0])),
            row(c[2]),
            rel(c[2].rate, c[0].rate),
            rel(bank::energy_per_grain(c[2]), bank::energy_per_grain(c[0])),
        );
    }
    let all = |e: &Entry| {
        bank::CELLS
            .iter()
            .map(|c| bank::energy_per_grain(e.cell(c)))
            .sum::<f64>()
    };
    println!(
        "all cells' energy per grain: {:.4}, {:.4} ({:+.0} %), {:.4} ({:+.0} %)",
        all(&entries[0]),
        all(&entries[1]),
        100.0 * (all(&entries[1]) / all(&entries[0]) - 1.0),
        all(&entries[2]),
        100.0 * (all(&entries[2]) / all(&entries[0]) - 1.0)
    );
}
