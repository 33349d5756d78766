//! Fuzzing: thousands of random scenes through the engine, and a share of them through the
//! plugin's real CLAP entry (clack-host, in process).
//!
//! Each scene draws its settings, sample rate, block sizes (zero-length and very long ones
//! included), automation (jumps at every sample for stretches, NaN, infinities and
//! out-of-range values) and MIDI (overlapping notes, note-off without note-on, velocity 0,
//! all 16 channels, CCs, pressure) from a seeded generator. Every output sample must be
//! finite, the main output within the limiter's ceiling and the stems within a physical
//! bound; nothing may panic or allocate inside `process`; the work per block is bounded (no
//! window renders more than `CELLS × MAX_RENDERED_PER_CELL` collisions, and no block takes
//! absurdly long).
//!
//! Reproduce or extend: `GRANARY_FUZZ_SEED=N` (default 1) and `GRANARY_FUZZ_SCENES=N`
//! (engine scenes, default 1000; the plugin gets one scene per 4). A failing scene prints
//! its seed.

use crate::support;
use crate::support::{first_non_finite, peak, thread_cpu_time, Ev, Host, Ports};
use granary_engine::base::materials::{CupMaterial, GrainMaterial, SurfaceMaterial};
use granary_engine::base::window::{CELLS, WINDOW};
use granary_engine::control::choices::CupShape;
use granary_engine::control::choices::Gesture;
use granary_engine::control::choices::Shape;
use granary_engine::generator::MAX_RENDERED_PER_CELL;
use granary_engine::{Engine, Outputs, PourTarget, Quality, Settings, Statistics, TriggerMode, LIMITER_CEILING};
use nice_assert_no_alloc::assert_no_alloc;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::{Duration, Instant};

/// Largest stem sample allowed. The stems are not limited: their level is the physical
/// pressure (well under 1 kPa for any grain here at >= 10 cm) times at most +104 dB of
/// gains (grains/cup level +24 dB, output gain +80 dB), about 1.6e5 per pascal.
const STEM_BOUND: f32 = 1e8;
/// No block may take more of its thread's CPU time than this plus `SLOW_PER_SAMPLE` per sample
/// (a debug build; a runaway loop takes far longer). CPU time, not wall time: the suite runs
/// test binaries side by side, and a block that waits for a core is not a slow block.
const SLOW_BLOCK: Duration = Duration::from_millis(500);
const SLOW_PER_SAMPLE: Duration = Duration::from_micros(200);
const MAX_BLOCK: usize = 16_384;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number")),
        Err(_) => default,
    }
}

/// Prints the scene's seed if it panics.
struct Scene(&'static str, u64);
impl Drop for Scene {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "{} failed in the scene with seed {}: reproduce with GRANARY_FUZZ_SEED={} GRANARY_FUZZ_SCENES=1",
                self.0, self.1, self.1
            );
        }
    }
}

/// Mostly within `lo..=hi`, sometimes at or beyond its ends, sometimes not a number.
fn wild(rng: &mut Xoshiro256PlusPlus, lo: f32, hi: f32) -> f32 {
    match rng.random_range(0..16) {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        3 => lo,
        4 => hi,
        5 => hi + (hi - lo) * rng.random_range(0.0..1e3),
        6 => lo - (hi - lo) * rng.random_range(0.0..1e3),
        7 => f32::MAX * [1.0, -1.0][rng.random_range(0..2)],
        8 => f32::MIN_POSITIVE / 3.0,
        _ => rng.random_range(lo..=hi),
    }
}

fn random_settings(rng: &mut Xoshiro256PlusPlus) -> Settings {
    Settings {
        grain_material: GrainMaterial::ALL[rng.random_range(0..GrainMaterial::ALL.len())],
        grain_size: wild(rng, 0.25, 4.0),
        density: wild(rng, 0.25, 4.0),
        cup_material: CupMaterial::ALL[rng.random_range(0..CupMaterial::ALL.len())],
        cup_size: wild(rng, 0.5, 2.5),
        fill: wild(rng, 0.0, 1.0),
        auto_fill: rng.random(),
        pour_rate_g_s: wild(rng, 0.0, 200.0),
        fall_height_m: wild(rng, 0.01, 1.0),
        flow_variation: wild(rng, 0.0, 1.0),
        aim: wild(rng, 0.0, 1.0),
        listener_angle_deg: wild(rng, 0.0, 90.0),
        listener_distance_m: wild(rng, 0.1, 10.0),
        stereo_width: wild(rng, 0.0, 1.0),
        grains_level_db: wild(rng, -60.0, 24.0),
        cup_level_db: wild(rng, -60.0, 24.0),
        surface_level_db: wild(rng, -60.0, 24.0),
        pour_target: if rng.random_bool(0.5) {
            PourTarget::Surface
        } else {
            PourTarget::Cup
        },
        surface_material: SurfaceMaterial::ALL[rng.random_range(0..SurfaceMaterial::ALL.len())],
        gesture: Gesture::ALL[rng.random_range(0..Gesture::ALL.len())],
        gesture_amount: wild(rng, 0.0, 1.0),
        shake_rate_hz: wild(rng, 1.0, 12.0),
        friction_level_db: wild(rng, -60.0, 24.0),
        output_gain_db: wild(rng, -20.0, 80.0),
        trigger_mode: if rng.random_bool(0.3) {
            TriggerMode::Continuous
        } else {
            TriggerMode::Midi
        },
        seed: rng.random(),
        // the real-time path whose work per block the scenes bound (a live engine: auto is
        // realtime; reference quality's own tests are engine/tests/quality.rs)
        quality: [Quality::Auto, Quality::Realtime][rng.random_range(0..2)],
        cup_shape: if rng.random_bool(0.3) {
            None
        } else {
            Some(CupShape::ALL[rng.random_range(0..CupShape::ALL.len())])
        },
        grain_shape: if rng.random_bool(0.5) {
            None
        } else {
            Some(Shape::ALL[rng.random_range(0..Shape::ALL.len())])
        },
        // the model or the collision databank (`bank`)
        statistics: if rng.random_bool(0.5) {
            Statistics::Bank
        } else {
            Statistics::Model
        },
    }
}

fn random_rate(rng: &mut Xoshiro256PlusPlus) -> f32 {
    match rng.random_range(0..8) {
        0 => 22_050.0,
        1 => 44_100.0,
        2 => 96_000.0,
        3 => 192_000.0,
        4 => rng.random_range(8_000.0..200_000.0),
        5 => [f32::NAN, 0.0, -48_000.0, 1e9][rng.random_range(0..4)],
        _ => 48_000.0,
    }
}

fn random_block(rng: &mut Xoshiro256PlusPlus) -> usize {
    match rng.random_range(0..10) {
        0 => 0,
        1 => 1,
        2 => MAX_BLOCK,
        3 => rng.random_range(1..MAX_BLOCK),
        _ => rng.random_range(1..600),
    }
}

fn velocity(rng: &mut Xoshiro256PlusPlus) -> f32 {
    match rng.random_range(0..6) {
        0 => 0.0,
        1 => f32::NAN,
        2 => [-1.0, 5.0, f32::INFINITY][rng.random_range(0..3)],
        _ => rng.random_range(0.0..=1.0),
    }
}

struct Buffers([Vec<f32>; 6]);

impl Buffers {
    fn new() -> Self {
        Buffers(std::array::from_fn(|_| vec![f32::NAN; MAX_BLOCK]))
    }
    fn outputs(&mut self, n: usize) -> Outputs<'_> {
        let [a, b, c, d, e, f] = &mut self.0;
        Outputs {
            main: [&mut a[..n], &mut b[..n]],
            grains: [&mut c[..n], &mut d[..n]],
            cup: [&mut e[..n], &mut f[..n]],
            surface: None,
            friction: None,
        }
    }
    /// Checks the first `n` samples; returns the main output's peak.
    fn check(&mut self, n: usize, what: impl Fn() -> String) -> f32 {
        let out: Vec<Vec<f32>> = self.0.iter().map(|c| c[..n].to_vec()).collect();
        if let Some((ch, i, x)) = first_non_finite(&out) {
            panic!("{}: channel {ch}, frame {i}: non-finite sample {x}", what());
        }
        let main = peak(&out[..2]);
        assert!(
            main <= LIMITER_CEILING,
            "{}: main peak {main} above the ceiling",
            what()
        );
        let stems = peak(&out[2..]);
        assert!(
            stems <= STEM_BOUND,
            "{}: stem peak {stems:e} beyond {STEM_BOUND:e}",
            what()
        );
        // garbage for the next block: the engine must overwrite every sample it is given
        self.0.iter_mut().for_each(|c| c[..n].fill(f32::NAN));
        main
    }
}

/// Engine scene: returns (samples rendered, worst block time per sample in s, main peak).
fn engine_scene(seed: u64, bufs: &mut Buffers) -> (usize, f64, f32) {
    let _guard = Scene("engine scene", seed);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut settings = random_settings(&mut rng);
    let mut engine = Engine::new(settings, random_rate(&mut rng), rng.random_range(0..MAX_BLOCK));
    // long enough for the first grains to land (they fall 0.14-0.47 s): 0.3-0.6 s (shorter
    // above 96 kHz, to bound the test's time)
    let target = (rng.random_range(0.3..0.6) * engine.sample_rate().min(96_000.0)) as usize;
    let mut done = 0;
    let mut worst = 0.0f64;
    let mut loudest = 0.0f32;
    let mut jumps_left = 0;
    let mut blocks = 0;
    if rng.random_bool(0.85) {
        engine.note_on(velocity(&mut rng), rng.random());
    }
    while done < target {
        blocks += 1;
        // control events between blocks (the engine's API takes them between `process` calls)
        if jumps_left > 0 {
            // automation that jumps at every sample
            jumps_left -= 1;
            settings = random_settings(&mut rng);
            engine.set_settings(&settings);
        } else {
            match rng.random_range(0..40) {
                0..=3 => engine.note_on(velocity(&mut rng), rng.random()),
                4..=6 => engine.note_off(),
                7 => engine.all_notes_off(),
                8 => engine.set_modulation(wild(&mut rng, 0.0, 1.0)),
                9..=11 => {
                    settings = random_settings(&mut rng);
                    engine.set_settings(&settings);
                }
                12 => jumps_left = rng.random_range(1..300),
                13 => engine.reseed(rng.random()),
                14 if rng.random_bool(0.2) => engine.reset(),
                15 if rng.random_bool(0.1) => engine.set_sample_rate(random_rate(&mut rng)),
                _ => {}
            }
        }
        let n = if jumps_left > 0 { 1 } else { random_block(&mut rng) };
        let windows_before = engine.stats().rendered;
        let clock_before = done;
        let started = thread_cpu_time();
        assert_no_alloc(|| engine.process(bufs.outputs(n)));
        let took = thread_cpu_time().saturating_sub(started);
        assert!(
            took < SLOW_BLOCK + SLOW_PER_SAMPLE * n as u32,
            "seed {seed}: a {n}-sample block took {took:?}"
        );
        if n > 0 {
            worst = worst.max(took.as_secs_f64() / n as f64);
        }
        // at most one window boundary per WINDOW samples, plus the one the block may start on
        let windows = n / WINDOW + 2;
        let rendered = engine.stats().rendered.saturating_sub(windows_before);
        let bound = (windows * CELLS.len()) as u64 * MAX_RENDERED_PER_CELL as u64;
        assert!(
            rendered <= bound,
            "seed {seed}: {rendered} collisions rendered in a {n}-sample block (bound {bound})"
        );
        loudest = loudest.max(bufs.check(n, || {
            format!("seed {seed}, block {blocks} ({n} samples at {clock_before})")
        }));
        done += n;
    }
    (done, worst, loudest)
}

#[test]
fn random_scenes_through_the_engine() {
    let base = env_u64("GRANARY_FUZZ_SEED", 1);
    let scenes = env_u64("GRANARY_FUZZ_SCENES", 1000);
    let started = Instant::now();
    let mut bufs = Buffers::new();
    let mut samples = 0;
    let mut worst = 0.0f64;
    let mut audible = 0;
    for i in 0..scenes {
        let (n, w, loudest) = engine_scene(base.wrapping_add(i), &mut bufs);
        samples += n;
        worst = worst.max(w);
        audible += (loudest > 1e-5) as u64;
    }
    eprintln!(
        "{scenes} engine scenes from seed {base}: {samples} samples in {:.1} s, {audible} audible; worst block {:.1} us per sample",
        started.elapsed().as_secs_f64(),
        worst * 1e6
    );
    // the scenes must really pour, or the checks prove little
    assert!(audible * 5 >= scenes, "only {audible} of {scenes} scenes made a sound");
}

/// Plugin scene through the CLAP entry: random rate, blocks, events on all channels,
/// parameter changes with wild values. Returns (samples rendered, the main output's peak).
fn plugin_scene(host: &mut Host, seed: u64) -> (usize, f32) {
    let _guard = Scene("plugin scene", seed);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let rate = [22_050.0, 44_100.0, 48_000.0, 96_000.0, 192_000.0][rng.random_range(0..5)];
    let max_frames = [64u32, 512, 4096, 8192][rng.random_range(0..4)];
    host.activate(rate, max_frames);
    // long enough for the first grains to land (their fall takes up to 0.45 s)
    let target = (rng.random_range(0.3..0.6) * rate.min(96_000.0)) as usize;
    let mut done = 0;
    let mut loudest = 0.0f32;
    let mut notes_on: Vec<(u16, u16)> = Vec::new();
    // Every scene starts from the defaults (an earlier scene's wild values would otherwise
    // pile up, e.g. a pour rate of 0 that silences every scene after it) and pours; the
    // random events below may still stop it, so that the checks run on sound, not silence.
    let mut first: Vec<(u32, Ev)> = (0..host.params.len())
        .map(|index| {
            let value = host.params[index].default;
            (0, Ev::Param { index, value })
        })
        .collect();
    first.push((
        0,
        Ev::NoteOn {
            key: 60,
            channel: 0,
            velocity: 1.0,
        },
    ));
    while done < target {
        let n = match rng.random_range(0..8) {
            0 => 1,
            1 => max_frames as usize,
            _ => rng.random_range(1..=max_frames as usize),
        };
        let mut events: Vec<(u32, Ev)> = std::mem::take(&mut first);
        let count = if rng.random_bool(0.5) {
            rng.random_range(1..8)
        } else {
            0
        };
        for _ in 0..count {
            let t = rng.random_range(0..n as u32);
            let channel = rng.random_range(0..16u16);
            let key = rng.random_range(0..128u16);
            let ev = match rng.random_range(0..12) {
                0..=2 => {
                    notes_on.push((key, channel));
                    Ev::NoteOn {
                        key,
                        channel,
                        velocity: [0.0, 1.0, 0.5, f64::NAN, 3.0][rng.random_range(0..5)],
                    }
                }
                3 => {
                    // note-off without a note-on
                    Ev::NoteOff { key, channel }
                }
                4..=5 if !notes_on.is_empty() => {
                    let (key, channel) = notes_on.swap_remove(rng.random_range(0..notes_on.len()));
                    Ev::NoteOff { key, channel }
                }
                6 => Ev::Midi([
                    0xB0 | channel as u8,
                    [1, 120, 123, 64][rng.random_range(0..4)],
                    rng.random_range(0..128),
                ]),
                7 => Ev::Midi([0xD0 | channel as u8, rng.random_range(0..128), 0]),
                8 => Ev::Midi([0x90 | channel as u8, key as u8, 0]),
                _ => {
                    let index = rng.random_range(0..host.params.len());
                    let p = &host.params[index];
                    let value = match rng.random_range(0..6) {
                        0 => f64::NAN,
                        1 => f64::INFINITY,
                        2 => p.max * 1e6 + 1.0,
                        3 => -p.max * 1e6 - 1.0,
                        _ => rng.random_range(p.min..=p.max),
                    };
                    Ev::Param { index, value }
                }
            };
            events.push((t, ev));
        }
        let ports = if rng.random_bool(0.2) {
            Ports::MainOnly
        } else {
            Ports::All
        };
        let out = host.process(n, &events, ports);
        if let Some((ch, i, x)) = first_non_finite(&out) {
            panic!("seed {seed}: channel {ch}, frame {i}: non-finite sample {x}");
        }
        let main = peak(&out[..2]);
        assert!(main <= LIMITER_CEILING, "seed {seed}: main above the ceiling");
        loudest = loudest.max(main);
        assert!(peak(&out) <= STEM_BOUND, "seed {seed}: stems beyond {STEM_BOUND:e}");
        if rng.random_bool(0.02) {
            host.reset();
        }
        done += n;
    }
    host.deactivate();
    (done, loudest)
}

#[test]
fn random_scenes_through_the_plugin() {
    let base = env_u64("GRANARY_FUZZ_SEED", 1);
    let scenes = env_u64("GRANARY_FUZZ_SCENES", 1000).div_ceil(4);
    let started = Instant::now();
    let mut host = Host::new(support::load_linked());
    let mut samples = 0;
    let mut audible = 0;
    for i in 0..scenes {
        let (n, loudest) = plugin_scene(&mut host, base.wrapping_add(i).wrapping_mul(0x9E37_79B9));
        samples += n;
        audible += (loudest > 1e-5) as u64;
    }
    eprintln!(
        "{scenes} plugin scenes from seed {base}: {samples} samples in {:.1} s, {audible} audible",
        started.elapsed().as_secs_f64()
    );
    // the scenes must really pour, or the checks prove little
    assert!(
        audible * 2 >= scenes,
        "only {audible} of {scenes} plugin scenes made a sound"
    );
}

/// `Engine::set_sample_rate` rebuilds everything that depends on the rate: afterwards the
/// engine renders exactly what a new engine at that rate renders.
#[test]
fn a_sample_rate_change_rebuilds_the_engine() {
    let settings = Settings {
        trigger_mode: TriggerMode::Continuous,
        pour_rate_g_s: 40.0,
        ..Settings::default()
    };
    let mut bufs = Buffers::new();
    let mut render = |engine: &mut Engine, n: usize| -> Vec<Vec<f32>> {
        let mut out = vec![Vec::new(); 6];
        let mut done = 0;
        while done < n {
            let m = 500.min(n - done);
            assert_no_alloc(|| engine.process(bufs.outputs(m)));
            for (o, b) in out.iter_mut().zip(&bufs.0) {
                o.extend_from_slice(&b[..m]);
            }
            done += m;
        }
        out
    };
    let mut engine = Engine::new(settings, 48_000.0, 512);
    render(&mut engine, 20_000);
    for rate in [96_000.0, 22_050.0, 192_000.0, 44_100.0] {
        engine.set_sample_rate(rate);
        assert_eq!(engine.sample_rate(), rate);
        // the look-ahead and the true-peak interpolator's delay (6 samples at 4×, 12 at 2×)
        let interpolator = match rate as u32 {
            0..96_000 => 6,
            96_000..192_000 => 12,
            _ => 0,
        };
        assert_eq!(
            engine.latency_samples(),
            (0.0025 * rate as f64).round() as usize + interpolator
        );
        let a = render(&mut engine, (0.5 * rate) as usize);
        let mut fresh = Engine::new(settings, rate, 512);
        let b = render(&mut fresh, (0.5 * rate) as usize);
        assert!(peak(&a[2..4]) > 0.0, "{rate} Hz: the pour must sound");
        assert_eq!(
            a, b,
            "{rate} Hz: after set_sample_rate the engine differs from a new one"
        );
    }
}
