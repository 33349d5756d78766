//! Gestures (`engine::gesture`): stir, shake, tilt and avalanches, their mechanics alone and
//! through the whole engine (stems, determinism, keyswitches, no allocation).

use granary_engine::base::materials::{CupMaterial, FrictionMaterial, GrainMaterial, GRAVITY, PACKING_FRACTION};
use granary_engine::base::window::WINDOW;
use granary_engine::control::choices::CupShape;
use granary_engine::control::choices::Gesture;
use granary_engine::control::events::{Event, Timed};
use granary_engine::control::params::ParamValues;
use granary_engine::derived::cups::Cup;
use granary_engine::feed;
use granary_engine::pour::gesture::{
    avalanche_angles_rad, heap_slab_m3, rattle_speed, slam_speed_m_s, GestureInput, GestureState, Place, Voice,
    AVALANCHE_SPAN_DEG, MAX_TILT_DEG, SETTLE_S, STIR_MAX_SPEED_M_S, TILT_RATE_DEG_S,
};
use granary_engine::render::{render, render_notes, NoteEvent, PourCurve, RenderOptions, Rendered};
use granary_engine::{Engine, Outputs, Settings, TriggerMode};
use nice_assert_no_alloc::assert_no_alloc;
use serde_json::json;

fn values(pairs: &[(&str, serde_json::Value)]) -> ParamValues {
    let mut v = ParamValues::default();
    for (id, x) in pairs {
        v.set(id, x).unwrap_or_else(|e| panic!("{id}: {e:?}"));
    }
    v
}

fn opts(seconds: f64, block_size: usize) -> RenderOptions {
    RenderOptions {
        seconds,
        sample_rate: 48_000.0,
        block_size,
        pour: None,
    }
}

fn rms(x: &[f32]) -> f64 {
    (x.iter().map(|&s| (s as f64).powi(2)).sum::<f64>() / x.len().max(1) as f64).sqrt()
}

fn db(x: f64) -> f64 {
    20.0 * x.max(1e-12).log10()
}

/// Level of `x` from `a` to `b` seconds, dB re full scale.
fn level(x: &[f32], a: f64, b: f64) -> f64 {
    let fs = 48_000.0;
    db(rms(&x[(a * fs) as usize..(b * fs) as usize]))
}

/// What the gesture models read for a mug of sugar, `fill` full (a level bed).
fn sugar_mug(gesture: Gesture, intensity: f32, fill: f32) -> GestureInput {
    let cup = Cup::new(CupShape::usual_for(CupMaterial::Ceramic), 1.0);
    let grain = GrainMaterial::Sugar;
    let density = grain.data().elastic.density;
    let pile = fill * cup.depth;
    GestureInput {
        gesture,
        intensity,
        modulation: 0.0,
        shake_rate_hz: 4.0,
        cup,
        grain,
        grain_radius_m: 0.5 * grain.data().diameter_m,
        grain_density: density,
        cup_friction: FrictionMaterial::Cup(CupMaterial::Ceramic),
        pile_height_m: pile,
        pile_radius_m: cup.radius_at(pile),
        bed_mass_kg: cup.volume_below(pile) * PACKING_FRACTION * density,
        poured_m3: 0.0,
        open: false,
        avalanche_now: false,
        window_s: WINDOW as f32 / 48_000.0,
    }
}

/// The rattle's cooling in closed form (`rattle_speed`) against a plain Euler integration of
/// `dv/dt = -((1 - e^2) v^2 / (2 l) + g / 2)` (Haff's cooling and the landings under gravity)
/// in steps a thousand times finer; the rattle comes to rest in a finite time, a slow one
/// sooner than a fast one.
#[test]
fn the_rattle_cools_as_its_equation_and_comes_to_rest() {
    let (l, e) = (0.05f64, 0.5f64);
    let g = GRAVITY as f64;
    let (mut v, dt) = (2.0f64, 1e-6);
    let mut closed = v as f32;
    for _ in 0..50 {
        for _ in 0..1000 {
            v -= ((1.0 - e * e) * v * v / (2.0 * l) + g / 2.0) * dt;
        }
        closed = rattle_speed(closed, l as f32, e as f32, 1e-3);
    }
    assert!(
        ((closed as f64 - v) / v).abs() < 1e-3,
        "closed form {closed} m/s, integrated {v} m/s"
    );
    // at rest: from 2 m/s within (l / (k c)) atan(v0 / c), a third of a second here
    let rest = |v0: f32| {
        let mut v = v0;
        let mut t = 0;
        while v > 0.0 {
            v = rattle_speed(v, l as f32, e as f32, 1e-3);
            t += 1;
        }
        t as f64 * 1e-3
    };
    let k = (1.0 - e * e) / (2.0 * l);
    let c = (g / 2.0 / k).sqrt();
    assert!((rest(2.0) - (2.0 / c).atan() / (k * c)).abs() < 2e-3, "{}", rest(2.0));
    assert!(rest(0.3) < rest(1.0) && rest(1.0) < 0.35, "{} {}", rest(0.3), rest(1.0));
    // elastic beads (e = 0.85) too: the landings stop them
    assert!(rattle_speed(1.0, 0.05, 0.85, 0.45) == 0.0);
}

/// The slab between two cones (`heap_slab_m3`) against the two cones' volumes, and the slam
/// speed's two limits.
#[test]
fn slab_volume_and_slam_speed_follow_their_geometry() {
    let (r, repose) = (0.05f32, 33.0f32);
    let (start, stop) = avalanche_angles_rad(repose);
    let cone = |tan: f32| std::f32::consts::PI / 3.0 * r * r * (r * tan);
    let expect = cone(start.tan()) - cone(stop.tan());
    assert!((heap_slab_m3(r, repose) - expect).abs() < 1e-6 * expect.max(1e-12) + 1e-12);
    assert!((start.to_degrees() - repose).abs() < 1e-4);
    assert!((start - stop).to_degrees() - AVALANCHE_SPAN_DEG < 1e-4);
    // below the grip the bed stays put; far above it, a jar that reverses at once: 2 V
    assert_eq!(slam_speed_m_s(0.3, 4.0, GRAVITY), 0.0);
    let v = slam_speed_m_s(1.0, 1_000.0, GRAVITY);
    assert!((v - 2.0).abs() < 0.01, "{v}");
    let a = 2.0 * std::f32::consts::PI * 4.0 * 1.0;
    assert!((slam_speed_m_s(1.0, 4.0, 0.5 * GRAVITY) - 2.0 * (1.0 - 0.5 * GRAVITY / a)).abs() < 1e-6);
}

/// A cup tilted slowly: its bed's surface turns with it and avalanches exactly when the slope
/// reaches the angle of repose, coming to rest `AVALANCHE_SPAN_DEG` below it; no avalanche
/// below the angle of repose. Then the cup is held at a tilt below it: no more avalanches.
#[test]
fn avalanches_start_at_the_angle_of_repose_and_stop_below_it() {
    let repose = GrainMaterial::Sugar.data().repose_deg.to_radians();
    let (_, stop) = avalanche_angles_rad(GrainMaterial::Sugar.data().repose_deg);
    let mut state = GestureState::default();
    // towards 45 degrees at the hand's rate
    let input = sugar_mug(Gesture::Tilt, 0.5, 0.5);
    let mut first = None;
    let mut slope_before = 0.0;
    for w in 0..400 {
        let count_before = state.view(Gesture::Tilt).avalanches;
        slope_before = if w == 0 { 0.0 } else { slope_before };
        let _ = state.step(&input);
        let view = state.view(Gesture::Tilt);
        if view.avalanches > count_before {
            first.get_or_insert((w, slope_before, view.slope_rad, view.tilt_rad));
        } else {
            assert!(
                view.slope_rad < repose,
                "window {w}: slope {} rad without an avalanche",
                view.slope_rad
            );
        }
        slope_before = view.slope_rad;
    }
    let (w, before, after, tilt) = first.expect("a 45 degree tilt avalanches sugar");
    let step = 60f32.to_radians() * WINDOW as f32 / 48_000.0;
    assert!(
        before < repose && before + step >= repose - 1e-6,
        "window {w}: slope {before} before, repose {repose}"
    );
    assert!(
        (after - stop).abs() < 1e-6,
        "after the avalanche: {after} rad, expected {stop}"
    );
    assert!(tilt >= repose - 1e-6, "the first avalanche at a tilt of {tilt} rad");
    // held below the angle of repose (and the surface back to level with the cup): none
    let mut level = GestureState::default();
    let below = sugar_mug(Gesture::Tilt, 0.9 * repose / 90f32.to_radians(), 0.5);
    for _ in 0..400 {
        let _ = level.step(&below);
    }
    assert_eq!(
        level.view(Gesture::Tilt).avalanches,
        0,
        "a tilt below the angle of repose"
    );
}

/// A heap fed by a pour onto the surface avalanches once per slab's volume poured: the time
/// between avalanches is the slab between the start and stop cones over the pour's bulk flow.
#[test]
fn a_fed_heap_avalanches_once_per_slab() {
    let mut input = sugar_mug(Gesture::Pour, 0.0, 0.0);
    input.open = true;
    input.pile_radius_m = 0.05;
    input.pile_height_m = 0.05 * 33f32.to_radians().tan();
    input.bed_mass_kg = 0.1;
    let q = 2e-5; // m^3 of bulk grains a second (about 19 g/s of sugar)
    input.poured_m3 = q * input.window_s;
    let mut state = GestureState::default();
    let windows = (4.0 / input.window_s) as usize;
    for _ in 0..windows {
        let _ = state.step(&input);
    }
    let n = state.view(Gesture::Pour).avalanches as f32;
    let expect = 4.0 * q / heap_slab_m3(0.05, GrainMaterial::Sugar.data().repose_deg);
    assert!(
        (n - expect.floor()).abs() <= 1.0,
        "{n} avalanches in 4 s, expected {expect}"
    );
    assert!(n >= 3.0, "{n}");
}

/// Collisions per window of a shake through the whole engine: their rate rises with the shake
/// rate, and their strongest periodicity is the slams' (twice the shake rate: once against
/// each wall).
#[test]
fn a_shakes_collisions_follow_the_shake_rate() {
    let mut rates = Vec::new();
    for rate in [3.0f32, 6.0] {
        let settings = Settings {
            gesture: Gesture::Shake,
            gesture_amount: 1.0,
            shake_rate_hz: rate,
            fill: 0.4,
            trigger_mode: TriggerMode::Continuous,
            pour_rate_g_s: 0.0,
            ..Settings::default()
        };
        let mut engine = Engine::new(settings, 48_000.0, WINDOW);
        let mut buf: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; WINDOW]);
        let mut counts = Vec::new();
        let mut last = 0;
        let windows = 4 * 48_000 / WINDOW;
        for _ in 0..windows {
            let [a, b, c, d, e, f] = &mut buf;
            engine.process(Outputs {
                main: [a, b],
                grains: [c, d],
                cup: [e, f],
                surface: None,
                friction: None,
            });
            let now = engine.stats().collisions;
            counts.push((now - last) as f64);
            last = now;
        }
        // the spectrum of the count series: its strongest line above 1 Hz
        let fw = 48_000.0 / WINDOW as f64;
        let mean = counts.iter().sum::<f64>() / counts.len() as f64;
        let best = (2..200)
            .map(|k| {
                let f = k as f64 * 0.25;
                let (mut re, mut im) = (0.0, 0.0);
                for (i, c) in counts.iter().enumerate() {
                    let ph = 2.0 * std::f64::consts::PI * f * i as f64 / fw;
                    re += (c - mean) * ph.cos();
                    im += (c - mean) * ph.sin();
                }
                (f, re.hypot(im))
            })
            .fold((0.0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        assert!(
            (best.0 - 2.0 * rate as f64).abs() <= 0.25,
            "shaken at {rate} Hz: strongest periodicity {} Hz",
            best.0
        );
        rates.push(mean * fw);
    }
    assert!(
        rates[1] > 1.5 * rates[0],
        "collisions a second at 3 and 6 Hz: {rates:?}"
    );
}

/// The Friction stem is silent in a plain pour into an empty cup (the default preset's pour)
/// and sounds while a spoon stirs; a stir is about as loud as the default pour (the fit of
/// `materials::FRICTION_VIBRATION_SHARE`: within 6 dB).
#[test]
fn the_friction_stem_is_silent_in_a_pour_and_sounds_in_a_stir() {
    let pour = render(&ParamValues::default(), &opts(4.0, 512));
    assert!(pour.friction[0].iter().chain(&pour.friction[1]).all(|&x| x == 0.0));
    let stir = render(
        &values(&[("gesture", json!("stir")), ("fill", json!(0.5))]),
        &opts(4.0, 512),
    );
    let f = level(&stir.friction[0], 0.5, 2.5);
    assert!(f > -60.0, "stir: friction stem at {f:.1} dBFS");
    let (p, s) = (level(&pour.main[0], 1.0, 2.5), level(&stir.main[0], 0.5, 2.5));
    assert!((p - s).abs() < 6.0, "pour {p:.1} dBFS, stir {s:.1} dBFS");
    // and the spoon's own sound is most of it (the displaced grains knock quietly)
    assert!(f > level(&stir.grains[0], 0.5, 2.5));
}

/// Same seed and events, same samples, whatever the block size: a stir, a shake, a tilt.
#[test]
fn gestures_do_not_depend_on_the_block_size() {
    for g in ["stir", "shake", "tilt"] {
        let v = values(&[("gesture", json!(g)), ("fill", json!(0.5))]);
        let a = render(&v, &opts(2.5, 512));
        for block in [1usize, 37, 4096] {
            let b = render(&v, &opts(2.5, block));
            assert!(
                a.main == b.main && a.friction == b.friction && a.cup == b.cup,
                "{g}, blocks of {block}"
            );
        }
        assert!(rms(&a.main[0]) > 0.0, "{g} is silent");
    }
}

/// Keyswitches: C#1 (25) makes the next notes stir, and its release is no note-off: a note
/// held through a keyswitch's press and release goes on sounding.
#[test]
fn keyswitches_choose_the_gesture_and_play_nothing() {
    let v = values(&[("fill", json!(0.5))]);
    let note = |a: f64, b: f64, key: u8| NoteEvent {
        start_s: a,
        end_s: b,
        velocity: 100,
        key,
    };
    // a keyswitch alone: silence
    let alone = render_notes(&v, &opts(1.0, 512), &[note(0.1, 0.5, 25)]);
    assert!(alone.main[0].iter().all(|&x| x == 0.0));
    // stir from the keyswitch on: the friction stem sounds, the displaced grains knock
    let stir = render_notes(&v, &opts(3.0, 512), &[note(0.0, 0.05, 25), note(0.1, 2.5, 60)]);
    assert!(level(&stir.friction[0], 0.5, 2.4) > -60.0);
    assert!(stir.stats.collisions > 0);
    // a keyswitch pressed and released while the note is held does not end it
    let held = render_notes(
        &v,
        &opts(3.0, 512),
        &[note(0.0, 0.05, 25), note(0.1, 2.5, 60), note(0.5, 0.6, 25)],
    );
    assert!(
        level(&held.friction[0], 1.0, 2.4) > -60.0,
        "the stir stopped at the keyswitch's release"
    );
    assert_eq!(held.friction, stir.friction);
}

/// The avalanche key (E1, 28) makes a level bed give way: the friction stem sounds.
#[test]
fn the_avalanche_key_makes_the_bed_avalanche() {
    let v = values(&[("fill", json!(0.5))]);
    let r = render_notes(
        &v,
        &opts(2.0, 512),
        &[NoteEvent {
            start_s: 0.2,
            end_s: 0.3,
            velocity: 100,
            key: 28,
        }],
    );
    assert!(level(&r.friction[0], 0.2, 1.5) > -90.0);
    assert!(r.friction[0][..9_000].iter().all(|&x| x == 0.0), "before the key");
}

/// A tilt past the angle of repose: avalanches (friction), and tilted far enough, grains
/// spill over the rim onto the surface (the surface stem sounds).
#[test]
fn a_tilted_cup_avalanches_and_spills() {
    let v = values(&[
        ("gesture", json!("tilt")),
        ("fill", json!(0.7)),
        ("gesture_amount", json!(100.0)),
    ]);
    let r = render(&v, &opts(4.0, 512));
    assert!(level(&r.friction[0], 0.5, 3.0) > -70.0);
    assert!(level(&r.surface[0], 0.5, 3.0) > -90.0, "nothing spilled");
    assert!(r.stats.grain_surface > 0);
}

/// Nothing allocates in `process` while the gestures play (debug builds: the allocator aborts
/// inside `assert_no_alloc`): a stir, a shake and a tilt with keyswitches and the avalanche
/// key, in odd block sizes.
#[test]
fn gestures_never_allocate() {
    let settings = Settings {
        fill: 0.6,
        ..Settings::default()
    };
    let mut engine = Engine::new(settings, 48_000.0, 1024);
    let mut buf: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 1024]);
    let plan = [
        (0usize, Event::NoteOn { velocity: 0.0, key: 25 }),
        (0, Event::NoteOn { velocity: 1.0, key: 25 }),
        (10, Event::NoteOn { velocity: 0.8, key: 60 }),
        (40_000, Event::NoteOn { velocity: 1.0, key: 26 }),
        (80_000, Event::NoteOn { velocity: 1.0, key: 27 }),
        (120_000, Event::NoteOn { velocity: 1.0, key: 28 }),
        (150_000, Event::KeyOff(60)),
    ];
    assert_no_alloc(|| {
        let mut t = 0;
        let mut next = 0;
        for block in [1usize, 333, 1024, 77].iter().cycle().take(800) {
            let [a, b, c, d, e, f, g, h, i, j] = &mut buf;
            let ev = plan[next..]
                .iter()
                .take_while(|(at, _)| *at < t + block)
                .map(|&(at, e)| Timed::new(at - t, e));
            let n = ev.clone().count();
            feed::process_outputs(
                &mut engine,
                Outputs {
                    main: [&mut a[..*block], &mut b[..*block]],
                    grains: [&mut c[..*block], &mut d[..*block]],
                    cup: [&mut e[..*block], &mut f[..*block]],
                    surface: Some([&mut g[..*block], &mut h[..*block]]),
                    friction: Some([&mut i[..*block], &mut j[..*block]]),
                },
                ev,
            );
            next += n;
            t += block;
        }
    });
    assert!(engine.gesture_view().avalanches > 0);
}

fn report(name: &str, r: &Rendered) {
    for (stem, x) in [
        ("main", &r.main[0]),
        ("grains", &r.grains[0]),
        ("cup", &r.cup[0]),
        ("surface", &r.surface[0]),
        ("friction", &r.friction[0]),
    ] {
        let env: Vec<String> = x.chunks(12_000).map(|c| format!("{:4.0}", db(rms(c)))).collect();
        println!("{name:8} {stem:9} | {}", env.join(" "));
    }
}

/// Prints each gesture's stems' levels, a quarter-second at a time (`--ignored --nocapture`).
#[test]
#[ignore]
fn print_gestures() {
    for g in ["stir", "shake", "tilt"] {
        let v = values(&[("gesture", json!(g)), ("fill", json!(0.5))]);
        report(g, &render(&v, &opts(4.0, 512)));
    }
    for target in ["cup", "surface"] {
        let v = values(&[("pour_target", json!(target))]);
        report(target, &render(&v, &opts(6.0, 512)));
    }
}

/// Pour, then stir: the spoon stirs what was poured (a gesture that starts once all is quiet
/// keeps the grains the cup holds), not the `fill` setting's empty cup.
#[test]
fn a_stir_after_a_pour_stirs_what_was_poured() {
    let settings = Settings {
        fill: 0.0,
        auto_fill: true,
        ..Settings::default()
    };
    let mut engine = Engine::new(settings, 48_000.0, 512);
    let mut buf: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 512]);
    let mut run = |engine: &mut Engine, seconds: f32| {
        for _ in 0..(seconds * 48_000.0 / 512.0) as usize {
            let [a, b, c, d, e, f] = &mut buf;
            engine.process(Outputs {
                main: [a, b],
                grains: [c, d],
                cup: [e, f],
                surface: None,
                friction: None,
            });
        }
    };
    engine.note_on(1.0, 60);
    run(&mut engine, 3.0);
    engine.key_off(60);
    // long enough for everything to settle: the stir starts afresh
    run(&mut engine, 12.0);
    let poured = engine.pour_state().pile_height_m;
    assert!(poured > 0.003, "the pour left {poured} m of sugar");
    engine.note_on(1.0, 25);
    engine.key_off(25);
    engine.note_on(0.8, 60);
    run(&mut engine, 0.5);
    let view = engine.gesture_view();
    assert_eq!(view.gesture, Gesture::Stir);
    assert!(
        view.spoon_depth_m > 0.4 * poured,
        "the spoon is {} m deep in {poured} m of sugar",
        view.spoon_depth_m
    );
}

/// Stirred grains settle for `SETTLE_S` after the spoon stops (a new stir within it goes on
/// from their state rather than starting afresh, as a pour's pile does), then all is quiet.
#[test]
fn stirred_grains_settle_then_go_quiet() {
    let mut state = GestureState::default();
    assert!(!state.is_active());
    let stir = sugar_mug(Gesture::Stir, 0.8, 0.5);
    let _ = state.step(&stir);
    assert!(state.is_active());
    let still = sugar_mug(Gesture::Stir, 0.0, 0.5);
    let windows = (SETTLE_S / still.window_s).ceil() as usize;
    for w in 0..windows - 1 {
        let _ = state.step(&still);
        assert!(state.is_active(), "quiet after {w} windows");
    }
    let _ = state.step(&still);
    let _ = state.step(&still);
    assert!(!state.is_active());
}

/// A gesture's render following `curve` (its amount in percent over seconds).
fn gesture_render(v: &ParamValues, gesture: Gesture, curve: &str, seconds: f64) -> Rendered {
    let o = RenderOptions {
        pour: Some(PourCurve::parse_for(curve, gesture).unwrap()),
        ..opts(seconds, 512)
    };
    render(v, &o)
}

/// The default preset's mug held half full (no auto fill), for `gesture`.
fn half_full_mug(gesture: &str) -> ParamValues {
    values(&[
        ("gesture", json!(gesture)),
        ("fill", json!(0.5)),
        ("auto_fill", json!(false)),
    ])
}

/// The seconds from `from` until `x`'s level (in 10 ms steps) stays `drop` dB below `reference`.
fn quiet_after(x: &[f32], from: f64, reference: f64, drop: f64) -> f64 {
    let fs = 48_000.0;
    let step = (0.01 * fs) as usize;
    let start = (from * fs) as usize;
    let loud: Vec<bool> = x[start..].chunks(step).map(|c| db(rms(c)) > reference - drop).collect();
    let last = loud.iter().rposition(|&l| l).map_or(0, |k| k + 1);
    last as f64 * 0.01
}

/// `x` above 500 Hz: two second-order Butterworth high-passes (the RBJ cookbook's, Q = 0.707)
/// in a row. The sliding's own sound, without the ring of the friction's largest patches
/// (the contact's micro-plates, Q = 10 by `PATCH_LOSS_FACTOR`: a 75 Hz one rings for 0.3 s
/// after the slide has stopped, as the cup's modes ring in its stem).
fn above_500_hz(x: &[f32]) -> Vec<f32> {
    let w = 2.0 * std::f64::consts::PI * 500.0 / 48_000.0;
    let alpha = w.sin() / (2.0 * std::f64::consts::FRAC_1_SQRT_2);
    let (c, a0) = (w.cos(), 1.0 + alpha);
    let b = [(1.0 + c) / 2.0 / a0, -(1.0 + c) / a0, (1.0 + c) / 2.0 / a0];
    let a = [-2.0 * c / a0, (1.0 - alpha) / a0];
    let mut y: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    for _ in 0..2 {
        let (mut x1, mut x2, mut y1, mut y2) = (0.0, 0.0, 0.0, 0.0);
        for v in y.iter_mut() {
            let out = b[0] * *v + b[1] * x1 + b[2] * x2 - a[0] * y1 - a[1] * y2;
            (x2, x1, y2, y1) = (x1, *v, y1, out);
            *v = out;
        }
    }
    y.into_iter().map(|v| v as f32).collect()
}

/// A spoon's stroke stops when the spoon stops (issue 45): the grains it sheared move at about
/// half its speed u and stop, under their weight and friction, within u / (2 mu_d g) — 45 ms
/// for sugar at 80 % — and the model stops them at once (its sliding voices and impacts end
/// in the window the spoon stops), so within that time the grains stem is silent and the
/// friction stem's sliding (above 500 Hz) 40 dB below the stroke, which held its level
/// until the spoon stopped.
#[test]
fn a_stir_stops_when_the_spoon_stops() {
    let v = half_full_mug("stir");
    let r = gesture_render(&v, Gesture::Stir, "0:80,1.5:80,1.501:0", 2.5);
    let u = 0.8 * STIR_MAX_SPEED_M_S;
    let pair = Voice::GrainGrain.pair(GrainMaterial::Sugar, FrictionMaterial::Cup(CupMaterial::Ceramic));
    let t_stop = (0.5 * u / (pair.mu_dynamic * GRAVITY)) as f64;
    let sliding = above_500_hz(&r.friction[0]);
    for (stem, x) in [("friction above 500 Hz", &sliding), ("grains", &r.grains[0])] {
        let stroke = level(x, 0.5, 1.5);
        let last = level(x, 1.45, 1.5);
        let quiet = quiet_after(x, 1.5, stroke, 40.0);
        println!(
            "stir, {stem}: stroke {stroke:.1} dB, its last 50 ms {last:.1} dB, 40 dB down {:.0} ms after the spoon stops (the grains stop within {:.0} ms)",
            1e3 * quiet,
            1e3 * t_stop
        );
        assert!(stroke > -70.0, "{stem}: {stroke} dB");
        assert!(
            (last - stroke).abs() < 6.0,
            "{stem}: the stroke fades before the spoon stops"
        );
        assert!(quiet <= t_stop, "{stem}: {quiet} s to fall 40 dB");
    }
}

/// A tilted cup's avalanche stops once the cup stops turning, within the run gravity gives
/// the layer (issue 45): a layer h thick flows down the slope's length L at most at
/// sqrt(g h) (Froude number one, Pouliquen 1999), a half sine, so it has run within
/// L / ((2/pi) sqrt(g h)), 1.26 s for the thinnest, two grains of sugar over a mug (L = 2R);
/// its grains and the friction of its slide (above 500 Hz: `above_500_hz`) are then 60 dB
/// down. The flow does not stop the instant the cup does (the layer on its way runs on).
#[test]
fn a_tilted_cups_avalanche_stops_within_its_run_once_the_cup_stops_turning() {
    let v = half_full_mug("tilt");
    let r = gesture_render(&v, Gesture::Tilt, "0:60,4:60", 4.0);
    let stops = (0.6 * MAX_TILT_DEG / TILT_RATE_DEG_S) as f64;
    let cup = Cup::for_settings(&v.to_settings());
    let d = GrainMaterial::Sugar.data().diameter_m;
    let run = (2.0 * cup.rim_radius / (2.0 / std::f32::consts::PI * (GRAVITY * 2.0 * d).sqrt())) as f64;
    let sliding = above_500_hz(&r.friction[0]);
    for (stem, x) in [("friction above 500 Hz", &sliding), ("grains", &r.grains[0])] {
        let flow = level(x, stops - 0.3, stops);
        let on = level(x, stops + 0.05, stops + 0.15);
        let quiet = quiet_after(x, stops, flow, 60.0);
        println!("tilt {stem}: flow {flow:.1} dB, 0.1 s after the cup stops {on:.1} dB, 60 dB down {quiet:.2} s after (run {run:.2} s)");
        assert!(flow > -80.0, "{stem}: {flow} dB");
        assert!(on > flow - 10.0, "{stem}: the flow stopped with the cup");
        assert!(quiet <= run, "{stem}: {quiet} s to fall 60 dB");
    }
}

/// A thin layer slides down the tilted cup's floor once the tilt passes the grain–cup
/// friction angle and jams against the low wall (issue 45): its front row knocks on the wall
/// at the layer's speed v, the rest of it runs into the grains stopped ahead, row by row,
/// over the layer's length over its speed, L / v, every grain once; then it is still.
/// (It knocked on the wall all at once in one window before: rendered, the cup at -10 dB FS
/// in 10 ms, 19 dB above the slide's friction.)
#[test]
fn a_thin_layer_slides_and_jams_against_the_low_wall_over_its_length() {
    let input = sugar_mug(Gesture::Tilt, 0.5, 0.01);
    let grain_mass = input.grain_density * 4.0 / 3.0 * std::f32::consts::PI * input.grain_radius_m.powi(3);
    let grains = input.bed_mass_kg / grain_mass;
    let run = 2.0 * input.cup.floor_radius;
    let d = 2.0 * input.grain_radius_m;
    let mut state = GestureState::default();
    state.start();
    let (mut slid, mut wall, mut speed, mut rows, mut first_row, mut last_row) = (0, 0.0, 0.0, 0.0, None, 0);
    let mut last_burst = 0;
    for w in 0..2000 {
        let out = state.step(&input);
        if out.bursts.iter().any(Option::is_some) {
            last_burst = w;
        }
        if out.sliding[Voice::GrainCup as usize].speed_m_s > 0.0 {
            slid += 1;
        }
        for b in out.bursts.iter().flatten() {
            match b.place {
                Place::Wall(_) => {
                    wall += b.count;
                    speed = b.mean_speed_m_s;
                }
                Place::Bed => {
                    rows += b.count;
                    first_row.get_or_insert(w);
                    last_row = w;
                    assert_eq!(b.mean_speed_m_s, speed, "the rows arrive at the layer's speed");
                }
                _ => {}
            }
        }
    }
    let window = input.window_s;
    let jam = (last_row + 1 - first_row.expect("the layer jammed")) as f32 * window;
    println!(
        "thin layer: slid {:.2} s, reached the wall at {speed:.2} m/s, {wall:.0} of {grains:.0} grains on the wall, the rest over {:.0} ms (L / v = {:.0} ms)",
        slid as f32 * window,
        1e3 * jam,
        1e3 * run / speed
    );
    assert!(slid > 10, "the layer slid");
    assert!(speed > 0.1, "{speed} m/s");
    assert!((wall - grains * d / run).abs() < 1.0, "the front row: {wall} grains");
    assert!(
        ((wall + rows) / grains - 1.0).abs() < 1e-3,
        "every grain once: {}",
        wall + rows
    );
    assert!((jam - run / speed).abs() <= window, "{jam} s");
    // then it is still: no impact after the jam's last row, the cup held tilted 4.7 s more
    assert_eq!(last_burst, last_row, "impacts after the jam");
}
