//! `cargo xtask bundle granary --release` (nice-plug-xtask), plus two project commands:
//! - `cargo xtask demo`: build the CLAP and VST3 bundles and render a demo pour;
//! - `cargo xtask test`: the whole test suite, as CI runs it: rustfmt, clippy, the bundles, the
//!   Rust tests (debug build with the allocation checker; the CLAP bundle in clack-host), the
//!   VST3 bundle in a real host (pedalboard).
//! - `cargo xtask screenshot`: the editor for real (the standalone build under Xvfb, factory
//!   state: an empty user preset folder), saved as `docs/editor.png` (100 %) and
//!   `docs/editor@2x.png` (200 % scale) (module `editor`).
//! - `cargo xtask editor-test`: the standalone driven under Xvfb with xdotool, its
//!   screenshots measured (module `editor`; out of CI, see docs/testing.md).
//! - `cargo xtask modal [SHAPE…]`: finite-element modal analysis of the cups (crate granary-fem),
//!   regenerating `assets/cups/<shape>.json` (all shapes unless some are named).
//! - `cargo xtask dem --preset ID [--seconds S] [--settle S] [--set ID=VALUE]... --output FILE.csv`:
//!   a simulated pour (crate granary-dem, rapier3d), its contacts written as a contact file
//!   for `granary render --collisions` (docs/dem.md).
//! - `cargo xtask bank [--jobs N] [--quick N] [--normalisation] [--output FILE]`: the collision
//!   databank's sweep of simulated pours, written to `assets/bank/bank.json` (docs/dem.md).
//! - `cargo xtask transparency`: realtime quality against reference for every factory preset,
//!   the full table (`cli/tests/transparency.rs`, about 13 minutes; CI runs its short version).
//! - `cargo xtask daw-test [--attempts N] [--keep]`: the VST3 bundle in Ardour 7, headless,
//!   exporting a pour that must equal `granary render` sample for sample (module `daw`; out
//!   of CI, see docs/testing.md).

mod daw;
mod editor;

use std::process::Command;

fn main() -> nice_plug_xtask::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("demo") => demo(),
        Some("test") => test(&args[1..]),
        Some("screenshot") => editor::screenshot(),
        Some("editor-test") => editor::editor_test(),
        Some("modal") => modal(&args[1..]),
        Some("daw-test") => daw::daw_test(&args[1..]),
        Some("dem") => dem(&args[1..]),
        Some("bank") => bank(&args[1..]),
        Some("transparency") => transparency(),
        _ => nice_plug_xtask::main(),
    }
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn run(mut cmd: Command) -> nice_plug_xtask::Result<()> {
    eprintln!("+ {cmd:?}");
    let status = cmd.status()?;
    if !status.success() {
        anyhow::bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// The transparency table (`cli/tests/transparency.rs`'s ignored test), in a release build.
fn transparency() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut test = cargo();
    test.args([
        "test",
        "--release",
        "--package",
        "granary-cli",
        "--test",
        "transparency",
        "--",
        "--ignored",
        "--nocapture",
    ]);
    run(test)
}

fn demo() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    nice_plug_xtask::main_with_args("cargo xtask", ["bundle", "granary", "--release"].map(String::from))?;
    // the command line is its own crate (granary-cli): the bundles do not link it
    let mut bin = cargo();
    bin.args(["build", "--release", "--package", "granary-cli", "--bin", "granary"]);
    run(bin)?;
    std::fs::create_dir_all("target/demo")?;
    let mut render = Command::new("target/release/granary");
    render.args([
        "render",
        "--seconds",
        "6",
        "--stems",
        "--output",
        "target/demo/pour.wav",
    ]);
    run(render)?;
    println!("\nBundles: target/bundled/granary.clap, target/bundled/granary.vst3");
    println!("Demo:    target/demo/pour.wav (+ pour.grains.wav, pour.cup.wav, pour.surface.wav, pour.friction.wav)");
    Ok(())
}

fn test(extra: &[String]) -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    run(fmt)?;
    let mut clippy = cargo();
    clippy.args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]);
    run(clippy)?;
    // The bundles first: tests/clap_bundle.rs loads the built granary.clap through its entry
    // point (GRANARY_CLAP_BUNDLE), and the VST3 host test below needs granary.vst3.
    nice_plug_xtask::main_with_args("cargo xtask", ["bundle", "granary", "--release"].map(String::from))?;
    let clap_bundle = std::env::current_dir()?.join("target/bundled/granary.clap");
    // Debug build with nice-plug's allocation checker: any allocation inside the plugin's
    // process callback, or inside the engine tests' no-allocation scopes, aborts the run.
    let mut t = cargo();
    t.args(["test", "--workspace", "--features", "granary/assert_process_allocs"])
        .env("GRANARY_CLAP_BUNDLE", &clap_bundle)
        .args(extra);
    run(t)?;
    // The tests that load the built `granary.clap` are ignored in a plain `cargo test` (no
    // bundle there); here the bundle exists, so they run, and fail if they cannot load it.
    // `unload` also unloads it and loads it again.
    let mut bundle_tests = cargo();
    bundle_tests
        .args(["test", "--package", "granary", "--features", "assert_process_allocs"])
        .args(["--test", "clap_bundle", "--test", "unload", "--", "--ignored"])
        .env("GRANARY_CLAP_BUNDLE", &clap_bundle);
    run(bundle_tests)?;
    // The VST3 bundle in a third-party host (pedalboard, JUCE); its summary line closes the run.
    let has_host = Command::new("python3")
        .args(["-c", "import pedalboard, mido, numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_host {
        anyhow::bail!("the VST3 host test needs Python 3 with pedalboard: pip install pedalboard mido numpy");
    }
    // ... and compares its bounce with `granary render` of the same notes (release binary).
    let mut bin = cargo();
    bin.args(["build", "--release", "--package", "granary-cli", "--bin", "granary"]);
    run(bin)?;
    let mut host = Command::new("python3");
    host.args([
        "tests/host_vst3.py",
        "target/bundled/granary.vst3",
        "target/release/granary",
    ]);
    run(host)
}

/// Runs the modal analysis (crate `granary-fem`, built on its own so that xtask, which every
/// bundle build compiles, does not link the heavy linear algebra).
fn modal(only: &[String]) -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut cmd = cargo();
    cmd.args(["run", "--release", "--package", "granary-fem", "--", "assets/cups"])
        .args(only);
    run(cmd)
}

/// Runs the discrete-element pour (crate `granary-dem`, built optimised on its own, as the
/// modal analysis is).
fn bank(args: &[String]) -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--release",
        "--package",
        "granary-dem",
        "--bin",
        "granary-bank",
        "--",
    ])
    .args(args);
    run(cmd)
}

fn dem(args: &[String]) -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut cmd = cargo();
    cmd.args(["run", "--release", "--package", "granary-dem", "--"])
        .args(args);
    run(cmd)
}
