//! A pour into an empty cup, counted by the grains poured: each cell's collisions a grain for
//! every 250 grains, by when the grain was poured (a contact counted for the younger poured
//! grain, as the bank's reduction counts it: `bank::classify`). What a thin bed is in a real
//! pour, against the sweep's beds of fixed grains (docs/dem.md, "A poured heap against a
//! placed bed").
//!
//!   cargo run --release -p granary-dem --example poured_heap -- GRAIN CUP [GRAINS] [FALL_M] [SIZE] [BIN]
//!
//! GRAIN: a grain of the sweep (`bank::GRAINS`: sugar, glass_beads_2mm, rice, gravel,
//! coffee_beans, lentils); CUP: mug, tumbler, bowl, jar or metal_cup; GRAINS poured at the
//! sweep's 2,000 a second (default 4,000); FALL_M the spout's height above the rim (default
//! 0.15); SIZE the factor on the grain's 2 mm (default 1: 2 mm); BIN the grains a column
//! (default 250). One seed. Each column also gives the fill the grains poured by its end
//! would make as a flat bed at the engine's packing (`PACKING_FRACTION`), in the cup's depth:
//! the bed a lookup of the bank asks at that moment of the pour.

use granary_dem::bank::{self, Spec, CELLS, GRAINS, GRAINS_PER_S};
use granary_engine::base::materials::PACKING_FRACTION;
use granary_engine::control::choices::{CupShape, Shape};
use granary_engine::derived::cups::Cup;

fn main() {
    if let Err(e) = run() {
        eprintln!("poured_heap: {e}");
        std::process::exit(2);
    }
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T, what: &str) -> Result<T, String> {
    args.get(i).map_or(Ok(default), |a| {
        a.parse().map_err(|_| format!("{what}: `{a}` is not a number"))
    })
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: poured_heap GRAIN CUP [GRAINS] [FALL_M] [SIZE] [BIN]";
    let (grain, factor) = GRAINS
        .into_iter()
        .find(|(g, _)| Some(*g) == args.first().map(String::as_str))
        .ok_or_else(|| format!("{usage}; GRAIN one of {:?}", GRAINS.map(|g| g.0)))?;
    let cup = args
        .get(1)
        .and_then(|c| CupShape::ALL.into_iter().find(|s| s.id() == c))
        .ok_or_else(|| format!("{usage}; CUP one of {:?}", CupShape::ALL.map(CupShape::id)))?;
    let grains: usize = arg(&args, 2, 4000, "GRAINS")?;
    let fall: f32 = arg(&args, 3, 0.15, "FALL_M")?;
    let size: f32 = arg(&args, 4, 1.0, "SIZE")?;
    let bin: usize = arg(&args, 5, 250, "BIN")?;
    if !(10..=1000).contains(&bin)
        || !(bin..=40_000).contains(&grains)
        || !(0.01..=1.0).contains(&fall)
        || !(0.25..=4.0).contains(&size)
    {
        return Err(format!(
            "BIN within 10..=1000, GRAINS within BIN..=40000, FALL_M within 0.01..=1 m, SIZE within 0.25..=4: got {bin}, {grains}, {fall}, {size}"
        ));
    }
    let pour_s = grains as f64 / GRAINS_PER_S as f64;
    let spec = Spec {
        cup: Some(cup),
        grain,
        grain_size: factor * size,
        fill: 0.0,
        fall_height_m: fall,
        grains_per_s: GRAINS_PER_S,
        pour_s,
        seed: 1,
        runs: 1,
        friction: None,
        shape: Shape::Sphere,
    };
    let (sim, wall_s) = bank::simulate_scene(bank::scene(&spec), pour_s);
    let v = bank::impact_speed(&sim.scene);
    let per_s = bin as f64 / GRAINS_PER_S as f64;
    let bins = grains.div_ceil(bin);
    let mut counts = vec![vec![0u64; CELLS.len()]; bins];
    for (i, born) in sim.born_s.iter().enumerate() {
        let k = ((born / per_s) as usize).min(bins - 1);
        counts[k][bank::classify(&sim, i, v)] += 1;
    }
    println!(
        "{grain}, {:.2} mm, into an empty {} from {fall} m above the rim: {} grains poured, {wall_s:.0} s to simulate",
        2e3 * sim.scene.grain_radius_m,
        cup.id(),
        sim.grains().len()
    );
    println!("collisions a grain, by the {bin} grains poured up to:");
    print!("{:14}", "cell");
    for k in 0..bins {
        print!(" {:>6}", (k + 1) * bin);
    }
    println!();
    // the flat bed of the grains poured so far, in the cup's depth
    let cup_geometry = Cup::for_settings(&sim.scene.settings);
    let grain_m3 = 4.0 / 3.0 * std::f32::consts::PI * sim.scene.grain_radius_m.powi(3);
    print!("{:14}", "fill");
    for k in 0..bins {
        let bulk = ((k + 1) * bin) as f32 * grain_m3 / PACKING_FRACTION;
        print!(" {:6.4}", cup_geometry.height_holding(bulk) / cup_geometry.depth);
    }
    println!();
    for (j, c) in CELLS.iter().enumerate() {
        print!("{c:14}");
        for row in &counts {
            print!(" {:6.2}", row[j] as f64 / bin as f64);
        }
        println!();
    }
    Ok(())
}
