//! Isolated collisions through the whole engine (`Engine::inject`, the grains stem of
//! `Engine::process`) against the definition of a collision (`collision::render_one`, then
//! the sphere-radiation filter the engine applies per channel after its rings), and against
//! the exact continuous-time solution for a rigid sphere (`accel_noise::SphereSource`).

use granary_engine::base::materials::GrainMaterial;
use granary_engine::base::window::{Collision, CollisionKind};
use granary_engine::derived::cups::CUP_BUSES;
use granary_engine::impact::accel_noise::SphereFilter;
use granary_engine::impact::collision::{physics, render_one, sphere_source, Constants};
use granary_engine::impact::kernels::PulseKernels;
use granary_engine::{Engine, Outputs, Settings, TriggerMode, GENERATOR_LEAD};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// No pour (MIDI trigger, no note) and unit gains: the grains stem is then the sphere
/// filter's output of the rings, in Pa, and holds only the injected collisions.
fn quiet(grain: GrainMaterial, grain_size: f32) -> Settings {
    Settings {
        grain_material: grain,
        grain_size,
        trigger_mode: TriggerMode::Midi,
        grains_level_db: 0.0,
        output_gain_db: 0.0,
        ..Settings::default()
    }
}

/// What the engine rendered: its grains stem, and per window the constants of its
/// collisions and the collisions injected into it.
struct Run {
    grains: [Vec<f32>; 2],
    windows: Vec<(Constants, Vec<Collision>)>,
}

/// Renders `windows` windows of `settings`, injecting `inject(w)` before window `w`, in two
/// uneven blocks per window (the engine spreads a window's collisions over it).
fn run(settings: Settings, fs: f32, windows: usize, mut inject: impl FnMut(usize) -> Vec<Collision>) -> Run {
    let mut e = Engine::new(settings, fs, 512);
    let w = e.window_len();
    let mut grains = [vec![0.0f32; windows * w], vec![0.0f32; windows * w]];
    let mut other = [vec![0.0f32; w], vec![0.0f32; w], vec![0.0f32; w], vec![0.0f32; w]];
    let mut record = Vec::new();
    let mut injected = 0;
    for i in 0..windows {
        let collisions = inject(i);
        for c in &collisions {
            assert!(e.inject(*c), "{c:?}");
        }
        injected += collisions.len() as u64;
        for span in [i * w..i * w + 37, i * w + 37..(i + 1) * w] {
            let n = span.len();
            let [gl, gr] = &mut grains;
            let [ml, mr, cl, cr] = &mut other;
            e.process(Outputs {
                main: [&mut ml[..n], &mut mr[..n]],
                grains: [&mut gl[span.clone()], &mut gr[span]],
                cup: [&mut cl[..n], &mut cr[..n]],
                surface: None,
                friction: None,
            });
        }
        record.push((e.collision_constants(), collisions));
    }
    let stats = e.stats();
    assert_eq!(stats.collisions, 0, "no pour: the engine made collisions of its own");
    assert_eq!((stats.rendered, stats.written), (injected, injected));
    Run {
        grains,
        windows: record,
    }
}

/// The same collisions by `render_one`, into rings long enough not to wrap, through the
/// sphere-radiation filter of each channel (`SphereFilter`, as the engine's `span`).
fn reference(run: &Run, fs: f32, radius_m: f32) -> [Vec<f32>; 2] {
    let kernels = PulseKernels::new(fs, granary_engine::base::simd::Isa::detect());
    let n = run.grains[0].len();
    let len = n + GENERATOR_LEAD + 8 * kernels.taps() + 4096;
    let mut rings = [vec![0.0f32; len], vec![0.0f32; len]];
    let mut cup = vec![vec![0.0f32; len]; CUP_BUSES];
    let window = n / run.windows.len();
    for (w, (k, collisions)) in run.windows.iter().enumerate() {
        // a window's collision times count from GENERATOR_LEAD samples after its boundary
        let origin = w * window + GENERATOR_LEAD;
        for c in collisions {
            let [l, r] = &mut rings;
            render_one(k, &kernels, c, origin, [l, r], &mut cup);
        }
    }
    rings.map(|ring| {
        let mut filter = SphereFilter::new(fs, radius_m);
        ring[..n].iter().map(|&x| filter.process(x)).collect()
    })
}

fn random_collision(rng: &mut Xoshiro256PlusPlus) -> Collision {
    let grain_cup = rng.random_bool(0.4);
    let normal = loop {
        let v: [f32; 3] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
        let norm = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        if (0.1..=1.0).contains(&norm) {
            break v.map(|x| x / norm);
        }
    };
    let v0 = 10f32.powf(rng.random_range(-3.0..0.7));
    Collision {
        time: rng.random_range(0.0..128.0),
        kind: if grain_cup {
            CollisionKind::GrainCup
        } else {
            CollisionKind::GrainGrain
        },
        cell: 0,
        bus: rng.random_range(0..CUP_BUSES),
        position: [
            rng.random_range(-0.04..0.04),
            rng.random_range(-0.04..0.04),
            rng.random_range(0.0..0.09),
        ],
        normal,
        v0,
        ln_v0: v0.ln(),
        weight: rng.random_range(1.0..4.0),
        // on the pile, through up to 9 cm of grains, or in the stream
        bed_m: if !grain_cup && rng.random_bool(0.6) {
            rng.random_range(1e-4..0.09)
        } else {
            0.0
        },
        // a pulse that stands for one to four, or none (another collision writes it)
        bed_weight: if grain_cup || rng.random_bool(0.3) {
            0.0
        } else {
            rng.random_range(1.0..4.0f32)
        },
        // a grouped draw, its pulses copied over the window (`collision::copies`)
        spread: rng.random_bool(0.5),
    }
}

fn peak(x: &[f32]) -> f32 {
    x.iter().fold(0.0f32, |m, v| m.max(v.abs()))
}

#[test]
fn injected_collisions_through_the_engine_are_render_one() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(31);
    // small grains (the sphere filter without feedback) and large ones (with), at three rates
    let cases = [
        (GrainMaterial::Sugar, 1.0, 48_000.0),
        (GrainMaterial::GlassBeads2, 1.0, 44_100.0),
        (GrainMaterial::Gravel, 2.0, 96_000.0),
        (GrainMaterial::SteelShot1, 1.0, 48_000.0),
    ];
    for (grain, size, fs) in cases {
        let settings = quiet(grain, size);
        let mut count = 0;
        let r = run(settings, fs, 60, |w| {
            // none, one or a few collisions a window
            let n = [0, 1, 1, 3][w % 4];
            count += n;
            (0..n).map(|_| random_collision(&mut rng)).collect()
        });
        let want = reference(&r, fs, settings.radiation_radius_m());
        let mut worst = 0.0f32;
        for (got, want) in r.grains.iter().zip(&want) {
            let scale = peak(want);
            assert!(scale > 0.0);
            for (i, (x, y)) in got.iter().zip(want).enumerate() {
                let diff = (x - y).abs() / scale;
                worst = worst.max(diff);
                assert!(
                    diff <= 1e-5,
                    "{grain:?} at {fs} Hz, sample {i}: {x} vs {y} (peak {scale})"
                );
            }
        }
        eprintln!("{grain:?} at {fs} Hz: {count} collisions, largest difference {worst:e} of the peak");
    }
}

/// `x` low-passed to `f_max` Hz by zeroing its spectrum above it (real FFT).
fn low_pass(x: &[f64], fs: f64, f_max: f64) -> Vec<f64> {
    let n = x.len();
    let (fwd, inv) = granary_engine::fft::pair(n);
    let mut input = x.to_vec();
    let mut spec = fwd.make_output_vec();
    fwd.process(&mut input, &mut spec).unwrap();
    for (k, c) in spec.iter_mut().enumerate() {
        if k as f64 * fs / n as f64 > f_max {
            *c = 0.0.into();
        }
    }
    let mut out = inv.make_output_vec();
    inv.process(&mut spec, &mut out).unwrap();
    out.iter().map(|v| v / n as f64).collect()
}

#[test]
fn an_injected_collision_sounds_as_the_exact_rigid_sphere_solution_below_the_band_edge() {
    // Hard, short contacts (microseconds, far below a sample): below the kernels' band edge
    // the engine's pulses are the exact half-sine's spectrum, and the radiation filter the
    // exact B(s). Both spheres of a grain-grain collision, and the grain of a grain-cup one.
    let cases = [
        (
            GrainMaterial::GlassBeads2,
            1.0,
            48_000.0,
            CollisionKind::GrainGrain,
            0.8,
        ),
        (GrainMaterial::SteelShot1, 2.0, 44_100.0, CollisionKind::GrainGrain, 2.0),
        (GrainMaterial::GlassBeads1, 1.0, 96_000.0, CollisionKind::GrainCup, 0.3),
        // a large sphere (6 mm; gravel is a shaped stone, `shape`)
        (
            GrainMaterial::GlassBeads2,
            3.0,
            48_000.0,
            CollisionKind::GrainGrain,
            1.0,
        ),
    ];
    for (grain, size, fs, kind, v0) in cases {
        let settings = quiet(grain, size);
        // towards the listener (above the cup, 30 degrees off the vertical), off centre
        let (s, c) = 0.5f32.sin_cos();
        let collision = Collision {
            time: 40.3,
            kind,
            cell: 0,
            bus: 2,
            position: [0.01, 0.02, 0.03],
            normal: [s, 0.0, c],
            v0,
            ln_v0: v0.ln(),
            weight: 1.0,
            bed_m: 0.0,
            bed_weight: 0.0,
            spread: false,
        };
        let r = run(settings, fs, 12, |w| if w == 2 { vec![collision] } else { vec![] });
        let (k, _) = r.windows[2];
        let p = physics(&k, &collision);
        // the contact's start, in samples of the output
        let window = r.grains[0].len() / r.windows.len();
        let start = (2 * window + GENERATOR_LEAD) as f64 + collision.time as f64;
        let n = r.grains[0].len();
        let dt = 1.0 / fs as f64;
        // the exact solution, sampled 256 times a sample (fine enough that what folds back
        // from above the fine grid's Nyquist is negligible: the far field of a hard contact
        // reaches far into the ultrasound), then low-passed and decimated
        const M: usize = 256;
        let mut fine = vec![0.0f64; n * M];
        for s in 0..p.heard().len() {
            let src = sphere_source(&k, &p, s);
            for (sum, v) in fine.iter_mut().zip(src.waveform(-start * dt, dt / M as f64, n * M)) {
                *sum += v;
            }
        }
        let exact = |f_max: f64| -> Vec<f64> {
            low_pass(&fine, (M as f64) * fs as f64, f_max)
                .into_iter()
                .step_by(M)
                .collect()
        };
        let (exact_5k, exact_10k) = (exact(5_000.0), exact(10_000.0));
        let energy = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>();
        for (ch, got) in r.grains.iter().enumerate() {
            let got: Vec<f64> = got.iter().map(|&x| x as f64).collect();
            let pan = p.pan[ch] as f64;
            // the energy below 10 kHz: within 0.25 dB (the kernels are flat to 20 kHz, the
            // radiation filter's magnitude is B's; the rest is the kernel rows' durations)
            let want: Vec<f64> = exact_10k.iter().map(|v| v * pan).collect();
            let db = 10.0 * (energy(&low_pass(&got, fs as f64, 10_000.0)) / energy(&want)).log10();
            // the waveform below 5 kHz: within 20 % of its peak. The radiation filter matches
            // B's magnitude, not its phase: it runs about a microsecond off B for small
            // grains and more for large ones, a few per cent at 5 kHz, more for a pair
            // (the two spheres' pulses nearly cancel). A sample's delay, or a sign, is
            // tens of per cent.
            let want: Vec<f64> = exact_5k.iter().map(|v| v * pan).collect();
            let got_5k = low_pass(&got, fs as f64, 5_000.0);
            let peak = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let worst = got_5k.iter().zip(&want).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / peak;
            eprintln!(
                "{grain:?} x{size} at {fs} Hz, {kind:?}, channel {ch}: energy below 10 kHz {db:+.3} dB, \
                 waveform below 5 kHz within {worst:.3} of its peak"
            );
            assert!(db.abs() < 0.25, "{grain:?} {kind:?} channel {ch}: {db:+.3} dB");
            assert!(worst < 0.2, "{grain:?} {kind:?} channel {ch}: {worst:.3}");
        }
    }
}
