//! `granary-bank`: the collision databank's sweep (`cargo xtask bank`; docs/dem.md). Runs every
//! scene of `bank::sweep` (or, with `--quick`, the first `--quick N`), each a rapier pour
//! reduced to the generator's cells, on `--jobs` threads, and writes the bank file. The
//! result does not depend on the number of threads: every run is seeded and independent.

use clap::Parser;
use granary_dem::bank::{self, BankFile, Entry, Spec};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "granary-bank",
    about = "Sweep simulated pours and write the collision databank"
)]
struct Args {
    /// The bank file to write.
    #[arg(long, short, default_value = "assets/bank/bank.json")]
    output: PathBuf,
    /// Threads (one run each at a time).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Only the first N runs of the sweep (a quick check).
    #[arg(long)]
    quick: Option<usize>,
    /// Reuse the entries of this bank file that the sweep would simulate again (the same
    /// scene: family, grain, fill, fall height, flow and length; the runs it holds are the
    /// scene's first seeds): a sweep extended by new values or more runs simulates only
    /// the new scenes and seeds. The counts are the same a whole sweep writes. A file of
    /// the version before (3) is read too (`bank::read`).
    #[arg(long, value_name = "BANK.json")]
    reuse: Option<PathBuf>,
    /// Instead of the sweep: the check that grain size and flow are normalised out (three
    /// runs, a table; nothing written).
    #[arg(long)]
    normalisation: bool,
}

fn main() {
    let args = Args::parse();
    if args.normalisation {
        normalisation();
        return;
    }
    let mut specs = bank::sweep();
    if let Some(n) = args.quick {
        specs.truncate(n);
    }
    let total = specs.len();
    // what is held already: each scene's runs in the old file (its first seeds)
    let mut reused: Vec<Option<Entry>> = vec![None; total];
    if let Some(path) = &args.reuse {
        let old: BankFile = match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| bank::read(&t))
        {
            Ok(b) => b,
            Err(e) => {
                eprintln!("granary-bank: --reuse {}: {e}", path.display());
                std::process::exit(1);
            }
        };
        for (slot, spec) in reused.iter_mut().zip(&specs) {
            *slot = old.entries.iter().find(|e| bank::runs_held(e, spec) > 0).cloned();
        }
    }
    // the runs to simulate: (scene, seed), each scene's seeds beyond those held
    let todo: Vec<(usize, u64)> = (0..total)
        .flat_map(|i| {
            let held = reused[i].as_ref().map_or(0, |e| e.runs) as u64;
            let spec = specs[i];
            (held..spec.runs as u64).map(move |k| (i, spec.seed + k))
        })
        .collect();
    let runs: u32 = specs.iter().map(|s| s.runs).sum();
    println!(
        "granary-bank: {} runs of {} scenes ({} runs reused) on {} threads",
        todo.len(),
        total,
        runs as usize - todo.len(),
        args.jobs.max(1)
    );
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<Entry>>> = Mutex::new(vec![None; todo.len()]);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..args.jobs.max(1) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(i, seed)) = todo.get(k) else { break };
                let e = bank::run_seed(&specs[i], seed);
                report(i, total, &specs[i], seed, &e);
                done.lock().expect("no thread panicked")[k] = Some(e);
            });
        }
    });
    let mut new_runs = done.into_inner().expect("no thread panicked").into_iter().flatten();
    // each scene's entry: its held runs, then its new ones in seed order (`todo`'s order)
    let entries: Vec<Entry> = reused
        .into_iter()
        .enumerate()
        .map(|(i, held)| {
            let fresh = specs[i].runs - held.as_ref().map_or(0, |e| e.runs);
            let parts: Vec<Entry> = held.into_iter().chain(new_runs.by_ref().take(fresh as usize)).collect();
            bank::merge(&parts)
        })
        .collect();
    let grains: usize = entries.iter().map(|e| e.grains).sum();
    let simulated: f64 = entries.iter().map(|e| e.simulated_s).sum();
    let file = BankFile::new(
        format!(
            "granary-dem {} (rapier3d 0.36): {} scenes, {runs} runs, {grains} grains, {simulated:.1} s simulated",
            env!("CARGO_PKG_VERSION"),
            entries.len()
        ),
        entries,
    );
    if let Err(e) = write(&args.output, &file) {
        eprintln!("granary-bank: {}: {e}", args.output.display());
        std::process::exit(1);
    }
    println!(
        "wrote {} ({} entries) in {:.0} s wall",
        args.output.display(),
        file.entries.len(),
        start.elapsed().as_secs_f64()
    );
}

fn report(i: usize, total: usize, spec: &Spec, seed: u64, e: &Entry) {
    let rate = |c: &str| e.cell(c).rate;
    println!(
        "[{:>3}/{total}] {:<9} {:<15} fill {:.1} fall {:.2} m seed {seed}: {} grains, {:.1} s wall; per grain: impact {:.2} floor {:.2} walls {:.2} pile {:.2} stream {:.2} surface {:.2}",
        i + 1,
        e.family,
        spec.grain,
        spec.fill,
        spec.fall_height_m,
        e.grains,
        e.wall_s,
        rate("impact_zone"),
        rate("cup_floor"),
        rate("wall_ring_0") + rate("wall_ring_1") + rate("wall_ring_2"),
        rate("pile_surface"),
        rate("stream"),
        rate("surface"),
    );
}

/// The file: its header, then one entry a line (compact, and a sweep's change reads as a diff).
fn write(path: &std::path::Path, file: &BankFile) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut head = serde_json::to_value(file)?;
    let entries = head
        .as_object_mut()
        .and_then(|o| o.remove("entries"))
        .unwrap_or_default();
    let head = serde_json::to_string(&head)?;
    // the header's fields, then "entries": [ one a line ]
    writeln!(out, "{},", head.trim_end_matches('}'))?;
    writeln!(out, "\"entries\": [")?;
    let entries = entries.as_array().cloned().unwrap_or_default();
    for (k, e) in entries.iter().enumerate() {
        let sep = if k + 1 < entries.len() { "," } else { "" };
        writeln!(out, "{}{sep}", serde_json::to_string(e)?)?;
    }
    writeln!(out, "]}}")?;
    out.flush()
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
