//! Grains with shapes are heard as their shapes (`engine::shape`, seed 001 §4, issue 20):
//! against spheres of the same volume (`grain_shape = sphere`), a rice grain is heard off the
//! axis of its push, where a sphere's dipole is silent (directivity), and a pour of rice or
//! lentils is quieter in every band (its grains spin and take less impulse), least at the top
//! (hit on their ends they ring shorter, and their spins radiate).

use granary_engine::base::materials::GrainMaterial;
use granary_engine::base::window::{Collision, CollisionKind};
use granary_engine::control::choices::Shape;
use granary_engine::control::params::ParamValues;
use granary_engine::control::preset;
use granary_engine::render::{render, RenderOptions};
use granary_engine::{Engine, Outputs, Settings, TriggerMode};

/// No pour and unit gains: the grains stem holds the injected collisions only, in Pa.
fn quiet(shape: Shape) -> Settings {
    Settings {
        grain_material: GrainMaterial::Rice,
        grain_shape: Some(shape),
        trigger_mode: TriggerMode::Midi,
        grains_level_db: 0.0,
        output_gain_db: 0.0,
        ..Settings::default()
    }
}

/// The grains stem's energy (both channels, Pa² samples) of `n` grain–cup collisions at the
/// cup's centre, whose normals make the angle `angle` with the way to the listener (turned
/// round that way from one collision to the next), all at 1 m/s.
fn energy(shape: Shape, angle: f32, n: usize) -> f64 {
    let fs = 48_000.0;
    let mut e = Engine::new(quiet(shape), fs, 512);
    let w = e.window_len();
    let mut out = [
        vec![0.0f32; w],
        vec![0.0f32; w],
        vec![0.0f32; w],
        vec![0.0f32; w],
        vec![0.0f32; w],
        vec![0.0f32; w],
    ];
    let mut block = |e: &mut Engine| -> f64 {
        let [ml, mr, gl, gr, cl, cr] = &mut out;
        e.process(Outputs {
            main: [&mut ml[..], &mut mr[..]],
            grains: [&mut gl[..], &mut gr[..]],
            cup: [&mut cl[..], &mut cr[..]],
            surface: None,
            friction: None,
        });
        gl.iter().chain(gr.iter()).map(|x| (*x as f64).powi(2)).sum()
    };
    block(&mut e);
    let position = [0.0f32, 0.0, 0.02];
    let listener = e.collision_constants().listener;
    let to: [f32; 3] = std::array::from_fn(|j| listener[j] - position[j]);
    let len = (to[0] * to[0] + to[1] * to[1] + to[2] * to[2]).sqrt();
    let u = to.map(|x| x / len);
    // two unit vectors across the way to the listener
    let a = {
        let t = [u[1], -u[0], 0.0];
        let l = (t[0] * t[0] + t[1] * t[1]).sqrt();
        t.map(|x| x / l)
    };
    let b = [
        u[1] * a[2] - u[2] * a[1],
        u[2] * a[0] - u[0] * a[2],
        u[0] * a[1] - u[1] * a[0],
    ];
    let mut total = 0.0;
    for i in 0..n {
        let phi = i as f32 * 2.399_963; // the golden angle: turned round the way evenly
        let (s, c) = angle.sin_cos();
        let normal: [f32; 3] = std::array::from_fn(|j| c * u[j] + s * (phi.cos() * a[j] + phi.sin() * b[j]));
        // a slightly different place each time: each collision draws its own orientation
        let jitter = 1e-4 * (i as f32 * 0.618_034).fract();
        assert!(e.inject(Collision {
            time: 10.0 + (i % 7) as f32 * 0.31,
            kind: CollisionKind::GrainCup,
            cell: 0,
            bus: 0,
            position: [position[0] + jitter, position[1], position[2]],
            normal,
            v0: 1.0,
            ln_v0: 0.0,
            weight: 1.0,
            bed_m: 0.0,
            bed_weight: 0.0,
            spread: false,
        }));
        total += block(&mut e);
        total += block(&mut e);
    }
    for _ in 0..8 {
        total += block(&mut e);
    }
    total
}

#[test]
fn a_rice_grain_is_heard_across_its_push_where_a_sphere_is_silent() {
    let n = 400;
    let db = |x: f64| 10.0 * x.log10();
    let rice = (
        energy(Shape::Rice, 0.0, n),
        energy(Shape::Rice, std::f32::consts::FRAC_PI_2, n),
    );
    let sphere = (
        energy(Shape::Sphere, 0.0, n),
        energy(Shape::Sphere, std::f32::consts::FRAC_PI_2, n),
    );
    let (rice_db, sphere_db) = (db(rice.1 / rice.0), db(sphere.1 / sphere.0));
    eprintln!(
        "across the push against along it: rice {rice_db:.1} dB, spheres of its volume {sphere_db:.1} dB; \
         along it rice is {:.1} dB against the spheres",
        db(rice.0 / sphere.0)
    );
    // a sphere's dipole points along its push: across it only the grain's own offset from the
    // contact point is heard (cos theta = a/r, -47 dB at 0.3 m)
    assert!(sphere_db < -40.0, "{sphere_db}");
    // a rice grain turned at random pushes the air along its own axes: heard across too
    assert!(rice_db > -20.0, "{rice_db}");
    // along the push it is quieter than the spheres: it spins and takes less impulse
    assert!(rice.0 < sphere.0);
}

/// Third-octave band levels (dB, 100 Hz to 16 kHz) of the sum of both channels' power.
fn bands(x: &[Vec<f32>; 2], fs: f64) -> Vec<f64> {
    let n = 4096;
    let fft = granary_engine::fft::forward(n);
    let mut power = vec![0.0f64; n / 2 + 1];
    for ch in x {
        for frame in ch.chunks_exact(n / 2).collect::<Vec<_>>().windows(2) {
            let mut buf: Vec<f64> = frame
                .concat()
                .iter()
                .enumerate()
                .map(|(i, v)| *v as f64 * (0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / n as f64).cos()))
                .collect();
            let mut spec = fft.make_output_vec();
            fft.process(&mut buf, &mut spec).unwrap();
            for (p, s) in power.iter_mut().zip(&spec) {
                *p += s.norm_sqr();
            }
        }
    }
    (0..=22)
        .map(|k| {
            let centre = 100.0 * 2f64.powf(k as f64 / 3.0);
            let (lo, hi) = (centre * 2f64.powf(-1.0 / 6.0), centre * 2f64.powf(1.0 / 6.0));
            let sum: f64 = power
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    let f = *i as f64 * fs / n as f64;
                    f >= lo && f < hi
                })
                .map(|(_, p)| p)
                .sum();
            10.0 * (sum + 1e-30).log10()
        })
        .collect()
}

#[test]
fn pours_of_rice_and_lentils_sound_unlike_spheres_of_their_volume() {
    for id in ["rice_plastic_bowl", "lentils_aluminium_pot"] {
        let values = preset::find(id).unwrap().values;
        let grains = |shape: &str| {
            let mut v: ParamValues = values.clone();
            v.set_text("grain_shape", shape).unwrap();
            // onto the bare floor, the vessel held empty: the grains' own impacts on it (on
            // a pile the collisions are slow, grain on grain, and shape matters less)
            v.set_text("fill", "0").unwrap();
            v.set_text("auto_fill", "off").unwrap();
            let r = render(
                &v,
                &RenderOptions {
                    seconds: 4.0,
                    sample_rate: 48_000.0,
                    block_size: 512,
                    pour: None,
                },
            );
            bands(&r.grains, 48_000.0)
        };
        let (own, spheres) = (grains("auto"), grains("sphere"));
        let diff: Vec<f64> = own.iter().zip(&spheres).map(|(a, b)| a - b).collect();
        let mean = |r: std::ops::Range<usize>| diff[r.clone()].iter().sum::<f64>() / r.len() as f64;
        // 500 Hz to 2 kHz (bands 7..=13) and 8 to 16 kHz (bands 19..=22)
        let (mid, top) = (mean(7..14), mean(19..23));
        eprintln!(
            "{id}: shaped minus spheres, per third octave from 100 Hz: {:?}; 0.5-2 kHz {mid:+.1} dB, 8-16 kHz {top:+.1} dB",
            diff.iter().map(|d| (d * 10.0).round() / 10.0).collect::<Vec<_>>()
        );
        // quieter in every band (less impulse: the grains spin), and least so at the top
        // (shorter contacts at their ends, the spins' own sound)
        assert!(diff.iter().all(|d| *d < -1.0), "{id}: {diff:?}");
        assert!(mid < -2.0, "{id}: {mid}");
        assert!(top > mid, "{id}: {top} vs {mid}");
    }
}
