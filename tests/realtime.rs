//! Real-time safety of the engine: no allocation in `process`, whatever it renders.
//!
//! With the `assert_process_allocs` feature (as `cargo xtask test` runs), nice-plug installs
//! an allocator that aborts on any allocation inside `assert_no_alloc`; without it this
//! test installs the same checker itself. Release builds compile the checker out: run this
//! test in a debug build (as `cargo xtask test` does).

use granary_engine::base::materials::SurfaceMaterial;
use granary_engine::control::choices::{Gesture, AVALANCHE_KEY, GESTURE_KEYS};
use granary_engine::control::preset;
use granary_engine::{Engine, Outputs, PourTarget, Statistics};
use nice_assert_no_alloc::assert_no_alloc;

#[test]
fn process_never_allocates_for_any_preset_event_or_block_size() {
    for (stem, p) in preset::factory() {
        let mut settings = p.values.to_settings();
        let mut engine = Engine::new(settings, 48_000.0, 4096);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 4096]);
        let mut frames = 0usize;
        assert_no_alloc(|| {
            engine.note_on(0.9, 60);
            for (i, &block) in [1usize, 17, 64, 512, 4096, 0, 333].iter().cycle().take(80).enumerate() {
                if i == 20 {
                    // a bounce: `quality` = auto renders every collision one by one
                    engine.set_offline(true);
                }
                if i == 40 {
                    engine.set_modulation(0.7);
                    settings.cup_size *= 1.3;
                    settings.fill = 0.5;
                    // another ground and target: the surface's filter is rebuilt in `process`
                    settings.surface_material = SurfaceMaterial::Soil;
                    settings.pour_target = match settings.pour_target {
                        PourTarget::Cup => PourTarget::Surface,
                        PourTarget::Surface => PourTarget::Cup,
                    };
                    // the collision databank's statistics: looked up every window
                    settings.statistics = Statistics::Bank;
                    engine.set_settings(&settings);
                }
                if i == 45 {
                    // a plate: the cups of the pours that were onto the surface stand on it
                    // and push it through their foot (`impact::foot`)
                    settings.surface_material = SurfaceMaterial::WoodTable;
                    engine.set_settings(&settings);
                }
                if i == 50 {
                    // the other gestures by keyswitch, and an avalanche on demand
                    let now = Gesture::ALL.iter().position(|&g| g == engine.gesture()).unwrap();
                    let key = GESTURE_KEYS.start() + ((now + 1) % Gesture::ALL.len()) as u8;
                    engine.note_on(1.0, key);
                    engine.key_off(key);
                    engine.note_on(1.0, AVALANCHE_KEY);
                    engine.key_off(AVALANCHE_KEY);
                }
                if i == 60 {
                    engine.note_off();
                    engine.reseed(7);
                }
                let [a, b, c, d, e, f, g, h, fl, fr] = &mut bufs;
                engine.process(Outputs {
                    main: [&mut a[..block], &mut b[..block]],
                    grains: [&mut c[..block], &mut d[..block]],
                    cup: [&mut e[..block], &mut f[..block]],
                    surface: Some([&mut g[..block], &mut h[..block]]),
                    friction: Some([&mut fl[..block], &mut fr[..block]]),
                });
                frames += block;
            }
            engine.reset();
        });
        assert!(frames > 48_000, "{stem}");
    }
}

/// What the plugin does every block besides rendering: read its host parameters into engine
/// settings (through the parameter table's mapping) and split the block at the host's events
/// (the shared event loop) -- all without allocating.
#[test]
fn host_parameters_and_the_event_loop_never_allocate() {
    use granary::params::GranaryParams;
    use granary_engine::control::events::{Event, Timed};
    use granary_engine::feed;

    let params = GranaryParams::default();
    let mut engine = Engine::new(params.settings(), 48_000.0, 512);
    let mut bufs: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 512]);
    let mut rendered = 0;
    assert_no_alloc(|| {
        for (i, block) in [512usize, 7, 300, 1, 128].iter().cycle().take(100).enumerate() {
            engine.set_settings(&params.settings());
            let events = [
                Timed::new(0, Event::NoteOn { velocity: 0.8, key: 60 }),
                Timed::new(block / 2, Event::Modulation(0.3)),
                Timed::new(block / 2, Event::Settings(params.values().to_settings())),
                Timed::new(block + 5, Event::AllNotesOff),
            ];
            let [a, b, c, d, e, f] = &mut bufs;
            feed::process_outputs(
                &mut engine,
                Outputs {
                    main: [&mut a[..*block], &mut b[..*block]],
                    grains: [&mut c[..*block], &mut d[..*block]],
                    cup: [&mut e[..*block], &mut f[..*block]],
                    surface: None,
                    friction: None,
                },
                events.into_iter().take(1 + i % 4),
            );
            rendered += block;
        }
    });
    assert!(rendered > 10_000);
}

/// Opening and closing the editor while audio runs: a GUI thread reads the telemetry (as
/// the editor does, analyser included), stops reading (editor closed), and reads again,
/// while the audio side renders and publishes. The audio side never allocates (checked),
/// never waits (it drops samples while nobody reads, and counts them), and renders exactly
/// the samples it renders without any editor.
#[test]
fn telemetry_lets_the_gui_read_while_audio_never_blocks_or_allocates() {
    use granary::editor::analyser::Analyser;
    use granary::telemetry;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    let mut settings = preset::find(preset::DEFAULT_PRESET).unwrap().values.to_settings();
    settings.trigger_mode = granary_engine::TriggerMode::Continuous;
    settings.pour_rate_g_s = 60.0;
    const BLOCK: usize = 256;
    const BLOCKS: usize = 48_000 * 3 / BLOCK;

    let render = |mut writer: Option<&mut telemetry::TelemetryWriter>, phase: Option<&AtomicU32>| {
        let mut engine = Engine::new(settings, 48_000.0, BLOCK);
        let mut bufs: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; BLOCK]);
        let mut main = Vec::with_capacity(BLOCKS * BLOCK);
        for b in 0..BLOCKS {
            if let Some(phase) = phase {
                // the GUI thread opens the editor for the 1st and 3rd second, closes it between
                phase.store((b * 3 / BLOCKS) as u32 + 1, Ordering::Relaxed);
            }
            assert_no_alloc(|| {
                let [a, b, c, d, e, f, g, h, fl, fr] = &mut bufs;
                engine.process(Outputs {
                    main: [&mut a[..], &mut b[..]],
                    grains: [&mut c[..], &mut d[..]],
                    cup: [&mut e[..], &mut f[..]],
                    surface: Some([&mut g[..], &mut h[..]]),
                    friction: Some([&mut fl[..], &mut fr[..]]),
                });
                if let Some(w) = writer.as_deref_mut() {
                    w.write_audio(
                        [&a[..], &b[..]],
                        [&c[..], &d[..]],
                        [&e[..], &f[..]],
                        [&g[..], &h[..]],
                        [&fl[..], &fr[..]],
                    );
                    w.write_engine(&engine);
                }
            });
            main.extend_from_slice(&bufs[0]);
            // pace the audio like a real-time callback, so the GUI gets frames in between
            std::thread::sleep(std::time::Duration::from_micros(300));
        }
        let stats = engine.stats();
        let cells: u64 = engine.cell_collisions().iter().sum();
        (main, stats, cells)
    };

    let (reference, _, _) = render(None, None);

    let (mut writer, reader) = telemetry::channel();
    writer.set_sample_rate(48_000.0);
    let phase = Arc::new(AtomicU32::new(0));
    let gui = {
        let phase = phase.clone();
        std::thread::spawn(move || {
            let mut reader = reader;
            let mut analyser = Analyser::new();
            let mut samples = Vec::new();
            let (mut frames, mut received, mut max_peak, mut max_flash) = (0u32, 0usize, 0.0f32, 0u64);
            let mut last = reader.snapshot();
            loop {
                match phase.load(Ordering::Relaxed) {
                    1 | 3 => {
                        let s = reader.snapshot();
                        samples.clear();
                        received += reader.drain_samples(&mut samples);
                        analyser.push(&samples);
                        let levels = analyser.update(s.sample_rate.max(1.0), 200, 1.0 / 60.0);
                        assert!(levels.iter().all(|l| l.is_finite()));
                        max_peak = max_peak.max(s.peak[0]);
                        max_flash = max_flash.max(s.cell_delta.iter().sum());
                        assert!(s.samples >= last.samples && s.collisions >= last.collisions);
                        last = s;
                        frames += 1;
                    }
                    4 => {
                        last = reader.snapshot();
                        break;
                    }
                    _ => {} // editor closed: nobody reads
                }
                std::thread::sleep(std::time::Duration::from_millis(4));
            }
            (frames, received, max_peak, max_flash, last)
        })
    };
    let (with_gui, stats, cells) = render(Some(&mut writer), Some(&phase));
    phase.store(4, Ordering::Relaxed);
    let (frames, received, max_peak, max_flash, last) = gui.join().unwrap();

    assert!(
        with_gui.iter().zip(&reference).all(|(a, b)| a.to_bits() == b.to_bits()),
        "the audio must not depend on the editor"
    );
    assert!(frames > 20, "the GUI drew {frames} frames");
    assert!(received > 24_000, "the GUI received {received} samples");
    assert!(max_peak > 0.0 && max_flash > 0);
    assert_eq!(last.samples, (BLOCKS * BLOCK) as u64);
    assert_eq!(last.collisions, stats.collisions);
    // while the editor was closed the ring filled and the audio side dropped, not waited
    assert!(last.dropped > 0, "nothing was dropped");
    assert!(last.fill > 0.0 && last.cup_radius_m > 0.0);
    // per-cell counts account for the rendered collisions (merged ones by group size)
    let heard = (stats.collisions - stats.culled) as f64;
    assert!(
        (cells as f64) > 0.8 * heard && (cells as f64) < 1.2 * heard,
        "cells {cells} vs {heard}"
    );
}
