//! Shaped grains in the simulation (`granary_dem::shapes`): each material's own grain, free to
//! turn. Dropped one by one from random orientations, a grain comes to rest the way the
//! mechanics of a rigid body on a plane allows (a flat grain on its face, a long one on its
//! side, a cube on a face, its centre its half-thickness above the floor); each landing is
//! logged where the grain's surface meets the floor, at the speed of its fall.

use granary_dem::bank::{self, Spec, CELLS};
use granary_dem::{Body, Scene, Sim, DT_S, SETTLED_SPEED_M_S};
use granary_engine::base::materials::GRAVITY;
use granary_engine::control::choices::{CupShape, Shape};
use granary_engine::control::params::ParamValues;

/// Grains of `material` dropped one at a time onto concrete from `height_m` (their centres),
/// each in a scene of its own (seed `1..=n`), simulated for `seconds`.
fn drops(material: &str, n: u64, height_m: f32, seconds: f64) -> Vec<Sim> {
    (1..=n)
        .map(|seed| {
            let mut v = ParamValues::default();
            for (id, x) in [
                ("grain_material", material),
                ("pour_target", "surface"),
                ("surface_material", "concrete"),
                ("seed", &seed.to_string()),
            ] {
                v.set_text(id, x).unwrap();
            }
            let mut sim = Sim::new(Scene::new(&v.to_settings()).own_shape(), 0.0);
            sim.spawn_grain([0.0, 0.0, height_m], [0.0; 3]);
            sim.run_until(seconds);
            sim
        })
        .collect()
}

/// The angle between the grain's body axis `axis` (0 x, 1 y, 2 z) and the vertical, degrees.
fn tilt_deg(sim: &Sim, axis: usize) -> f32 {
    let b = &sim.world.bodies[sim.grains()[0]];
    let mut e = [0.0f32; 3];
    e[axis] = 1.0;
    let u = b.rotation() * rapier3d::prelude::Vector::from(e);
    u.z.abs().min(1.0).acos().to_degrees()
}

/// Dropped from 2 cm onto concrete at random orientations, each grain comes to rest in the
/// position a rigid body of its shape is stable in: a lentil and a disc flat on a face (their
/// symmetry axis within 10 degrees of vertical), a rice grain on its side (its long axis
/// within 10 degrees of horizontal), a cube on a face; each with its centre its
/// half-thickness above the floor (within 5 %), none through it.
#[test]
fn dropped_grains_come_to_rest_as_rigid_bodies_do() {
    // (material, the body axis, whether it ends vertical (else horizontal)): the lentil's
    // axis is z, rapier's cylinder's y, the rice grain's long axis x
    for (material, axis, vertical) in [
        ("lentils", 2, true),
        ("plastic_discs_4mm", 1, true),
        ("rice", 0, false),
        ("salt", 2, true),
    ] {
        for sim in drops(material, 6, 0.02, 0.8) {
            let h = sim.grains()[0];
            let mut tilt = tilt_deg(&sim, axis);
            if material == "salt" {
                // a cube on any face: its nearest axis to the vertical
                tilt = (0..3).map(|k| tilt_deg(&sim, k)).fold(f32::INFINITY, f32::min);
            }
            let height = sim.position_m(h).z - sim.scene.surface_z_m;
            let speed = sim.velocity_m_s(h).length();
            let half = sim.form.min_half_m;
            eprintln!(
                "{material}: {:.4} m/s, axis {axis} {tilt:.1} deg from the vertical, centre {:.3} mm up (half-thickness {:.3} mm), {} contacts",
                speed,
                1e3 * height,
                1e3 * half,
                sim.contacts.len()
            );
            assert!(speed < SETTLED_SPEED_M_S, "{material} at rest");
            if vertical {
                assert!(tilt < 10.0, "{material} flat on a face: {tilt} deg");
            } else {
                assert!(tilt > 80.0, "{material} on its side: {tilt} deg");
            }
            assert!(
                (height / half - 1.0).abs() < 0.05,
                "{material}: centre {height} m up, half-thickness {half} m"
            );
            assert_eq!(sim.census().lost, 0);
        }
    }
}

/// A shaped grain lands on whatever point of it is lowest: the logged contact is on the floor
/// (where a sphere's rule, a radius below the centre, would put a rice grain landing on its
/// tip 1.3 radii above it) within a time step's travel, pushed straight up, at the speed of its fall (g t from rest).
#[test]
fn a_shaped_grains_landing_is_logged_where_it_touches_at_the_speed_of_its_fall() {
    for material in [
        "rice",
        "lentils",
        "plastic_discs_4mm",
        "coffee_beans",
        "sugar",
        "gravel",
    ] {
        let mut worst = [0.0f32; 2];
        for sim in drops(material, 6, 0.03, 0.1) {
            let c = sim.contacts.first().unwrap_or_else(|| panic!("{material} lands"));
            assert_eq!(c.other, Body::Surface);
            // within a step's travel of the floor (a start found already touching is logged at
            // the step's start, `Sim::step`), in radii
            let a = sim.scene.grain_radius_m;
            let step = c.speed_m_s * DT_S / a;
            let dz = (c.position_m[2] - sim.scene.surface_z_m) / a;
            let dv = c.speed_m_s / (GRAVITY * c.time_s as f32) - 1.0;
            worst = [worst[0].max(dz.abs()), worst[1].max(dv.abs())];
            assert!(
                dz.abs() < step,
                "{material}: landing {dz} radii off the floor (a step {step}): {c:?}"
            );
            assert!(dv.abs() < 0.01, "{material}: landing speed {dv} off g t: {c:?}");
            assert!(c.normal[2] > 0.999, "{c:?}");
        }
        eprintln!(
            "{material}: landings at most {:.4} radii off the floor, speeds {:.4} off g t",
            worst[0], worst[1]
        );
    }
}

/// The figures of docs/dem.md's "Shaped grains" table of cells: one of the databank's sweep
/// scenes (1,000 grains into the empty mug from 30 cm) simulated as the shipped bank has it
/// (spheres) and in the grains' own shapes, `bank::reduce`'s collisions per grain poured,
/// printed cell by cell. A shaped grain landing on the pile rocks and slaps down onto its
/// neighbours: the impact zone holds at least a third more collisions a grain than the
/// spheres', and the whole scene more. `#[ignore]`d (about four minutes in release):
///
///     cargo test --release -p granary-dem --test shapes -- --ignored --nocapture
#[test]
#[ignore = "about four minutes in release: cargo test --release -p granary-dem --test shapes -- --ignored"]
fn shaped_grains_against_the_banks_spheres() {
    let zone = CELLS.iter().position(|&c| c == "impact_zone").unwrap();
    for (grain, size) in [("rice", 1.0), ("sugar", 4.0)] {
        for seed in [1, 2] {
            let spec = Spec {
                cup: Some(CupShape::Mug),
                grain,
                grain_size: size,
                fill: 0.0,
                fall_height_m: 0.3,
                grains_per_s: bank::GRAINS_PER_S,
                pour_s: bank::POUR_S,
                seed,
                runs: 1,
                friction: None,
                shape: Shape::Sphere,
            };
            let cells = |scene: Scene| {
                let v_ref = bank::impact_speed(&scene);
                let (sim, wall) = bank::simulate_scene(scene, spec.pour_s);
                let rates: Vec<f64> = bank::reduce(&sim, v_ref).iter().map(|c| c.rate).collect();
                (rates, wall)
            };
            let (sphere, ws) = cells(bank::scene(&spec));
            let (own, wo) = cells(bank::scene(&spec).own_shape());
            let (ts, to): (f64, f64) = (sphere.iter().sum(), own.iter().sum());
            eprintln!(
                "{grain} x{size}, seed {seed}: all cells {ts:.2} -> {to:.2} ({:+.0} %), wall {ws:.0} s -> {wo:.0} s",
                100.0 * (to / ts - 1.0)
            );
            for (i, cell) in CELLS.iter().enumerate() {
                if sphere[i] > 0.01 * ts || own[i] > 0.01 * to {
                    eprintln!("  {cell:<14} {:>7.3} -> {:>7.3}", sphere[i], own[i]);
                }
            }
            assert!(
                own[zone] > 1.3 * sphere[zone],
                "{grain}: impact zone {} vs {}",
                own[zone],
                sphere[zone]
            );
            assert!(to > ts, "{grain}: {to} vs {ts}");
        }
    }
}
