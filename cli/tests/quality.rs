//! `granary render --quality`: the default (realtime) renders as the plugin plays live and
//! bounces in every host; reference renders every collision one by one; a render is offline,
//! so auto is reference; the option is the `quality` parameter and must agree with `--set`.

use std::path::{Path, PathBuf};

use crate::support::{audio, granary, path, stderr};

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
fn a_render_is_realtime_quality_unless_reference_is_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let read = |p: PathBuf| audio(&p);
    let default = read(render(dir.path(), "default", &[]));
    let realtime = read(render(dir.path(), "realtime", &["--quality", "realtime"]));
    let reference = read(render(dir.path(), "reference", &["--quality", "reference"]));
    let by_set = read(render(dir.path(), "set", &["--set", "quality=reference"]));
    let auto = read(render(dir.path(), "auto", &["--quality", "auto"]));
    assert!(default == realtime, "the default is not realtime in a render");
    assert!(
        by_set == reference,
        "--set quality=reference is not --quality reference"
    );
    assert!(auto == reference, "auto is not reference in a render (it is offline)");
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
