//! `granary-dem`: a simulated pour of a preset's scene, its contacts written as a contact file
//! (`cargo xtask dem --preset ID --output FILE.csv`; docs/dem.md).

use clap::Parser;
use granary_dem::{Scene, Sim, DT_S};
use granary_engine::control::preset;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "granary-dem",
    about = "Simulate a preset's pour (rapier3d) and write its contacts as a contact file"
)]
struct Args {
    /// Factory preset id or name, or a preset file.
    #[arg(long, default_value = preset::DEFAULT_PRESET)]
    preset: String,
    /// Seconds the spout pours.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Seconds simulated after the spout closes (the last grains land and settle).
    #[arg(long, default_value_t = 0.5)]
    settle: f64,
    /// A parameter: ID=VALUE (as `granary render --set`), repeatable.
    #[arg(long = "set", value_name = "ID=VALUE")]
    set: Vec<String>,
    /// The grains' shape: `own` (the material's: rice, lentils, discs, beans, cubes, stones,
    /// free to turn) or `sphere` (of the material's volume, rotations locked, as the databank's
    /// sweep has them); docs/dem.md, "Shaped grains".
    #[arg(long, default_value = "own", value_parser = ["own", "sphere"])]
    shape: String,
    /// The contact file to write (CSV, docs/contacts.md).
    #[arg(long, short)]
    output: PathBuf,
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("granary-dem: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), String> {
    let mut values = preset::find(&args.preset).map_err(|e| e.to_string())?.values;
    for s in &args.set {
        let (id, v) = s
            .split_once('=')
            .ok_or_else(|| format!("--set {s}: expected ID=VALUE"))?;
        values
            .set_text(id.trim(), v.trim())
            .map_err(|e| format!("--set {s}: {e}"))?;
    }
    if !(args.seconds >= 0.0 && args.settle >= 0.0) {
        return Err("--seconds and --settle must be >= 0".into());
    }
    let scene = Scene::new(&values.to_settings());
    let scene = if args.shape == "own" { scene.own_shape() } else { scene };
    let total = args.seconds + args.settle;
    println!(
        "scene: {} grains ({}) of {:.2} mm at {:.1} g/s ({:.0} grains/s), {}, spout {:.3} m above the floor at {:.2} m/s; dt {:.2} ms",
        scene.settings.grain_material.id(),
        scene.shape.id(),
        2e3 * scene.grain_radius_m,
        1e3 * scene.flow_kg_s,
        scene.flow_kg_s / scene.grain_kg,
        match scene.cup {
            Some(c) => format!("into a {} cup ({:.0} mm deep)", scene.settings.cup_material.id(), 1e3 * c.depth),
            None => format!("onto {}", scene.settings.surface_material.id()),
        },
        scene.spout_m[2],
        scene.exit_speed_m_s,
        1e3 * DT_S,
    );
    let mut sim = Sim::new(scene, args.seconds);
    let start = Instant::now();
    let mut next_report = 0.1;
    while sim.time_s < total - 0.5 * DT_S as f64 {
        sim.run_until((sim.time_s + 0.1).min(total));
        if start.elapsed().as_secs_f64() > next_report * 30.0 {
            eprintln!(
                "  t = {:.2} s: {} grains, {} contacts, {:.0} s wall",
                sim.time_s,
                sim.grains().len(),
                sim.contacts.len(),
                start.elapsed().as_secs_f64()
            );
            next_report += 0.1;
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let file = std::fs::File::create(&args.output).map_err(|e| format!("{}: {e}", args.output.display()))?;
    sim.write_contacts(std::io::BufWriter::new(file))
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    let c = sim.census();
    let [gg, gc, gs] = sim.rates(total);
    println!(
        "grains: {} spawned; {} in the cup, {} in flight, {} spilled, {} lost",
        c.spawned, c.in_cup, c.in_flight, c.spilled, c.lost
    );
    for p in sim.lost_positions().iter().take(5) {
        println!("  lost grain at ({:.4}, {:.4}, {:.4}) m", p[0], p[1], p[2]);
    }
    println!(
        "simulated {total:.3} s ({:.3} s pouring) in {wall:.2} s wall ({:.1} x real time)",
        args.seconds,
        wall / total.max(1e-9)
    );
    println!(
        "contacts: {} ({:.0}/s grain-grain, {:.0}/s grain-cup, {:.0}/s grain-surface)",
        sim.contacts.len(),
        gg,
        gc,
        gs
    );
    println!("wrote {}", args.output.display());
    Ok(())
}
