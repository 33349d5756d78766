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
    let loaded = granary::preset::Preset::load(&path).unwrap();
    assert_eq!(loaded.name, "Mine");
    assert_eq!(loaded.values.float("pour_rate"), 9.0);
    assert_eq!(loaded.values.to_settings().grain_material.id(), "salt");
}
