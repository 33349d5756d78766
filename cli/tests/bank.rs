//! `granary inspect bank`, run as a user runs it: the collision databank's lookup at a moment
//! of a preset's pour. Checked against the engine's own lookup (`bank::shipped`), not against
//! the shipped bank's numbers.

use crate::support::{granary, stderr, stdout};
use granary_engine::control::choices::{CupShape, Shape};
use granary_engine::statistics::bank::{shipped, Family, CELL_IDS};
use serde_json::Value;

fn inspect(args: &[&str]) -> Value {
    let mut all = vec!["inspect", "bank", "--json"];
    all.extend_from_slice(args);
    let out = granary(&all);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn axis(v: &Value, name: &str) -> (f32, f32, bool) {
    let a = &v[name];
    (
        a["asked"].as_f64().unwrap() as f32,
        a["used"].as_f64().unwrap() as f32,
        a["clamped"].as_bool().unwrap(),
    )
}

#[test]
fn inspect_bank_reports_the_lookup_the_generator_uses() {
    let v = inspect(&[
        "--preset",
        "sugar_ceramic_mug",
        "--set",
        "statistics=bank",
        "--at",
        "1.5",
    ]);
    assert_eq!(v["statistics"], "bank");
    assert_eq!(v["at_s"], 1.5);
    assert_eq!(
        (v["family_asked"].as_str(), v["family"].as_str()),
        (Some("mug"), Some("mug"))
    );
    let (r, _, _) = axis(&v, "restitution");
    let (mu, mu_used, mu_clamped) = axis(&v, "friction");
    // sugar's friction on sugar, banked at sugar's restitution
    assert_eq!((mu, mu_used, mu_clamped), (0.45, 0.45, false));
    let (d, _, d_clamped) = axis(&v, "grain_diameter_m");
    // the preset's 0.5 mm sugar: banked in the mug at its own size (`granary-dem`'s
    // `SMALL_SIZES`)
    assert!((d - 0.0005).abs() < 1e-9 && !d_clamped, "{d} m, clamped {d_clamped}");
    // half its size is smaller than the bank's smallest sugar in the mug, 0.4 mm: the
    // nearest used and said
    let small = inspect(&["--preset", "sugar_ceramic_mug", "--set", "grain_size=0.5"]);
    let (asked, used, clamped) = axis(&small, "grain_diameter_m");
    assert!(
        (asked - 0.00025).abs() < 1e-9 && (used - 0.0004).abs() < 1e-9 && clamped,
        "{asked} m asked, {used} m used, clamped {clamped}"
    );
    let (fill, _, _) = axis(&v, "fill");
    let (h, _, _) = axis(&v, "fall_height_m");
    assert!((h - 0.15).abs() < 1e-6, "the preset's fall height, m: {h}");
    assert!(fill > 0.0 && fill < 1.0, "the cup fills as it is poured: {fill}");
    let arrivals = v["arrivals_per_s"].as_f64().unwrap();
    let speed = v["impact_speed_m_s"].as_f64().unwrap();
    assert!(arrivals > 1000.0 && speed > 1.0, "{arrivals} grains/s at {speed} m/s");
    // sugar's cubes, which the bank holds in the mug (`granary-dem`'s `SHAPED`)
    assert_eq!(
        (v["shape_asked"].as_str(), v["shape"].as_str()),
        (Some("cube"), Some("cube"))
    );
    // the engine's lookup at the reported axes, cell by cell
    let bank = shipped();
    let mug = Family::Cup(CupShape::Mug);
    let lookup = bank.lookup_at(&bank.select(mug, Shape::Cube, r, mu, d, h, 1.0), fill);
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), CELL_IDS.len());
    for (i, (c, id)) in cells.iter().zip(CELL_IDS).enumerate() {
        assert_eq!(c["cell"], id);
        let rate = c["rate_per_grain"].as_f64().unwrap();
        // (f32 numbers: JSON's reader may be an f64 ulp off)
        assert_eq!(rate as f32, lookup.cells[i].rate, "{id}");
        // the arrivals weighted by the cell's lifetime profile: sugar's grains rest within a
        // second, so 1.5 s into a pour about the arrivals now (the stream wavers)
        let per_s = c["collisions_per_s"].as_f64().unwrap();
        assert!(
            per_s >= 0.5 * arrivals * rate && per_s <= 1.5 * arrivals * rate,
            "{id}: {per_s} collisions/s for {arrivals} grains/s x {rate}"
        );
        let life = c["mean_life_s"].as_f64().unwrap();
        assert!(
            (life - lookup.cells[i].mean_life_s() as f64).abs() <= 1e-6 && (0.0..1.0).contains(&life),
            "{id}: mean life {life} s"
        );
        let mean = c["mean_speed_m_s"].as_f64().unwrap();
        assert!(
            (mean - lookup.mean_speed(i) as f64 * speed).abs() <= 1e-6 * mean.max(1.0),
            "{id}"
        );
        assert_eq!(rate > 0.0, mean > 0.0, "{id}: a cell with collisions has a speed");
    }
}

/// The grains' shape the lookup used: their own where the bank holds it, else spheres, said.
#[test]
fn inspect_bank_says_which_grain_shape_it_used() {
    let spheres = inspect(&["--preset", "sugar_ceramic_mug", "--set", "grain_shape=sphere"]);
    assert_eq!(
        (spheres["shape_asked"].as_str(), spheres["shape"].as_str()),
        (Some("sphere"), Some("sphere"))
    );
    // rice's own shape is not in the bank: its spheres, and the text says so
    let rice = inspect(&["--preset", "rice_plastic_bowl"]);
    assert_eq!(
        (rice["shape_asked"].as_str(), rice["shape"].as_str()),
        (Some("rice"), Some("sphere"))
    );
    let out = granary(&["inspect", "bank", "--preset", "rice_plastic_bowl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("sphere (the bank holds no rice grains for this pour: spheres of their volume used)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn inspect_bank_says_when_the_pour_is_outside_the_bank() {
    // a 1 m fall onto the surface: the surface family, clamped wherever its grid ends below
    let v = inspect(&["--preset", "sand_onto_concrete", "--set", "fall_height=100"]);
    assert_eq!(v["family"], "surface");
    // the preset plays the bank (its scene is nearer the bank's than the model's: docs/dem.md)
    assert_eq!(v["statistics"], "bank");
    let (asked, used, clamped) = axis(&v, "fall_height_m");
    // sand (restitution 0.6, friction 0.55) is looked up among sugar's and gravel's 2 mm
    // grains (0.5; frictions 0.45 and 0.6) and glass beads' (0.85, 0.4): each size's falls
    // end where its grain's do (gravel's reach 45 cm), and the fall used is the corners'
    let tops: Vec<f32> = [(0.5, 0.45), (0.5, 0.6), (0.85, 0.4)]
        .map(|(e, mu)| *shipped().falls(Family::Surface, e, mu, 0.002).last().unwrap())
        .into();
    let (low, top) = (
        tops.iter().copied().fold(f32::MAX, f32::min),
        tops.iter().copied().fold(0.0, f32::max),
    );
    // the spout 1 m above where the preset's cup's rim would be: as far above the ground as
    // 1 m plus the depths' difference above the bank's surface scenes' mug
    let preset = granary_engine::control::preset::find("sand_onto_concrete").unwrap();
    let depth = granary_engine::derived::cups::Cup::for_settings(&preset.values.to_settings()).depth;
    let bank_depth = granary_engine::derived::cups::Cup::new(
        granary_engine::derived::BANK_SURFACE_CUP,
        granary_engine::derived::BANK_CUP_SIZE,
    )
    .depth;
    assert!((asked - (1.0 + depth - bank_depth)).abs() < 1e-6, "{asked} m");
    assert!(depth > bank_depth, "the preset's cup is 1.8 times the mug");
    assert!(asked > top && clamped);
    assert!(
        used >= low - 1e-6 && used <= top + 1e-6,
        "{used} m, the corners' tops {tops:?}"
    );
    // as text
    let out = granary(&[
        "inspect",
        "bank",
        "--preset",
        "sand_onto_concrete",
        "--set",
        "fall_height=100",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("family          surface"), "{text}");
    for id in CELL_IDS {
        assert!(text.contains(id), "{text}");
    }
    let line = |name: &str| text.lines().find(|l| l.starts_with(name)).unwrap_or_default();
    let note = "outside the bank's range: nearest entry used";
    assert_eq!(line("fall height").contains(note), clamped, "{text}");
    // 0.2 mm sand: smaller than the bank's grains
    assert!(line("grain diameter").contains(note), "{text}");
    // onto the surface the heap grows in the bank's runs: its fill is not clamped
    assert!(!axis(&v, "fill").2);
    assert!(!line("fill").contains(note) && line("fill").contains("heap"), "{text}");
}

#[test]
fn inspect_bank_refuses_a_moment_outside_the_pour_and_bad_settings() {
    for at in ["0", "-1", "61", "nan"] {
        let out = granary(&["inspect", "bank", "--at", at]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("--at must be within (0, 60] s"),
            "{at}: {}",
            stderr(&out)
        );
    }
    let out = granary(&["inspect", "bank", "--set", "statistics=dem"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("`dem` is not one of: model, bank"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn inspect_bank_looks_a_larger_cup_up_as_the_similar_pour_into_the_banks() {
    // rice in its bowl at 1.2 times the bank's size: by Froude similarity the bank's bowl with
    // grains and fall 1.2 times smaller (docs/dem.md, "The cup's size"), inside the bank's
    // grid: 2.33 mm rice (between its 2 and 2.8 mm) from 16.7 cm
    let v = inspect(&["--preset", "rice_plastic_bowl", "--set", "cup_size=1.2"]);
    assert_eq!(v["scale"].as_f64().unwrap() as f32, 1.2);
    let (d, _, d_clamped) = axis(&v, "grain_diameter_m");
    let (h, _, h_clamped) = axis(&v, "fall_height_m");
    assert!((d - 0.0028 / 1.2).abs() < 1e-8, "{d} m");
    assert!((h - 0.2 / 1.2).abs() < 1e-6, "{h} m");
    assert!(!d_clamped && !h_clamped);
    let (r, _, _) = axis(&v, "restitution");
    let (mu, _, _) = axis(&v, "friction");
    let (fill, _, _) = axis(&v, "fill");
    let lookup = shipped().lookup(Family::Cup(CupShape::Bowl), r, mu, d, fill, h);
    for (c, cell) in v["cells"].as_array().unwrap().iter().zip(&lookup.cells) {
        assert_eq!(c["rate_per_grain"].as_f64().unwrap() as f32, cell.rate, "{c}");
        // a grain's life sqrt(1.2) times the bank scene's
        let life = c["mean_life_s"].as_f64().unwrap();
        assert!((life - cell.mean_life_s() as f64 * 1.2f64.sqrt()).abs() < 1e-5, "{c}");
    }
    let out = granary(&[
        "inspect",
        "bank",
        "--preset",
        "rice_plastic_bowl",
        "--set",
        "cup_size=1.2",
    ]);
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("scale") && l.contains("Froude similarity")),
        "{text}"
    );
    let surface = inspect(&["--preset", "sand_onto_concrete", "--set", "cup_size=2"]);
    assert_eq!(surface["scale"], 1.0);
}
