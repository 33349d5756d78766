//! Behaviour of the whole engine: what a user would notice if it broke.

use granary_engine::base::window::{Collision, CollisionKind};
use granary_engine::control::events::Event;
use granary_engine::control::events::Event::{Modulation, NoteOff};
use granary_engine::control::events::Timed;
use granary_engine::control::params::ParamValues;
use granary_engine::control::preset;
use granary_engine::feed::render_blocks;
use granary_engine::render::{render, PourCurve, RenderOptions, Rendered};
use granary_engine::{Engine, Outputs, PourTarget, Settings, TriggerMode, LIMITER_CEILING};

fn rms(x: &[f32]) -> f64 {
    (x.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

fn db(x: f64) -> f64 {
    20.0 * x.max(1e-20).log10()
}

fn opts(seconds: f64, block: usize) -> RenderOptions {
    RenderOptions {
        seconds,
        sample_rate: 48_000.0,
        block_size: block,
        pour: None,
    }
}

fn default_values() -> ParamValues {
    preset::find(preset::DEFAULT_PRESET).unwrap().values
}

fn with(values: &ParamValues, changes: &[(&str, &str)]) -> ParamValues {
    let mut v = values.clone();
    for (id, x) in changes {
        v.set_text(id, x).unwrap();
    }
    v
}

/// Renders the engine directly, in host blocks of `block`, with events at absolute frames
/// (through the event loop the plugin uses).
fn render_midi(settings: Settings, frames: usize, block: usize, events: &[(usize, Event)]) -> [Vec<f32>; 6] {
    let mut e = Engine::new(settings, 48_000.0, block);
    let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; frames]);
    render_blocks(
        &mut e,
        &mut out,
        block,
        events.iter().map(|&(at, event)| Timed::new(at, event)),
    );
    out
}

fn on(velocity: f32) -> Event {
    Event::NoteOn { velocity, key: 60 }
}

fn check_sane(name: &str, r: &Rendered) {
    for (label, ch) in [("main", &r.main), ("grains", &r.grains), ("cup", &r.cup)] {
        for c in ch.iter() {
            assert!(
                c.iter().all(|x| x.is_finite()),
                "{name}: {label} has a non-finite sample"
            );
        }
    }
    let peak = r.main.iter().flatten().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(peak <= LIMITER_CEILING, "{name}: main peak {peak} above the ceiling");
}

#[test]
fn every_factory_preset_renders_finite_bounded_and_audible() {
    for (stem, p) in preset::factory() {
        let r = render(&p.values, &opts(2.5, 512));
        check_sane(stem, &r);
        let level = db(rms(&r.main[0][24_000..72_000]));
        assert!(level > -50.0, "{stem}: the pour is almost silent ({level:.1} dBFS)");
        assert!(
            r.stats.collisions > 1000,
            "{stem}: only {} collisions",
            r.stats.collisions
        );
        // a pour onto the surface has no cup, and its surface sounds
        let stems = match p.values.to_settings().pour_target {
            PourTarget::Cup => [&r.grains, &r.cup],
            PourTarget::Surface => [&r.grains, &r.surface],
        };
        assert!(stems.iter().all(|s| rms(&s[0]) > 0.0), "{stem}: a stem is silent");
    }
}

#[test]
fn same_seed_same_samples_other_seed_other_samples() {
    let v = default_values();
    let a = render(&v, &opts(1.5, 512));
    let b = render(&v, &opts(1.5, 512));
    assert_eq!(a.main, b.main);
    assert_eq!(a.cup, b.cup);
    let c = render(&with(&v, &[("seed", "2")]), &opts(1.5, 512));
    assert_ne!(a.main, c.main);
    // a different seed is a different take of the same pour, not a different sound
    let (la, lc) = (db(rms(&a.main[0])), db(rms(&c.main[0])));
    assert!((la - lc).abs() < 3.0, "{la} vs {lc}");
}

#[test]
fn host_block_size_never_changes_the_output() {
    let v = with(
        &default_values(),
        &[("grain_material", "rice"), ("cup_material", "steel")],
    );
    let pour = Some(PourCurve::parse("0:0,0.3:40,0.8:10,1.0:0").unwrap());
    let run = |block| {
        render(
            &v,
            &RenderOptions {
                seconds: 1.5,
                sample_rate: 48_000.0,
                block_size: block,
                pour: pour.clone(),
            },
        )
    };
    let reference = run(4096);
    for block in [1, 64, 777] {
        let r = run(block);
        assert_eq!(r.main, reference.main, "block {block}");
        assert_eq!(r.grains, reference.grains, "block {block}");
        assert_eq!(r.cup, reference.cup, "block {block}");
    }
    // and with MIDI events landing inside host blocks
    let events = [(1000, on(0.8)), (20_000, Modulation(0.5)), (40_000, NoteOff)];
    let s = v.to_settings();
    let m = render_midi(s, 72_000, 4096, &events);
    for block in [1, 64, 333] {
        assert_eq!(render_midi(s, 72_000, block, &events), m, "midi, block {block}");
    }
}

#[test]
fn more_flow_more_collisions_and_more_energy() {
    // a fixed fill level, so that only the flow changes (filling changes the mix of cells)
    let v = with(&default_values(), &[("fill", "0.3"), ("auto_fill", "false")]);
    let low = render(&with(&v, &[("pour_rate", "5")]), &opts(2.0, 512));
    let high = render(&with(&v, &[("pour_rate", "40")]), &opts(2.0, 512));
    let ratio = high.stats.collisions as f64 / low.stats.collisions as f64;
    assert!(
        ratio > 6.0 && ratio < 10.0,
        "8x the flow gave {ratio:.2}x the collisions"
    );
    let gain = db(rms(&high.grains[0])) - db(rms(&low.grains[0]));
    // incoherent sum: 8x the collisions is about +9 dB
    assert!(gain > 5.0, "8x the flow is only {gain:.1} dB louder");
}

#[test]
fn steel_cup_rings_longer_than_plastic() {
    // one hard grain on the bare floor of a silent cup, then the time the cup stem takes to
    // fall 40 dB (a pour would keep exciting the cup through its settling grains)
    let ring_time = |cup: &str| {
        let settings = with(&default_values(), &[("cup_material", cup)]).to_settings();
        let mut e = Engine::new(settings, 48_000.0, 512);
        let hit = Collision {
            time: 10.0,
            kind: CollisionKind::GrainCup,
            cell: 1,
            bus: 0,
            position: [0.005, 0.0, 0.0],
            normal: [0.0, 0.0, 1.0],
            v0: 1.0,
            ln_v0: 0.0,
            weight: 1.0,
            bed_m: 0.0,
            bed_weight: 0.0,
            spread: false,
        };
        assert!(e.inject(hit));
        let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 4 * 48_000]);
        let [a, b, c, d, f, g] = &mut out;
        e.process(Outputs {
            main: [a, b],
            grains: [c, d],
            cup: [f, g],
            surface: None,
            friction: None,
        });
        let x = &out[4];
        let env = |i: usize| rms(&x[i..i + 480]);
        let start = 960;
        let reference = env(start);
        assert!(reference > 0.0, "{cup}: the hit is silent");
        let mut t = start;
        while t + 480 < x.len() && env(t) > reference * 0.01 {
            t += 480;
        }
        (t - start) as f64 / 48_000.0
    };
    let steel = ring_time("steel");
    let plastic = ring_time("plastic");
    assert!(
        steel > 3.0 * plastic,
        "steel rings {steel:.3} s, plastic {plastic:.3} s"
    );
}

/// A grain's acceleration noise is a dipole along the collision's normal (thesis eq. 4.1),
/// and a pour's normals point mostly up: the grains are louder from above. The hand-written
/// model draws them in a cone about each cell's normal (4.2 dB); the bank draws the
/// simulated pours' own, spread wider by the pile's slopes and the mug's wall (2.9 dB).
/// Normals at random would give 0 dB.
#[test]
fn grains_are_louder_from_above_than_from_the_side() {
    for (statistics, least) in [("bank", 2.0), ("model", 3.0)] {
        let v = with(&default_values(), &[("statistics", statistics)]);
        let above = render(&with(&v, &[("listener_angle", "0")]), &opts(2.0, 512));
        let side = render(&with(&v, &[("listener_angle", "90")]), &opts(2.0, 512));
        let diff = db(rms(&above.grains[0])) - db(rms(&side.grains[0]));
        println!("{statistics}: 0 deg {diff:.2} dB louder than 90 deg");
        assert!(
            diff > least,
            "{statistics}: 0 deg is only {diff:.1} dB louder than 90 deg"
        );
    }
}

#[test]
fn note_off_lets_grains_in_the_air_land_then_settles_to_silence() {
    let mut s = default_values().to_settings();
    s.fall_height_m = 0.5; // 0.5 m + the cup: ~0.35 s of flight
                           // a steady stream: the trickle an unsteady one ends with is `tests/stream.rs`'s
    s.flow_variation = 0.0;
    let off = 48_000;
    let out = render_midi(s, 48_000 * 4, 512, &[(0, on(1.0)), (off, NoteOff)]);
    let g = &out[2];
    let during = rms(&g[off - 9600..off]);
    let just_after = rms(&g[off + 2400..off + 9600]); // 50..200 ms: still landing
    let late = rms(&g[48_000 * 3..]);
    assert!(db(just_after) > db(during) - 6.0, "grains stop too soon after note-off");
    assert!(
        db(late) < db(during) - 40.0,
        "still pouring 2 s after note-off: {:.1} vs {:.1} dB",
        db(late),
        db(during)
    );
    // and the stream needs its fall time before the first grain lands
    let onset = g.iter().position(|x| x.abs() > 0.0).unwrap();
    let t_fall = onset as f64 / 48_000.0;
    assert!(t_fall > 0.25 && t_fall < 0.45, "first grain after {t_fall:.3} s");
}

#[test]
fn velocity_and_modulation_scale_the_flow() {
    // a fixed fill level: a softer pour would otherwise keep the floor bare for longer
    let s = with(&default_values(), &[("fill", "0.3"), ("auto_fill", "false")]).to_settings();
    let grains_db = |events: &[(usize, Event)]| {
        let out = render_midi(s, 96_000, 512, events);
        db(rms(&out[2][48_000..]))
    };
    let soft = grains_db(&[(0, on(0.2))]);
    let hard = grains_db(&[(0, on(1.0))]);
    let modded = grains_db(&[(0, on(1.0)), (0, Modulation(1.0))]);
    assert!(hard > soft + 4.0, "velocity: {soft:.1} -> {hard:.1} dB");
    assert!(modded > hard + 1.5, "mod wheel: {hard:.1} -> {modded:.1} dB");
}

#[test]
fn continuous_mode_pours_from_the_rate_alone() {
    let mut s = default_values().to_settings();
    s.trigger_mode = TriggerMode::Continuous;
    s.pour_rate_g_s = 0.0;
    let silent = render_midi(s, 48_000, 512, &[(0, on(1.0))]);
    assert!(
        silent.iter().all(|c| c.iter().all(|x| *x == 0.0)),
        "pour_rate 0 must be silent, even with a note"
    );
    s.pour_rate_g_s = 20.0;
    let pouring = render_midi(s, 48_000, 512, &[]);
    assert!(rms(&pouring[0][24_000..]) > 1e-4);
}

#[test]
fn filling_the_cup_moves_collisions_from_the_cup_to_the_grains() {
    let v = default_values();
    let empty = render(&with(&v, &[("fill", "0"), ("auto_fill", "false")]), &opts(2.0, 512));
    let full = render(&with(&v, &[("fill", "0.8"), ("auto_fill", "false")]), &opts(2.0, 512));
    let share = |r: &Rendered| r.stats.grain_cup as f64 / r.stats.collisions as f64;
    assert!(
        share(&empty) > 3.0 * share(&full),
        "{} vs {}",
        share(&empty),
        share(&full)
    );
    // and the full cup's stem is quieter (fewer hits, more damping)
    assert!(db(rms(&full.cup[0])) < db(rms(&empty.cup[0])) - 10.0);
}

#[test]
fn hostile_settings_stay_finite() {
    let s = Settings {
        pour_rate_g_s: f32::NAN,
        grain_size: f32::INFINITY,
        cup_size: -3.0,
        listener_distance_m: 0.0,
        output_gain_db: 1e9,
        ..Settings::default()
    };
    let out = render_midi(
        s,
        24_000,
        100,
        &[(0, on(f32::NAN)), (10, on(1.0)), (20, Modulation(f32::INFINITY))],
    );
    for c in &out {
        assert!(c.iter().all(|x| x.is_finite()));
    }
    assert!(out[0].iter().all(|x| x.abs() <= LIMITER_CEILING));
    // zero-length buffers are fine
    let mut e = Engine::new(Settings::default(), 48_000.0, 0);
    let mut z: [Vec<f32>; 6] = std::array::from_fn(|_| Vec::new());
    let [a, b, c, d, f, g] = &mut z;
    e.process(Outputs {
        main: [a, b],
        grains: [c, d],
        cup: [f, g],
        surface: None,
        friction: None,
    });
}

/// Octave-band levels (dB, 250 Hz .. 16 kHz centres) of `x` at 48 kHz, Hann-windowed
/// 4096-point periodogram averaged over the signal.
fn octave_bands(x: &[f32]) -> Vec<f64> {
    let n = 4096;
    let fft = granary_engine::fft::forward(n);
    let mut psd = vec![0.0; n / 2 + 1];
    let mut buf = fft.make_input_vec();
    let mut spec = fft.make_output_vec();
    for chunk in x.chunks_exact(n) {
        for (i, (b, v)) in buf.iter_mut().zip(chunk).enumerate() {
            *b = *v as f64 * (0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / n as f64).cos());
        }
        fft.process(&mut buf, &mut spec).unwrap();
        for (p, s) in psd.iter_mut().zip(&spec) {
            *p += s.norm_sqr();
        }
    }
    let bin = |f: f64| ((f / 48_000.0 * n as f64) as usize).min(n / 2);
    (0..7)
        .map(|k| {
            let f = 250.0 * 2f64.powi(k);
            let e: f64 = psd[bin(f / 2f64.sqrt())..bin(f * 2f64.sqrt())].iter().sum();
            10.0 * e.max(1e-30).log10()
        })
        .collect()
}

/// Kurtosis E[x^4] / E[x^2]^2 (3 for Gaussian noise; crackle raises it).
fn kurtosis(x: &[f32]) -> f64 {
    let m2 = x.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / x.len() as f64;
    let m4 = x.iter().map(|v| (*v as f64).powi(4)).sum::<f64>() / x.len() as f64;
    m4 / (m2 * m2)
}

#[test]
fn rendering_dense_cells_as_groups_keeps_the_level_spectrum_and_texture() {
    // sugar from the bank (the default): ~2.4 M collisions/s, most of them in cells denser
    // than the rendering budget (its wall hits, which the grains stem hears most, ~230,000 a
    // second); from the hand-written model ~950k/s
    let render = |statistics: &str, limit: Option<u32>| {
        let s = with(&default_values(), &[("statistics", statistics)]).to_settings();
        let mut e = Engine::new(s, 48_000.0, 512);
        if let Some(n) = limit {
            e.set_max_rendered_per_cell(n);
        }
        e.note_on(1.0, 60);
        // 7 s, the last 6 compared: the grains' 250 Hz octave, 54 dB under their loudest, is
        // estimated from the few heavy pulses a grouped pour writes, and over 3 s it wandered
        // 1.1 dB from every collision's with one draw of the groups' copies
        let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 336_000]);
        let [a, b, c, d, f, g] = &mut out;
        e.process(Outputs {
            main: [a, b],
            grains: [c, d],
            cup: [f, g],
            surface: None,
            friction: None,
        });
        (out, e.stats())
    };
    let mut every_bank = Vec::new();
    for statistics in ["bank", "model"] {
        let run = |limit: Option<u32>| render(statistics, limit);
        let (grouped, gs) = run(None);
        let (every, es) = run(Some(u32::MAX));
        assert!(
            gs.rendered * 8 < es.rendered,
            "grouping should render far fewer: {} vs {}",
            gs.rendered,
            es.rendered
        );
        let rel = gs.collisions as f64 / es.collisions as f64;
        assert!((rel - 1.0).abs() < 0.02, "same physical collisions: {rel}");
        for (label, i) in [("grains", 2), ("cup", 4)] {
            let (a, b) = (&grouped[i][48_000..], &every[i][48_000..]);
            let diff = db(rms(a)) - db(rms(b));
            assert!(
                diff.abs() < 0.5,
                "{statistics}, {label}: grouping changes the level by {diff:.2} dB"
            );
            // the cup's octaves hold a few strong modes each, so their estimates wander more
            let tolerance = if label == "cup" { 1.5 } else { 1.0 };
            for (k, (x, y)) in octave_bands(a).iter().zip(octave_bands(b)).enumerate() {
                let f = 250 << k;
                assert!(
                    (x - y).abs() < tolerance,
                    "{statistics}, {label}: {f} Hz octave moves by {:.2} dB",
                    x - y
                );
            }
            let (ka, kb) = (kurtosis(a), kurtosis(b));
            println!(
                "{statistics}, {label}: level {diff:+.2} dB, octaves {:.2?}, kurtosis {ka:.2} vs {kb:.2}",
                octave_bands(a)
                    .iter()
                    .zip(octave_bands(b))
                    .map(|(x, y)| x - y)
                    .collect::<Vec<_>>()
            );
            assert!(
                (ka / kb - 1.0).abs() < 0.15,
                "{statistics}, {label}: kurtosis {ka:.2} grouped vs {kb:.2} every collision"
            );
        }
        if statistics == "bank" {
            every_bank = every[2][48_000..].to_vec();
        }
    }
    // the test can fail: a budget a quarter as large makes the grains stem crackle
    let (sparse, _) = render("bank", Some(8));
    let (ks, kb) = (kurtosis(&sparse[2][48_000..]), kurtosis(&every_bank));
    println!("a budget of 8: grains kurtosis {ks:.2} vs {kb:.2}");
    assert!(
        ks / kb > 1.25,
        "a sparse budget should show in the kurtosis: {ks:.2} vs {kb:.2}"
    );
}
