//! A single grain dropped onto the cup's floor: the impact speed and time against free fall,
//! and one bounce's restitution against the material's.

use granary_dem::{Body, Scene, Sim};
use granary_engine::base::materials::GRAVITY;
use granary_engine::control::choices::Shape;
use granary_engine::Settings;

/// The default preset's scene with nothing poured, and one grain dropped from rest with its
/// centre `h` above the cup's floor; simulated for `seconds`. A sphere of the grain's volume
/// (the closed forms are a sphere's; tests/shapes.rs drops the shaped grains).
fn drop(settings: &Settings, h: f32, seconds: f64) -> Sim {
    let mut sim = Sim::new(Scene::new(settings).with_shape(Shape::Sphere), 0.0);
    sim.spawn_grain([0.0, 0.0, h], [0.0, 0.0, 0.0]);
    sim.run_until(seconds);
    sim
}

fn glass_beads() -> Settings {
    let mut v = granary_engine::control::params::ParamValues::default();
    v.set_text("grain_material", "glass_beads_2mm").unwrap();
    v.to_settings()
}

#[test]
fn a_dropped_grain_hits_the_floor_at_free_fall_speed_and_time() {
    let s = Settings::default();
    let h = 0.1;
    let sim = drop(&s, h, 0.2);
    let first = sim.contacts.first().expect("the grain hits the floor");
    assert_eq!(first.other, Body::Cup);
    let fall = h - sim.scene.grain_radius_m;
    let v = (2.0 * GRAVITY * fall).sqrt();
    let t = (2.0 * fall / GRAVITY).sqrt() as f64;
    eprintln!(
        "impact {:.4} m/s (free fall {v:.4}), at {:.5} s ({t:.5}), normal {:?}, at {:?}",
        first.speed_m_s, first.time_s, first.normal, first.position_m
    );
    assert!((first.speed_m_s / v - 1.0).abs() < 0.02, "{} vs {v}", first.speed_m_s);
    assert!((first.time_s / t - 1.0).abs() < 0.02, "{} vs {t}", first.time_s);
    assert!(first.normal[2] > 0.99, "the floor pushes up: {:?}", first.normal);
    assert!(first.position_m[2].abs() < 1e-4, "on the floor: {:?}", first.position_m);
}

#[test]
fn one_bounce_keeps_the_materials_restitution() {
    for s in [Settings::default(), glass_beads()] {
        let e = s.grain_material.data().restitution;
        let sim = drop(&s, 0.1, 0.5);
        let hits: Vec<_> = sim.contacts.iter().filter(|c| c.other == Body::Cup).collect();
        assert!(hits.len() >= 2, "{} bounces", hits.len());
        // the rebound speed is the next impact's (a ballistic flight there and back)
        let measured = hits[1].speed_m_s / hits[0].speed_m_s;
        eprintln!(
            "{}: restitution {measured:.4} (table {e}), impacts {:.4}, {:.4} m/s",
            s.grain_material.id(),
            hits[0].speed_m_s,
            hits[1].speed_m_s
        );
        assert!((measured / e - 1.0).abs() < 0.05, "{measured} vs {e}");
    }
}
