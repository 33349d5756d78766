//! `cargo xtask daw-test`: a pour rendered by a real DAW (Ardour 7, headless) compared sample
//! for sample with `granary render` of the same note, settings and seed.
//!
//! Ardour loads the release `granary.vst3` on a MIDI track of a fresh 48 kHz session (the
//! plugin in its default state, the default preset), plays one held note from a MIDI region
//! and exports the session, freewheeling, to 32-bit float WAV: the first export is the first
//! bounce after the project loads, the second one follows it in the same session, and each of
//! `REACTIVATIONS` more follows a deactivation and reactivation of the plugin (one such export
//! in eight was once silent: 24 catch a 1-in-8 failure 24 times in 25). Each must equal
//! `granary render` bit for bit. `.ci/run` runs it (docs/testing.md).
//!
//! What Ardour 7.3 (Debian's `ardour`) needs, and why the steps below look as they do:
//! - everything runs under a temporary `HOME`, so Ardour's configuration, plugin cache and
//!   export presets are the harness's own and the user's are left alone;
//! - the headless tools read VST3 plugins only from the scan cache that
//!   `ardour-vst3-scanner` writes, and ignore a cache that is not newer than the bundle: the
//!   bundle is copied into `$HOME/.vst3` with its time stamps kept, then scanned;
//! - its Lua API can create the session, the track and the plugin but not a MIDI region: the
//!   harness writes a standard MIDI file into the session's `interchange/NAME/midifiles/` and
//!   adds the source and the region to the session file;
//! - `ardour7-lua` crashes (a corrupted heap, found in `ExportProfileManager::load_presets`
//!   as an export starts) about once in three to five exports, and also when starting or
//!   closing; it does so as often with Ardour's own ACE Reasonable Synth in Granary's place
//!   (six runs of 18 exports: a crash after 1 to 8 of them). Every Ardour step is retried, up to
//!   `--attempts` runs (40), the exports going on from the first take not yet exported, and
//!   each crash is reported as a host crash, not as a difference in the sound.
//!
//! No lag is searched for: the notes are placed where Ardour's tempo map puts the region's
//! notes (printed by the export script, in samples), and the export range starts at the
//! timeline's origin, which is sample 0 of `granary render`. Ardour compensates the latency
//! the plugin reports, so its export is aligned with the timeline.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

const CREATE_LUA: &str = include_str!("../daw/create.lua");
const EXPORT_LUA: &str = include_str!("../daw/export.lua");
const FORMAT: &str = include_str!("../daw/float-wav.format");
const PRESET: &str = include_str!("../daw/float-wav.preset");
/// The id in `float-wav.preset`.
const PRESET_ID: &str = "6a0c3a52-3f3e-4d3b-9f41-8d2f3c1e7a02";

const LUA: &str = "ardour7-lua";
const ARDOUR_LIB: &str = "/usr/lib/ardour7";
const SCANNER: &str = "/usr/lib/ardour7/ardour-vst3-scanner";

const RATE: u32 = 48_000;
const SESSION: &str = "pour";
/// The factory preset the plugin's default state holds.
const PRESET_NAME: &str = "sugar_ceramic_mug";
/// The MIDI file's resolution (Ardour's own: `Temporal::ticks_per_beat`).
const PPQN: u16 = 1920;
/// One held note, in beats (the session's tempo map turns them into samples): it starts
/// off the timeline's origin and off any block boundary a host is likely to use.
const NOTE: (u32, u32, u8) = (1, 6, 100);
/// The region and the export range, in beats.
const BEATS: u32 = 8;
/// A run of `ardour7-lua` that takes longer than this is stopped and counted as a crash.
const ARDOUR_TIMEOUT: Duration = Duration::from_secs(180);
/// Exports after a deactivation and reactivation of the plugin, each after its own.
const REACTIVATIONS: u32 = 24;

/// The exports' names, in the order the export script makes them, with what each is.
fn takes() -> Vec<(String, String)> {
    let mut takes = vec![
        ("first".to_string(), "first export after the project loads".to_string()),
        ("second".to_string(), "second export, same session".to_string()),
    ];
    takes.extend((1..=REACTIVATIONS).map(|k| {
        (
            format!("reactivated-{k}"),
            format!("export after deactivation and reactivation {k} of {REACTIVATIONS}"),
        )
    }));
    takes
}

/// The first of the Ardour tools the DAW test runs that is not on the PATH, if any.
pub fn missing() -> Option<&'static str> {
    [LUA, SCANNER].into_iter().find(|tool| {
        !Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `cargo xtask daw-test [--attempts N] [--keep] [--no-build]`.
pub fn daw_test(args: &[String]) -> nice_plug_xtask::Result<()> {
    let mut attempts = 40;
    let mut keep = false;
    let mut build = true;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--attempts" => {
                attempts = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n: &u32| n > 0)
                    .context("--attempts needs a positive number")?;
            }
            "--keep" => keep = true,
            "--no-build" => build = false,
            _ => bail!("usage: cargo xtask daw-test [--attempts N] [--keep] [--no-build]"),
        }
    }
    if let Some(tool) = missing() {
        bail!("`{tool}` not found: the DAW test needs Ardour 7 (apt-get install ardour)");
    }

    let started = Instant::now();
    nice_plug_xtask::chdir_workspace_root()?;
    if build {
        super::build_release()?;
    }
    // the release products as built together (`build_release`): `cargo xtask test` runs this
    // with --no-build while its test build puts other builds in target/release
    let target = super::target_dir()?;
    let bundle = target.join("bundled/granary.vst3");
    let granary = target.join("bundled/granary");
    if !(build || bundle.exists() && granary.exists()) {
        bail!(
            "--no-build: no release build in {} (cargo xtask bundle granary --release)",
            target.join("bundled").display()
        );
    }
    let built = started.elapsed();

    let work = std::env::temp_dir().join(format!("granary-daw-test-{}", std::process::id()));
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let result = in_ardour(&work, &bundle, &granary, attempts);
    match &result {
        Ok(()) if !keep => std::fs::remove_dir_all(&work)?,
        _ => println!("Files kept in {}", work.display()),
    }
    println!(
        "daw-test took {:.0} s ({:.0} s building)",
        started.elapsed().as_secs_f64(),
        built.as_secs_f64()
    );
    result
}

/// Everything after the build, inside `work`.
fn in_ardour(work: &Path, bundle: &Path, granary: &Path, attempts: u32) -> nice_plug_xtask::Result<()> {
    let home = work.join("home");
    let vst3 = home.join(".vst3");
    std::fs::create_dir_all(&vst3)?;
    let mut copy = Command::new("cp");
    copy.arg("-a").arg(bundle).arg(&vst3);
    super::run(copy)?;
    let plugin = vst3.join("granary.vst3");
    // The headless tools ignore a scan cache that is not newer than the bundle, and the
    // scanner stamps its cache with the current whole second: a bundle built a moment ago
    // would look newer than its cache.
    backdate(&plugin, std::time::SystemTime::now() - Duration::from_secs(60))?;
    let mut scan = Command::new(SCANNER);
    scan.arg("--force").arg(&plugin);
    ardour_env(&mut scan, &home);
    let scanned = scan.output()?;
    if !scanned.status.success() {
        bail!(
            "ardour-vst3-scanner failed on {} ({}):\n{}{}",
            plugin.display(),
            scanned.status,
            String::from_utf8_lossy(&scanned.stdout),
            String::from_utf8_lossy(&scanned.stderr)
        );
    }
    let presets = home.join(".config/ardour7/export");
    std::fs::create_dir_all(&presets)?;
    std::fs::write(presets.join("granary-float-wav.format"), FORMAT)?;
    std::fs::write(presets.join("granary-float-wav.preset"), PRESET)?;
    std::fs::write(work.join("create.lua"), CREATE_LUA)?;
    std::fs::write(work.join("export.lua"), EXPORT_LUA)?;

    // 1. a new session with the track and the plugin, saved
    let template = work.join(SESSION);
    ardour(&home, work, "create", attempts, |_| {
        if template.exists() {
            std::fs::remove_dir_all(&template)?;
        }
        let mut lua = Command::new(LUA);
        lua.arg(work.join("create.lua"))
            .env("GRANARY_DAW_SESSION_DIR", &template)
            .env("GRANARY_DAW_SESSION_NAME", SESSION)
            .env("GRANARY_DAW_RATE", RATE.to_string());
        Ok((lua, vec!["CREATED".to_string()]))
    })?;

    // 2. the MIDI region, added to the saved session (Ardour names the interchange folder
    // after the session's folder)
    let midifiles = template.join("interchange").join(SESSION).join("midifiles");
    std::fs::create_dir_all(&midifiles)?;
    std::fs::write(midifiles.join("pour.mid"), midi_file(NOTE))?;
    let file = template.join(format!("{SESSION}.ardour"));
    let xml = std::fs::read_to_string(&file)?;
    std::fs::write(&file, with_region(&xml, "pour.mid", BEATS)?)?;

    // 3. open it and export every take; after a host crash, a copy of the session exports
    // the takes not yet exported (each take's file is the one its attempt wrote)
    let all = takes();
    let mut exported: Vec<(String, std::path::PathBuf)> = Vec::new();
    let (attempt, log) = ardour(&home, work, "export", attempts, |attempt| {
        if attempt > 1 {
            let previous = std::fs::read_to_string(work.join(format!("export-{}.log", attempt - 1)))?;
            exported.extend(exported_by(
                &previous,
                &work.join(format!("export-{}/out", attempt - 1)),
            ));
        }
        let remaining: Vec<_> = all
            .iter()
            .map(|(take, _)| take.clone())
            .filter(|take| exported.iter().all(|(done, _)| done != take))
            .collect();
        let run = work.join(format!("export-{attempt}"));
        if run.exists() {
            std::fs::remove_dir_all(&run)?;
        }
        std::fs::create_dir_all(&run)?;
        let session = run.join(SESSION);
        let mut copy = Command::new("cp");
        copy.arg("-a").arg(&template).arg(&session);
        let status = copy.status()?;
        if !status.success() {
            bail!("copying the session failed: {status}");
        }
        let mut lua = Command::new(LUA);
        lua.arg(work.join("export.lua"))
            .env("GRANARY_DAW_SESSION_DIR", &session)
            .env("GRANARY_DAW_SESSION_NAME", SESSION)
            .env("GRANARY_DAW_RATE", RATE.to_string())
            .env("GRANARY_DAW_OUT", run.join("out"))
            .env("GRANARY_DAW_PRESET", PRESET_ID)
            .env("GRANARY_DAW_BEATS", BEATS.to_string())
            .env("GRANARY_DAW_TAKES", remaining.join(","));
        let mut markers: Vec<_> = remaining.iter().map(|take| format!("EXPORTED {take}")).collect();
        markers.push("CLOSED".to_string());
        Ok((lua, markers))
    })?;
    exported.extend(exported_by(&log, &work.join(format!("export-{attempt}/out"))));
    compare_exports(&log, &exported, granary, work)
}

/// The takes an export run's log says it exported, each with its file in `out`.
fn exported_by(log: &str, out: &Path) -> Vec<(String, std::path::PathBuf)> {
    log.lines()
        .filter_map(|l| l.strip_prefix("EXPORTED "))
        .map(|take| (take.to_string(), out.join(format!("{take}.wav"))))
        .collect()
}

/// Runs one Ardour step up to `attempts` times until it exits cleanly having printed every
/// marker; a crash (signal, abort, time-out) is reported and retried, a Lua error is not
/// (it would fail the same way again). Returns the successful attempt and its output.
fn ardour(
    home: &Path,
    work: &Path,
    step: &str,
    attempts: u32,
    mut setup: impl FnMut(u32) -> nice_plug_xtask::Result<(Command, Vec<String>)>,
) -> nice_plug_xtask::Result<(u32, String)> {
    for attempt in 1..=attempts {
        let (mut cmd, markers) = setup(attempt)?;
        ardour_env(&mut cmd, home);
        let log_path = work.join(format!("{step}-{attempt}.log"));
        let log = std::fs::File::create(&log_path)?;
        cmd.stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log);
        let started = Instant::now();
        eprintln!(
            "+ Ardour {step}, attempt {attempt} of {attempts} (log: {})",
            log_path.display()
        );
        let mut child = cmd.spawn().with_context(|| format!("starting {LUA}"))?;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if started.elapsed() > ARDOUR_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let output = std::fs::read_to_string(&log_path).unwrap_or_default();
        let missing: Vec<_> = markers
            .iter()
            .filter(|m| !output.lines().any(|l| l == m.as_str()))
            .collect();
        let took = started.elapsed().as_secs_f64();
        match status {
            Some(s) if s.success() && missing.is_empty() => {
                eprintln!("  Ardour {step} done in {took:.1} s");
                return Ok((attempt, output));
            }
            Some(s) if s.code().is_some() => {
                bail!(
                    "Ardour {step} failed ({s}) without crashing; its output:\n{}",
                    tail(&output, 30)
                );
            }
            _ => {
                let how = match status {
                    None => format!("hung for {} s and was stopped", ARDOUR_TIMEOUT.as_secs()),
                    Some(s) => describe_crash(s),
                };
                let stage = match markers.iter().find(|m| !output.lines().any(|l| l == m.as_str())) {
                    Some(next) => format!("before `{next}`"),
                    None => "after its last step, while exiting".to_string(),
                };
                eprintln!("  HOST CRASH: ardour7-lua {how} ({step}, {stage}, after {took:.1} s); retrying");
            }
        }
    }
    bail!("Ardour {step}: the host crashed in all {attempts} attempts (a host crash, not a Granary result)")
}

#[cfg(unix)]
fn describe_crash(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(11) => "crashed (SIGSEGV)".into(),
        Some(6) => "aborted (SIGABRT)".into(),
        Some(n) => format!("died of signal {n}"),
        None => format!("crashed ({status})"),
    }
}

#[cfg(not(unix))]
fn describe_crash(status: std::process::ExitStatus) -> String {
    format!("crashed ({status})")
}

/// Sets the modification time of `path` and everything under it.
fn backdate(path: &Path, time: std::time::SystemTime) -> nice_plug_xtask::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            backdate(&entry?.path(), time)?;
        }
    }
    std::fs::File::open(path)
        .and_then(|f| f.set_modified(time))
        .with_context(|| format!("setting the time of {}", path.display()))
}

/// The environment every Ardour tool gets: its libraries, and the harness's `HOME` (the
/// XDG variables unset so that Ardour's configuration and cache live under it).
fn ardour_env(cmd: &mut Command, home: &Path) {
    let libs = match std::env::var("LD_LIBRARY_PATH") {
        Ok(old) if !old.is_empty() => format!("{ARDOUR_LIB}:{old}"),
        _ => ARDOUR_LIB.to_string(),
    };
    cmd.env("HOME", home)
        .env("LD_LIBRARY_PATH", libs)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_DATA_HOME");
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<_> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A standard MIDI file (format 0, `PPQN` ticks per beat) with one note, times in beats.
fn midi_file((on, off, velocity): (u32, u32, u8)) -> Vec<u8> {
    fn delta(out: &mut Vec<u8>, mut ticks: u32) {
        let mut bytes = vec![(ticks & 0x7f) as u8];
        ticks >>= 7;
        while ticks > 0 {
            bytes.push((ticks & 0x7f) as u8 | 0x80);
            ticks >>= 7;
        }
        out.extend(bytes.iter().rev());
    }
    let beat = u32::from(PPQN);
    let mut track = Vec::new();
    delta(&mut track, on * beat);
    track.extend([0x90, 60, velocity]);
    delta(&mut track, (off - on) * beat);
    track.extend([0x80, 60, 0]);
    delta(&mut track, 0);
    track.extend([0xff, 0x2f, 0x00]);
    let mut file = Vec::new();
    file.extend(b"MThd");
    file.extend(6u32.to_be_bytes());
    file.extend(0u16.to_be_bytes());
    file.extend(1u16.to_be_bytes());
    file.extend(PPQN.to_be_bytes());
    file.extend(b"MTrk");
    file.extend((track.len() as u32).to_be_bytes());
    file.extend(track);
    file
}

/// The session file with a MIDI source (`midi`, in the session's midifiles folder) and a
/// region of `beats` beats at the timeline's origin on the one MIDI playlist. The new ids
/// are taken from the session's id counter, which is moved past them.
fn with_region(xml: &str, midi: &str, beats: u32) -> nice_plug_xtask::Result<String> {
    let counter_key = "id-counter=\"";
    let at = xml.find(counter_key).context("no id-counter in the session file")? + counter_key.len();
    let len = xml[at..].find('"').context("bad id-counter")?;
    let counter: u64 = xml[at..at + len].parse().context("bad id-counter")?;
    let (source, region) = (counter + 1, counter + 2);
    let mut xml = format!("{}{}{}", &xml[..at], counter + 3, &xml[at + len..]);

    let sources = format!(
        "<Sources>\n    <Source name=\"{midi}\" type=\"midi\" flags=\"\" id=\"{source}\" \
         captured-for=\"\" origin=\"\"/>\n  </Sources>"
    );
    if xml.matches("<Sources/>").count() != 1 {
        bail!("the new session file should have one empty <Sources/>");
    }
    xml = xml.replacen("<Sources/>", &sources, 1);

    let ticks = beats * u32::from(PPQN);
    let mut region_xml = String::new();
    write!(
        region_xml,
        "<Region name=\"pour\" muted=\"0\" opaque=\"1\" locked=\"0\" video-locked=\"0\" \
         automatic=\"0\" whole-file=\"0\" import=\"0\" external=\"0\" sync-marked=\"0\" \
         left-of-split=\"0\" right-of-split=\"0\" hidden=\"0\" position-locked=\"0\" \
         valid-transients=\"0\" start=\"b0\" length=\"b{ticks}@b0\" sync-position=\"b0\" \
         ancestral-start=\"b0\" ancestral-length=\"b0@b0\" stretch=\"1\" shift=\"1\" \
         layering-index=\"0\" tags=\"\" contents=\"0\" id=\"{region}\" type=\"midi\" \
         first-edit=\"nothing\" source-0=\"{source}\" master-source-0=\"{source}\"/>"
    )?;
    let playlists: Vec<_> = xml.match_indices("<Playlist ").map(|(i, _)| i).collect();
    let midi_playlists: Vec<_> = playlists
        .iter()
        .filter_map(|&i| {
            let end = i + xml[i..].find('>')?;
            let tag = &xml[i..=end];
            (tag.contains("type=\"midi\"") && tag.ends_with("/>")).then_some(end)
        })
        .collect();
    let [end] = midi_playlists[..] else {
        bail!(
            "the new session file should have one empty MIDI playlist, found {}",
            midi_playlists.len()
        );
    };
    // `<Playlist .../>` becomes `<Playlist ...>REGION</Playlist>`
    Ok(format!(
        "{}>\n      {region_xml}\n    </Playlist>{}",
        &xml[..end - 1],
        &xml[end + 1..]
    ))
}

/// The lines `KEY a b …` the export script printed, as numbers.
fn printed(log: &str, key: &str) -> Vec<Vec<i64>> {
    log.lines()
        .filter_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .map(|rest| rest.split_whitespace().filter_map(|v| v.parse().ok()).collect())
        .collect()
}

/// Renders the same notes with `granary render` and compares every export with it.
/// `exported` holds each take's file.
fn compare_exports(
    log: &str,
    exported: &[(String, std::path::PathBuf)],
    granary: &Path,
    work: &Path,
) -> nice_plug_xtask::Result<()> {
    let notes = printed(log, "NOTE");
    let range = printed(log, "RANGE");
    let latency = printed(log, "LATENCY");
    let (start, end) = match &range[..] {
        [r] if r.len() == 2 => (r[0], r[1]),
        _ => bail!("the export script printed no export range"),
    };
    if notes.is_empty() || notes.iter().any(|n| n.len() != 3) {
        bail!("the export script printed no notes");
    }
    let rate = f64::from(RATE);
    println!(
        "Ardour: session at {RATE} Hz, plugin latency {} samples (compensated by Ardour), export range {start}..{end}",
        latency.first().and_then(|l| l.first()).copied().unwrap_or(-1)
    );

    // The render's sample 0 is the timeline's origin; the export starts at `start`.
    let reference = work.join("granary-render.wav");
    let mut render = Command::new(granary);
    render
        .args(["render", "--preset", PRESET_NAME, "--sample-rate", &RATE.to_string()])
        .args(["--seconds", &(end as f64 / rate).to_string()])
        .arg("--output")
        .arg(&reference);
    for n in &notes {
        let (on, off, vel) = (n[0] as f64 / rate, n[1] as f64 / rate, n[2]);
        println!("note: samples {}..{} ({on} s to {off} s), velocity {vel}", n[0], n[1]);
        render.args(["--note", &format!("{on}:{off}:{vel}")]);
    }
    render.stdout(Stdio::null());
    super::run(render)?;
    let (cli, cli_channels) = read_wav(&reference)?;
    let offset = usize::try_from(start)?;
    let frames = usize::try_from(end - start)?;

    let mut failures = Vec::new();
    for (take, what) in takes() {
        let file = exported
            .iter()
            .find(|(done, _)| *done == take)
            .map(|(_, file)| file)
            .with_context(|| format!("Ardour did not export {take}"))?;
        let (host, channels) = read_wav(file)?;
        if channels != cli_channels || host.len() != frames * channels {
            bail!(
                "{take}.wav: {} frames of {channels} channels, expected {frames} of {cli_channels}",
                host.len() / channels.max(1)
            );
        }
        let reference = &cli[offset * channels..(offset + frames) * channels];
        let c = Comparison::new(&host, reference, channels);
        println!("\n{what} ({take}.wav) vs granary render:");
        c.print(channels, rate);
        if !c.passes() {
            failures.push(take);
        }
    }
    if failures.is_empty() {
        println!(
            "\nDAW test passed: all {} Ardour exports equal `granary render` sample for sample.",
            takes().len()
        );
        Ok(())
    } else {
        bail!(
            "Ardour's export differs from `granary render` ({}); see the figures above",
            failures.join(", ")
        )
    }
}

fn read_wav(path: &Path) -> nice_plug_xtask::Result<(Vec<f32>, usize)> {
    let mut reader = hound::WavReader::open(path).with_context(|| format!("reading {}", path.display()))?;
    let spec = reader.spec();
    if spec.sample_format != hound::SampleFormat::Float || spec.bits_per_sample != 32 || spec.sample_rate != RATE {
        bail!("{}: expected 32-bit float at {RATE} Hz, got {spec:?}", path.display());
    }
    let samples = reader.samples::<f32>().collect::<Result<Vec<_>, _>>()?;
    Ok((samples, usize::from(spec.channels)))
}

/// Sample-for-sample figures of `host` against `reference` (interleaved, same length).
struct Comparison {
    max_diff: f64,
    max_at: usize,
    correlation: f64,
    /// Frame, channel, host sample, reference sample.
    first_diff: Option<(usize, usize, f32, f32)>,
    host_onset: Option<usize>,
    reference_onset: Option<usize>,
    reference_rms: f64,
    /// The largest difference with the host moved by one sample: a pass means something
    /// only if this is large.
    one_off: f64,
    /// A diagnostic, never part of the verdict: when the first sounds are at different
    /// frames, the largest difference and the correlation with the host moved by that many
    /// frames (the same pour, shifted, or another pour).
    at_onset: Option<(isize, f64, f64)>,
}

/// The largest absolute difference, its frame, and the correlation.
fn figures(host: &[f32], reference: &[f32], channels: usize) -> (f64, usize, f64) {
    let (mut max_diff, mut max_at) = (0.0, 0);
    for (i, (&h, &r)) in host.iter().zip(reference).enumerate() {
        let d = (f64::from(h) - f64::from(r)).abs();
        if d > max_diff {
            (max_diff, max_at) = (d, i / channels);
        }
    }
    let n = host.len().min(reference.len()) as f64;
    let mean = |x: &[f32]| x.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let (mh, mr) = (mean(host), mean(reference));
    let (mut shr, mut shh, mut srr) = (0.0, 0.0, 0.0);
    for (&h, &r) in host.iter().zip(reference) {
        let (h, r) = (f64::from(h) - mh, f64::from(r) - mr);
        shr += h * r;
        shh += h * h;
        srr += r * r;
    }
    (max_diff, max_at, shr / (shh * srr).sqrt())
}

impl Comparison {
    fn new(host: &[f32], reference: &[f32], channels: usize) -> Self {
        assert_eq!(host.len(), reference.len());
        let (max_diff, max_at, correlation) = figures(host, reference, channels);
        let first_diff = host
            .iter()
            .zip(reference)
            .position(|(h, r)| h.to_bits() != r.to_bits())
            .map(|i| (i / channels, i % channels, host[i], reference[i]));
        let onset = |x: &[f32]| x.iter().position(|&v| v != 0.0).map(|i| i / channels);
        let (host_onset, reference_onset) = (onset(host), onset(reference));
        let (one_off, _, _) = figures(&host[channels..], reference, channels);
        let at_onset = match (host_onset, reference_onset) {
            (Some(h), Some(r)) if h != r => {
                let (early, late) = if h < r { (host, reference) } else { (reference, host) };
                let shift = h.abs_diff(r) * channels;
                let (d, _, c) = figures(&early[..early.len() - shift], &late[shift..], channels);
                Some((h as isize - r as isize, d, c))
            }
            _ => None,
        };
        let reference_rms =
            (reference.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / reference.len() as f64).sqrt();
        Self {
            max_diff,
            max_at,
            correlation,
            first_diff,
            host_onset,
            reference_onset,
            reference_rms,
            one_off,
            at_onset,
        }
    }

    /// Identical samples, of a pour that is not silent, in a comparison that depends on
    /// the alignment.
    fn passes(&self) -> bool {
        self.first_diff.is_none() && self.reference_rms > 1e-3 && self.one_off > 1e-2
    }

    fn print(&self, channels: usize, rate: f64) {
        let at = |f: usize| format!("frame {f} ({:.6} s)", f as f64 / rate);
        println!("  max |difference| {:.3e} at {}", self.max_diff, at(self.max_at));
        println!("  correlation      {:.6}", self.correlation);
        match self.first_diff {
            Some((f, c, h, r)) => println!(
                "  first difference {}, channel {c} of {channels}: Ardour {h:e}, granary render {r:e}",
                at(f)
            ),
            None => println!("  first difference none: identical samples"),
        }
        let onset = |o: Option<usize>| o.map_or("silent".to_string(), at);
        println!(
            "  first sound      Ardour {}, granary render {}",
            onset(self.host_onset),
            onset(self.reference_onset)
        );
        if let Some((shift, d, c)) = self.at_onset {
            let (n, dir) = (shift.unsigned_abs(), if shift < 0 { "early" } else { "late" });
            println!(
                "  Ardour's sound starts {n} samples {dir}; moved back by {n} (diagnostic only): \
                 max |difference| {d:.3e}, correlation {c:.6}"
            );
        }
        println!(
            "  granary render RMS {:.3e}; moved by one sample the two would differ by up to {:.3e}",
            self.reference_rms, self.one_off
        );
        if self.reference_rms <= 1e-3 {
            println!("  FAIL: the reference is (nearly) silent, the comparison would prove nothing");
        } else if self.one_off <= 1e-2 {
            println!("  FAIL: the comparison does not depend on the alignment");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_midi_file_holds_one_note_at_its_beats() {
        let f = midi_file((1, 6, 100));
        assert_eq!(&f[..4], b"MThd");
        assert_eq!(u16::from_be_bytes([f[12], f[13]]), PPQN);
        // 1920 ticks = 0x0f00 = varlen 8f 00; 5 beats = 9600 = 0x2580 = varlen cb 00
        assert_eq!(
            &f[22..],
            &[0x8f, 0x00, 0x90, 60, 100, 0xcb, 0x00, 0x80, 60, 0, 0x00, 0xff, 0x2f, 0x00]
        );
    }

    #[test]
    fn the_region_goes_into_the_midi_playlist_with_fresh_ids() {
        let xml = "<Session id-counter=\"245\">\n  <Sources/>\n  <Playlists>\n    \
                   <Playlist id=\"1\" name=\"A\" type=\"audio\" frozen=\"0\"/>\n    \
                   <Playlist id=\"199\" name=\"Pour\" type=\"midi\" combine-ops=\"0\"/>\n  </Playlists>\n</Session>";
        let out = with_region(xml, "pour.mid", 8).unwrap();
        assert!(out.contains("id-counter=\"248\""), "{out}");
        assert!(
            out.contains("<Source name=\"pour.mid\" type=\"midi\" flags=\"\" id=\"246\""),
            "{out}"
        );
        assert!(
            out.contains("<Playlist id=\"1\" name=\"A\" type=\"audio\" frozen=\"0\"/>"),
            "{out}"
        );
        assert!(out.contains(
            "<Playlist id=\"199\" name=\"Pour\" type=\"midi\" combine-ops=\"0\">\n      <Region name=\"pour\""
        ));
        assert!(
            out.contains("length=\"b15360@b0\" ") && out.contains("id=\"247\" type=\"midi\""),
            "{out}"
        );
        assert!(
            out.contains("source-0=\"246\" master-source-0=\"246\"/>\n    </Playlist>\n  </Playlists>"),
            "{out}"
        );
        assert!(with_region(&xml.replace("<Sources/>", ""), "pour.mid", 8).is_err());
        assert!(with_region(&xml.replace("type=\"midi\"", "type=\"audio\""), "pour.mid", 8).is_err());
    }

    #[test]
    fn the_comparison_finds_the_first_difference_and_the_onsets() {
        let reference: Vec<f32> = (0..200)
            .map(|i| if i < 20 { 0.0 } else { ((i * 7) % 13) as f32 - 6.0 })
            .collect();
        let same = Comparison::new(&reference, &reference, 2);
        assert_eq!((same.max_diff, same.first_diff, same.at_onset), (0.0, None, None));
        assert!((same.correlation - 1.0).abs() < 1e-12 && same.one_off > 1.0 && same.passes());
        assert_eq!((same.host_onset, same.reference_onset), (Some(10), Some(10)));
        let mut early = reference.clone();
        early.rotate_left(4); // two frames early
        let c = Comparison::new(&early, &reference, 2);
        assert_eq!(c.host_onset, Some(8));
        assert_eq!(c.first_diff.map(|d| (d.0, d.1)), Some((8, 0)));
        assert!(c.max_diff > 0.0 && c.correlation < 0.9 && !c.passes());
        // the diagnostic moves it back: the same samples where both exist
        let (shift, d, corr) = c.at_onset.unwrap();
        assert_eq!(shift, -2);
        assert_eq!(d, 0.0, "{corr}");
        let silent = vec![0.0; 200];
        assert!(!Comparison::new(&silent, &silent, 2).passes());
    }
}
