//! `granary inspect friction`, run as a user runs it: one grain sliding on a cup, a surface
//! or another grain (seed 003's micro-rectangles, Phya's stick-slip).

use crate::support::{granary, stderr, stdout};

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["inspect", "friction"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = granary(&all);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} missing: {v}"))
}

/// Sugar on a ceramic mug: the patch statistics follow eq. 8 (smaller at twice the speed),
/// the centroid rises with the speed and the level with the load (10 dB per decade), and
/// stick-slip is on (mu_s > mu_d) with a rate; steel on aluminium (mu_s < mu_d) has none.
#[test]
fn reports_patches_stick_slip_centroid_and_level() {
    let slow = json(&["--material", "sugar", "--on", "ceramic", "--speed", "0.05"]);
    let fast = json(&["--material", "sugar", "--on", "ceramic", "--speed", "0.1"]);
    let heavy = json(&[
        "--material",
        "sugar",
        "--on",
        "ceramic",
        "--speed",
        "0.1",
        "--load",
        "10",
    ]);
    for v in [&slow, &fast, &heavy] {
        for key in [
            "patches_per_s",
            "side_a_mean_m",
            "side_a_sd_m",
            "side_b_mean_m",
            "plate_min_hz",
            "plate_max_hz",
            "spectral_centroid_hz",
            "level_db_spl",
            "stick_slip_rate_hz",
        ] {
            assert!(num(v, key) > 0.0, "{key}: {v}");
        }
        assert_eq!(v["stick_slip"], true);
        assert!(num(v, "mu_static") > num(v, "mu_dynamic"));
        assert!(num(v, "plate_min_hz") < num(v, "plate_max_hz"));
        assert_eq!(v["on"], "cup:ceramic");
    }
    assert!(
        num(&fast, "side_a_mean_m") < 0.8 * num(&slow, "side_a_mean_m"),
        "{slow} {fast}"
    );
    assert!(num(&fast, "patches_per_s") > 1.5 * num(&slow, "patches_per_s"));
    assert!(num(&fast, "spectral_centroid_hz") > 1.5 * num(&slow, "spectral_centroid_hz"));
    let step = num(&heavy, "level_db_spl") - num(&fast, "level_db_spl");
    assert!((step - 10.0).abs() < 0.2, "{step} dB for ten times the load");

    // steel on aluminium: mu_s = sqrt(0.74 x 1.05) = 0.881 below mu_d = sqrt(0.57 x 1.4) = 0.893
    let al = json(&["--material", "steel_shot_1mm", "--on", "aluminium", "--speed", "0.1"]);
    assert_eq!(al["stick_slip"], false, "steel on aluminium: {al}");
    assert!(num(&al, "mu_static") < num(&al, "mu_dynamic"));
    assert_eq!(num(&al, "stick_slip_rate_hz"), 0.0);
    assert!(num(&al, "level_db_spl") > 0.0, "{al}");

    // the surface of the same name as a cup
    let plate = json(&["--material", "rice", "--on", "surface:steel", "--speed", "0.1"]);
    assert_eq!(plate["on"], "surface:steel");

    // the text output names the same figures
    let text = stdout(&granary(&[
        "inspect",
        "friction",
        "--material",
        "sugar",
        "--on",
        "ceramic",
        "--speed",
        "0.1",
    ]));
    for needle in [
        "patches",
        "side a",
        "plate mode",
        "stick-slip",
        "on,",
        "spectral centroid",
        "dB SPL",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

/// Bad input: exit 2 and a message naming the argument (and the valid names or range).
#[test]
fn bad_input_exits_2_with_a_clear_message() {
    for (args, needle) in [
        (
            vec!["--material", "sugar", "--on", "ceramic", "--speed", "-0.1"],
            "--speed",
        ),
        (
            vec!["--material", "sugar", "--on", "ceramic", "--speed", "0"],
            "--speed",
        ),
        (
            vec!["--material", "sugar", "--on", "ceramic", "--speed", "nan"],
            "--speed",
        ),
        (
            vec![
                "--material",
                "sugar",
                "--on",
                "ceramic",
                "--speed",
                "0.1",
                "--load",
                "-1",
            ],
            "--load",
        ),
        (
            vec!["--material", "mud", "--on", "ceramic", "--speed", "0.1"],
            "glass_beads_1mm",
        ),
        (
            vec!["--material", "ceramic", "--on", "ceramic", "--speed", "0.1"],
            "--material",
        ),
        (
            vec!["--material", "sugar", "--on", "marble", "--speed", "0.1"],
            "granite",
        ),
    ] {
        let mut all = vec!["inspect", "friction"];
        all.extend_from_slice(&args);
        let out = granary(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(err.contains(needle), "{all:?}: {err}");
    }
}
