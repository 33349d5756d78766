//! `granary bench` behaves (figures for every case, JSON fields, errors) and the engine does
//! not slow down in a decaying tail (no subnormal numbers reach the output). Speed itself is
//! measured by the benchmark, never asserted here.

use granary_cli::bench;
use granary_engine::base::materials::CupMaterial;
use granary_engine::{Engine, Outputs, Settings, TriggerMode};
use std::process::Command;

fn granary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_granary"))
}

#[test]
fn bench_json_has_every_figure_for_one_case() {
    let out = granary()
        .args([
            "bench",
            "--json",
            "--case",
            "rate:10k",
            "--case",
            "modes:5",
            "--seconds",
            "0.2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = v.as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for c in cases {
        for field in [
            "case",
            "sample_rate",
            "collisions_per_s",
            "realtime_factor",
            "worst_block_fraction",
            "peak_rss_bytes",
            "cpu_s_per_audio_s",
        ] {
            assert!(c.get(field).is_some(), "{field} missing in {c}");
        }
        assert!(c["realtime_factor"].as_f64().unwrap() > 0.0);
        assert_eq!(c["sample_rate"].as_f64().unwrap(), 48_000.0);
    }
    assert_eq!(cases[0]["case"], "rate:10k");
    // the rate sweep is calibrated to its target collision rate
    let rate = cases[0]["collisions_per_s"].as_f64().unwrap();
    assert!((5e3..2e4).contains(&rate), "rate:10k rendered {rate} collisions/s");
    assert_eq!(cases[1]["modes"].as_u64().unwrap(), 5);
    #[cfg(target_os = "linux")]
    assert!(cases[0]["peak_rss_bytes"].as_u64().unwrap() > 1_000_000);
}

#[test]
fn bench_lists_its_cases_and_refuses_unknown_ones() {
    let out = granary().args(["bench", "--list"]).output().unwrap();
    assert!(out.status.success());
    let list = String::from_utf8(out.stdout).unwrap();
    assert_eq!(list.lines().count(), bench::cases().len());
    assert!(list.lines().any(|l| l == "rate:1M"));
    let bad = granary().args(["bench", "--case", "nope"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no bench case `nope`"));
    let bad = granary().args(["bench", "--seconds", "0"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Renders `seconds` in 512-sample blocks, handing every output channel of every block to `check`.
fn render(engine: &mut Engine, seconds: f32, check: &mut dyn FnMut(&[f32])) {
    let mut bufs: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 512]);
    for _ in 0..(seconds * 48_000.0 / 512.0) as usize {
        let [a, b, c, d, e, f] = &mut bufs;
        engine.process(Outputs {
            main: [a, b],
            grains: [c, d],
            cup: [e, f],
            surface: None,
            friction: None,
        });
        for x in bufs.iter() {
            check(x);
        }
    }
}

#[test]
fn a_ringing_tail_decays_into_exact_silence_without_subnormals() {
    // a steel cup rings longest; after the pour stops its tail decays for a minute
    let settings = Settings {
        cup_material: CupMaterial::Steel,
        trigger_mode: TriggerMode::Midi,
        ..Settings::default()
    };
    let mut engine = Engine::new(settings, 48_000.0, 512);
    engine.note_on(1.0, 60);
    let mut peak = 0.0f32;
    render(&mut engine, 1.0, &mut |x| {
        peak = x.iter().fold(peak, |m, v| m.max(v.abs()))
    });
    assert!(peak > 1e-3, "the pour is audible: {peak}");
    engine.note_off();
    let mut subnormal = 0usize;
    let mut last_nonzero = 0usize;
    let mut n = 0usize;
    render(&mut engine, 60.0, &mut |x| {
        n += 1;
        subnormal += x.iter().filter(|v| v.is_subnormal()).count();
        if x.iter().any(|v| *v != 0.0) {
            last_nonzero = n;
        }
    });
    assert_eq!(subnormal, 0, "subnormal samples in the tail");
    // 60 s later the tail is exact silence: the cup's state was flushed, not left denormal
    assert!(
        last_nonzero < n - 6 * 100,
        "still not silent after {} of {n} blocks",
        last_nonzero
    );
}

#[test]
fn a_windows_collisions_are_spread_over_small_blocks() {
    // The generator works per window of 128 samples. Its collisions are written into the
    // rings a share per block, so a 16-sample block never carries a whole window's work
    // (the cost per block does not depend on the host's block size).
    let settings = granary_engine::control::preset::find(granary_engine::control::preset::DEFAULT_PRESET)
        .unwrap()
        .values
        .to_settings();
    let mut e = Engine::new(settings, 48_000.0, 16);
    e.note_on(1.0, 60);
    let mut bufs: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 16]);
    let window = e.window_len() as u64;
    let (mut most, mut windows_seen, mut busiest_window) = (0u64, 0u64, 0u64);
    for block in 0..(48_000 / 16) {
        let before = e.stats();
        let [a, b, c, d, f, g] = &mut bufs;
        e.process(Outputs {
            main: [a, b],
            grains: [c, d],
            cup: [f, g],
            surface: None,
            friction: None,
        });
        let after = e.stats();
        most = most.max(after.written - before.written);
        if block % (window / 16) as usize == 0 {
            windows_seen += 1;
            busiest_window = busiest_window.max(after.rendered - before.rendered);
        }
    }
    assert!(
        windows_seen > 300 && busiest_window > 100,
        "a dense pour: {busiest_window}"
    );
    // eight blocks per window: each writes about an eighth of a window's collisions
    assert!(
        most * 4 < busiest_window,
        "one 16-sample block wrote {most} collisions of a window of {busiest_window}"
    );
    let s = e.stats();
    assert!(
        s.rendered - s.written <= busiest_window,
        "written trails rendered by one window"
    );
}
