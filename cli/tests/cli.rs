//! The `granary` command line, as a user runs it.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{granary, stderr, stdout};

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
    // the surface and friction stems are silent in this pour (nothing spills or slides):
    // checked for their format only
    for stem in ["surface.wav", "friction.wav"] {
        let reader = hound::WavReader::open(wav.with_extension(stem)).unwrap();
        assert_eq!(reader.spec().channels, 2);
        assert_eq!(reader.duration(), 66_150);
    }
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
    let loaded = granary_engine::control::preset::Preset::load(&path).unwrap();
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
        &["inspect", "contact", "--a", "rice", "--v0", "1", "--shape", "banana"],
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
fn inspect_contact_takes_a_grain_shape() {
    // rice on a wooden plane, as rice grains turned at random: less impulse than the spheres
    // of its volume on average (a grain hit off its centre spins), never more; contact times
    // spread with where it is hit; the listener hears a spread of peaks
    let out = granary(&[
        "inspect",
        "contact",
        "--a",
        "rice",
        "--b",
        "plane:wood",
        "--v0",
        "1",
        "--shape",
        "auto",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["shape"];
    assert_eq!(s["shape"], "rice", "{v}");
    let f = |x: &serde_json::Value, i: usize| x.as_array().unwrap()[i].as_f64().unwrap();
    let ratio = &s["impulse_over_spheres"];
    assert!(f(ratio, 0) > 0.1 && f(ratio, 2) <= 1.0 && f(ratio, 1) < 0.8, "{s}");
    let t = &s["contact_time_s"];
    assert!(f(t, 2) > 1.3 * f(t, 0), "{s}");
    let p = &s["peak_pressure_pa"];
    assert!(f(p, 2) > 1.5 * f(p, 0) && f(p, 0) > 0.0, "{s}");
    // the default stays a sphere, with no shape report
    let out = granary(&["inspect", "contact", "--a", "rice", "--v0", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["shape"].is_null(), "{v}");
    // the text names the shape
    let out = granary(&["inspect", "contact", "--a", "lentils", "--v0", "1", "--shape", "lentil"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("as lentil: 1000 orientations"), "{text}");
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

#[test]
fn render_prints_what_was_rendered_and_its_levels() {
    let wav = tmp("summary.wav");
    let out = granary(&[
        "render",
        "--seconds",
        "2",
        "--set",
        "grain_material=rice",
        "--seed",
        "7",
        "-o",
        wav.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("Sugar, ceramic mug (grain_material=rice, seed=7): 2 s at 48000 Hz"),
        "{text}"
    );
    // the levels line reads back as the file's own figures
    let r = hound::WavReader::open(&wav).unwrap();
    let x: Vec<f32> = r.into_samples::<f32>().map(Result::unwrap).collect();
    let rms = (x.iter().map(|v| (v * v) as f64).sum::<f64>() / x.len() as f64).sqrt();
    let figure = |line: &str, after: &str| -> f64 {
        let rest = &line[line.find(after).unwrap_or_else(|| panic!("{after} in {line}")) + after.len()..];
        rest.split_whitespace()
            .next()
            .unwrap()
            .trim_end_matches(',')
            .parse()
            .unwrap()
    };
    let levels = text.lines().find(|l| l.starts_with("levels:")).expect("a levels line");
    assert!(
        (figure(levels, "rms ") - 20.0 * rms.log10()).abs() < 0.06,
        "{levels}: rms {rms}"
    );
    let lufs = figure(levels, "levels: ");
    assert!(lufs < 0.0 && lufs > -60.0, "{levels}");
    assert!(
        figure(levels, "true peak ") >= figure(levels, "peak ") - 0.05,
        "{levels}"
    );
    let limiter = text
        .lines()
        .find(|l| l.starts_with("limiter:"))
        .expect("a limiter line");
    assert!(figure(limiter, "gain reduction ") >= 0.0, "{limiter}");
    assert!(limiter.contains("% of the samples"), "{limiter}");
}

#[test]
fn silent_renders_and_notes_outside_the_render_are_warned_about() {
    let wav = tmp("silent.wav");
    let w = wav.to_str().unwrap();
    for (args, needle) in [
        (vec!["render", "--seconds", "1", "-o", w], "leaves no pour"),
        (
            vec!["render", "--note", "5:6", "--seconds", "3", "-o", w],
            "starts after the render ends",
        ),
        (vec!["render", "--seconds", "1e-9", "-o", w], "less than one sample"),
    ] {
        let out = granary(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(needle) && err.contains("the render is silent"),
            "{args:?}: {err}"
        );
    }
    // a sounding render says nothing
    let out = granary(&["render", "--seconds", "1.5", "-o", w]);
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn render_arguments_get_the_tools_own_messages() {
    let wav = tmp("args.wav");
    let w = wav.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["render", "--seconds", "-1", "-o", w],
            "--seconds must be within (0, 3600], got -1",
        ),
        (
            vec!["render", "--sample-rate", "44100.5", "-o", w],
            "--sample-rate must be a whole number of Hz within 8000..=384000, got 44100.5",
        ),
        (
            vec!["render", "--block-size", "-4", "-o", w],
            "--block-size must be within 1..=65536, got -4",
        ),
        (
            vec!["render", "--seed", "-1", "-o", w],
            "`seed`: -1 is outside 0..=999999",
        ),
        (
            vec!["render", "--seconds", "3600", "--sample-rate", "384000", "-o", w],
            "does not fit a WAV file",
        ),
        (
            vec!["render", "--note", "0:1", "--set", "trigger_mode=continuous", "-o", w],
            "trigger_mode is continuous, where the plugin ignores notes",
        ),
        (
            vec!["render", "--set", "stereo_width=1.7", "-o", w],
            "`stereo_width`: 1.7 is outside 0..=1",
        ),
        (
            vec!["render", "--set", "auto_fill=maybe", "-o", w],
            "expected on/off, true/false, yes/no or 1/0, got maybe",
        ),
    ] {
        let out = granary(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    assert!(!wav.exists());
    for yes in ["yes", "no", "on", "TRUE"] {
        let out = granary(&[
            "render",
            "--seconds",
            "1.5",
            "--set",
            &format!("auto_fill={yes}"),
            "-o",
            w,
        ]);
        assert!(out.status.success(), "{yes}: {}", stderr(&out));
    }
}

#[test]
fn preset_files_are_paths_and_named_in_errors() {
    let dir = tmp("presets-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "\u{feff}{\"format\":\"granary-preset\",\"version\":1,\"name\":\"x\",\"params\":{\"auto_fill\":\"yes\",\"fill\":2}}",
    )
    .unwrap();
    let wav = dir.join("x.wav");
    let out = granary(&["render", "--preset", bad.to_str().unwrap(), "-o", wav.to_str().unwrap()]);
    assert_eq!(
        stderr(&out).trim(),
        format!("granary: {}: `fill`: 2 is outside 0..=1", bad.display())
    );
    // a file named like a factory preset does not shadow it
    std::fs::write(dir.join("rice_plastic_bowl"), "junk").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_granary"))
        .current_dir(&dir)
        .args([
            "render",
            "--preset",
            "rice_plastic_bowl",
            "--seconds",
            "1.5",
            "-o",
            "x.wav",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("Rice, plastic bowl:"), "{}", stdout(&out));
}

#[test]
fn help_tells_the_limits_and_every_option() {
    let help = |args: &[&str]| stdout(&granary(args));
    let render = help(&["render", "--help"]);
    for needle in [
        "(0, 3600]",
        "8000..=384000",
        "1..=65536",
        "The WAV file to write",
        "yes/no",
        "Ctrl+C",
    ] {
        assert!(render.contains(needle), "render --help lacks {needle}:\n{render}");
    }
    let save = help(&["presets", "save", "--help"]);
    for needle in [
        "Overwrite FILE if it exists",
        "display name",
        "The preset file to write",
    ] {
        assert!(save.contains(needle), "presets save --help lacks {needle}:\n{save}");
    }
    let contact = help(&["inspect", "contact", "--help"]);
    assert!(contact.contains("[1e-6, 100]"), "{contact}");
}

#[test]
fn inspect_contact_keeps_every_input_in_its_physical_range() {
    for (extra, needle) in [
        (&["--v0", "1e37"][..], "--v0 must be within [1e-6, 100] m/s, got 1e37"),
        (&["--v0", "1e25"], "--v0 must be within"),
        (&["--v0", "1e300"], "got 1e300"),
        (
            &["--v0", "1", "--a-radius-mm", "1e9"],
            "--a-radius-mm must be within [0.001, 1000] mm, got 1e9",
        ),
        (
            &["--v0", "1", "--a-nu", "0.7"],
            "--a-nu must be within [-1, 0.5), got 0.7",
        ),
        (
            &["--v0", "1", "--b", "rigid", "--b-e", "1e9"],
            "--b-e cannot be used with --b rigid",
        ),
        (
            &["--v0", "1", "--a-e", "1e20"],
            "--a-e must be within [100000, 1e13] Pa, got 1e20",
        ),
        (
            &["--v0", "100", "--a-radius-mm", "900"],
            "--distance 0.15 m must be larger than A's radius, 0.9 m",
        ),
        (
            &["--v0", "1", "--a-radius-mm", "1000", "--a-e", "1e5", "--distance", "50"],
            "contact would last",
        ),
    ] {
        let mut args = vec!["inspect", "contact", "--a", "glass_beads_1mm"];
        args.extend_from_slice(extra);
        let out = granary(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    let out = granary(&[
        "inspect",
        "contact",
        "--a",
        "glass_beads_1mm",
        "--v0",
        "1",
        "--plot",
        "/nonexistent/p.png",
    ]);
    assert_eq!(
        stderr(&out).trim(),
        "granary: /nonexistent/p.png: cannot write there: No such file or directory"
    );
    let out = granary(&["inspect", "cup", "--material", "steel", "--fill", "-1"]);
    assert!(
        stderr(&out).contains("--fill must be within 0..=1, got -1"),
        "{}",
        stderr(&out)
    );
}
