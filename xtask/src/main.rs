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
//!   databank's sweep of simulated pours, written to `assets/bank/bank.json` (docs/dem.md);
//!   `--shard I/N` and `--merge FILES` run it in shards.
//! - `cargo xtask bank-check [--preset ID]... [--seeds N] [--takes N] [--shape own|sphere]
//!   [--statistics bank|model] [--bed placed|poured] [--verbose]`: the thesis's §6.2 check
//!   of the databank for every factory preset's own scene, simulated and rendered from its
//!   contacts against the engine sampling the bank (or the hand model), on a placed bed or
//!   the preset's own pour from empty (`granary-bank-check`; docs/dem.md; CI runs one
//!   preset, as spheres).
//! - `cargo xtask bank-shards [--shards N] [--check] [-- OPTIONS]`: the sweep's shards as a
//!   Slurm job array on a one-node cluster started for the run, merged (module `slurm`;
//!   `--check` is the suite's test of it, against one process).
//! - `cargo xtask fuzz [--scenes N] [--seed S]`: the fuzzer in full (`tests/fuzz.rs`, 1000
//!   engine scenes; the suite runs 400).
//! - `cargo xtask transparency`: realtime quality against reference for every factory preset,
//!   the full table (`cli/tests/transparency.rs`, about 7 minutes; CI runs its short version).
//! - `cargo xtask daw-test [--attempts N] [--keep] [--no-build]`: the VST3 bundle in Ardour 7,
//!   headless, exporting a pour 26 times that must equal `granary render` sample for sample
//!   each time (module `daw`; `cargo xtask test` runs it where Ardour is installed, and CI
//!   installs it).

mod daw;
mod editor;
mod slurm;
mod suite;

use std::process::Command;

fn main() -> nice_plug_xtask::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("demo") => demo(),
        Some("test") => suite::test(&args[1..]),
        Some("screenshot") => editor::screenshot(),
        Some("editor-test") => editor::editor_test(),
        Some("modal") => modal(&args[1..]),
        Some("daw-test") => daw::daw_test(&args[1..]),
        Some("dem") => dem(&args[1..]),
        Some("bank") => bank(&args[1..]),
        Some("bank-check") => bank_check(&args[1..]),
        Some("bank-shards") => slurm::bank_shards(&args[1..]),
        Some("transparency") => transparency(),
        Some("fuzz") => fuzz(&args[1..]),
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

/// The transparency table (`cli/tests/transparency.rs`'s ignored test, in the command line's
/// integration binary), in a release build.
fn transparency() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut test = cargo();
    test.args([
        "test",
        "--release",
        "--package",
        "granary-cli",
        "--test",
        "integration",
        "transparency::",
        "--",
        "--ignored",
        "--nocapture",
    ]);
    run(test)
}

/// The CLAP and VST3 bundles and the `granary` command line, with the rest of the workspace
/// (the offline tools: granary-fem, granary-dem, granary-grains, xtask), in one release build.
/// Built together, every dependency is compiled once with the features the whole workspace
/// asks of it, which are the features the test build (`cargo test --profile bench
/// --workspace`, sharing target/release) asks: the tests link these very crates instead of
/// compiling their own (docs/testing.md, "How the suite is built").
fn build_release() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut build = cargo();
    build.args(["build", "--release", "--workspace"]);
    run(build)?;
    let target = target_dir()?;
    nice_plug_xtask::bundle(&target, "granary", &["--release".to_string()], false)?;
    // beside the bundles, the command line they were built with: the test build (cargo's bench
    // profile, which shares target/release) puts its own `granary` in target/release while it
    // runs, and the VST3 host test compares the bundle with this one
    std::fs::copy(target.join("release/granary"), target.join("bundled/granary"))?;
    Ok(())
}

/// Cargo's target directory (it honours `CARGO_TARGET_DIR` and the configuration).
fn target_dir() -> nice_plug_xtask::Result<std::path::PathBuf> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()?;
    if !out.status.success() {
        anyhow::bail!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    match json["target_directory"].as_str() {
        Some(dir) => Ok(dir.into()),
        None => anyhow::bail!("no target_directory in cargo metadata"),
    }
}

/// The fuzzer in full (`tests/fuzz.rs`: 1000 engine scenes and 250 through the plugin unless
/// `--scenes N` says otherwise, from `--seed S`), in the suite's build (the bench profile,
/// with the allocation checker). The suite runs 400 of them.
fn fuzz(args: &[String]) -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut test = cargo();
    test.args(["test", "--profile", "bench", "--package", "granary"])
        .args(["--features", "assert_process_allocs", "--test", "integration", "fuzz::"])
        .args(["--", "--nocapture"]);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let var = match arg.as_str() {
            "--scenes" => "GRANARY_FUZZ_SCENES",
            "--seed" => "GRANARY_FUZZ_SEED",
            _ => anyhow::bail!("usage: cargo xtask fuzz [--scenes N] [--seed S]"),
        };
        match it.next().filter(|v| v.parse::<u64>().is_ok()) {
            Some(v) => test.env(var, v),
            None => anyhow::bail!("{arg} needs a whole number\nusage: cargo xtask fuzz [--scenes N] [--seed S]"),
        };
    }
    run(test)
}

fn demo() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    build_release()?;
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

/// Runs the modal analysis (crate `granary-fem`, built on its own so that xtask, which every
/// bundle build compiles, does not link the heavy linear algebra).
fn modal(only: &[String]) -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut cmd = cargo();
    cmd.args(["run", "--release", "--package", "granary-fem", "--", "assets/cups"])
        .args(only);
    run(cmd)
}

/// The databank's sweep (`granary-bank`).
fn bank(args: &[String]) -> nice_plug_xtask::Result<()> {
    dem_bin(Some("granary-bank"), args)
}

/// The §6.2 check of the databank for every factory preset (or those `--preset` names):
/// `granary-bank-check` (dem/src/bin).
fn bank_check(args: &[String]) -> nice_plug_xtask::Result<()> {
    dem_bin(Some("granary-bank-check"), args)
}

/// A simulated pour of a preset (`granary-dem`).
fn dem(args: &[String]) -> nice_plug_xtask::Result<()> {
    dem_bin(None, args)
}

/// Runs a program of crate `granary-dem` (its default, `granary-dem`, or `bin`), built
/// optimised on its own, as the modal analysis is.
fn dem_bin(bin: Option<&str>, args: &[String]) -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    let mut cmd = cargo();
    cmd.args(["run", "--release", "--package", "granary-dem"]);
    if let Some(bin) = bin {
        cmd.args(["--bin", bin]);
    }
    cmd.arg("--").args(args);
    run(cmd)
}
