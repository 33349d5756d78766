//! The `granary` command line, as a user runs it.

use std::path::PathBuf;
use std::process::Command;

fn granary(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_granary"))
        .args(args)
        .output()
        .expect("granary runs")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("granary-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn no_arguments_prints_help() {
    let out = granary(&[]);
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("render") && text.contains("presets"), "{text}");
}

#[test]
fn render_writes_aligned_float_wavs_with_stems() {
    let wav = tmp("pour.wav");
    let out = granary(&[
        "render",
        "--preset",
        "rice_plastic_bowl",
        "--seconds",
        "1.5",
        "--sample-rate",
        "44100",
        "--pour",
        "0:30,1:30,1:0",
        "--stems",
        "--set",
        "cup_material=steel",
        "--output",
        wav.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for path in [
        wav.clone(),
        wav.with_extension("grains.wav"),
        wav.with_extension("cup.wav"),
    ] {
        let reader = hound::WavReader::open(&path).unwrap();
        let spec = reader.spec();
        assert_eq!((spec.channels, spec.sample_rate, spec.bits_per_sample), (2, 44_100, 32));
        assert_eq!(spec.sample_format, hound::SampleFormat::Float);
        assert_eq!(reader.duration(), 66_150, "{}", path.display());
        let samples: Vec<f32> = reader.into_samples::<f32>().map(Result::unwrap).collect();
        assert!(samples.iter().all(|x| x.is_finite()));
        assert!(samples.iter().any(|x| *x != 0.0), "{} is silent", path.display());
    }
}

#[test]
fn bad_arguments_and_presets_fail_clearly() {
    let wav = tmp("bad.wav");
    let w = wav.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["render", "--preset", "marbles", "-o", w],
            "no preset named `marbles`",
        ),
        (
            vec!["render", "--set", "pour_rate=900", "-o", w],
            "`pour_rate`: 900 is outside",
        ),
        (
            vec!["render", "--set", "colour=red", "-o", w],
            "unknown parameter id `colour`",
        ),
        (vec!["render", "--pour", "1:10,0:5", "-o", w], "times must not decrease"),
        (vec!["render", "--seconds", "0", "-o", w], "--seconds"),
    ] {
        let out = granary(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(!wav.exists(), "a failed render must not write a file");
    let bad = tmp("bad.json");
    std::fs::write(
        &bad,
        r#"{"format":"granary-preset","version":1,"name":"x","params":{"fill":2}}"#,
    )
    .unwrap();
    let out = granary(&["presets", "validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("`fill`: 2 is outside"));
}

#[test]
fn presets_list_save_and_validate() {
    let list = granary(&["presets", "list"]);
    assert!(list.status.success());
    let lines = String::from_utf8_lossy(&list.stdout).lines().count();
    assert!(lines >= 10, "{lines} factory presets");
    let path = tmp("mine.json");
    let _ = std::fs::remove_file(&path);
    let p = path.to_str().unwrap();
    let save = |extra: &[&str]| {
        let mut args = vec![
            "presets",
            "save",
            "--preset",
            "salt_porcelain_cup",
            "--set",
            "pour_rate=9",
            "--name",
            "Mine",
            "-o",
            p,
        ];
        args.extend_from_slice(extra);
        granary(&args)
    };
    assert!(save(&[]).status.success());
    assert_eq!(save(&[]).status.code(), Some(2), "no silent overwrite");
    assert!(save(&["--force"]).status.success());
    let out = granary(&["presets", "validate", p]);
    assert!(out.status.success());
    let loaded = granary_engine::preset::Preset::load(&path).unwrap();
    assert_eq!(loaded.name, "Mine");
    assert_eq!(loaded.values.float("pour_rate"), 9.0);
    assert_eq!(loaded.values.to_settings().grain_material.id(), "salt");
}

#[test]
fn inspect_contact_prints_json_from_the_engine_tables() {
    let out = granary(&[
        "inspect",
        "contact",
        "--a",
        "glass_beads_2mm",
        "--v0",
        "0.001",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    for field in [
        "contact_time_s",
        "peak_force_n",
        "peak_accel_a_m_s2",
        "peak_accel_b_m_s2",
        "peak_pressure_pa",
        "peak_pressure_pair_pa",
    ] {
        assert!(v[field].as_f64().is_some_and(|x| x > 0.0), "{field}: {v}");
    }
    // thesis Table 6.1 scene at 1 mm/s (a = 1 mm): tens of microseconds, 0.855 x 1.0996e-4 Pa
    let t = v["contact_time_s"].as_f64().unwrap();
    assert!(t > 15e-6 && t < 35e-6, "{t}");
    let p = v["peak_pressure_pa"].as_f64().unwrap();
    assert!((p / (0.855 * 1.0996e-4) - 1.0).abs() < 0.02, "{p}");

    // an infinitely massive partner has no acceleration and no pair pressure
    let out = granary(&[
        "inspect",
        "contact",
        "--a",
        "steel_shot_1mm",
        "--b",
        "rigid",
        "--v0",
        "1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["peak_accel_b_m_s2"].is_null() && v["peak_pressure_pair_pa"].is_null(),
        "{v}"
    );
    // a softer half-space makes a longer contact than a rigid plane
    let rigid = v["contact_time_s"].as_f64().unwrap();
    let out = granary(&[
        "inspect",
        "contact",
        "--a",
        "steel_shot_1mm",
        "--b",
        "plane:wood",
        "--v0",
        "1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["contact_time_s"].as_f64().unwrap() > 2.0 * rigid, "{v}");
}

#[test]
fn inspect_rejects_bad_values_with_exit_code_2() {
    for args in [
        &["inspect", "contact", "--a", "unobtainium", "--v0", "1"][..],
        &["inspect", "contact", "--a", "sugar", "--v0", "-1"],
        &["inspect", "contact", "--a", "sugar", "--v0", "NaN"],
        &["inspect", "contact", "--a", "sugar", "--v0", "1", "--a-nu", "0.7"],
        &["inspect", "contact", "--a", "ceramic", "--v0", "1"],
        &["inspect", "contact", "--a", "sugar", "--v0", "1", "--distance", "0"],
        &["inspect", "contact", "--a", "sugar", "--v0", "1", "--angle", "200"],
    ] {
        let out = granary(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("granary: ") && err.len() > 20, "{args:?}: {err}");
    }
    // a missing required value is clap's usage error (also exit code 2)
    assert_eq!(granary(&["inspect", "contact", "--a", "sugar"]).status.code(), Some(2));
}

#[test]
fn inspect_plots_are_png_files() {
    let png = tmp("collision.png");
    let out = granary(&[
        "inspect",
        "contact",
        "--a",
        "glass_beads_2mm",
        "--v0",
        "0.05",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
    let out = granary(&["inspect", "tables", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["table_6_1"]["rows"].as_array().unwrap().len(), 18);
}

#[test]
fn inspect_ends_quietly_when_its_reader_closes_the_pipe() {
    // `granary inspect … | head -1`: the reader goes away before the output is written
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_granary"))
        .args(["inspect", "tables"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {err}", out.status.code());
    assert!(!err.contains("Broken pipe"), "{err}");
}
