//! When things happen: events act at their own sample, and a pour depends only on the seed,
//! the settings and the events' times, never on what the engine did before the pour started
//! (idle blocks, resets, other settings, a different seed) nor on the host's blocks.

use granary_engine::control::events::{Event, Timed};
use granary_engine::control::preset;
use granary_engine::feed::render_blocks;
use granary_engine::{Engine, Settings, TriggerMode};

const SR: f32 = 48_000.0;

fn default_settings() -> Settings {
    preset::find(preset::DEFAULT_PRESET).unwrap().values.to_settings()
}

/// A short fall, so the grains land within a few thousand samples of the note.
fn quick() -> Settings {
    Settings {
        fall_height_m: 0.02,
        ..default_settings()
    }
}

fn silence(frames: usize) -> [Vec<f32>; 6] {
    std::array::from_fn(|_| vec![0.0; frames])
}

/// Renders `frames` samples of `engine` in blocks of `block` with `events` (absolute times).
fn run(engine: &mut Engine, frames: usize, block: usize, events: &[Timed]) -> [Vec<f32>; 6] {
    let mut out = silence(frames);
    render_blocks(engine, &mut out, block, events.iter().copied());
    out
}

/// A pour with everything a performance has: a note, the mod wheel, a re-strike while the
/// first is held, a note-off, a settings change (a faster pour) and a late note.
fn performance(start: usize, settings: Settings) -> Vec<Timed> {
    let faster = Settings {
        pour_rate_g_s: settings.pour_rate_g_s * 1.7,
        ..settings
    };
    [
        (0, Event::NoteOn { velocity: 0.8, key: 60 }),
        (3_001, Event::Modulation(0.4)),
        (5_555, Event::NoteOn { velocity: 0.5, key: 60 }),
        (7_013, Event::NoteOff),
        (8_190, Event::Settings(faster)),
        (9_999, Event::NoteOff),
        (12_345, Event::NoteOn { velocity: 1.0, key: 60 }),
        (15_000, Event::NoteOff),
    ]
    .into_iter()
    .map(|(at, e)| Timed::new(start + at, e))
    .collect()
}

/// `b` from `b_start` on is `a` from `a_start` on, bit for bit (and `a` is silent before).
fn assert_shifted(a: &[Vec<f32>; 6], a_start: usize, b: &[Vec<f32>; 6], b_start: usize, what: &str) {
    let len = (a[0].len() - a_start).min(b[0].len() - b_start);
    for ch in 0..6 {
        let x = &a[ch][a_start..a_start + len];
        let y = &b[ch][b_start..b_start + len];
        if let Some(i) = x.iter().zip(y).position(|(p, q)| p.to_bits() != q.to_bits()) {
            panic!(
                "{what}: channel {ch} differs at {i} samples after the first note ({} vs {})",
                x[i], y[i]
            );
        }
    }
    for c in a {
        assert!(c[..a_start].iter().all(|x| *x == 0.0), "{what}: sound before the note");
    }
}

#[test]
fn notes_sent_k_samples_earlier_give_the_same_pour_k_samples_earlier() {
    let settings = quick();
    let frames = 30_000;
    let late = 1_000;
    let reference = run(
        &mut Engine::new(settings, SR, 64),
        frames,
        64,
        &performance(late, settings),
    );
    assert!(reference[0].iter().any(|x| *x != 0.0), "the test pour is silent");
    // every sub-window offset a latency-compensating host can produce, and a few more
    for k in (1..=127).chain([128, 129, 300, 1000]) {
        let block = [64, 128, 333, 512][k % 4];
        let mut e = Engine::new(settings, SR, block);
        let out = run(&mut e, frames, block, &performance(late - k, settings));
        assert_shifted(&reference, late, &out, late - k, &format!("{k} samples early"));
    }
}

#[test]
fn what_came_before_the_pour_changes_nothing() {
    let settings = quick();
    let frames = 40_000;
    let start = 20_000;
    let fresh = run(
        &mut Engine::new(settings, SR, 256),
        frames,
        256,
        &performance(start, settings),
    );
    // another seed, another cup and fill, other gains, then the project's settings (as a
    // state load into a running instance does), idle blocks and a reset on the way
    let other = Settings {
        seed: 99,
        fill: 0.6,
        output_gain_db: -20.0,
        cup_material: granary_engine::base::materials::CupMaterial::Steel,
        ..settings
    };
    let mut e = Engine::new(other, SR, 256);
    run(&mut e, 7_777, 256, &[]);
    e.reset();
    let mut events = vec![Timed::new(123, Event::Settings(settings))];
    events.extend(performance(start, settings));
    let loaded = run(&mut e, frames, 256, &events);
    assert_shifted(
        &fresh,
        start,
        &loaded,
        start,
        "after idle blocks, a reset and a state load",
    );

    // a pour that went quiet long ago: the next one starts as in a new engine (its tail has
    // died away and the random streams restart from the seed)
    let mut e = Engine::new(settings, SR, 256);
    let mut first = vec![
        Timed::new(0, Event::NoteOn { velocity: 1.0, key: 60 }),
        Timed::new(2_000, Event::NoteOff),
    ];
    first.extend(performance(30 * 48_000, settings));
    let both = run(&mut e, 30 * 48_000 + frames - start, 256, &first);
    assert_shifted(&fresh, start, &both, 30 * 48_000, "the second pour of a session");
}

#[test]
fn events_act_at_their_own_sample_not_at_a_window_boundary() {
    let settings = quick();
    // the last note-off, at 15 000, is heard when its last grains land, a fall later
    let frames = 30_000;
    let base = performance(0, settings);
    let reference = run(&mut Engine::new(settings, SR, 64), frames, 64, &base);
    // moving any one event inside the pour by a single sample changes the pour after it,
    // but for the note-off of one of two held notes, which changes nothing
    for i in 1..base.len() {
        let mut moved = base.clone();
        moved[i].at += 1;
        let out = run(&mut Engine::new(settings, SR, 64), frames, 64, &moved);
        let first = (0..frames).find(|&t| out[0][t] != reference[0][t]);
        if i == 3 {
            assert_eq!(base[i].event, Event::NoteOff);
            assert_eq!(first, None, "the note-off of one of two held notes changed the pour");
            continue;
        }
        let first = first.unwrap_or_else(|| panic!("moving event {i} ({:?}) by 1 sample changed nothing", base[i]));
        assert!(first > base[i].at, "event {i} changed the output before it happened");
    }
}

#[test]
fn a_note_starts_the_stream_at_its_sample() {
    // the first grains land one fall after the note: t = sqrt(2 h / g) from the spout, 2 cm
    // above the rim, to the floor of the empty mug, plus the engine's generation lead
    let settings = quick();
    let cup = granary_engine::derived::cups::Cup::for_settings(&settings);
    let fall_s = (2.0 * (settings.fall_height_m + cup.depth) / 9.806_65).sqrt();
    let lead = granary_engine::GENERATOR_LEAD + granary_engine::impact::kernels::HALF;
    for note in [4_000, 4_001, 4_077] {
        let out = run(
            &mut Engine::new(settings, SR, 64),
            note + 20_000,
            64,
            &[Timed::new(note, Event::NoteOn { velocity: 1.0, key: 60 })],
        );
        let first = out[1].iter().position(|x| *x != 0.0).expect("the pour is silent");
        let arrival = note + (fall_s * SR) as usize;
        assert!(
            first + lead >= arrival && first <= arrival + lead + 2_000,
            "note at {note}: first sound at {first}, the grains arrive about {arrival}"
        );
    }
}

#[test]
fn continuous_mode_pours_from_the_start_and_from_a_reset() {
    let settings = Settings {
        trigger_mode: TriggerMode::Continuous,
        ..quick()
    };
    let a = run(&mut Engine::new(settings, SR, 100), 20_000, 100, &[]);
    assert!(a[0].iter().any(|x| *x != 0.0), "continuous mode is silent");
    let mut e = Engine::new(settings, SR, 100);
    run(&mut e, 9_000, 100, &[]);
    e.reset();
    let b = run(&mut e, 20_000, 100, &[]);
    assert_shifted(&a, 0, &b, 0, "continuous mode after a reset");
}

#[test]
fn settings_that_arrive_before_a_continuous_pour_is_heard_start_it() {
    // a host activates the plugin with its defaults, then loads the project's state before the
    // first block: the pour must be the one a new instance made with that state plays
    let project = Settings {
        trigger_mode: TriggerMode::Continuous,
        output_gain_db: 20.0,
        fill: 0.4,
        seed: 5,
        ..quick()
    };
    let activated = Settings {
        trigger_mode: TriggerMode::Continuous,
        ..default_settings()
    };
    let fresh = run(&mut Engine::new(project, SR, 128), 20_000, 128, &[]);
    assert!(fresh[0].iter().any(|x| *x != 0.0), "the pour is silent");
    let mut e = Engine::new(activated, SR, 128);
    e.set_settings(&project);
    let loaded = run(&mut e, 20_000, 128, &[]);
    assert_shifted(&fresh, 0, &loaded, 0, "state loaded before the first block");
    // once a pour is heard, new settings change it from their sample on, not from its start
    let mut e = Engine::new(activated, SR, 128);
    let mut early = run(&mut e, 64, 64, &[]);
    e.set_settings(&project);
    let rest = run(&mut e, 20_000 - 64, 128, &[]);
    for (c, r) in early.iter_mut().zip(rest) {
        c.extend(r);
    }
    assert_ne!(early, fresh);
}
