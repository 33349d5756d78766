//! One cup: every part of the engine reads the same `Cup`, built from the shape's
//! finite-element asset (`assets/cups/*.json`) and scaled by `cup_size`.

use granary_engine::base::materials::CupMaterial;
use granary_engine::base::window::{Cell, CollisionKind, CELLS, WINDOW};
use granary_engine::control::choices::CupShape;
use granary_engine::derived::cups::{Cup, RINGS};
use granary_engine::generator::{
    generate, CellStatistics, GeneratorSetup, Geometry, GroupMean, NormalMode, Shapes, SECTOR_HALF_WIDTH,
};
use granary_engine::pour::scene::{PourScene, PourState, SceneInput};
use granary_engine::{Engine, Outputs, Settings, TriggerMode};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The asset file itself, read from disk as plain JSON (not through `cups::parse`).
fn asset(shape: CupShape) -> serde_json::Value {
    let path = format!("{}/../assets/cups/{}.json", env!("CARGO_MANIFEST_DIR"), shape.id());
    serde_json::from_str(&std::fs::read_to_string(&path).expect("asset")).expect("JSON")
}

fn close(a: f32, b: f64, what: &str) {
    assert!((a as f64 - b).abs() <= 1e-6 * b.abs().max(1e-3), "{what}: {a} vs {b}");
}

#[test]
fn each_shapes_cup_is_its_asset_scaled_by_the_size() {
    for shape in CupShape::ALL {
        let j = asset(shape);
        let f = |k: &str| j[k].as_f64().unwrap();
        let floor = f("floor_m");
        for size in [0.5f32, 1.0, 1.4, 2.5] {
            let c = Cup::new(shape, size);
            let s = size as f64;
            let id = format!("{} x{size}", shape.id());
            close(c.rim_radius, f("rim_radius_m") * s, &format!("{id} rim radius"));
            close(c.floor_radius, f("floor_radius_m") * s, &format!("{id} floor radius"));
            close(c.depth, (f("height_m") - floor) * s, &format!("{id} depth"));
            close(c.floor_thickness, floor * s, &format!("{id} floor"));
            close(c.wall_thickness, f("wall_m") * s, &format!("{id} wall"));
            let azimuths = j["sector_azimuths_rad"].as_array().unwrap();
            assert_eq!(azimuths.len(), c.sector_azimuths.len(), "{id}");
            for (a, b) in c.sector_azimuths.iter().zip(azimuths) {
                close(*a, b.as_f64().unwrap(), &format!("{id} sector azimuth"));
            }
            // the profile, from the inner floor's centre
            let profile = j["inner_profile_m"].as_array().unwrap();
            assert_eq!(profile.len(), c.profile().len(), "{id}");
            for (p, q) in c.profile().iter().zip(profile) {
                let q = q.as_array().unwrap();
                close(p[0], q[0].as_f64().unwrap() * s, &format!("{id} profile r"));
                close(p[1], (q[1].as_f64().unwrap() - floor) * s, &format!("{id} profile z"));
                // the radius along the wall passes through the profile's points
                if p[1] > 0.0 {
                    close(c.radius_at(p[1]), p[0] as f64, &format!("{id} radius at a corner"));
                }
            }
            // rings: equal heights of the wall, bottom to top (as the FEM reduction made them)
            assert_eq!(c.ring_edges[0], 0.0);
            close(c.ring_edges[RINGS], c.depth as f64, &format!("{id} top ring"));
            for k in 0..RINGS {
                close(c.ring_mid(k), c.depth as f64 * (k as f64 + 0.5) / RINGS as f64, &id);
            }
        }
    }
    // the bowl asset: 14 cm wide at the rim, 6 cm tall
    let bowl = Cup::new(CupShape::Bowl, 1.0);
    assert!((2.0 * bowl.rim_radius - 0.14).abs() < 1e-6 && (bowl.depth + bowl.floor_thickness - 0.06).abs() < 1e-6);
}

#[test]
fn the_cups_volume_is_the_integral_of_its_cross_section() {
    for shape in CupShape::ALL {
        let c = Cup::new(shape, 1.3);
        let n = 20_000;
        let dz = c.depth as f64 / n as f64;
        let mut v = 0.0f64;
        for i in 0..n {
            let z = (i as f64 + 0.5) * dz;
            v += c.cross_section(z as f32) as f64 * dz;
            if i % 1000 == 999 {
                // the volume below the top of this slice
                let got = c.volume_below(((i + 1) as f64 * dz) as f32) as f64;
                assert!((got / v - 1.0).abs() < 1e-3, "{}: {got} vs {v}", shape.id());
            }
        }
        let total = c.volume_below(c.depth) as f64;
        assert!((total / v - 1.0).abs() < 1e-4, "{}: {total} vs {v}", shape.id());
    }
    // a straight cylinder (the metal cup): pi r^2 h
    let c = Cup::new(CupShape::MetalCup, 1.0);
    let want = std::f32::consts::PI * c.rim_radius.powi(2) * c.depth;
    assert!((c.volume_below(c.depth) / want - 1.0).abs() < 1e-5);
}

fn state(cup: &Cup, arrivals: f32, pile_height_m: f32, settle_rate: f32) -> PourState {
    PourState {
        arrivals_start: arrivals,
        arrivals_end: arrivals,
        impact_speed: 1.5,
        pile_height_m,
        pile_radius_m: cup.radius_at(pile_height_m),
        floor_coverage: if pile_height_m > 0.002 { 0.7 } else { 0.0 },
        fill: 0.0,
        settle_rate,
        flow_kg_s: 0.0,
        flow_factor: 1.0,
        overflow: 0.0,
        arrived_ago: [arrivals; granary_engine::statistics::bank::LIFE_BINS],
    }
}

#[test]
fn every_cells_collisions_lie_inside_the_cup() {
    let shapes = Shapes::new(0.0, granary_engine::base::simd::Isa::detect());
    for shape in CupShape::ALL {
        for size in [0.5f32, 1.0, 2.5] {
            // a stream as wide as the widest the engine makes (gravel at grain size 4)
            for stream_radius in [0.004f32, 0.096] {
                let cup = Cup::new(shape, size);
                let setup = GeneratorSetup {
                    geometry: Geometry {
                        cup,
                        grain_radius: stream_radius / 8.0,
                        stream_radius,
                        aim: 0.0,
                        repose_tan: 0.6,
                        spread_m_s: 0.08,
                        friction: 0.45,
                        open: false,
                    },
                    restitution: 0.5,
                    window_s: WINDOW as f32 / 48_000.0,
                    normals: NormalMode::Physical,
                    max_per_cell: u32::MAX,
                    reference: false,
                    statistics: CellStatistics::Model,
                    lookup: None,
                };
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
                let mut seen = [0usize; CELLS.len()];
                for fill in [0.0f32, 0.2, 0.5, 0.9] {
                    let s = state(&cup, 20_000.0, fill * cup.depth, 3_000.0);
                    for _ in 0..20 {
                        generate(
                            &s,
                            &setup,
                            &shapes,
                            &mut rng,
                            &mut Vec::new(),
                            &mut [GroupMean::default(); CELLS.len()],
                            |c| {
                                seen[c.cell] += 1;
                                let [x, y, z] = c.position;
                                let r = (x * x + y * y).sqrt();
                                let id = format!(
                                    "{} x{size} {:?} at fill {fill}: r {r}, z {z}",
                                    shape.id(),
                                    CELLS[c.cell]
                                );
                                assert!(r.is_finite() && z.is_finite(), "{id}");
                                if CELLS[c.cell] == Cell::Surface {
                                    // spills: on the surface the cup stands on, around it
                                    assert!(z == 0.0 && r >= cup.widest_radius(), "{id}");
                                    return;
                                }
                                if CELLS[c.cell] == Cell::Stream {
                                    // the stream's collisions are in the air above the pile,
                                    // within the cup's radius there
                                    assert!(z >= s.pile_height_m && r <= cup.radius_at(s.pile_height_m), "{id}");
                                    return;
                                }
                                assert!((-1e-6..=cup.depth * (1.0 + 1e-6)).contains(&z), "{id}");
                                assert!(r <= cup.radius_at(z) * (1.0 + 1e-5), "{id} radius {}", cup.radius_at(z));
                                if let Cell::WallRing(k) = CELLS[c.cell] {
                                    assert_eq!(c.kind, CollisionKind::GrainCup);
                                    // on the wall, in its ring, in a sector
                                    assert!((r / cup.radius_at(z) - 1.0).abs() < 1e-5, "{id}");
                                    let (lo, hi) = (cup.ring_edges[k], cup.ring_edges[k + 1]);
                                    assert!(z >= lo - 1e-6 && z <= hi + 1e-6, "{id}");
                                    let az = y.atan2(x);
                                    let near = cup.sector_azimuths.iter().any(|a| {
                                        let d = (az - a + std::f32::consts::PI).rem_euclid(std::f32::consts::TAU)
                                            - std::f32::consts::PI;
                                        d.abs() <= SECTOR_HALF_WIDTH + 1e-4
                                    });
                                    assert!(near, "{id}: azimuth {az}");
                                }
                                if CELLS[c.cell] == Cell::CupFloor {
                                    assert!(z == 0.0 && r <= cup.floor_radius, "{id}");
                                }
                            },
                        );
                    }
                }
                // every cell but the surface (spills need a full cup, `surface.rs`)
                let sounded = seen.iter().zip(CELLS).all(|(&n, cell)| n > 0 || cell == Cell::Surface);
                assert!(sounded, "{} x{size}: {seen:?}", shape.id());
            }
        }
    }
}

fn scene_input(shape: CupShape, size: f32, fall_height_m: f32) -> SceneInput {
    SceneInput {
        grain_radius_m: 0.25e-3,
        grain_density: 1587.0,
        cup: Cup::new(shape, size),
        fall_height_m,
        auto_fill: true,
        open: false,
        repose_tan: 0.6,
        life_scale: size.sqrt(),
    }
}

#[test]
fn a_bowls_grains_fall_a_shorter_way_than_a_tumblers() {
    let window_s = WINDOW as f32 / 48_000.0;
    let first_landing = |shape: CupShape| {
        let mut scene = PourScene::new(window_s);
        scene.reset(0.0, 1);
        let input = scene_input(shape, 1.0, 0.15);
        scene.set_command(0.0, 0.02);
        for i in 0..1000 {
            let s = scene.step(&input);
            if s.arrivals_end > 0.0 {
                return (i, s.impact_speed);
            }
        }
        panic!("nothing landed");
    };
    let (bowl_windows, bowl_v) = first_landing(CupShape::Bowl);
    let (tumbler_windows, tumbler_v) = first_landing(CupShape::Tumbler);
    // v = sqrt(2 g h), h from the spout, 15 cm above the rim, to the empty floor
    let g = 9.806_65f32;
    let speed = |shape| (2.0 * g * (0.15 + Cup::new(shape, 1.0).depth)).sqrt();
    assert!((bowl_v - speed(CupShape::Bowl)).abs() < 1e-4, "{bowl_v}");
    assert!((tumbler_v - speed(CupShape::Tumbler)).abs() < 1e-4, "{tumbler_v}");
    assert!(bowl_v < tumbler_v * 0.96, "bowl {bowl_v} m/s, tumbler {tumbler_v} m/s");
    assert!(
        bowl_windows < tumbler_windows,
        "{bowl_windows} vs {tumbler_windows} windows"
    );
}

#[test]
fn auto_fill_raises_the_pile_by_its_volume_over_the_real_cross_section() {
    let window_s = WINDOW as f32 / 48_000.0;
    for shape in CupShape::ALL {
        let input = scene_input(shape, 1.2, 0.1);
        let cup = input.cup;
        let mut scene = PourScene::new(window_s);
        scene.reset(0.0, 1);
        // pour 60 % of the cup's volume (in bulk), then wait for the last grains to land
        let bulk = 0.6 * input.grain_density;
        let mass = 0.6 * cup.volume_below(cup.depth) * bulk;
        let flow = 0.05;
        let windows = (mass / flow / window_s).round() as usize;
        let poured = flow * windows as f32 * window_s;
        scene.set_command(0.0, flow);
        for i in 0..windows + 400 {
            if i == windows {
                scene.set_command(0.0, 0.0);
            }
            scene.step(&input);
        }
        // the flow's onset smoothing passes on a little less than was commanded
        let pile = scene.fill() * cup.depth;
        let volume = cup.volume_below(pile);
        let want = poured / bulk;
        assert!(
            (volume / want - 1.0).abs() < 0.03,
            "{}: pile {pile} m holds {volume} m^3, poured {want}",
            shape.id()
        );
    }
}

fn settings(angle: f32) -> Settings {
    Settings {
        cup_material: CupMaterial::Steel,
        trigger_mode: TriggerMode::Midi,
        listener_angle_deg: angle,
        listener_distance_m: 0.3,
        // a steady stream, so that the last grain lands a fall after note-off (an unsteady
        // one trickles on)
        flow_variation: 0.0,
        ..Settings::default()
    }
}

/// Renders `frames` frames and returns the cup stem (left).
fn cup_stem(e: &mut Engine, frames: usize) -> Vec<f32> {
    let mut out: [Vec<f32>; 6] = std::array::from_fn(|_| vec![0.0; frames]);
    let [ml, mr, gl, gr, cl, cr] = &mut out;
    e.process(Outputs {
        main: [ml, mr],
        grains: [gl, gr],
        cup: [cl, cr],
        surface: None,
        friction: None,
    });
    out[4].clone()
}

#[test]
fn changing_only_the_listener_angle_moves_the_cups_distance_gain_at_once() {
    // a steel cup struck, then left ringing: two seconds after the last grain has landed
    // (the settling pile's collisions, 0.35 s a decay, are gone: at one second they still
    // moved the change by 0.6 dB), the cup stem is the modes' ringing, whose level goes as
    // 1 / distance
    let mut a = Engine::new(settings(0.0), 48_000.0, 512);
    a.note_on(1.0, 60);
    cup_stem(&mut a, 9_600);
    a.note_off();
    cup_stem(&mut a, 96_000);
    let mut b = Engine::new(settings(0.0), 48_000.0, 512);
    b.note_on(1.0, 60);
    cup_stem(&mut b, 9_600);
    b.note_off();
    cup_stem(&mut b, 96_000);
    b.set_settings(&settings(80.0));
    // the change lands at the next window boundary; compare the two windows after it
    let (x, y) = (cup_stem(&mut a, 3 * WINDOW), cup_stem(&mut b, 3 * WINDOW));
    let energy = |v: &[f32]| v[WINDOW..].iter().map(|s| (*s as f64).powi(2)).sum::<f64>();
    assert!(energy(&x) > 0.0, "the cup rings");
    let db = 10.0 * (energy(&y) / energy(&x)).log10();
    // the listener, 0.3 m from the pile's top: above the cup, then nearly level with it
    let pile = a.pour_state().pile_height_m;
    let centre = 0.5 * Cup::for_settings(a.settings()).depth;
    let th = 80f32.to_radians();
    let d_above = 0.3 + pile - centre;
    let d_side = ((0.3 * th.sin()).powi(2) + (pile + 0.3 * th.cos() - centre).powi(2)).sqrt();
    let want = 20.0 * (d_above / d_side).log10() as f64;
    assert!(want < -0.5, "{want}");
    assert!(
        (db - want).abs() < 0.3,
        "cup stem {db:.2} dB after the angle change, expected {want:.2} dB"
    );
}

#[test]
fn changing_only_the_grain_size_rebuilds_the_cups_modes() {
    // a thin layer on the floor: how much of it the grains cover depends on their size,
    // and so does the damping they add to the modes
    let thin = Settings {
        fill: 0.02,
        ..settings(0.0)
    };
    let mut e = Engine::new(thin, 48_000.0, 512);
    cup_stem(&mut e, 2 * WINDOW);
    let before: Vec<f32> = e.modes().iter().map(|m| m.decay_per_s).collect();
    e.set_settings(&Settings {
        grain_size: 4.0,
        ..thin
    });
    cup_stem(&mut e, 2 * WINDOW);
    let after: Vec<f32> = e.modes().iter().map(|m| m.decay_per_s).collect();
    assert_eq!(before.len(), after.len());
    // coarser grains cover less of the floor: less damping
    assert!(
        before.iter().zip(&after).any(|(b, a)| a < &(0.99 * b)),
        "{before:?} vs {after:?}"
    );
}

/// The lifetime profile's arrivals in a cup `life_scale`^2 times the databank's run
/// `life_scale` times slower (Froude similarity: `SceneInput::life_scale`): after the spout
/// closes, a lifetime bin holds the arrivals of the part of its span still after the last
/// one, so the bin of 0.5 to 1 s after their arrival is half empty when its middle, 0.75 s
/// times the scale, is past the last arrival: 0.375 s later in a cup 2.25 times the bank's
/// (scale 1.5) than at the bank's size.
#[test]
fn a_larger_cups_lifetime_bins_reach_further_back() {
    let window_s = WINDOW as f32 / 48_000.0;
    let emptied = |life_scale: f32| {
        let input = SceneInput {
            life_scale,
            ..scene_input(CupShape::Bowl, 1.0, 0.15)
        };
        let mut scene = PourScene::new(window_s);
        scene.reset(0.0, 1);
        scene.set_command(0.0, 0.01);
        let steady = (4.0 * life_scale / window_s) as usize + 200;
        let mut last = PourState::default();
        for _ in 0..steady {
            last = scene.step(&input);
        }
        // every bin holds the steady arrivals, however far back it reaches
        let arrivals = last.arrivals_end;
        for (k, &a) in last.arrived_ago.iter().enumerate() {
            assert!(
                (a - arrivals).abs() < 0.02 * arrivals,
                "bin {k}: {a} of {arrivals} grains/s"
            );
        }
        scene.set_command(steady as f32 * window_s, 0.0);
        let mut since_stop = 0;
        loop {
            let s = scene.step(&input);
            since_stop += 1;
            if s.arrived_ago[7] < 0.5 * arrivals {
                return since_stop as f32 * window_s;
            }
            assert!(since_stop < 4000, "bin 7 never half emptied");
        }
    };
    let (at_1, at_1_5) = (emptied(1.0), emptied(1.5));
    // the bin's middle, 0.75 s, times the scale (the stream's smoothing delays both alike)
    let later = at_1_5 - at_1;
    assert!(
        (later - 0.375).abs() < 2.0 * window_s,
        "{at_1} s and {at_1_5} s after the stop"
    );
    // the record reaches back far enough for the largest cup
    let (_, largest) = granary_engine::control::settings::limits::CUP_SIZE;
    let bank = granary_engine::derived::BANK_CUP_SIZE;
    assert!(granary_engine::pour::scene::MAX_LIFE_SCALE.powi(2) >= largest / bank);
}
