//! `cargo xtask bundle granary --release` (nice-plug-xtask), plus two project commands:
//! - `cargo xtask demo`: build the CLAP and VST3 bundles and render a demo pour;
//! - `cargo xtask test`: the whole test suite, as CI runs it: rustfmt, clippy, the bundles, the
//!   Rust tests (debug build with the allocation checker; the CLAP bundle in clack-host), the
//!   VST3 bundle in a real host (pedalboard).
//! - `cargo xtask screenshot`: the editor for real (the standalone build under Xvfb), saved
//!   as `docs/editor.png` (100 %) and `docs/editor@2x.png` (200 % scale).
//! - `cargo xtask modal [SHAPE…]`: finite-element modal analysis of the cups (crate granary-fem),
//!   regenerating `assets/cups/<shape>.json` (all shapes unless some are named).
//! - `cargo xtask daw-test [--attempts N] [--keep]`: the VST3 bundle in Ardour 7, headless,
//!   exporting a pour that must equal `granary render` sample for sample (module `daw`; out
//!   of CI, see docs/testing.md).

mod daw;

use std::process::Command;

fn main() -> nice_plug_xtask::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("demo") => demo(),
        Some("test") => test(&args[1..]),
        Some("screenshot") => screenshot(),
        Some("modal") => modal(&args[1..]),
        Some("daw-test") => daw::daw_test(&args[1..]),
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
    println!("Demo:    target/demo/pour.wav (+ pour.grains.wav, pour.cup.wav)");
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

/// Builds the standalone application (`--features standalone`: needs libasound2-dev and
/// libjack-jackd2-dev) and photographs its editor under Xvfb (needs xvfb, xdotool,
/// imagemagick and x11-xserver-utils): at 100 % (`Xft.dpi` 96) and 200 % (`Xft.dpi` 192,
/// the X11 scale setting the window library reads). The Space bar is held while the
/// picture is taken, so the pour runs and the scene, analyser and meters show it.
fn screenshot() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::chdir_workspace_root()?;
    for tool in ["Xvfb", "xdotool", "import", "xrdb"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            anyhow::bail!(
                "`{tool}` not found: apt-get install -y xvfb xdotool imagemagick x11-xserver-utils \
                 libasound2-dev libjack-jackd2-dev"
            );
        }
    }
    let mut build = cargo();
    build.args([
        "build",
        "--release",
        "--features",
        "standalone",
        "--bin",
        "granary-standalone",
    ]);
    run(build)?;
    std::fs::create_dir_all("docs")?;
    shoot(96, "docs/editor.png")?;
    shoot(192, "docs/editor@2x.png")?;
    println!("Wrote docs/editor.png and docs/editor@2x.png");
    Ok(())
}

/// One screenshot at `dpi` (96 = 100 %) into `out`.
fn shoot(dpi: u32, out: &str) -> nice_plug_xtask::Result<()> {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let display = format!(":{}", 90 + std::process::id() % 9);
    let mut xvfb = Command::new("Xvfb")
        // -noreset: keep the resources (Xft.dpi) when xrdb, the first client, disconnects
        .args([
            display.as_str(),
            "-screen",
            "0",
            "2600x2000x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ])
        .spawn()?;
    let result = (|| -> nice_plug_xtask::Result<()> {
        std::thread::sleep(Duration::from_millis(800));
        let mut xrdb = Command::new("xrdb")
            .args(["-display", &display, "-merge"])
            .stdin(std::process::Stdio::piped())
            .spawn()?;
        xrdb.stdin
            .take()
            .expect("piped stdin")
            .write_all(format!("Xft.dpi: {dpi}\n").as_bytes())?;
        if !xrdb.wait()?.success() {
            anyhow::bail!("xrdb failed on {display}");
        }
        let mut app = Command::new("target/release/granary-standalone")
            .args(["--backend", "dummy"])
            .env("DISPLAY", &display)
            .spawn()?;
        let shot = (|| -> nice_plug_xtask::Result<()> {
            let xdotool = |args: &[&str]| -> nice_plug_xtask::Result<String> {
                let o = Command::new("xdotool").args(args).env("DISPLAY", &display).output()?;
                if !o.status.success() {
                    anyhow::bail!("xdotool {args:?}: {}", String::from_utf8_lossy(&o.stderr));
                }
                Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
            };
            let start = Instant::now();
            let window = loop {
                if let Ok(ids) = xdotool(&["search", "--onlyvisible", "--name", "Granary"]) {
                    if let Some(id) = ids.lines().last().filter(|l| !l.is_empty()) {
                        break id.to_string();
                    }
                }
                if start.elapsed() > Duration::from_secs(60) {
                    anyhow::bail!("the Granary window did not appear on {display}");
                }
                std::thread::sleep(Duration::from_millis(300));
            };
            // let it draw, then pour (Space held) for a moment and take the picture
            std::thread::sleep(Duration::from_secs(2));
            xdotool(&["mousemove", "--window", &window, "5", "5"])?;
            xdotool(&["windowfocus", "--sync", &window])?;
            xdotool(&["keydown", "space"])?;
            std::thread::sleep(Duration::from_millis(2500));
            let mut import = Command::new("import");
            import.env("DISPLAY", &display).args(["-window", &window, out]);
            let status = import.status()?;
            let _ = xdotool(&["keyup", "space"]);
            if !status.success() {
                anyhow::bail!("import failed: {status}");
            }
            Ok(())
        })();
        let _ = app.kill();
        let _ = app.wait();
        shot
    })();
    let _ = xvfb.kill();
    let _ = xvfb.wait();
    result
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
