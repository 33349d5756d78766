//! The built `granary.clap` bundle in a CLAP host (clack-host), loaded through its entry
//! point as a DAW loads it. The bundle test is `#[ignore]`d in a plain `cargo test`;
//! `cargo xtask test` builds the bundle, sets `GRANARY_CLAP_BUNDLE` and runs it with
//! `--ignored` (without the variable it fails). The sample-rate test uses the bundle when
//! the variable is set and the entry linked into this binary otherwise.
//!
//! For each of 22.05, 44.1, 48, 96 and 192 kHz, one instance is activated, processed with
//! blocks of 1, 17, 64, 512 and 4096 frames and of random sizes, with note on/off on every
//! channel, MIDI CCs and parameter changes (extreme, out-of-range, NaN and infinite values
//! included; about 60 events a second of audio, in bursts at one frame), with all output ports or only the main one; its state is saved and restored
//! (into itself and into a new instance: every parameter value exactly equal), it is reset
//! and deactivated. Every output sample must be finite and the main output within the
//! limiter's ceiling.

use crate::support;
use crate::support::{bundle_from_env, first_non_finite, peak, rms, Ev, Host, Ports};
use granary_engine::LIMITER_CEILING;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const RATES: [f64; 5] = [22_050.0, 44_100.0, 48_000.0, 96_000.0, 192_000.0];
const BLOCKS: [usize; 5] = [1, 17, 64, 512, 4096];
/// Audio rendered per block size and rate, s.
const SEGMENT_S: f64 = 0.3;
const MAX_FRAMES: u32 = 4096;

/// A parameter value a host might send: in range, at the ends, or nonsense.
fn wild_value(rng: &mut Xoshiro256PlusPlus, min: f64, max: f64) -> f64 {
    match rng.random_range(0..10) {
        0 => min,
        1 => max,
        2 => f64::NAN,
        3 => [f64::INFINITY, f64::NEG_INFINITY][rng.random_range(0..2)],
        4 => max + (max - min) * rng.random_range(0.01..1e6),
        5 => min - (max - min) * rng.random_range(0.01..1e6),
        _ => rng.random_range(min..=max),
    }
}

/// Bursts of events a second of audio, each of 1 to 5 events at one instant: about 60 events
/// a second (the rate is per second of audio, not per block, so that 1-frame blocks at 192 kHz
/// do not send tens of thousands of parameter changes, each rebuilding the cup's modes, while
/// 4096-frame blocks still carry several events, bursts of them at one frame among them).
const BURSTS_PER_S: f64 = 20.0;

/// The random events of one burst at frame `t` of its block.
fn burst(rng: &mut Xoshiro256PlusPlus, host: &Host, t: u32) -> Vec<(u32, Ev)> {
    let mut events = Vec::new();
    let count = rng.random_range(1..6);
    for _ in 0..count {
        let key = rng.random_range(0..128u16);
        let channel = rng.random_range(0..16u16);
        let ev = match rng.random_range(0..10) {
            0..=2 => Ev::NoteOn {
                key,
                channel,
                velocity: [0.0, 1.0, rng.random_range(0.0..=1.0), 7.0, -1.0, f64::NAN][rng.random_range(0..6)],
            },
            3..=4 => Ev::NoteOff { key, channel },
            5 => Ev::Midi([
                0xB0 | channel as u8,
                [1, 7, 64, 120, 123][rng.random_range(0..5)],
                rng.random_range(0..128),
            ]),
            6 => Ev::Midi([0xD0 | channel as u8, rng.random_range(0..128), 0]),
            _ => {
                // leave out the seed: a new seed restarts the random streams, which is fine
                // but would make every later block unrelated to the earlier ones
                let index = rng.random_range(0..host.params.len());
                let p = &host.params[index];
                Ev::Param {
                    index,
                    value: wild_value(rng, p.min, p.max),
                }
            }
        };
        events.push((t, ev));
    }
    events
}

fn check_block(out: &[Vec<f32>], what: &str) {
    if let Some((ch, i, x)) = first_non_finite(out) {
        panic!("{what}: channel {ch}, frame {i}: non-finite sample {x}");
    }
    let main_peak = peak(&out[..2]);
    assert!(
        main_peak <= LIMITER_CEILING,
        "{what}: main output peak {main_peak} above the limiter ceiling {LIMITER_CEILING}"
    );
}

/// Plays `seconds` of audio in blocks from `sizes`, with random events and port layouts.
/// Returns the main output's RMS.
fn play(
    host: &mut Host,
    rng: &mut Xoshiro256PlusPlus,
    sizes: &mut dyn FnMut(&mut Xoshiro256PlusPlus) -> usize,
    seconds: f64,
    what: &str,
) -> f64 {
    let total = (seconds * host.sample_rate) as usize;
    let mut done = 0;
    let mut energy = 0.0;
    // a held note so that there is sound to check, whatever the random events do
    let held = [(
        0,
        Ev::NoteOn {
            key: 60,
            channel: 0,
            velocity: 1.0,
        },
    )];
    let mut first = true;
    // the frame of the next burst of events: exponential intervals (a Poisson process)
    let rate = host.sample_rate;
    let interval = |rng: &mut Xoshiro256PlusPlus| -(1.0 - rng.random::<f64>()).ln() / BURSTS_PER_S * rate;
    let mut next_burst = interval(rng);
    while done < total {
        let n = sizes(rng).min(total - done).min(host.max_frames as usize);
        let mut events = Vec::new();
        while n > 0 && next_burst < (done + n) as f64 {
            let t = (next_burst as usize).saturating_sub(done).min(n - 1) as u32;
            events.extend(burst(rng, host, t));
            next_burst += interval(rng);
        }
        if first {
            events.extend_from_slice(&held);
            first = false;
        }
        let ports = if rng.random_bool(0.1) {
            Ports::MainOnly
        } else {
            Ports::All
        };
        let out = host.process(n, &events, ports);
        check_block(&out, &format!("{what}, {n}-frame block at frame {done}, {ports:?}"));
        energy += rms(&out[..2]).powi(2) * n as f64;
        done += n;
    }
    (energy / total.max(1) as f64).sqrt()
}

/// Sets every parameter to a random in-range value (through `params.flush`).
fn randomise(host: &mut Host, rng: &mut Xoshiro256PlusPlus) {
    let changes: Vec<(usize, f64)> = host
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = rng.random_range(p.min..=p.max);
            (i, if p.stepped { v.round() } else { v })
        })
        .collect();
    host.flush(&changes);
}

/// The parameters a state holds (plain values as nice-plug saves them).
fn state_params(bytes: &[u8]) -> serde_json::Value {
    support::state_json(bytes)["params"].clone()
}

fn save_and_restore(host: &mut Host, entry_again: impl FnOnce() -> Host, rng: &mut Xoshiro256PlusPlus, what: &str) {
    let before = host.values();
    let saved = host.save_state();
    randomise(host, rng);
    assert_ne!(host.values(), before, "{what}: randomising must change something");
    host.load_state(&saved).expect("loading our own state");
    assert_eq!(
        host.values(),
        before,
        "{what}: restored values differ from the saved ones"
    );
    assert_eq!(
        state_params(&host.save_state()),
        state_params(&saved),
        "{what}: state round trip"
    );
    // the same state in a new instance (as when a project is opened)
    let mut other = entry_again();
    other.load_state(&saved).expect("loading the state into a new instance");
    assert_eq!(
        other.values(),
        before,
        "{what}: values restored into a new instance differ"
    );

    // broken states: refused, and nothing changes
    let mut json = support::state_json(&saved);
    for cut in [0, 3, 8, saved.len() / 2, saved.len() - 1] {
        assert!(
            host.load_state(&saved[..cut]).is_err(),
            "{what}: a state cut at {cut} bytes loaded"
        );
        assert_eq!(
            host.values(),
            before,
            "{what}: a state cut at {cut} bytes changed values"
        );
    }
    let mut garbage = saved.clone();
    for b in garbage[8..].iter_mut().step_by(7) {
        *b = b'#';
    }
    assert!(host.load_state(&garbage).is_err(), "{what}: garbage loaded");
    assert_eq!(host.values(), before);
    // well-formed states (nice-plug's tagged values) with values no parameter can hold: the
    // plugin refuses them whole (Granary's `filter_state`), the other values stay as they are
    randomise(host, rng);
    let changed = host.values();
    for (id, bad) in [
        ("pour_rate", serde_json::json!({"f32": 1e9})),
        ("grain_material", serde_json::json!({"i32": 99})),
        ("fill", serde_json::json!({"f32": -3.0})),
        ("auto_fill", serde_json::json!({"f32": 1.0})),
        ("cup_material", serde_json::json!({"string": "gold"})),
        ("nope", serde_json::json!({"f32": 1.0})),
    ] {
        let mut j = json.clone();
        j["params"][id] = bad.clone();
        // the pour rate is valid here: were the state applied in part, it would change
        j["params"]["pour_rate"] = serde_json::json!({"f32": 33.0});
        if id == "pour_rate" {
            j["params"]["pour_rate"] = bad.clone();
            j["params"]["fill"] = serde_json::json!({"f32": 0.5});
        }
        let _ = host.load_state(&support::state_bytes(&j));
        assert_eq!(
            host.values(),
            changed,
            "{what}: a state with {id} = {bad} changed the parameters"
        );
    }
    json["params"]["pour_rate"] = serde_json::json!({"f32": 33.0});
    host.load_state(&support::state_bytes(&json))
        .expect("an edited but valid state");
    let pour = host.param("pour_rate");
    assert_ne!(
        host.values()[pour],
        changed[pour],
        "{what}: the edited state was not applied"
    );
}

#[test]
#[ignore = "loads the built granary.clap: cargo xtask test runs it with GRANARY_CLAP_BUNDLE set"]
fn bundle_at_every_rate_and_block_size() {
    let entry = bundle_from_env();
    let path = std::env::var_os(support::BUNDLE_ENV).unwrap();
    let started = std::time::Instant::now();
    let mut host = Host::new(entry);
    assert_eq!(
        host.params.len(),
        granary_engine::control::params::SPECS.len(),
        "every parameter is exposed"
    );
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5EED);
    for &rate in &RATES {
        host.activate(rate, MAX_FRAMES);
        // each rate starts from the defaults (as a new project does), so that the held note
        // sounds before the random events take the parameters where they will; with a few
        // dozen events a segment, the last rate's wild values would otherwise silence the next
        // rate throughout
        let defaults: Vec<(usize, f64)> = host.params.iter().map(|p| p.default).enumerate().collect();
        host.flush(&defaults);
        let mut levels = Vec::new();
        for &block in &BLOCKS {
            let what = format!("{rate} Hz, {block}-frame blocks");
            levels.push(play(&mut host, &mut rng, &mut |_| block, SEGMENT_S, &what));
        }
        let what = format!("{rate} Hz, random blocks");
        levels.push(play(
            &mut host,
            &mut rng,
            &mut |r| r.random_range(0..=MAX_FRAMES as usize),
            SEGMENT_S,
            &what,
        ));
        assert!(
            levels.iter().any(|&l| l > 1e-4),
            "{rate} Hz: silent throughout (RMS per segment {levels:?})"
        );
        save_and_restore(
            &mut host,
            || Host::new(support::load_bundle(std::path::Path::new(&path))),
            &mut rng,
            &format!("{rate} Hz"),
        );
        host.reset();
        play(
            &mut host,
            &mut rng,
            &mut |r| r.random_range(1..=512),
            0.1,
            &format!("{rate} Hz after reset"),
        );
        host.deactivate();
        eprintln!("{rate} Hz: RMS per block size {levels:.4?}");
    }
    // states can be saved and loaded while inactive too
    let mut rng2 = Xoshiro256PlusPlus::seed_from_u64(2);
    save_and_restore(
        &mut host,
        || Host::new(support::load_bundle(std::path::Path::new(&path))),
        &mut rng2,
        "inactive",
    );
    eprintln!("bundle test: {:.1} s", started.elapsed().as_secs_f64());
}

/// Renders a note at `rate` in 256-frame blocks with all ports.
fn note(host: &mut Host, rate: f64) -> Vec<Vec<f32>> {
    let frames = (0.4 * rate) as usize;
    let mut out = vec![Vec::new(); 2 * (1 + granary::STEMS)];
    let mut pos = 0;
    while pos < frames {
        let n = 256.min(frames - pos);
        let mut events = Vec::new();
        if pos == 0 {
            events.push((
                5,
                Ev::NoteOn {
                    key: 64,
                    channel: 0,
                    velocity: 0.9,
                },
            ));
        }
        let block = host.process(n, &events, Ports::All);
        for (o, b) in out.iter_mut().zip(block) {
            o.extend(b);
        }
        pos += n;
    }
    out
}

/// Re-activating one instance at a new rate rebuilds everything that depends on the rate:
/// its output equals a new instance's at that rate, sample for sample, and the latency it
/// reports follows the rate (2.5 ms look-ahead).
#[test]
fn reactivation_at_a_new_rate_rebuilds_the_engine() {
    let from_bundle = std::env::var_os(support::BUNDLE_ENV).filter(|p| !p.is_empty());
    let entry = || match &from_bundle {
        Some(p) => support::load_bundle(std::path::Path::new(p)),
        None => support::load_linked(),
    };
    eprintln!(
        "plugin from {}",
        from_bundle
            .as_ref()
            .map_or("the entry linked into this test".into(), |p| p
                .to_string_lossy()
                .into_owned())
    );
    let mut reused = Host::new(entry());
    for rate in [48_000.0, 96_000.0, 22_050.0, 48_000.0] {
        reused.activate(rate, 1024);
        let latency = reused.latency();
        // the limiter's look-ahead and its true-peak interpolator's delay (6 samples at 4×
        // oversampling, below 96 kHz; 12 at 2×)
        let interpolator = if rate < 96_000.0 { 6 } else { 12 };
        assert_eq!(
            latency,
            (0.0025 * rate).round() as u32 + interpolator,
            "latency at {rate} Hz"
        );
        let a = note(&mut reused, rate);
        reused.deactivate();
        let mut fresh = Host::new(entry());
        fresh.activate(rate, 1024);
        let b = note(&mut fresh, rate);
        fresh.deactivate();
        assert!(rms(&a[..2]) > 1e-4, "{rate} Hz: the note must sound");
        for (ch, (x, y)) in a.iter().zip(&b).enumerate() {
            if let Some(i) = (0..x.len()).find(|&i| x[i].to_bits() != y[i].to_bits()) {
                panic!(
                    "{rate} Hz, channel {ch}: re-activated instance differs from a new one at frame {i}: {} vs {}",
                    x[i], y[i]
                );
            }
        }
    }
}
