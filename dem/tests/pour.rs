//! Short pours: no grain lost through the cup's mesh or the surface (mass conservation), and
//! the contact log as a contact file that Granary's own reader takes and renders to sound.

use granary_cli::contacts::ContactFile;
use granary_dem::{Body, Scene, Sim};
use granary_engine::control::params::ParamValues;
use granary_engine::render::{RenderOptions, Renderer};

/// The default preset (sugar into a ceramic mug) at a scale a debug test runs in seconds:
/// 2 mm grains at 5 g/s (about 750 grains a second), with `extra` settings.
fn values(extra: &[(&str, &str)]) -> ParamValues {
    let mut v = ParamValues::default();
    for (id, x) in [("grain_size", "4"), ("pour_rate", "5")].iter().chain(extra) {
        v.set_text(id, x).unwrap();
    }
    v
}

fn pour(values: &ParamValues, pour_s: f64, total_s: f64) -> Sim {
    let mut sim = Sim::new(Scene::new(&values.to_settings()), pour_s);
    sim.run_until(total_s);
    sim
}

#[test]
fn every_grain_poured_is_in_the_cup_in_flight_or_spilled() {
    // the stream on the axis onto the floor, and against the wall from the highest spout
    for extra in [vec![], vec![("aim", "1"), ("fall_height", "30")]] {
        let sim = pour(&values(&extra), 0.1, 0.7);
        let c = sim.census();
        eprintln!("{extra:?}: {c:?}, {} contacts", sim.contacts.len());
        assert!(c.spawned >= 60, "{c:?}");
        assert_eq!(sim.world.bodies.len(), c.spawned, "every grain is still simulated");
        assert_eq!(c.lost, 0, "grains through the mesh or the surface: {c:?}");
        assert_eq!(c.spawned, c.in_cup + c.in_flight + c.spilled, "{c:?}");
        assert!(c.in_cup >= c.spawned * 9 / 10, "the stream lands in the cup: {c:?}");
        assert!(c.in_flight <= c.spawned / 10, "settled after 0.4 s: {c:?}");
        let kinds = |k: Body| sim.contacts.iter().filter(|x| x.other == k).count();
        assert!(
            kinds(Body::Cup) >= c.spawned,
            "each grain hits the cup: {}",
            kinds(Body::Cup)
        );
        assert!(kinds(Body::Grain) > 0);
    }
}

/// Shaped grains (cubes of sugar, rice grains as convex hulls, free to turn) poured into the
/// mug: none lost through its mesh, each lands in it and comes to rest there.
#[test]
fn shaped_grains_poured_stay_in_the_cup() {
    // 2 mm sugar (as the other pours here) and real rice, 2.8 mm
    for (material, size) in [("sugar", "4"), ("rice", "1")] {
        let v = values(&[("grain_material", material), ("grain_size", size), ("pour_rate", "8")]);
        let mut sim = Sim::new(Scene::new(&v.to_settings()).own_shape(), 0.1);
        sim.run_until(1.0);
        let c = sim.census();
        eprintln!(
            "{material} ({}): {c:?}, {} contacts",
            sim.scene.shape.id(),
            sim.contacts.len()
        );
        assert!(c.spawned >= 40, "{c:?}");
        assert_eq!(c.lost, 0, "grains through the mesh or the surface: {c:?}");
        assert!(c.in_cup >= c.spawned * 9 / 10, "the stream lands in the cup: {c:?}");
        let cup_hits = sim.contacts.iter().filter(|x| x.other == Body::Cup).count();
        assert!(cup_hits >= c.spawned, "each grain hits the cup: {cup_hits}");
    }
}

#[test]
fn the_log_is_a_contact_file_that_renders() {
    let values = values(&[]);
    let sim = pour(&values, 0.05, 0.4);
    let mut csv = Vec::new();
    sim.write_contacts(&mut csv).unwrap();
    let file = ContactFile::parse(&csv).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&csv)));
    assert_eq!(file.contacts.len(), sim.contacts.len());
    assert!(file.contacts.len() > 20, "{} contacts", file.contacts.len());
    assert_eq!(file.grain, "sugar");
    assert_eq!(file.cup.as_deref(), Some("ceramic"));
    // every contact starts in the pour's time, in the cup or on what it stands on
    let cup = sim.scene.cup.unwrap();
    for c in &file.contacts {
        assert!(c.time_s > 0.0 && c.time_s < 0.4, "{c:?}");
        let r = c.position_m[0].hypot(c.position_m[1]);
        assert!(r < cup.widest_radius() + cup.wall_thickness + 0.01, "{c:?}");
    }
    let mut rv = values.clone();
    file.apply(&mut rv).unwrap();
    let opts = RenderOptions {
        seconds: file.last_s() + 0.2,
        sample_rate: 48_000.0,
        block_size: 256,
        pour: None,
    };
    let out = Renderer::contacts(&rv, &opts, &file.contacts).unwrap().collect();
    let peak = |x: &[Vec<f32>; 2]| x.iter().flatten().fold(0.0f32, |m, s| m.max(s.abs()));
    eprintln!("main peak {:.3e}, cup stem {:.3e}", peak(&out.main), peak(&out.cup));
    assert!(out.main.iter().flatten().all(|s| s.is_finite()));
    assert!(peak(&out.main) > 1e-3, "a rendered pour is not silent");
    assert!(peak(&out.cup) > 0.0, "grain-cup contacts ring the cup");
}

#[test]
fn a_fast_grain_does_not_tunnel_through_the_floor() {
    // a real sugar grain (0.5 mm) thrown down at 10 m/s: 2 mm a step, four diameters, into
    // a floor 4 mm thick; caught by the continuous collision detection
    let mut sim = Sim::new(Scene::new(&ParamValues::default().to_settings()), 0.0);
    sim.spawn_grain([0.0, 0.0, 0.011], [0.0, 0.0, -10.0]);
    sim.run_until(0.01);
    let c = sim.census();
    assert_eq!(c.lost, 0, "{c:?}");
    let hit = sim.contacts.first().expect("it hits the floor");
    assert_eq!(hit.other, Body::Cup);
    assert!((hit.speed_m_s / 10.0 - 1.0).abs() < 0.02, "{hit:?}");
}
