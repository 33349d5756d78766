//! The thesis's own test of a generator (§6.2), for the databank (`granary_dem::check`):
//! scenes between the sweep's points simulated again (six seeds each) and heard two ways, from
//! the raw logged collisions and from the generator sampling the bank. `#[ignore]`d (two and a
//! half minutes in release on 2 cores: one test a scene, side by side):
//!
//!     cargo test --release -p granary-dem --test bank_check -- --ignored --nocapture
//!
//! Every factory preset's own scene: `cargo xtask bank-check` (docs/dem.md).

use granary_dem::bank::{self, Spec};
use granary_dem::check::{self, Options};
use granary_engine::control::choices::{CupShape, Shape};

/// A scene of `grain` at `grain_size` times its material's diameter, poured for the sweep's
/// half second.
fn scene(cup: Option<CupShape>, grain: &'static str, grain_size: f32, fill: f32, fall_height_m: f32) -> Spec {
    Spec {
        cup,
        grain,
        grain_size,
        fill,
        fall_height_m,
        grains_per_s: bank::GRAINS_PER_S,
        pour_s: bank::POUR_S,
        seed: 1,
        runs: 1,
        friction: None,
        shape: Shape::Sphere,
    }
}

/// Checks scene `spec`; its steady pour starts `settle_s` after the first grains land.
fn check(name: &str, spec: Spec, settle_s: f64) {
    check_scaled(name, spec, 1.0, settle_s)
}

/// Checks the scene similar to `spec`'s `scale` times as large (`check::spec_case`).
fn check_scaled(name: &str, spec: Spec, scale: f32, settle_s: f64) {
    let case = check::spec_case(name, spec, scale, settle_s);
    // one seed a thread: the tests run side by side
    let options = Options {
        jobs: 1,
        ..Options::default()
    };
    let report = check::run(&case, &options).unwrap();
    for (i, (n, w)) in report.contacts.iter().zip(&report.wall_s).enumerate() {
        eprintln!("{name}, seed {}: {n} contacts simulated in {w:.1} s", options.seeds[i]);
    }
    eprint!("{}", report.details());
    eprintln!("{}", report.summary());
    assert!(
        report.worst_rate() <= check::RATE_BOUND,
        "{name}: a cell's rate is {:.1} % off the bank's",
        100.0 * report.worst_rate()
    );
    assert!(
        report.spectrum_db <= check::SPECTRUM_BOUND_DB,
        "{name}: spectrum {:.2} dB",
        report.spectrum_db
    );
    assert!(
        report.steady_db <= check::ENVELOPE_BOUND_DB,
        "{name}: envelope {:.2} dB",
        report.steady_db
    );
}

// Scenes between the sweep's points, one test each (they run side by side).

/// Between the sweep's fills (0.3, 0.6) at a fall of 15 cm.
#[test]
#[ignore = "30 s in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn sugar_into_a_mug() {
    check(
        "sugar into a mug, bed at 0.45",
        scene(Some(CupShape::Mug), "sugar", 4.0, 0.45, 0.15),
        0.1,
    );
}

/// Between the sweep's falls (22, 30 cm), onto the surface.
#[test]
#[ignore = "30 s in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn sugar_onto_the_surface() {
    check(
        "sugar onto the surface from 26 cm",
        scene(None, "sugar", 4.0, 0.0, 0.26),
        0.1,
    );
}

/// Bouncing glass beads into a bowl, between fills. A bead bounces for a second or more,
/// ever slower: the generator spreads its collisions over its life by the bank's lifetime
/// profile and its speeds (before it drew them all as the bead arrived, 1 to 2.6 dB louder
/// over the half-second pour and silent after it).
#[test]
#[ignore = "1 minute in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn glass_beads_into_a_bowl() {
    check(
        "glass beads into a bowl, bed at 0.45",
        scene(Some(CupShape::Bowl), "glass_beads_2mm", 1.0, 0.45, 0.15),
        0.1,
    );
}

/// Rice at its own 2.8 mm (a size of the sweep's for rice alone: its collisions are not
/// monotone in the size), into a jar between fills and falls.
#[test]
#[ignore = "30 s in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn rice_into_a_jar() {
    check(
        "rice into a jar, bed at 0.45",
        scene(Some(CupShape::Jar), "rice", 1.0, 0.45, 0.26),
        0.1,
    );
}

/// Between the sweep's grain sizes (2.8 and 4 mm for rice): rice at 1.2 times its size
/// (3.4 mm, the `grain_size` setting), into a jar between fills and falls.
#[test]
#[ignore = "30 s in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn larger_rice_into_a_jar() {
    check(
        "3.4 mm rice into a jar, bed at 0.45",
        scene(Some(CupShape::Jar), "rice", 1.2, 0.45, 0.26),
        0.1,
    );
}

/// Gravel (friction 0.6, a grain of the sweep's since it bounds the table's frictions) at
/// half its size (3 mm: between the sweep's 2 and 4 mm), into a bowl between fills and falls.
#[test]
#[ignore = "30 s in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn smaller_gravel_into_a_bowl() {
    check(
        "3 mm gravel into a bowl, bed at 0.45",
        scene(Some(CupShape::Bowl), "gravel", 0.5, 0.45, 0.26),
        0.1,
    );
}

/// Lentils at their own 3.9 mm (restitution 0.45, friction 0.32: the sweep's lowest
/// friction), into the metal cup between fills.
#[test]
#[ignore = "30 s in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn lentils_into_a_metal_cup() {
    check(
        "lentils into a metal cup, bed at 0.45",
        scene(Some(CupShape::MetalCup), "lentils", 1.0, 0.45, 0.15),
        0.1,
    );
}

/// A cup larger than the bank's (Froude similarity, docs/dem.md "The cup's size"): the
/// scene of `rice_into_a_jar` 1.8 times as large, 5 mm rice from 47 cm into a jar 1.8 times
/// the bank's, which the engine looks up as that scene.
#[test]
#[ignore = "1 minute in release: cargo test --release -p granary-dem --test bank_check -- --ignored"]
fn rice_into_a_larger_jar() {
    check_scaled(
        "rice into a jar 1.8 times the bank's, bed at 0.45",
        scene(Some(CupShape::Jar), "rice", 1.0, 0.45, 0.26),
        1.8,
        0.1,
    );
}

/// The short version of `cargo xtask bank-check`, in CI: two factory presets' own scenes
/// with nothing clamped, their grains as the bank's spheres, simulated and heard against the
/// engine sampling the bank (`preset_is_the_banks`).
///
/// Rice spilled on a wooden table: 7 mm rice looked up inside the bank's sizes, onto the
/// surface from its own height (in rice's own shape its impact zone is 51 % over the bank's:
/// docs/dem.md). 8 s in release on 2 cores.
#[test]
fn rice_spilled_on_a_table_is_the_banks() {
    preset_is_the_banks("rice_spilled_on_a_wooden_table");
}

/// Coffee beans into the glass jar: 5 mm beans from 7.1 cm in the bank's cup, between its
/// 4 and 6 mm coffee beans and their 5 and 8 cm falls (clamped before those were swept:
/// its rates then 26 % off). A cup, a bed, the wall rings: what the surface does not have.
/// About 45 s in release on 2 cores.
#[test]
fn coffee_beans_into_a_jar_are_the_banks() {
    preset_is_the_banks("coffee_beans_glass_jar");
}

/// `id`'s scene checked as spheres: nothing clamped, rates, third octaves and envelope
/// within the bounds.
fn preset_is_the_banks(id: &str) {
    let check::PresetCase::Checked(case) = check::preset_case(id, check::Grains::Sphere).unwrap() else {
        panic!("{id} pours")
    };
    let report = check::run(&case, &Options::default()).unwrap();
    eprint!("{}", report.details());
    eprintln!("{}", report.summary());
    assert!(report.clamped().is_empty(), "{id}: clamped: {:?}", report.clamped());
    assert!(report.passes(), "{}", report.summary());
}
