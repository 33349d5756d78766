//! `granary inspect ground`, run as a user runs it: one ball dropped on the ground (seed 002
//! Table 1 by default) and seed 002 Table 3, against the paper's published numbers.

use crate::support;
use crate::support::{granary, stderr, stdout};
use granary_engine::base::materials::GrainMaterial;

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["inspect", "ground"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = granary(&all);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} missing: {v}"))
}

/// Seed 002 Table 1's drop: a 2 cm steel ball, 15 cm onto wood (MDF), restitution 0.5,
/// listener 20 cm overhead; t_c = 1.633e-4 s (Granary's standard Hertz modulus gives 2.6 %
/// less), and Table 3's cell for it, -6.12 dB.
#[test]
fn defaults_are_table_1_and_reproduce_its_contact_time_and_table_3_cell() {
    let v = json(&[]);
    let tc = num(&v, "contact_time_s");
    assert!((tc / 1.633e-4 - 1.0).abs() < 0.03, "{tc}");
    let db = num(&v, "ground_to_ball_db");
    assert!((db + 6.12).abs() < 1.0, "{db}");
    for key in [
        "ball_peak_pa",
        "ground_peak_pa",
        "sum_peak_pa",
        "ground_shear_speed_m_s",
        "ground_rayleigh_speed_m_s",
        "ground_pressure_speed_m_s",
        "epsilon_m",
    ] {
        assert!(num(&v, key) > 0.0, "{key}: {v}");
    }
    // the set-up itself: sqrt(2 g h), (1 + e) m v, MDF's shear speed (Table 1: 2422 m/s)
    let v_n = (2.0 * 9.80665 * 0.15f64).sqrt();
    assert!((num(&v, "impact_speed_m_s") / v_n - 1.0).abs() < 1e-6, "{v}");
    let mass = num(&v, "ball_mass_kg");
    assert!((mass / (7955.0 * std::f64::consts::PI / 6.0 * 0.02f64.powi(3)) - 1.0).abs() < 1e-6);
    assert!((num(&v, "impulse_n_s") / (1.5 * mass * v_n) - 1.0).abs() < 1e-6, "{v}");
    assert!((num(&v, "ground_shear_speed_m_s") - 2422.0).abs() < 1.0, "{v}");
    let c = |k: &str| num(&v, k);
    assert!(c("ground_rayleigh_speed_m_s") < c("ground_shear_speed_m_s"));
    assert!(c("ground_shear_speed_m_s") < c("ground_pressure_speed_m_s"));
    // the ground's and the ball's sounds overlap: the sum's peak is above either
    assert!(c("sum_peak_pa") > c("ground_peak_pa").max(c("ball_peak_pa")), "{v}");
    assert_eq!(v["listener_m"], serde_json::json!([0.0, 0.0, 0.2]));

    // the text output names the same figures
    let text = stdout(&granary(&["inspect", "ground"]));
    for needle in ["contact time", "1.591", "ground / ball", "dB", "Rayleigh"] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

/// A soft ground is louder than the ball: Table 3's steel ball on soil, 19.06 dB, with the
/// table's contact time (1.633e-4 s for every pair). Soil's own Hertz contact is nine times
/// longer, which quietens the ball (its sound is the contact's jerk) far more than the
/// ground: the ground then leads by more still.
#[test]
fn soil_is_louder_than_the_ball_as_table_3_has_it() {
    let table = json(&["--ground", "soil", "--contact-time-s", "1.633e-4"]);
    assert_eq!(num(&table, "contact_time_s"), 1.633e-4);
    let db = num(&table, "ground_to_ball_db");
    assert!((db - 19.06).abs() < 3.0, "{db}");
    let hertz = json(&["--ground", "soil"]);
    let t = num(&hertz, "contact_time_s");
    assert_eq!(t, num(&hertz, "hertz_contact_time_s"));
    assert!(t > 5.0 * 1.633e-4, "{t}");
    assert!(num(&hertz, "ground_to_ball_db") > db + 6.0, "{hertz}");
}

/// Every option reaches the computation: the listener low over the ground hears the ground
/// gain on the ball (seed 002 Fig. 11); a smaller ball has a shorter contact; a grain
/// material is a ball of the grain's own size and restitution.
#[test]
fn the_options_change_the_drop() {
    let overhead = num(&json(&[]), "ground_to_ball_db");
    let low = num(&json(&["--listener", "0.2,0,0.02"]), "ground_to_ball_db");
    assert!(low > overhead + 10.0, "{low} vs {overhead}");
    let small = json(&["--diameter-mm", "5", "--drop-height-cm", "30", "--restitution", "0"]);
    assert!(num(&small, "contact_time_s") < 0.5e-4, "{small}");
    assert!((num(&small, "impact_speed_m_s") / (2.0 * 9.80665 * 0.3f64).sqrt() - 1.0).abs() < 1e-6);
    assert!(
        (num(&small, "impulse_n_s") / (num(&small, "ball_mass_kg") * num(&small, "impact_speed_m_s")) - 1.0).abs()
            < 1e-6
    );
    let rice = json(&["--ball", "rice", "--ground", "concrete"]);
    let data = GrainMaterial::Rice.data();
    assert!(
        (num(&rice, "diameter_mm") - data.diameter_m as f64 * 1e3).abs() < 1e-6,
        "{rice}"
    );
    assert!(
        (num(&rice, "restitution") - data.restitution as f64).abs() < 1e-6,
        "{rice}"
    );
    assert!(num(&rice, "ground_to_ball_db").is_finite());
}

/// `--table3`: seed 002 Table 3 as computed beside the published values, every cell within
/// 3 dB (and the published table as the paper prints it).
#[test]
fn table_3_every_cell_within_3_db() {
    let out = granary(&["inspect", "ground", "--table3", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let grid = |key: &str| -> Vec<Vec<f64>> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
            .collect()
    };
    let (computed, published, diff) = (grid("computed_db"), grid("published_db"), grid("difference_db"));
    assert_eq!(computed.len(), 8);
    let names = [
        "steel", "ceramic", "granite", "concrete", "wood", "plastic", "soil", "wax",
    ];
    assert_eq!(v["balls"], serde_json::json!(names));
    assert_eq!(v["grounds"], serde_json::json!(names));
    // corners and the Table 1 cell, as printed in the paper
    assert_eq!(published[0][0], -30.25);
    assert_eq!(published[0][4], -6.12);
    assert_eq!(published[0][6], 19.06);
    assert_eq!(published[4][0], -50.76);
    assert_eq!(published[7][7], -0.53);
    let mut worst: f64 = 0.0;
    for i in 0..8 {
        assert_eq!(computed[i].len(), 8);
        for j in 0..8 {
            let d = computed[i][j] - published[i][j];
            assert!((d - diff[i][j]).abs() < 1e-9);
            assert!(d.abs() <= 3.0, "{} on {}: {d:.2} dB", names[i], names[j]);
            worst = worst.max(d.abs());
        }
    }
    assert!((num(&v, "worst_abs_difference_db") - worst).abs() < 1e-9);
    // the text is a markdown table, a row per ball
    let text = stdout(&granary(&["inspect", "ground", "--table3"]));
    assert!(text.contains("| ball \\ ground | steel | ceramic |"), "{text}");
    assert!(text.contains("| wax | "), "{text}");
}

#[test]
fn plot_writes_a_png() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("ground.png");
    let out = granary(&[
        "inspect",
        "ground",
        "--ground",
        "concrete",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("wrote "), "{}", stdout(&out));
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 20_000,
        "{}",
        bytes.len()
    );
    assert_eq!(support::names(dir.path()), ["ground.png"], "no temporary left");
}

/// Each bad value exits 2 with a message naming its argument (and the range or the choices).
#[test]
fn bad_values_are_refused_naming_the_argument() {
    for (args, needle) in [
        (
            &["--ball", "unobtainium"][..],
            "--ball: unknown material 'unobtainium' (surface materials: steel,",
        ),
        (
            &["--ground", "rice"],
            "--ground: unknown material 'rice' (surface materials: steel,",
        ),
        (
            &["--diameter-mm", "NaN"],
            "--diameter-mm must be within [0.01, 500] mm, got NaN",
        ),
        (
            &["--diameter-mm", "-2"],
            "--diameter-mm must be within [0.01, 500] mm, got -2",
        ),
        (&["--diameter-mm", "1e9"], "--diameter-mm must be within [0.01, 500] mm"),
        (
            &["--drop-height-cm", "0"],
            "--drop-height-cm must be within [0.01, 1000] cm, got 0",
        ),
        (&["--drop-height-cm", "inf"], "--drop-height-cm must be within"),
        (
            &["--restitution", "1.5"],
            "--restitution must be within [0, 1], got 1.5",
        ),
        (
            &["--restitution", "-0.1"],
            "--restitution must be within [0, 1], got -0.1",
        ),
        (
            &["--contact-time-s", "1"],
            "--contact-time-s must be within [1e-7, 0.1] s, got 1",
        ),
        (
            &["--listener", "0,0,0"],
            "--listener Z (the height above the ground) must be within (0, 100] m, got 0",
        ),
        (
            &["--listener", "0,0,-1"],
            "--listener Z (the height above the ground) must be within (0, 100] m, got -1",
        ),
        (&["--listener", "0,0,1000"], "--listener Z"),
        (
            &["--listener", "-1e3,0,1"],
            "--listener X must be within [-100, 100] m, got -1000",
        ),
        (&["--listener", "0,0"], "--listener must be three numbers X,Y,Z"),
        (&["--listener", "a,b,c"], "--listener must be three numbers X,Y,Z"),
        (&["--listener", "0,0,0.2,1"], "--listener must be three numbers X,Y,Z"),
        (&["--listener", "0,0,0.005"], "--listener 0,0,0.005 is inside the ball"),
        (&["--diameter-mm", "0.01"], "time steps"),
        (&["--table3", "--ball", "wood"], "cannot be used with"),
    ] {
        let mut all = vec!["inspect", "ground"];
        all.extend_from_slice(args);
        let out = granary(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains(needle), "{all:?}: {err}");
        assert!(stdout(&out).is_empty(), "{all:?}");
    }
    // the help shows every range and both kinds of ball material
    let help = stdout(&granary(&["inspect", "ground", "--help"]));
    for needle in [
        "[0.01, 500]",
        "[0.01, 1000]",
        "(0, 100]",
        "[1e-7, 0.1]",
        "soil",
        "steel_shot_1mm",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}
