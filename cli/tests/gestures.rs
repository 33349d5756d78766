//! `granary render` with the gestures: `--gesture` (the `gesture` parameter), the curve as the
//! gesture's amount, the Friction stem, notes that play the gesture, and sidecars that carry it.

use std::path::Path;

use crate::support;
use crate::support::{audio, granary, names, path, stderr};

fn samples(p: &Path) -> Vec<f32> {
    hound::WavReader::open(p)
        .unwrap()
        .into_samples::<f32>()
        .map(Result::unwrap)
        .collect()
}

fn peak(x: &[f32]) -> f32 {
    x.iter().fold(0.0f32, |m, v| m.max(v.abs()))
}

/// Renders the default preset with `args`, stems on, into `dir/NAME.wav`; panics on failure.
fn render(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let o = dir.join(format!("{name}.wav"));
    let mut all = vec!["render", "--stems", "-o", path(&o)];
    all.extend_from_slice(args);
    let out = granary(&all);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    o
}

#[test]
fn a_stir_sounds_in_the_friction_stem_and_a_pour_into_an_empty_cup_does_not_at_first() {
    let dir = tempfile::tempdir().unwrap();
    // a spoon stirring a half-full mug of sugar at 60 % of its speed
    let stir = render(
        dir.path(),
        "stir",
        &[
            "--gesture",
            "stir",
            "--set",
            "fill=0.5",
            "--pour",
            "0:60",
            "--seconds",
            "1.5",
        ],
    );
    assert!(names(dir.path()).contains(&"stir.friction.wav".to_string()));
    let friction = samples(&stir.with_extension("friction.wav"));
    assert_eq!(friction.len(), 2 * 72_000);
    assert!(friction.iter().all(|x| x.is_finite()));
    assert!(peak(&friction) > 1e-4, "the stir's friction stem is silent");
    // a plain pour into the empty mug: nothing slides in its first second
    let pour = render(dir.path(), "pour", &["--pour", "0:20", "--seconds", "2"]);
    let friction = samples(&pour.with_extension("friction.wav"));
    assert_eq!(friction.len(), 2 * 96_000);
    assert!(
        friction[..2 * 48_000].iter().all(|&x| x == 0.0),
        "the friction stem sounds in a pour's first second"
    );
    assert!(
        peak(&samples(&pour.with_extension("grains.wav"))) > 1e-4,
        "the pour pours"
    );
}

#[test]
fn gesture_is_the_gesture_parameter_and_must_agree_with_set() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--set", "fill=0.5", "--pour", "0:80", "--seconds", "0.5"];
    let by_option = render(dir.path(), "a", &[&["--gesture", "shake"][..], &args[..]].concat());
    let by_set = render(dir.path(), "b", &[&["--set", "gesture=shake"][..], &args[..]].concat());
    let both = render(
        dir.path(),
        "c",
        &[&["--gesture", "shake", "--set", "gesture=shake"][..], &args[..]].concat(),
    );
    for ext in ["wav", "friction.wav"] {
        let a = audio(&by_option.with_extension(ext));
        assert!(a == audio(&by_set.with_extension(ext)), "{ext}");
        assert!(a == audio(&both.with_extension(ext)), "{ext}");
    }
    // a shake is not a pour of the same curve
    let pour = render(dir.path(), "d", &args);
    assert!(audio(&pour) != audio(&by_option));

    let o = dir.path().join("bad.wav");
    for (extra, needle) in [
        (vec!["--gesture", "stir", "--set", "gesture=tilt"], "disagree"),
        (vec!["--gesture", "spin"], "spin"),
    ] {
        let mut all = vec!["render", "-o", path(&o)];
        all.extend_from_slice(&extra);
        let out = granary(&all);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains(needle), "{extra:?}: {}", stderr(&out));
    }
    assert!(!o.exists());
}

#[test]
fn the_curve_is_a_rate_for_a_pour_and_a_percentage_for_the_other_gestures() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("x.wav");
    // 150 is a pour rate in range (g/s), not an amount (%)
    let out = granary(&["render", "--gesture", "stir", "--pour", "0:150", "-o", path(&o)]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--pour") && err.contains("amount") && err.contains("0..=100 %"),
        "{err}"
    );
    assert!(!o.exists());
    let out = granary(&["render", "--pour", "0:250", "-o", path(&o)]);
    assert!(stderr(&out).contains("g/s"), "{}", stderr(&out));
    let help = support::stdout(&granary(&["render", "--help"]));
    assert!(help.contains("--gesture") && help.contains("percent"), "{help}");
}

#[test]
fn notes_play_the_gesture() {
    let dir = tempfile::tempdir().unwrap();
    let stir = render(
        dir.path(),
        "stir",
        &[
            "--gesture",
            "stir",
            "--set",
            "fill=0.5",
            "--note",
            "0.1:1.2:110",
            "--seconds",
            "1.5",
        ],
    );
    let friction = samples(&stir.with_extension("friction.wav"));
    assert!(
        friction[..2 * 4_000].iter().all(|&x| x == 0.0),
        "nothing before the note"
    );
    assert!(peak(&friction) > 1e-4, "the note stirs");
    // the same note without --gesture pours
    let pour = render(
        dir.path(),
        "pour",
        &["--set", "fill=0.5", "--note", "0.1:1.2:110", "--seconds", "1.5"],
    );
    assert!(peak(&samples(&pour.with_extension("grains.wav"))) > 1e-4);
    assert!(
        friction != samples(&pour.with_extension("friction.wav")),
        "the note pours"
    );
}

#[test]
fn a_takes_sidecar_carries_the_gesture_and_renders_its_friction_stem_again() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("jar.wav");
    let out = granary(&[
        "render",
        "--gesture",
        "shake",
        "--set",
        "fill=0.4",
        "--pour",
        "0:70",
        "--seconds",
        "0.6",
        "--variations",
        "2",
        "--stems",
        "-o",
        path(&o),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(names(dir.path()).contains(&"jar_002.friction.wav".to_string()));
    let json = dir.path().join("jar_002.json");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(s["params"]["gesture"], "shake");
    assert!(s["set"].as_array().unwrap().iter().any(|v| v == "gesture=shake"), "{s}");
    let again = dir.path().join("again.wav");
    let out = granary(&["render", "--from", path(&json), "-o", path(&again)]);
    assert!(out.status.success(), "{}", stderr(&out));
    for ext in ["wav", "friction.wav"] {
        let a = audio(&dir.path().join(format!("jar_002.{ext}")));
        assert!(a == audio(&again.with_extension(ext)), "{ext} differs");
    }
}
