//! The collision databank through the whole engine (`statistics` = bank, thesis 7.1): no
//! allocation while it plays, a pour that is heard, and the lookup the engine reports.
//! Nothing here depends on the shipped bank's numbers.

use granary_engine::control::choices::CupShape;
use granary_engine::control::params::ParamValues;
use granary_engine::generator::{bank_fill_step, BANK_FILL_STEPS};
use granary_engine::render::{render, RenderOptions};
use granary_engine::statistics::bank::Family;
use granary_engine::{Engine, Outputs, PourTarget, Settings, Statistics, TriggerMode};
use nice_assert_no_alloc::assert_no_alloc;

/// `process` never allocates with the bank's statistics (debug builds: the allocator aborts
/// inside `assert_no_alloc`): a pour into a cup and onto the surface, another cup shape, a
/// switch between the model and the bank, realtime and reference quality, odd block sizes.
#[test]
fn the_bank_statistics_never_allocate() {
    let mut settings = Settings {
        statistics: Statistics::Bank,
        trigger_mode: TriggerMode::Continuous,
        pour_rate_g_s: 40.0,
        ..Settings::default()
    };
    let mut engine = Engine::new(settings, 48_000.0, 1024);
    let mut buf: [Vec<f32>; 10] = std::array::from_fn(|_| vec![0.0; 1024]);
    assert_no_alloc(|| {
        for (i, &block) in [1usize, 333, 1024, 77, 512].iter().cycle().take(200).enumerate() {
            match i {
                40 => settings.cup_shape = Some(CupShape::Bowl),
                80 => settings.pour_target = PourTarget::Surface,
                120 => settings.statistics = Statistics::Model,
                140 => {
                    settings.statistics = Statistics::Bank;
                    settings.pour_target = PourTarget::Cup;
                    engine.set_offline(true);
                }
                _ => {}
            }
            engine.set_settings(&settings);
            let [a, b, c, d, e, f, g, h, fl, fr] = &mut buf;
            engine.process(Outputs {
                main: [&mut a[..block], &mut b[..block]],
                grains: [&mut c[..block], &mut d[..block]],
                cup: [&mut e[..block], &mut f[..block]],
                surface: Some([&mut g[..block], &mut h[..block]]),
                friction: Some([&mut fl[..block], &mut fr[..block]]),
            });
        }
    });
    assert!(engine.stats().collisions > 1000, "{:?}", engine.stats());
}

/// A pour drawn from the bank is heard, finite and bounded, and is not the model's; the
/// model's is the default (a preset without the key keeps it).
#[test]
fn a_pour_from_the_bank_is_heard_and_differs_from_the_model() {
    let opts = RenderOptions {
        seconds: 1.2,
        sample_rate: 48_000.0,
        block_size: 512,
        pour: None,
    };
    let mut v = ParamValues::default();
    assert_eq!(v.to_settings().statistics, Statistics::Bank);
    v.set_text("statistics", "model").unwrap();
    let model = render(&v, &opts);
    v.set_text("statistics", "bank").unwrap();
    assert_eq!(v.to_settings().statistics, Statistics::Bank);
    let bank = render(&v, &opts);
    let rms = |x: &[f32]| (x.iter().map(|&s| s as f64 * s as f64).sum::<f64>() / x.len() as f64).sqrt();
    // the main output within the limiter's ceiling; the stems, before the limiter, finite
    // and within 6 dB of full scale (the default gain is the model's calibration, and the
    // bank's cubes of sugar are the louder pour: its grains stem peaks at 1.01 here)
    for (x, bound) in [(&bank.main[0], 1.0), (&bank.grains[0], 2.0), (&bank.cup[0], 2.0)] {
        assert!(x.iter().all(|s| s.is_finite() && s.abs() <= bound));
        assert!(rms(x) > 1e-5, "silent: {}", rms(x));
    }
    assert!(bank.stats.collisions > 1000);
    assert_ne!(model.main[0], bank.main[0]);
}

/// The engine's lookup is the pour's: its family, the material's restitution and friction, the pour's
/// current fill (to a thousandth) and the fall height setting.
#[test]
fn the_engine_looks_up_its_pour() {
    let settings = Settings {
        statistics: Statistics::Bank,
        trigger_mode: TriggerMode::Continuous,
        pour_rate_g_s: 40.0,
        cup_shape: Some(CupShape::Jar),
        fall_height_m: 0.2,
        ..Settings::default()
    };
    let mut engine = Engine::new(settings, 48_000.0, 512);
    let mut buf: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; 512]);
    for _ in 0..100 {
        let [a, b, c, d, e, f] = &mut buf;
        engine.process(Outputs {
            main: [a, b],
            grains: [c, d],
            cup: [e, f],
            surface: None,
            friction: None,
        });
    }
    let l = engine.bank_lookup();
    assert_eq!(l.asked, Family::Cup(CupShape::Jar));
    assert_eq!(l.restitution.asked, settings.grain_material.data().restitution);
    assert_eq!(l.friction.asked, settings.grain_material.friction());
    // the pour's fill to its step (`generator::BANK_FILL_STEPS`)
    let fill = engine.pour_state().fill;
    assert_eq!(l.fill.asked, bank_fill_step(fill) as f32 / BANK_FILL_STEPS);
    assert!((l.fill.asked - fill).abs() <= 0.5 / BANK_FILL_STEPS, "{fill}");
    assert!(l.fill.asked > 0.0, "the jar fills as it is poured");
    assert_eq!(l.fall_height_m.asked, 0.2);
    let mut surface = settings;
    surface.pour_target = PourTarget::Surface;
    engine.set_settings(&surface);
    assert_eq!(engine.bank_lookup().asked, Family::Surface);
}

/// Which factory scenes the shipped bank holds without clamping an axis (issue 48: "no
/// clamped axis in any factory scene"): every pour but sand's 0.1 and 0.2 mm grains, whose
/// size the bank does not hold yet
/// (docs/dem.md, "Sizes under 2 mm"; the gestures' grains are moved by their mechanics and
/// are not drawn from the bank while nothing pours). This one depends on the shipped bank's
/// grid (not its numbers): a bank that loses a scene fails here, and one that gains one
/// too, so that the list stays true.
#[test]
fn the_factory_scenes_the_bank_holds() {
    use granary_engine::control::choices::Gesture;
    use granary_engine::control::preset;
    use granary_engine::derived::Derived;
    use granary_engine::generator::CellStatistics;
    use granary_engine::pour::scene::PourState;
    use granary_engine::statistics::bank::shipped;
    let mut clamped = Vec::new();
    let mut held = 0;
    for (id, p) in preset::factory() {
        let s = p.values.to_settings().sanitized();
        if s.gesture != Gesture::Pour {
            continue;
        }
        let statistics = CellStatistics::bank_for(shipped(), &s, &Derived::new(&s));
        let state = PourState {
            fill: s.fill,
            ..PourState::default()
        };
        let l = statistics.lookup(&state).expect("the bank's statistics");
        if l.clamped() || l.fell_back() {
            clamped.push(id);
        } else {
            held += 1;
        }
    }
    clamped.sort();
    assert_eq!(clamped, ["sand_onto_concrete", "sand_wooden_bowl"]);
    assert_eq!(held, 15, "the pours the bank holds");
}
