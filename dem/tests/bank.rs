//! The databank's reduction (`granary_dem::bank`): single grains put where each cell's rule
//! says they land, and a rerun of one of the shipped bank's entries (the CI subset of the
//! sweep: `cargo xtask bank` reruns all of it).

use granary_dem::bank::{self, BankFile, Spec, CELLS};
use granary_dem::Sim;
use granary_engine::control::choices::{CupShape, Shape};

fn spec(fill: f32) -> Spec {
    Spec {
        cup: Some(CupShape::Mug),
        grain: "sugar",
        grain_size: 4.0,
        fill,
        fall_height_m: 0.08,
        grains_per_s: 0.0,
        pour_s: 0.0,
        seed: 1,
        runs: 1,
        friction: None,
        shape: Shape::Sphere,
    }
}

/// One grain at `position` with `velocity` in the scene of `spec`, run until its first
/// contact; the contact's cell and its speed over the scene's impact speed.
fn first_contact(spec: &Spec, position: [f32; 3], velocity: [f32; 3]) -> (&'static str, f32) {
    let scene = bank::scene(spec);
    let v_ref = bank::impact_speed(&scene);
    let mut sim = Sim::new(scene, 0.0);
    sim.spawn_grain(position, velocity);
    while sim.contacts.is_empty() && sim.time_s < 1.0 {
        sim.step();
    }
    assert!(!sim.contacts.is_empty(), "the grain landed");
    (CELLS[bank::classify(&sim, 0, v_ref)], sim.contacts[0].speed_m_s / v_ref)
}

#[test]
fn a_grain_dropped_from_the_spout_lands_in_its_cell_at_the_impact_speed() {
    let empty = spec(0.0);
    let scene = bank::scene(&empty);
    let top = scene.spout_m[2];
    // onto the bare floor: the impact speed is the engine's sqrt(2 g h) to the floor
    let (cell, v) = first_contact(&empty, [0.0, 0.0, top], [0.0; 3]);
    assert_eq!(cell, "cup_floor");
    assert!((v - 1.0).abs() < 0.01, "{v}");
    // onto the pre-filled bed on the axis (the stream's landing zone), and near the wall
    let filled = spec(0.5);
    let (cell, v) = first_contact(&filled, [0.0, 0.0, top], [0.0; 3]);
    assert_eq!(cell, "impact_zone");
    assert!((v - 1.0).abs() < 0.02, "{v}");
    let r = 0.8 * scene.cup.unwrap().rim_radius;
    let (cell, _) = first_contact(&filled, [r, 0.0, top], [0.0; 3]);
    assert_eq!(cell, "pile_surface");
}

/// A grain dropped from the spout arrives a fall v/g after it leaves it, as the engine's
/// arrivals do: its landing is in the first lifetime bin (under 5 ms), its rebounds later
/// and slower, and each cell's lifetime rows hold its collisions, speed bin by speed bin.
#[test]
fn a_dropped_grains_landing_is_its_arrival_and_its_rebounds_come_later() {
    let empty = spec(0.0);
    let scene = bank::scene(&empty);
    let v_ref = bank::impact_speed(&scene);
    let top = scene.spout_m[2];
    let mut sim = Sim::new(scene, 0.0);
    sim.spawn_grain([0.0, 0.0, top], [0.0; 3]);
    sim.run_until(0.6);
    assert!(sim.contacts.len() >= 2, "it lands and bounces: {}", sim.contacts.len());
    let age = |i: usize| sim.contacts[i].time_s - sim.born_s[i] - (v_ref / 9.81) as f64;
    assert!(age(0).abs() < 0.002, "landed {:.4} s after its arrival", age(0));
    assert_eq!(bank::life_bin(age(0)), 0);
    assert!(bank::life_bin(age(sim.contacts.len() - 1)) > 0);
    let cells = bank::reduce(&sim, v_ref);
    for c in &cells {
        for (i, &n) in c.speed.iter().enumerate() {
            assert_eq!(c.speed_by_life.iter().map(|row| row[i]).sum::<u64>(), n);
        }
    }
    let floor = &cells[CELLS.iter().position(|&c| c == "cup_floor").unwrap()];
    let row_energy = |k: usize| -> f64 {
        let n: u64 = floor.speed_by_life[k].iter().sum();
        let e: f64 = (0..bank::SPEED_BINS)
            .map(|i| floor.speed_by_life[k][i] as f64 * bank::speed_centre(i).powi(2))
            .sum();
        e / n.max(1) as f64
    };
    let late = (1..bank::LIFE_BINS)
        .find(|&k| floor.speed_by_life[k].iter().sum::<u64>() > 0)
        .unwrap();
    assert!(
        row_energy(late) < 0.5 * row_energy(0),
        "{} {}",
        row_energy(late),
        row_energy(0)
    );
}

#[test]
fn a_grain_thrown_at_the_wall_hits_the_ring_at_its_height() {
    let s = spec(0.0);
    let cup = bank::scene(&s).cup.unwrap();
    for ring in 0..3 {
        let z = cup.ring_mid(ring);
        let (cell, _) = first_contact(&s, [0.0, 0.0, z], [2.0, 0.0, 0.0]);
        assert_eq!(cell, format!("wall_ring_{ring}"));
    }
}

#[test]
fn two_grains_meeting_in_the_fall_are_the_stream() {
    let s = spec(0.0);
    let scene = bank::scene(&s);
    let v_ref = bank::impact_speed(&scene);
    let a = scene.grain_radius_m;
    let top = scene.spout_m[2];
    let mut sim = Sim::new(scene, 0.0);
    // both fall; the upper one faster, and catches up
    sim.spawn_grain([0.0, 0.0, top - 0.01], [0.0, 0.0, -1.0]);
    sim.spawn_grain([0.2 * a, 0.0, top], [0.0, 0.0, -2.5]);
    while sim.contacts.is_empty() && sim.time_s < 1.0 {
        sim.step();
    }
    assert_eq!(CELLS[bank::classify(&sim, 0, v_ref)], "stream", "{:?}", sim.contacts[0]);
}

#[test]
fn the_shipped_bank_reruns_from_its_sweep() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/bank/bank.json"))
        .expect("assets/bank/bank.json");
    let file: BankFile = serde_json::from_str(&text).expect("the bank parses");
    assert_eq!(file.format, bank::FORMAT);
    assert_eq!(file.version, bank::VERSION);
    let sweep = bank::sweep();
    assert_eq!(file.entries.len(), sweep.len(), "one entry a run of the sweep");
    // sugar into the empty mug from 30 cm: the same cells, counts and histograms (every run
    // is seeded; rapier is deterministic)
    let i = 3;
    let (spec, shipped) = (&sweep[i], &file.entries[i]);
    assert_eq!((spec.fill, spec.fall_height_m), (shipped.fill, shipped.fall_height_m));
    let rerun = bank::run(spec);
    for cell in CELLS {
        let (a, b) = (rerun.cell(cell), shipped.cell(cell));
        assert_eq!(
            (a.count, &a.speed, &a.angle_by_speed, &a.time, &a.speed_by_life),
            (b.count, &b.speed, &b.angle_by_speed, &b.time, &b.speed_by_life),
            "{cell}"
        );
    }
    assert_eq!(rerun.grains, shipped.grains);
    // the surface scenes' cup (`BANK_SURFACE_CUP`, set by `bank::values` since the spout's
    // height was made to follow it) is the one the default settings gave them when swept
    assert_eq!(
        granary_engine::control::params::ParamValues::default()
            .to_settings()
            .resolved_cup_shape(),
        granary_engine::derived::BANK_SURFACE_CUP
    );
    // every entry is its scene of the sweep (grain, its friction, size, fill, fall:
    // `runs_held`) with all its runs (`bank::RUNS`) and its grain's friction: the
    // material's, or the sweep's own (`bank::GRAIN_FRICTIONS`: beads of friction 0.6)
    for (spec, e) in sweep.iter().zip(&file.entries) {
        let name = format!("{} {} mm", e.grain_material, 1e3 * e.grain_diameter_m);
        assert_eq!(bank::runs_held(e, spec), spec.runs, "{name}");
        // (the flow is set in steps of 0.01 g/s: a run may pour a grain more or fewer than
        // its thousand, and the smallest grains a few per cent more: `bank::grains_slack`,
        // at most 5 % for the sweep's 0.4 mm sugar)
        let slack = bank::grains_slack(spec);
        assert!(slack <= 1 + 50, "{name}: {slack}");
        assert!(
            e.grains.abs_diff(spec.runs as usize * 1000) <= spec.runs as usize * slack,
            "{name}"
        );
        let material = granary_engine::base::materials::GrainMaterial::from_id(spec.grain).unwrap();
        assert_eq!(
            e.friction,
            spec.friction.unwrap_or(material.friction()),
            "{}",
            e.grain_material
        );
    }
    // the beads of friction 0.6: at 2 mm, every family, at 0.9 mm in the metal cup and at
    // 1 mm onto the surface (with its 45 cm fall)
    let own = |mu: f32| {
        file.entries
            .iter()
            .filter(|e| e.grain_material == "glass_beads_2mm" && e.friction == mu)
            .count()
    };
    assert_eq!(own(0.6), 5 * 6 * 5 + 6 + 6 * 5 + 6);
    assert!(own(0.4) > own(0.6));
    for e in file
        .entries
        .iter()
        .filter(|e| e.friction == 0.6 && e.grain_material == "glass_beads_2mm")
    {
        let small = (e.family == "metal_cup" && e.grain_diameter_m == 0.0009)
            || (e.family == "surface" && e.grain_diameter_m == 0.001);
        assert!(e.grain_diameter_m == 0.002 || small, "{}", e.grain_diameter_m);
        assert_eq!(e.runs, 3);
    }
    // sugar's cubes in the mug (`bank::SHAPED`): its four sizes there, every fill and fall,
    // and no other entry but spheres
    let cubes: Vec<_> = file.entries.iter().filter(|e| e.shape != "sphere").collect();
    assert_eq!(cubes.len(), 4 * 6 * 5);
    assert!(cubes
        .iter()
        .all(|e| (e.shape.as_str(), e.family.as_str(), e.grain_material.as_str()) == ("cube", "mug", "sugar")));
    // written only where it is not the sphere: the spheres' entries read as before
    assert!(!text.contains(r#""shape":"sphere""#) && text.contains(r#""shape":"cube""#));
}

/// An entry of several runs is their sum: `run` of two seeds is `merge` of each seed's run,
/// every count and histogram added up and each rate the count over all the grains poured;
/// merged in either grouping the counts are the same (the sweep's `--reuse` adds seeds to
/// an entry it holds). A short pour of 100 grains into the empty mug.
#[test]
fn the_engine_knows_a_runs_grains() {
    // the engine divides an empty cup's floor hits by the floor's fade over a run of the
    // sweep's grains (`statistics::bank::floor_fade_mean`): the same thousand
    assert_eq!(
        granary_engine::statistics::bank::RUN_GRAINS as f64,
        (bank::GRAINS_PER_S as f64 * bank::POUR_S).round()
    );
}

#[test]
fn an_entry_of_several_runs_is_their_sum() {
    let short = Spec {
        grains_per_s: 2000.0,
        pour_s: 0.05,
        runs: 2,
        ..spec(0.0)
    };
    let (a, b) = (bank::run_seed(&short, 1), bank::run_seed(&short, 2));
    assert_ne!(
        a.cell("cup_floor").speed,
        b.cell("cup_floor").speed,
        "two seeds, two pours"
    );
    let both = bank::run(&short);
    assert_eq!((both.runs, both.grains), (2, a.grains + b.grains));
    for cell in CELLS {
        let (x, y, m) = (a.cell(cell), b.cell(cell), both.cell(cell));
        assert_eq!(m.count, x.count + y.count, "{cell}");
        assert_eq!(m.rate, m.count as f64 / both.grains as f64, "{cell}");
        let sum = |p: &[u64], q: &[u64]| p.iter().zip(q).map(|(u, v)| u + v).collect::<Vec<u64>>();
        assert_eq!(m.speed, sum(&x.speed, &y.speed), "{cell}");
        assert_eq!(m.time, sum(&x.time, &y.time), "{cell}");
        for (k, row) in m.speed_by_life.iter().enumerate() {
            assert_eq!(*row, sum(&x.speed_by_life[k], &y.speed_by_life[k]), "{cell}");
        }
        for (k, row) in m.angle_by_speed.iter().enumerate() {
            assert_eq!(*row, sum(&x.angle_by_speed[k], &y.angle_by_speed[k]), "{cell}");
        }
    }
    // a third seed added to the merged two, or the last two merged first
    let c = bank::run_seed(&short, 3);
    let (left, right) = (
        bank::merge(&[both.clone(), c.clone()]),
        bank::merge(&[a, bank::merge(&[b, c])]),
    );
    assert_eq!(left.runs, 3);
    assert_eq!((left.grains, left.runs), (right.grains, right.runs));
    for cell in CELLS {
        let (l, r) = (left.cell(cell), right.cell(cell));
        assert_eq!(
            (l.rate, l.count, &l.speed, &l.speed_by_life),
            (r.rate, r.count, &r.speed, &r.speed_by_life)
        );
    }
    // what `--reuse` counts as held: the two runs of the three the sweep would ask for
    let three = Spec { runs: 3, ..short };
    assert_eq!(bank::runs_held(&both, &three), 2);
    assert_eq!(bank::runs_held(&left, &short), 0, "more runs than asked are not reused");
}

/// `--reuse` reads a bank of the version before the friction (3): each entry's friction is
/// its grain material's; another version or an unknown grain is refused, said why.
#[test]
fn a_bank_of_version_3_is_read_with_its_grains_friction() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/bank/bank.json"))
        .expect("assets/bank/bank.json");
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let entries = v["entries"].as_array_mut().unwrap();
    entries.truncate(1);
    assert_eq!(entries[0]["grain_material"], "sugar");
    entries[0].as_object_mut().unwrap().remove("friction");
    v["version"] = 3.into();
    let old = bank::read(&v.to_string()).expect("version 3 is read");
    assert_eq!(old.version, bank::VERSION);
    assert_eq!(old.entries[0].friction, 0.45);
    let mut glass = v.clone();
    glass["entries"][0]["grain_material"] = "glass_beads_2mm".into();
    assert_eq!(bank::read(&glass.to_string()).unwrap().entries[0].friction, 0.4);
    let mut unknown = v.clone();
    unknown["entries"][0]["grain_material"] = "marbles".into();
    let e = bank::read(&unknown.to_string()).unwrap_err();
    assert!(e.contains("entry 0: unknown grain material `marbles`"), "{e}");
    let mut future = v.clone();
    future["version"] = 9.into();
    future["entries"][0]["friction"] = 0.45.into();
    let e = bank::read(&future.to_string()).unwrap_err();
    assert!(e.contains("version 9: not granary-bank version 3, 4 or 5"), "{e}");
    let mut other = v.clone();
    other["format"] = "granary-preset".into();
    let e = bank::read(&other.to_string()).unwrap_err();
    assert!(e.contains("format \"granary-preset\": not granary-bank"), "{e}");
    // version 4 without a friction is not a bank
    let mut missing = v;
    missing["version"] = 4.into();
    assert!(bank::read(&missing.to_string()).unwrap_err().contains("friction"));
}

/// The mean time from the younger poured grain's landing (its first contact as the
/// younger of the two: a grain is known by its birth, `Sim::born_s`) to its collisions, in
/// each cell, s: a grain's life after it lands, its fall left out.
fn mean_life_s(sim: &Sim, v_ref: f32) -> Vec<f64> {
    let mut landed = std::collections::HashMap::new();
    for (c, &born) in sim.contacts.iter().zip(&sim.born_s) {
        let t = landed.entry(born.to_bits()).or_insert(c.time_s);
        *t = t.min(c.time_s);
    }
    let mut sum = vec![(0.0, 0u64); CELLS.len()];
    for (i, c) in sim.contacts.iter().enumerate() {
        let s = &mut sum[bank::classify(sim, i, v_ref)];
        *s = (s.0 + c.time_s - landed[&sim.born_s[i].to_bits()], s.1 + 1);
    }
    sum.iter().map(|&(t, n)| t / n.max(1) as f64).collect()
}

/// Froude similarity, as the engine looks a larger cup up (`Bank::select`; docs/dem.md, "The
/// cup's size"): 2 mm sugar poured from 15 cm into the mug on a bed at 0.3 (a scene of the
/// sweep) and the similar pour twice as large, 4 mm sugar from 30 cm into a mug twice the
/// size, as many grains over sqrt(2) times as long. Per grain poured, the collisions and
/// their energy (over the impact speed's square) are the same within the seed's spread,
/// and a grain's collisions come sqrt(2) times later after it lands (the engine reads the
/// bank's lifetime profile that much slower, `SceneInput::life_scale`). One seed each side
/// (docs/dem.md gives two seeds of three grains).
#[test]
fn a_pour_twice_as_large_is_the_similar_pour() {
    let small = Spec {
        fill: 0.3,
        fall_height_m: 0.15,
        grains_per_s: bank::GRAINS_PER_S,
        pour_s: bank::POUR_S,
        ..spec(0.3)
    };
    let reduce = |(scene, pour_s): (granary_dem::Scene, f64)| {
        let (sim, _) = bank::simulate_scene(scene, pour_s);
        let v_ref = bank::impact_speed(&sim.scene);
        (bank::reduce(&sim, v_ref), sim.grains().len(), mean_life_s(&sim, v_ref))
    };
    let (a, poured_a, life_a) = reduce((bank::scene(&small), small.pour_s));
    let (b, poured_b, life_b) = reduce(bank::similar_scene(&small, 2.0));
    assert_eq!((poured_a, poured_b), (1000, 1000));
    let sum = |c: &[bank::CellStats], f: &dyn Fn(&bank::CellStats) -> f64| c.iter().map(f).sum::<f64>();
    let (rate_a, rate_b) = (sum(&a, &|c| c.rate), sum(&b, &|c| c.rate));
    let (energy_a, energy_b) = (sum(&a, &bank::energy_per_grain), sum(&b, &bank::energy_per_grain));
    eprintln!("all cells: collisions a grain {rate_a:.3} and {rate_b:.3}, energy {energy_a:.4} and {energy_b:.4}");
    assert!(
        (rate_b / rate_a - 1.0).abs() < 0.05,
        "collisions a grain {rate_a} and {rate_b}"
    );
    assert!(
        (energy_b / energy_a - 1.0).abs() < 0.06,
        "energy a grain {energy_a} and {energy_b}"
    );
    for (i, cell) in CELLS.iter().enumerate() {
        // the cells with a tenth of the collisions: the impact zone and the pile
        if a[i].rate < 0.1 * rate_a {
            continue;
        }
        let ratio = b[i].rate / a[i].rate;
        assert!(
            (ratio - 1.0).abs() < 0.08,
            "{cell}: {} and {} a grain",
            a[i].rate,
            b[i].rate
        );
        let later = life_b[i] / life_a[i];
        eprintln!("{cell}: collisions a grain x{ratio:.3}, mean life x{later:.3}");
        assert!(
            (later / 2f64.sqrt() - 1.0).abs() < 0.05,
            "{cell}: mean life {} s and {} s",
            life_a[i],
            life_b[i]
        );
    }
}

/// The shipped bank read as `--reuse` and `--merge` read a bank or a shard, and written
/// again, is the same file byte for byte: every number comes back as it was written
/// (serde_json's `float_roundtrip`; without it a three-run entry's simulated seconds,
/// 11.597399707025033, came back as ...032, and a sweep reusing the whole bank wrote
/// another file).
#[test]
fn the_shipped_bank_reads_back_byte_for_byte() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/bank/bank.json"))
        .expect("assets/bank/bank.json");
    let file = bank::read(&text).expect("the bank reads");
    let again = granary_dem::shards::bank_text(&file);
    let first = again.bytes().zip(text.bytes()).position(|(a, b)| a != b);
    assert!(again == text, "differs from byte {first:?}");
}
