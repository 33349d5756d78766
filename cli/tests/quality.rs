//! `granary render --quality`: a render is offline, so the default (auto) renders every
//! collision one by one, as a DAW's offline bounce does; realtime renders as the plugin plays
//! live; the option is the `quality` parameter and must agree with `--set`.

use std::path::{Path, PathBuf};

use crate::support::{granary, path, stderr};

/// Renders 1.5 s of rice into a plastic bowl (dense enough to be grouped live) with `args`
/// into `dir/NAME.wav`; panics on failure.
fn render(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let o = dir.join(format!("{name}.wav"));
    let mut all = vec![
        "render",
        "--preset",
        "rice_plastic_bowl",
        "--seconds",
        "1.5",
        "--pour",
        "0:40",
        "-o",
        path(&o),
    ];
    all.extend_from_slice(args);
    let out = granary(&all);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    o
}

#[test]
fn a_render_is_reference_quality_unless_realtime_is_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let read = |p: PathBuf| std::fs::read(p).unwrap();
    let auto = read(render(dir.path(), "auto", &[]));
    let reference = read(render(dir.path(), "reference", &["--quality", "reference"]));
    let by_set = read(render(dir.path(), "set", &["--set", "quality=reference"]));
    let realtime = read(render(dir.path(), "realtime", &["--quality", "realtime"]));
    assert!(auto == reference, "auto is not reference in a render");
    assert!(
        by_set == reference,
        "--set quality=reference is not --quality reference"
    );
    assert!(realtime != reference, "realtime and reference renders are the same");

    let o = dir.path().join("bad.wav");
    for (extra, needle) in [
        (vec!["--quality", "realtime", "--set", "quality=reference"], "disagree"),
        (vec!["--quality", "best"], "best"),
        (vec!["--set", "quality=best"], "best"),
    ] {
        let mut all = vec!["render", "-o", path(&o)];
        all.extend_from_slice(&extra);
        let out = granary(&all);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains(needle), "{extra:?}: {}", stderr(&out));
    }
    assert!(!o.exists());
}
