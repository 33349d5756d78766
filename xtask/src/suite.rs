//! `cargo xtask test [--quick] [--jobs N] [-- TEST ARGS]`: the whole suite as CI runs it, every
//! step timed (docs/testing.md).
//!
//! The steps: rustfmt, clippy, the release build (the CLAP and VST3 bundles and the `granary`
//! command line in one cargo invocation, so that their shared crates are compiled once), the
//! test build (cargo's bench profile: release's settings and folder, so that it links the
//! crates the release build compiled, with debug assertions in Granary's own crates and the
//! allocation checker's), then every test binary and the VST3 host test, run side by side on the
//! machine's cores, longest first. At the end it prints a table of every step and test binary
//! with its wall time and writes it to `target/test-times.json`
//! (`{"total_s": …, "steps": [{"name": …, "seconds": …}, …]}`); the table is printed and
//! written when a step fails too.
//!
//! `--quick` is the loop for editing: rustfmt, clippy, the test build and every test binary
//! but those `SLOW` names (no release build, no bundle or host tests).

use anyhow::{bail, Context};
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

/// The tests `--quick` leaves out, by the file of their module or binary, with their seconds
/// in the suite (measured, docs/testing.md): each took 10 s or more of the suite's jobs or
/// needs the built bundles (the host tests, which `--quick` never runs, are listed for their
/// seconds). The seconds also order the jobs, longest first, where the last
/// run's times are unknown (a clean clone, as in CI); jobs in neither are taken as short.
const SLOW: &[(&str, f64)] = &[
    ("tests/host_vst3.py", 101.0),
    ("tests/fuzz.rs", 77.0),
    ("engine/tests/living.rs", 63.0),
    ("grains/tests/assets.rs", 48.0),
    ("cli/tests/files.rs", 42.0),
    ("cli/tests/transparency.rs", 38.0),
    ("tests/realtime.rs", 33.0),
    ("grains/tests/engine_table.rs", 30.0),
    ("grains/tests/ellipsoid.rs", 30.0),
    ("grains/tests/sphere.rs", 29.0),
    ("dem/tests/bank.rs", 25.0),
    ("engine/tests/levels.rs", 19.0),
    ("dem/tests/bank_check.rs", 10.0),
    ("xtask daw-test (Ardour 7)", 35.0),
    ("cli/tests/vary.rs", 13.0),
    ("tests/daw.rs", 8.0),
    ("tests/clap_bundle.rs", 2.4),
    ("tests/unload.rs", 0.7),
];

/// Test binaries that load the built `granary.clap`: their bundle tests are `#[ignore]`d in a
/// plain `cargo test` and run here with `--include-ignored` (the full suite only).
const BUNDLE_TESTS: &[&str] = &["tests/clap_bundle.rs", "tests/unload.rs"];

/// The fuzzer's engine scenes in the suite (the plugin gets a quarter as many): 400 of the
/// 1000 a plain `cargo test` runs. Most of a scene's time is the surface's radiation filter,
/// rebuilt for every random ground and listener, in either build; `cargo xtask fuzz` runs the
/// whole 1000 and more (docs/testing.md).
const FUZZ_SCENES: u64 = 400;

/// The VST3 host test's Python packages, pinned (the virtual environment under `target/`).
const PYTHON_REQUIREMENTS: &str = "tests/requirements.txt";

struct Options {
    quick: bool,
    jobs: usize,
    test_args: Vec<String>,
}

fn parse(args: &[String]) -> anyhow::Result<Options> {
    let usage = "usage: cargo xtask test [--quick] [--jobs N] [-- TEST ARGS (to every test binary)]";
    let mut o = Options {
        quick: false,
        jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
        test_args: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--jobs" => {
                o.jobs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n: &usize| (1..=64).contains(&n))
                    .with_context(|| format!("--jobs needs a whole number from 1 to 64\n{usage}"))?;
            }
            "--" => o.test_args.extend(it.by_ref().cloned()),
            "-h" | "--help" => {
                println!("{usage}");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}\n{usage}"),
        }
    }
    Ok(o)
}

/// What became of a step or a test binary.
#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Passed,
    Failed,
    Skipped,
}

struct Row {
    name: String,
    seconds: f64,
    outcome: Outcome,
    /// Test binaries: passed, failed and ignored tests (from libtest's `test result:` lines,
    /// or the host test's `N passed, N failed`).
    counts: Option<[u64; 3]>,
    /// A test binary (shown under the step that ran it).
    binary: bool,
    note: String,
}

/// The table of steps, written when the suite ends, whether it passed or not.
struct Times {
    started: Instant,
    rows: Vec<Row>,
    path: PathBuf,
}

impl Times {
    fn step(&mut self, name: &str, cmd: Command) -> anyhow::Result<()> {
        let started = Instant::now();
        let result = super::run(cmd);
        self.record(name, started, result.is_ok());
        result
    }

    /// A step's row, from its start and whether it passed.
    fn record(&mut self, name: &str, started: Instant, ok: bool) {
        self.rows.push(Row {
            name: name.into(),
            seconds: started.elapsed().as_secs_f64(),
            outcome: if ok { Outcome::Passed } else { Outcome::Failed },
            counts: None,
            binary: false,
            note: String::new(),
        });
    }

    fn skipped(&mut self, name: &str, why: &str) {
        println!("skipped: {name}: {why}");
        self.rows.push(Row {
            name: name.into(),
            seconds: 0.0,
            outcome: Outcome::Skipped,
            counts: None,
            binary: false,
            note: why.into(),
        });
    }

    /// Prints the table and writes `target/test-times.json`.
    fn finish(&self) -> anyhow::Result<()> {
        let total = self.started.elapsed().as_secs_f64();
        println!("\n{:<44} {:>9}  result", "step", "seconds");
        for r in &self.rows {
            let name = if r.binary {
                format!("  {}", r.name)
            } else {
                r.name.clone()
            };
            let result = match r.outcome {
                Outcome::Passed => "ok",
                Outcome::Failed => "FAILED",
                Outcome::Skipped => "skipped",
            };
            let counts = r.counts.map_or(String::new(), |[p, f, i]| {
                format!(" ({p} passed, {f} failed, {i} ignored)")
            });
            println!("{name:<44} {:>9.1}  {result}{counts}", r.seconds);
        }
        println!("{:<44} {total:>9.1}", "total (wall)");
        let steps: Vec<_> = self
            .rows
            .iter()
            .map(|r| {
                let mut s = serde_json::json!({"name": r.name, "seconds": (r.seconds * 10.0).round() / 10.0});
                let o = s.as_object_mut().unwrap();
                o.insert("kind".into(), (if r.binary { "test binary" } else { "step" }).into());
                o.insert(
                    "result".into(),
                    match r.outcome {
                        Outcome::Passed => "ok",
                        Outcome::Failed => "failed",
                        Outcome::Skipped => "skipped",
                    }
                    .into(),
                );
                if let Some([p, f, i]) = r.counts {
                    o.insert("passed".into(), p.into());
                    o.insert("failed".into(), f.into());
                    o.insert("ignored".into(), i.into());
                }
                if !r.note.is_empty() {
                    o.insert("note".into(), r.note.clone().into());
                }
                s
            })
            .collect();
        let json = serde_json::json!({"total_s": (total * 10.0).round() / 10.0, "steps": steps});
        std::fs::create_dir_all(self.path.parent().unwrap())?;
        std::fs::write(&self.path, serde_json::to_string_pretty(&json)? + "\n")?;
        println!("(written to {})", self.path.display());
        let [p, f, i] = self
            .rows
            .iter()
            .filter_map(|r| r.counts)
            .fold([0; 3], |a, c| [a[0] + c[0], a[1] + c[1], a[2] + c[2]]);
        println!("tests: {p} passed, {f} failed, {i} skipped");
        Ok(())
    }

    /// The last run's seconds for each test binary, to start the longest first.
    fn previous(path: &Path) -> Vec<(String, f64)> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Vec::new();
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
            return Vec::new();
        };
        json["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| Some((s["name"].as_str()?.to_string(), s["seconds"].as_f64()?)))
            .collect()
    }
}

pub fn test(args: &[String]) -> nice_plug_xtask::Result<()> {
    let o = parse(args)?;
    nice_plug_xtask::chdir_workspace_root()?;
    let root = std::env::current_dir()?;
    let target = super::target_dir()?;
    let mut times = Times {
        started: Instant::now(),
        rows: Vec::new(),
        path: target.join(if o.quick {
            "test-times-quick.json"
        } else {
            "test-times.json"
        }),
    };
    let previous = Times::previous(&times.path);
    let result = suite(&o, &root, &target, &mut times, &previous);
    times.finish()?;
    result
}

fn suite(o: &Options, root: &Path, target: &Path, times: &mut Times, previous: &[(String, f64)]) -> anyhow::Result<()> {
    let mut fmt = super::cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    times.step("rustfmt", fmt)?;
    let logs = target.join("test-logs");
    std::fs::create_dir_all(&logs)?;
    let mut jobs: Vec<Job> = Vec::new();
    let mut early = None;
    let clap_bundle = target.join("bundled/granary.clap");
    if !o.quick {
        // The bundles and the command line in one build: tests/clap_bundle.rs and
        // tests/unload.rs load the built granary.clap (GRANARY_CLAP_BUNDLE), the VST3 host test
        // loads granary.vst3 and compares its bounce with the release `granary render`.
        let started = Instant::now();
        let built = super::build_release();
        times.record("release build (bundles, command line)", started, built.is_ok());
        built?;
        // The VST3 host test needs only the release bundle, the command line copied beside
        // it (target/bundled/: copies, which the test build does not touch) and its Python:
        // it runs during the test build, on the core the build leaves idle while one crate
        // compiles or links alone (the longest job, 99 s, out of the jobs' queue).
        // The sharded sweep's check (Slurm) follows them there: it mostly waits on Slurm's
        // scheduler, with the release build's granary-bank copied out of the test build's way.
        let host = vst3_host_job(root, target, times)?;
        let metadata = wav_metadata_job(root, target)?;
        let shards = shards_job(root, target, times)?;
        let dir = logs.clone();
        early = Some(std::thread::spawn(move || {
            [Some(host), Some(metadata), shards]
                .into_iter()
                .flatten()
                .map(|job| run_job(job, &dir))
                .collect::<Vec<Row>>()
        }));
        if let Some(daw) = daw_job(root, times)? {
            jobs.push(daw);
        }
    }

    // The test build: cargo's bench profile, release's settings and folder with debug
    // assertions and overflow checks in Granary's crates and the allocation checker's
    // (Cargo.toml), so that nice-plug's checker aborts on any allocation inside the plugin's
    // process callback or inside a test's no-allocation scope. Clippy lints Granary's crates
    // as they compile (`build_tests`).
    let kept = Kept::take(&target.join("release"))?;
    let started = Instant::now();
    let built = build_tests(root);
    if built.is_err() {
        kept.restore()?;
    }
    times.record("test build, with clippy (bench profile)", started, built.is_ok());
    let (binaries, warnings) = match built {
        Ok(built) => built,
        Err(e) => {
            // the host test's result is no longer wanted, but it ends before the suite does
            if let Some(host) = early.take() {
                let _ = host.join();
            }
            return Err(e);
        }
    };
    times.rows.push(Row {
        name: "clippy (its lints in the test build)".into(),
        seconds: 0.0,
        outcome: if warnings.is_empty() {
            Outcome::Passed
        } else {
            Outcome::Failed
        },
        counts: None,
        binary: false,
        note: if warnings.is_empty() {
            String::new()
        } else {
            format!("{} warnings", warnings.len())
        },
    });
    for b in binaries {
        // an integration binary (a module a file) runs a job a module, named by its file
        for (name, filter) in b.jobs()? {
            if o.quick && SLOW.iter().any(|s| s.0 == name) {
                continue;
            }
            let mut cmd = Command::new(&b.executable);
            cmd.current_dir(&b.package_dir)
                .env("CARGO_MANIFEST_DIR", &b.package_dir)
                .env("GRANARY_CLAP_BUNDLE", &clap_bundle);
            if name == "tests/fuzz.rs" {
                cmd.env("GRANARY_FUZZ_SCENES", FUZZ_SCENES.to_string());
            }
            if !o.quick && BUNDLE_TESTS.contains(&name.as_str()) {
                cmd.arg("--include-ignored");
            }
            cmd.args(filter).args(&o.test_args);
            jobs.push(Job { name, cmd, host: false });
        }
    }
    let started = Instant::now();
    let expected = |name: &str| {
        let last = previous.iter().find(|(n, _)| n == name).map(|p| p.1);
        last.or(SLOW.iter().find(|s| s.0 == name).map(|s| s.1)).unwrap_or(1.0)
    };
    // longest first, so that the last to finish are short
    jobs.sort_by(|a, b| expected(&b.name).total_cmp(&expected(&a.name)));
    let mut results = run_jobs(jobs, o.jobs, &logs);
    if let Some(host) = early {
        results.extend(host.join().expect("the Python host jobs' thread"));
    }
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .map(|r| r.name.clone())
        .collect();
    let name = format!("tests ({} jobs, {} at a time)", results.len(), o.jobs);
    times.record(&name, started, failed.is_empty());
    // the release products the test build replaced in target/release, as they were
    kept.restore()?;
    let mut sorted = results;
    sorted.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    times.rows.extend(sorted);
    if !failed.is_empty() {
        bail!(
            "failed: {} (their whole output is above and in {})",
            failed.join(", "),
            logs.display()
        );
    }
    if !warnings.is_empty() {
        println!("\n======== FAILED: clippy ({} warnings) ========", warnings.len());
        for w in &warnings {
            println!("{}", w.trim_end());
        }
        bail!("clippy found {} warnings in Granary's crates (above)", warnings.len());
    }
    Ok(())
}

/// The programs and libraries directly in target/release (the bundles' `libgranary.so`, the
/// `granary` command line, …), kept while the test build runs: cargo's bench profile shares
/// that folder with release and puts its own builds of them there, with debug assertions.
/// `restore` puts the release ones back, so that after `cargo xtask test` target/release holds
/// what `cargo build --release` built.
struct Kept {
    files: Vec<(PathBuf, PathBuf, std::time::SystemTime)>,
}

impl Kept {
    fn take(release: &Path) -> anyhow::Result<Kept> {
        let keep = release.with_file_name("release-kept");
        let _ = std::fs::remove_dir_all(&keep);
        let mut files = Vec::new();
        for entry in std::fs::read_dir(release).into_iter().flatten().flatten() {
            let path = entry.path();
            let meta = entry.metadata()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let product = name.ends_with(".so") || (meta.permissions().mode() & 0o111 != 0 && !name.contains('.'));
            if !meta.is_file() || !product {
                continue;
            }
            std::fs::create_dir_all(&keep)?;
            let copy = keep.join(entry.file_name());
            std::fs::copy(&path, &copy)?;
            files.push((path, copy, meta.modified()?));
        }
        Ok(Kept { files })
    }

    fn restore(&self) -> anyhow::Result<()> {
        for (path, copy, modified) in &self.files {
            if std::fs::metadata(path).and_then(|m| m.modified()).ok() != Some(*modified) {
                // beside it, then renamed over it: a reader never sees half a file
                let part = path.with_extension("kept-part");
                std::fs::copy(copy, &part)?;
                std::fs::rename(&part, path)?;
            }
        }
        Ok(())
    }
}

/// A test binary cargo built.
struct Binary {
    /// Its source path from the workspace root (`engine/tests/main.rs`, `cli/src/main.rs`).
    name: String,
    /// Cargo's name of the target (`integration` for the integration binaries).
    target: String,
    executable: PathBuf,
    package_dir: PathBuf,
}

impl Binary {
    /// The jobs that run this binary: a name and the test filter. An integration binary
    /// (`tests/main.rs`, a module a file) is run a module at a time, each job named by its
    /// module's file (`engine/tests/levels.rs` runs the filter `levels::`), so that the suite
    /// times each file and spreads the modules over the cores; any other binary runs whole.
    fn jobs(&self) -> anyhow::Result<Vec<(String, Vec<String>)>> {
        let whole = vec![(self.name.clone(), Vec::new())];
        if self.target != "integration" {
            return Ok(whole);
        }
        let out = Command::new(&self.executable)
            .args(["--list", "--format", "terse"])
            .current_dir(&self.package_dir)
            .output()?;
        if !out.status.success() {
            bail!("{} --list failed: {}", self.name, String::from_utf8_lossy(&out.stderr));
        }
        let tests: Vec<String> = String::from_utf8(out.stdout)?
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .map(String::from)
            .collect();
        let mut modules: Vec<&str> = tests.iter().filter_map(|t| t.split_once("::").map(|m| m.0)).collect();
        modules.sort_unstable();
        modules.dedup();
        // each module's filter `m::` must pick out its own tests and no other's
        let own = |m: &str, t: &str| t.starts_with(&format!("{m}::"));
        let clean = tests.iter().all(|t| {
            modules
                .iter()
                .filter(|m| t.contains(&format!("{m}::")))
                .all(|m| own(m, t))
                && modules.iter().any(|m| own(m, t))
        });
        if !clean || modules.is_empty() {
            return Ok(whole);
        }
        let dir = Path::new(&self.name).parent().unwrap_or(Path::new(""));
        Ok(modules
            .iter()
            .map(|m| {
                (
                    dir.join(format!("{m}.rs")).to_string_lossy().into_owned(),
                    vec![format!("{m}::")],
                )
            })
            .collect())
    }
}

/// `cargo test --profile bench --no-run` for the workspace's every target, with the
/// allocation checker (the profile: Cargo.toml); the test binaries it built, read from cargo's
/// JSON messages, and clippy's warnings.
///
/// Clippy runs inside this build: cargo hands Granary's own crates (the workspace members) to
/// `clippy-driver` (`RUSTC_WORKSPACE_WRAPPER`, as `cargo clippy` does), which compiles them as
/// rustc would and lints them on the way. A separate `cargo clippy` would type-check the
/// workspace and all its dependencies once more (about four minutes of CPU on two cores).
/// Every target is built (`--all-targets`: the benches and examples too, as
/// `cargo clippy --all-targets` checks them), and every warning in a workspace crate fails the
/// suite at its end, as `-D warnings` would; they are printed as they come, with the build's
/// errors. The dependencies are built without the wrapper, so they stay the release build's.
fn build_tests(root: &Path) -> anyhow::Result<(Vec<Binary>, Vec<String>)> {
    let driver = Command::new("clippy-driver").arg("--version").output();
    if !driver.is_ok_and(|o| o.status.success()) {
        bail!("clippy-driver not found: the suite lints with clippy (rustup component add clippy)");
    }
    let mut cmd = super::cargo();
    cmd.args(["test", "--profile", "bench", "--workspace", "--all-targets"])
        .args(["--features", "granary/assert_process_allocs", "--no-run"])
        // cargo's report of every crate's compile time: target/cargo-timings/
        .args(["--message-format", "json", "--timings"])
        .env("RUSTC_WORKSPACE_WRAPPER", "clippy-driver")
        .stdout(Stdio::piped());
    eprintln!("+ {cmd:?}");
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take().context("cargo's output")?;
    let vendor = root.join("vendor");
    let mut binaries = Vec::new();
    let mut warnings = Vec::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        let manifest = Path::new(msg["manifest_path"].as_str().unwrap_or_default());
        let ours = manifest.starts_with(root) && !manifest.starts_with(&vendor);
        if msg["reason"] == "compiler-message" {
            let m = &msg["message"];
            let rendered = m["rendered"].as_str().unwrap_or_default();
            eprint!("{rendered}");
            // a warning with a place or a lint's name (not rustc's "N warnings emitted")
            let real = m["code"].is_object() || m["spans"].as_array().is_some_and(|s| !s.is_empty());
            if m["level"] == "warning" && real && ours {
                warnings.push(rendered.to_string());
            }
            continue;
        }
        let kind = msg["target"]["kind"][0].as_str().unwrap_or_default();
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] != true || kind == "bench" {
            continue;
        }
        let (Some(exe), Some(src)) = (msg["executable"].as_str(), msg["target"]["src_path"].as_str()) else {
            continue;
        };
        let src = Path::new(src);
        let name = src.strip_prefix(root).unwrap_or(src).to_string_lossy().into_owned();
        binaries.push(Binary {
            name,
            target: msg["target"]["name"].as_str().unwrap_or_default().to_string(),
            executable: exe.into(),
            package_dir: manifest.parent().context("a manifest without a folder")?.into(),
        });
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("the test build failed with {status}");
    }
    if binaries.is_empty() {
        bail!("cargo built no test binary");
    }
    Ok((binaries, warnings))
}

struct Job {
    name: String,
    cmd: Command,
    /// A host test (Python, Ardour) rather than a libtest binary: its counts come from its own
    /// closing line.
    host: bool,
}

/// Serialises the lines the jobs print as they end.
static PRINT: Mutex<()> = Mutex::new(());

/// Runs the jobs `parallel` at a time, each one's output into `logs/<name>.log`; a failing
/// job's whole output is printed when it ends, a passing one's in one line.
fn run_jobs(jobs: Vec<Job>, parallel: usize, logs: &Path) -> Vec<Row> {
    let queue = Mutex::new(VecDeque::from(jobs));
    let rows = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..parallel.max(1) {
            s.spawn(|| loop {
                let Some(job) = queue.lock().unwrap().pop_front() else {
                    break;
                };
                let row = run_job(job, logs);
                rows.lock().unwrap().push(row);
            });
        }
    });
    rows.into_inner().unwrap()
}

/// Runs one job, its output into `logs/<name>.log`, and prints its line (or its whole output
/// if it failed).
fn run_job(mut job: Job, logs: &Path) -> Row {
    let log = logs.join(job.name.replace(['/', ' ', '(', ')'], "_") + ".log");
    let started = Instant::now();
    let status = File::create(&log).and_then(|f| {
        let e = f.try_clone()?;
        job.cmd.stdout(f).stderr(e).stdin(Stdio::null()).status()
    });
    let seconds = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let counts = if job.host {
        host_counts(&text)
    } else {
        libtest_counts(&text)
    };
    let (outcome, note) = match &status {
        Ok(s) if s.success() => (Outcome::Passed, String::new()),
        Ok(s) => (Outcome::Failed, format!("exited with {s}")),
        Err(e) => (Outcome::Failed, format!("could not start: {e}")),
    };
    let _held = PRINT.lock().unwrap();
    match outcome {
        Outcome::Passed => println!(
            "ok      {:<40} {seconds:>7.1} s{}",
            job.name,
            counts.map_or(String::new(), |[p, _, i]| format!("  ({p} passed, {i} ignored)"))
        ),
        _ => {
            println!("\n======== FAILED: {} ({note}) after {seconds:.1} s ========", job.name);
            println!("{}", text.trim_end());
            println!("======== end of {} ({}) ========\n", job.name, log.display());
        }
    }
    Row {
        name: job.name,
        seconds,
        outcome,
        counts,
        binary: true,
        note,
    }
}

/// Sums libtest's `test result: ok. 3 passed; 0 failed; 1 ignored; …` lines.
fn libtest_counts(text: &str) -> Option<[u64; 3]> {
    let mut sum = None;
    for line in text.lines().filter_map(|l| l.trim().strip_prefix("test result: ")) {
        let c: &mut [u64; 3] = sum.get_or_insert([0; 3]);
        for part in line.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(what), Some(n)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            match what {
                "passed" => c[0] += n,
                "failed" => c[1] += n,
                "ignored" => c[2] += n,
                _ => {}
            }
        }
    }
    sum
}

/// A host test's closing `N passed, N failed` line.
fn host_counts(text: &str) -> Option<[u64; 3]> {
    let line = text
        .lines()
        .rev()
        .find(|l| l.contains(" passed, ") && l.trim_end().ends_with(" failed"))?;
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    (n.len() == 2).then(|| [n[0], n[1], 0])
}

/// The VST3 bundle in pedalboard (JUCE), in a virtual environment of its own under `target/`.
fn vst3_host_job(root: &Path, target: &Path, times: &mut Times) -> anyhow::Result<Job> {
    let started = Instant::now();
    let python = python_host(root, target);
    times.record("python host (venv under target/)", started, python.is_ok());
    let mut cmd = Command::new(python?);
    cmd.current_dir(root).args([
        "tests/host_vst3.py",
        &target.join("bundled/granary.vst3").to_string_lossy(),
        &target.join("bundled/granary").to_string_lossy(),
    ]);
    Ok(Job {
        name: "tests/host_vst3.py".into(),
        cmd,
        host: true,
    })
}

/// Granary's WAV files read by independent parsers (wavinfo, libsndfile, pyloudnorm, JUCE's
/// reader in pedalboard), with the release command line, in the host test's Python (made by
/// [`vst3_host_job`] just before).
fn wav_metadata_job(root: &Path, target: &Path) -> anyhow::Result<Job> {
    let mut cmd = Command::new(python_host(root, target)?);
    cmd.current_dir(root).args([
        "tests/wav_metadata.py",
        &target.join("bundled/granary").to_string_lossy(),
    ]);
    Ok(Job {
        name: "tests/wav_metadata.py".into(),
        cmd,
        host: true,
    })
}

/// A Python with the host test's packages: the virtual environment `target/python`, made and
/// filled from `tests/requirements.txt` the first time (and whenever that file changes).
fn python_host(root: &Path, target: &Path) -> anyhow::Result<PathBuf> {
    let venv = target.join("python");
    let python = venv.join("bin/python3");
    let requirements = std::fs::read_to_string(root.join(PYTHON_REQUIREMENTS))
        .with_context(|| format!("reading {PYTHON_REQUIREMENTS}"))?;
    let stamp = venv.join("granary-requirements.txt");
    if python.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == requirements) {
        return Ok(python);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let mut make = Command::new("python3");
    make.args(["-m", "venv"]).arg(&venv);
    super::run(make)
        .context("the VST3 host test needs Python 3 with its venv module (Debian: apt-get install python3-venv)")?;
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r"])
        .arg(root.join(PYTHON_REQUIREMENTS));
    super::run(pip).context("installing the VST3 host test's Python packages into target/python")?;
    std::fs::write(&stamp, requirements)?;
    Ok(python)
}

/// The DAW test (Ardour 7, `cargo xtask daw-test`) on the release products the suite built
/// (target/bundled/), where Ardour is installed (`.ci/run` installs it).
fn daw_job(root: &Path, times: &mut Times) -> anyhow::Result<Option<Job>> {
    let needs = Needs {
        missing: super::daw::missing(),
        what: "Ardour 7",
        package: "ardour",
        skipped: "DAW test (Ardour 7)",
    };
    needs.job(root, times, "xtask daw-test (Ardour 7)", &["daw-test", "--no-build"])
}

/// The databank's sweep in four shards as a Slurm job array against one process
/// (`cargo xtask bank-shards --check`) with the release build's `granary-bank`, copied to
/// target/bank-shards/ (the test build replaces target/release's while it runs), where Slurm
/// is installed (`.ci/run` installs it).
fn shards_job(root: &Path, target: &Path, times: &mut Times) -> anyhow::Result<Option<Job>> {
    let needs = Needs {
        missing: super::slurm::missing(),
        what: "Slurm",
        package: "slurm-wlm",
        skipped: "sharded sweep through Slurm",
    };
    let bank = target.join("bank-shards/granary-bank");
    if needs.missing.is_none() {
        std::fs::create_dir_all(target.join("bank-shards"))?;
        std::fs::copy(target.join("release/granary-bank"), &bank)?;
    }
    let bank = bank.display().to_string();
    needs.job(
        root,
        times,
        "xtask bank-shards --check (Slurm)",
        &["bank-shards", "--check", "--bank", &bank],
    )
}

/// A suite job that runs an xtask command needing a system package.
struct Needs {
    /// The first of its programs not installed, if any.
    missing: Option<&'static str>,
    what: &'static str,
    package: &'static str,
    skipped: &'static str,
}

impl Needs {
    /// The job `cargo xtask ARGS`, where the package is installed; elsewhere one line saying it
    /// was skipped, or under CI (`CI=true`, where `.ci/run` installs the package) an error.
    fn job(&self, root: &Path, times: &mut Times, name: &str, args: &[&str]) -> anyhow::Result<Option<Job>> {
        let Needs { what, package, .. } = self;
        if let Some(tool) = self.missing {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                bail!("CI=true but {what} cannot run here (no {tool}): .ci/run installs it with apt-get install {package}");
            }
            let command = args
                .iter()
                .take_while(|a| !["--no-build", "--bank"].contains(a))
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            times.skipped(
                self.skipped,
                &format!("{what} cannot run here (no {tool}; apt-get install {package}, then cargo xtask {command})"),
            );
            return Ok(None);
        }
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.current_dir(root).args(args);
        Ok(Some(Job {
            name: name.into(),
            cmd,
            host: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_lines_are_summed() {
        let text = "running 3 tests\n\
                    test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\
                    test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.50s\n";
        assert_eq!(libtest_counts(text), Some([5, 1, 1]));
        assert_eq!(libtest_counts("no tests here"), None);
    }

    #[test]
    fn the_host_tests_closing_line_is_read() {
        assert_eq!(
            host_counts("test a ... ok (1.0 s)\n5 passed, 0 failed\n"),
            Some([5, 0, 0])
        );
        assert_eq!(host_counts("4 passed, 1 failed"), Some([4, 1, 0]));
        assert_eq!(host_counts("Traceback ..."), None);
    }

    #[test]
    fn arguments_parse() {
        let o = parse(&[
            "--quick".into(),
            "--jobs".into(),
            "3".into(),
            "--".into(),
            "limiter".into(),
        ])
        .unwrap();
        assert!(o.quick);
        assert_eq!(o.jobs, 3);
        assert_eq!(o.test_args, ["limiter"]);
        assert!(parse(&["--jobs".into(), "0".into()]).is_err());
        assert!(parse(&["--fast".into()]).is_err());
    }

    /// Every crate `cargo xtask` builds for xtask alone, with the features the workspace
    /// build gives it: otherwise a clean clone compiles it twice (xtask/Cargo.toml's
    /// workspace hack; a new dependency that turns on more features in one of xtask's
    /// crates fails here, naming it).
    #[test]
    fn xtasks_crates_have_the_workspace_builds_features() {
        let tree = |select: &str| -> std::collections::BTreeSet<String> {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let out = Command::new(env!("CARGO"))
                .current_dir(&root)
                .args(["tree", "--locked", select, "-e", "normal,build"])
                .args(["--prefix", "none", "-f", "{p} [{f}]"])
                .output()
                .expect("cargo runs");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            // "name vX.Y.Z (path or proc-macro) [features]", " (*)" after a repeat: both dropped
            text.lines()
                .map(|l| l.trim_end_matches(" (*)"))
                .map(|l| match (l.find(" ("), l.find(" [")) {
                    (Some(a), Some(b)) if a < b => format!("{}{}", &l[..a], &l[b..]),
                    _ => l.to_string(),
                })
                .collect()
        };
        let xtask = tree("--package=xtask");
        let workspace = tree("--workspace");
        let differ: Vec<_> = xtask.difference(&workspace).collect();
        assert!(
            differ.is_empty(),
            "built for xtask with other features than the workspace build gives them: {differ:?}"
        );
    }
}
