//! Variation batches (`granary render --variations N`) as a user runs them: take names,
//! sidecars that render each take again bit for bit, files independent of the thread count,
//! bad input refused before any work, a signal mid-batch.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{audio, granary, names, path, stderr, stdout};

fn sidecar(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A batch of 3 takes of 1.5 s with a pour curve, stems and two varied parameters.
fn batch(dir: &Path, extra: &[&str]) -> Output {
    let o = dir.join("rice.wav");
    let mut args = vec![
        "render",
        "--preset",
        "rice_plastic_bowl",
        "--seconds",
        "1.5",
        "--pour",
        "0:25,1:25,1.2:0",
        "--seed",
        "41",
        "--variations",
        "3",
        "--vary",
        "grain_size=±10%",
        "--vary",
        "cup_material=steel,glass,plastic",
        "--vary",
        "fall_height=+-2",
        "--stems",
        "-o",
        path(&o),
    ];
    args.extend_from_slice(extra);
    granary(&args)
}

#[test]
fn every_take_renders_again_bit_for_bit_from_its_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let out = batch(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).is_empty(),
        "no progress bar or warning off a terminal: {}",
        stderr(&out)
    );
    let mut expected = Vec::new();
    for k in ["001", "002", "003"] {
        for ext in ["wav", "grains.wav", "cup.wav", "surface.wav", "friction.wav", "json"] {
            expected.push(format!("rice_{k}.{ext}"));
        }
    }
    expected.sort();
    assert_eq!(names(dir.path()), expected);
    let text = stdout(&out);
    assert!(text.contains("rice_002.wav: seed 42 (grain_size="), "{text}");

    let again = tempfile::tempdir().unwrap();
    let mut mixes = Vec::new();
    for (k, seed) in [(1, 41), (2, 42), (3, 43)] {
        let json = dir.path().join(format!("rice_00{k}.json"));
        let s = sidecar(&json);
        assert_eq!(s["format"], "granary-take");
        assert_eq!(s["file"], format!("rice_00{k}.wav"));
        assert_eq!(s["granary_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!((s["take"].as_u64(), s["takes"].as_u64()), (Some(k), Some(3)));
        assert_eq!((s["seed"].as_i64(), s["base_seed"].as_i64()), (Some(seed), Some(41)));
        assert_eq!(s["params"]["seed"].as_i64(), Some(seed));
        assert_eq!(s["params"]["grain_material"], "rice");
        let size = s["params"]["grain_size"].as_f64().unwrap();
        assert!((0.9..=1.1).contains(&size), "{size}");
        assert_eq!(
            s["params"].as_object().unwrap().len(),
            granary_engine::control::params::SPECS.len(),
            "every parameter"
        );
        assert_eq!(s["render"]["pour"], "0:25,1:25,1.2:0");
        assert_eq!(s["render"]["seconds"].as_f64(), Some(1.5));
        assert_eq!(s["render"]["stems"], true);
        let o = again.path().join(format!("take{k}.wav"));
        let out = granary(&["render", "--from", path(&json), "-o", path(&o)]);
        assert!(out.status.success(), "{}", stderr(&out));
        for (a, b) in [
            ("wav", "wav"),
            ("grains.wav", "grains.wav"),
            ("cup.wav", "cup.wav"),
            ("surface.wav", "surface.wav"),
            ("friction.wav", "friction.wav"),
        ] {
            let original = audio(&dir.path().join(format!("rice_00{k}.{a}")));
            let rendered = audio(&o.with_extension(b));
            assert!(original == rendered, "take {k}: {a} differs");
        }
        mixes.push(audio(&dir.path().join(format!("rice_00{k}.wav"))));
    }
    assert!(mixes[0] != mixes[1] && mixes[1] != mixes[2], "the takes differ");

    // without --output, a take is written over its own file (the same samples)
    let json = dir.path().join("rice_002.json");
    let before = audio(&dir.path().join("rice_002.wav"));
    let out = granary(&["render", "--from", path(&json)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("take 2 of 3 (seed 42)"), "{}", stdout(&out));
    assert!(audio(&dir.path().join("rice_002.wav")) == before);
}

#[test]
fn a_batch_does_not_depend_on_the_thread_count() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let a = batch(one.path(), &["--jobs", "1"]);
    let b = batch(two.path(), &["--jobs", "2"]);
    assert!(a.status.success() && b.status.success(), "{}{}", stderr(&a), stderr(&b));
    assert!(stdout(&a).contains("1 thread)") && stdout(&b).contains("2 threads"));
    let files = names(one.path());
    assert_eq!(files, names(two.path()));
    assert_eq!(files.len(), 18);
    for f in &files {
        let x = audio(&one.path().join(f));
        let y = audio(&two.path().join(f));
        assert!(x == y, "{f} differs between 1 and 2 threads");
    }
}

#[test]
fn jobs_are_capped_at_the_takes_and_the_cores() {
    // 100,000 threads for two takes took minutes and ignored SIGTERM while they started
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = granary(&[
        "render",
        "--seconds",
        "0.5",
        "--variations",
        "2",
        "--jobs",
        "100000",
        "-o",
        path(&dir.path().join("t.wav")),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let threads = cores.min(2);
    assert!(
        stderr(&out).contains(&format!("--jobs 100000: rendering {threads} takes at a time")),
        "{}",
        stderr(&out)
    );
    let plural = if threads == 1 { "thread)" } else { "threads)" };
    assert!(
        stdout(&out).contains(&format!("{threads} {plural}")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn take_one_without_offsets_is_the_single_render_of_the_base_seed() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single.wav");
    let out = granary(&["render", "--seconds", "1.5", "--seed", "9", "-o", path(&single)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let takes = dir.path().join("t.wav");
    let out = granary(&[
        "render",
        "--seconds",
        "1.5",
        "--seed",
        "9",
        "--variations",
        "12",
        "--jobs",
        "2",
        "-o",
        path(&takes),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(audio(&single) == audio(&dir.path().join("t_001.wav")));
    assert_eq!(sidecar(&dir.path().join("t_012.json"))["seed"].as_i64(), Some(20));
    assert_eq!(sidecar(&dir.path().join("t_012.json"))["vary"], serde_json::json!([]));
}

#[test]
fn bad_batches_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("take.wav");
    let w = path(&o);
    let file = dir.path().join("a-file");
    let under_file = file.join("take.wav");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--variations", "2", "--vary", "colour=±1"],
            "--vary colour=±1: unknown parameter id `colour`",
        ),
        (
            vec!["--variations", "0"],
            "--variations must be within 1..=100000, got 0",
        ),
        (
            vec!["--variations", "-3"],
            "--variations must be within 1..=100000, got -3",
        ),
        (
            vec!["--variations", "2", "--vary", "pour_rate=5"],
            "--vary pour_rate=5: expected an offset ±X or ±X% (or +-X, +-X%), got `5`",
        ),
        (
            vec!["--variations", "2", "--vary", "pour_rate=±lots"],
            "--vary pour_rate=±lots: `lots` is not a number",
        ),
        (vec!["--variations", "2", "--vary", "pour_rate=±5%%"], "is not a number"),
        (
            vec!["--variations", "2", "--vary", "cup_material=steel,gold"],
            "--vary cup_material=steel,gold: `gold` is not one of: ",
        ),
        (
            vec!["--variations", "2", "--vary", "auto_fill=±1"],
            "`±1` is not on or off",
        ),
        (
            vec!["--variations", "2", "--vary", "pour_rate=±500"],
            "offsets are refused, not clamped",
        ),
        (
            vec![
                "--variations",
                "2",
                "--vary",
                "stereo_width=±10%",
                "--vary",
                "stereo_width=±1%",
            ],
            "`stereo_width` is varied twice",
        ),
        (
            vec!["--vary", "pour_rate=±5"],
            "--vary pour_rate=±5: needs --variations N",
        ),
        (
            vec!["--variations", "2", "--jobs", "0"],
            "--jobs must be at least 1, got 0",
        ),
        (vec!["--jobs", "2"], "--jobs needs --variations N"),
        (
            vec!["--variations", "2", "--vary", "seed=±3"],
            "every take has its own seed already",
        ),
        (
            vec!["--variations", "2", "--block-size", "0"],
            "--block-size must be within 1..=65536, got 0",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["render", "--seconds", "1.5"];
        args.extend_from_slice(&extra);
        args.extend_from_slice(&["-o", w]);
        let out = granary(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert!(names(dir.path()).is_empty(), "{args:?} wrote {:?}", names(dir.path()));
    }

    // folders that cannot be written
    std::fs::write(&file, "x").unwrap();
    for (target, needle) in [
        (
            PathBuf::from("/nonexistent-granary/take.wav"),
            "/nonexistent-granary: cannot write there: No such file or directory",
        ),
        (under_file, "a-file: cannot write there: Not a directory"),
    ] {
        let out = granary(&["render", "--seconds", "1.5", "--variations", "2", "-o", path(&target)]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{}", stderr(&out));
    }
    // a take whose file is blocked by a folder: no take is rendered
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(dir.path().join("take_002.wav")).unwrap();
    let out = granary(&["render", "--seconds", "1.5", "--variations", "3", "-o", w]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("take_002.wav is a directory"), "{}", stderr(&out));
    assert_eq!(names(dir.path()), ["take_002.wav"]);
}

#[test]
fn bad_sidecars_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("t.wav");
    let out = granary(&["render", "--seconds", "1.5", "--variations", "1", "-o", path(&o)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = dir.path().join("t_001.json");
    let good = sidecar(&json);
    let edits = std::cell::Cell::new(0);
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut s = good.clone();
        f(&mut s);
        edits.set(edits.get() + 1);
        let p = dir.path().join(format!("edited{}.json", edits.get()));
        std::fs::write(&p, s.to_string()).unwrap();
        p
    };
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            dir.path().join("missing.json"),
            "missing.json: No such file or directory",
        ),
        (edit(&|s| s["format"] = "granary-preset".into()), "not a take's sidecar"),
        (edit(&|s| s["version"] = 7.into()), "sidecar version 7 is not supported"),
        (edit(&|s| s["params"]["fill"] = 2.into()), "`fill`: 2 is outside 0..=1"),
        (
            edit(&|s| s["params"]["seed"] = 3.into()),
            "`seed` is 1 but `params.seed` is 3",
        ),
        (edit(&|s| s["colour"] = "red".into()), "unknown field `colour`"),
        (edit(&|s| s["file"] = "../up.wav".into()), "`file` must be a file name"),
        (
            edit(&|s| s["render"]["sample_rate"] = 1000.into()),
            "--sample-rate must be a whole number",
        ),
        (
            edit(&|s| s["render"]["pour"] = "1:5,0:5".into()),
            "times must not decrease",
        ),
    ];
    for (p, needle) in cases {
        let out = granary(&["render", "--from", path(&p), "-o", path(&dir.path().join("x.wav"))]);
        assert_eq!(out.status.code(), Some(2), "{needle}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
        assert!(!dir.path().join("x.wav").exists());
    }
    // another version's sidecar renders, with a warning
    let p = edit(&|s| s["granary_version"] = "0.0.1".into());
    let out = granary(&["render", "--from", path(&p), "-o", path(&dir.path().join("x.wav"))]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was written by Granary 0.0.1, this is") && stderr(&out).contains("may differ"),
        "{}",
        stderr(&out)
    );
    // --from takes no other settings
    let out = granary(&["render", "--from", path(&json), "--seed", "4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot be used with"), "{}", stderr(&out));
}

#[test]
fn a_signal_mid_batch_keeps_the_finished_takes_whole() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("long.wav");
    let mut child = Command::new(env!("CARGO_BIN_EXE_granary"))
        .args([
            "render",
            "--seconds",
            "20",
            "--variations",
            "6",
            "--jobs",
            "1",
            "--stems",
            "-o",
            path(&o),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.path().join("long_001.json").exists() {
        assert!(started.elapsed() < Duration::from_secs(120), "no take finished");
        assert!(child.try_wait().unwrap().is_none(), "the batch ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("interrupted by SIGINT: the ") && err.contains("takes finished before it are kept"),
        "{err}"
    );
    let files = names(dir.path());
    assert!(files.iter().all(|f| !f.starts_with('.')), "temporaries left: {files:?}");
    // a take is its mix, four stems and its sidecar
    assert_eq!(files.len() % 6, 0, "whole takes only: {files:?}");
    assert!(files.len() < 36, "the batch stopped: {files:?}");
    assert!(err.contains(&format!("the {} takes", files.len() / 6)), "{err}");
}

#[test]
fn the_progress_bar_shows_on_a_terminal_only() {
    // off a terminal (stderr piped, as above) a batch writes nothing to stderr; under a
    // pseudo-terminal (util-linux `script`) the bar is drawn
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!(
        "{} render --seconds 3 --variations 2 -o {}",
        env!("CARGO_BIN_EXE_granary"),
        path(&dir.path().join("t.wav"))
    );
    let Ok(out) = Command::new("script").args(["-qec", &cmd, "/dev/null"]).output() else {
        eprintln!("no `script` here: the terminal case is not checked");
        return;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let screen = stdout(&out);
    assert!(
        screen.contains("2 takes (6 s of audio) [") && screen.contains(" %"),
        "{screen}"
    );
    let piped = granary(&["render", "--seconds", "3", "-o", path(&dir.path().join("one.wav"))]);
    assert!(stderr(&piped).is_empty(), "{}", stderr(&piped));
}

#[test]
fn help_tells_how_batches_work() {
    let help = stdout(&granary(&["render", "--help"]));
    let stream = format!("{:#x}", granary_cli::vary::OFFSET_STREAM);
    for needle in [
        stream.as_str(),
        "--variations <N>",
        "NAME_001.wav",
        "(base + k - 1) mod 1000000",
        "refused, not",
        "--jobs <N>",
        "--from <TAKE.wav|SIDECAR.json>",
        "bit for bit",
    ] {
        assert!(help.contains(needle), "render --help lacks {needle}:\n{help}");
    }
}
