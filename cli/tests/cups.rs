//! The cup at runtime: the finite-element assets scaled to material and size,
//! damping by material and fill, hit location and contact hardness in the mode mix, and
//! `granary inspect cup`. (The FEM code itself is validated in fem/tests/validation.rs.)

use granary_cli::inspect::cup::CupArgs;
use granary_engine::base::materials::CupMaterial;
use granary_engine::base::simd::Isa;
use granary_engine::control::choices::CupShape;
use granary_engine::derived::cups::{model, Cup};
use granary_engine::derived::cups::{CupState, CUP_BUSES, FLOOR_BUS, RIM_BUS};
use granary_engine::impact::kernels::PulseKernels;
use granary_engine::resonators::modal::{build_modes, ModalBank, Mode, MAX_MODES};
use std::process::Command;

fn cup(material: CupMaterial, shape: CupShape, size: f32, fill: f32) -> CupState {
    CupState {
        material,
        cup: Cup::new(shape, size),
        fill,
        grain_density: 1587.0,
        grain_diameter_m: 0.5e-3,
    }
}

fn modes(c: &CupState) -> Vec<Mode> {
    let mut out = [Mode::ZERO; MAX_MODES];
    let n = build_modes(c, 1e9, &mut out);
    out[..n].to_vec()
}

#[test]
fn frequencies_scale_exactly_with_sqrt_e_over_rho_and_size() {
    for shape in CupShape::ALL {
        let asset = model(shape);
        let reference = CupMaterial::ALL
            .into_iter()
            .find(|m| m.id() == asset.reference_material.name)
            .expect("reference material is in the table");
        // the reference material at size 1 plays the asset's own frequencies
        let base = modes(&cup(reference, shape, 1.0, 0.0));
        assert_eq!(base.len(), asset.modes.len().min(MAX_MODES));
        for (m, rec) in base.iter().zip(&asset.modes) {
            assert!((m.freq_hz as f64 / rec.freq_hz - 1.0).abs() < 1e-6);
        }
        for material in CupMaterial::ALL {
            let el = material.data().elastic;
            let speed = asset.speed_ratio(el.youngs_pa as f64, el.density as f64);
            for size in [0.5f32, 1.0, 1.7, 2.5] {
                let m = modes(&cup(material, shape, size, 0.0));
                for (a, b) in m.iter().zip(&base) {
                    let expected = b.freq_hz as f64 * speed / size as f64;
                    let err = (a.freq_hz as f64 / expected - 1.0).abs();
                    assert!(
                        err < 1e-5,
                        "{} {} x{size}: {} vs {expected}",
                        shape.id(),
                        material.id(),
                        a.freq_hz
                    );
                }
            }
        }
    }
}

#[test]
fn decay_times_order_steel_glass_ceramic_plastic_wood() {
    let order = [
        CupMaterial::Steel,
        CupMaterial::Glass,
        CupMaterial::Ceramic,
        CupMaterial::Plastic,
        CupMaterial::Wood,
    ];
    for shape in CupShape::ALL {
        let sets: Vec<Vec<Mode>> = order.iter().map(|&m| modes(&cup(m, shape, 1.0, 0.0))).collect();
        for i in 0..MAX_MODES {
            let t60: Vec<f32> = sets.iter().filter_map(|s| s.get(i)).map(Mode::t60_s).collect();
            if t60.len() < order.len() {
                continue;
            }
            assert!(t60.windows(2).all(|w| w[0] > w[1]), "{} mode {i}: {t60:?}", shape.id());
        }
    }
}

#[test]
fn more_fill_shorter_decay_and_slightly_lower_modes() {
    for shape in CupShape::ALL {
        for material in CupMaterial::ALL {
            let levels = [0.0f32, 0.2, 0.5, 0.9];
            let sets: Vec<Vec<Mode>> = levels.iter().map(|&f| modes(&cup(material, shape, 1.0, f))).collect();
            let mean_t60 = |s: &[Mode]| s.iter().map(|m| m.t60_s()).sum::<f32>() / s.len() as f32;
            for w in sets.windows(2) {
                assert!(
                    mean_t60(&w[1]) < mean_t60(&w[0]),
                    "{} {}: {} -> {}",
                    shape.id(),
                    material.id(),
                    mean_t60(&w[0]),
                    mean_t60(&w[1])
                );
                for (a, b) in w[0].iter().zip(&w[1]) {
                    // each mode's loss factor (decay rate over angular frequency) only grows;
                    // its T60 may still lengthen a little where the added mass lowers it
                    let eta = |m: &Mode| m.decay_per_s / m.freq_hz;
                    assert!(eta(b) >= eta(a) * 0.9999);
                    assert!(
                        b.freq_hz <= a.freq_hz && b.freq_hz > 0.85 * a.freq_hz,
                        "{} -> {}",
                        a.freq_hz,
                        b.freq_hz
                    );
                }
            }
            assert!(
                sets[3][0].freq_hz < sets[0][0].freq_hz,
                "the grains' added mass lowers the modes"
            );
            // thesis 7.1 (recordings 41/42): a filled cup is damped much more
            let (empty, full) = (mean_t60(&sets[0]), mean_t60(&sets[3]));
            if material == CupMaterial::Steel {
                assert!(
                    full < 0.25 * empty,
                    "{} steel: {empty} s empty, {full} s full",
                    shape.id()
                );
            }
        }
    }
}

/// Energy of `x` at frequency `f` (Goertzel).
fn tone_energy(x: &[f32], f: f32, fs: f32) -> f64 {
    let w = 2.0 * std::f64::consts::PI * f as f64 / fs as f64;
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for &v in x {
        let s = v as f64 + 2.0 * w.cos() * s1 - s2;
        s2 = s1;
        s1 = s;
    }
    s1 * s1 + s2 * s2 - 2.0 * w.cos() * s1 * s2
}

fn render(bank: &mut ModalBank, force: &[f32], bus: usize, len: usize) -> Vec<f32> {
    bank.reset();
    (0..len)
        .map(|i| {
            let mut f = [0.0f32; CUP_BUSES];
            f[bus] = force.get(i).copied().unwrap_or(0.0);
            let (l, r) = bank.tick(&f);
            l + r
        })
        .collect()
}

#[test]
fn floor_and_rim_hits_excite_different_mode_mixes() {
    let fs = 48_000.0;
    let c = cup(CupMaterial::Ceramic, CupShape::Mug, 1.0, 0.0);
    let m = modes(&c);
    // the mug's lowest mode is the n = 2 wall ring; its first axisymmetric mode is the floor's
    let ring = m[0];
    let floor = *m.iter().find(|x| x.order == 0).expect("an axisymmetric mode");
    assert_eq!(ring.order, 2);
    let mut bank = ModalBank::new(fs, Isa::detect());
    bank.set_modes(&m, 0.4, 0.0);
    let mut impulse = vec![0.0f32; 1];
    impulse[0] = fs * 1e-3; // 1 mN s in one sample
    let len = 8192;
    let on_floor = render(&mut bank, &impulse, FLOOR_BUS, len);
    let on_rim = render(&mut bank, &impulse, RIM_BUS, len);
    let mix = |x: &[f32]| tone_energy(x, floor.freq_hz, fs) / tone_energy(x, ring.freq_hz, fs);
    let (mf, mr) = (mix(&on_floor), mix(&on_rim));
    let db = 10.0 * (mf / mr).log10();
    eprintln!(
        "floor mode ({:.0} Hz) over ring mode ({:.0} Hz): {db:.1} dB more from a floor hit than from a rim hit",
        floor.freq_hz, ring.freq_hz
    );
    assert!(db > 20.0, "{db}");
}

#[test]
fn hard_short_contacts_excite_high_modes_soft_long_ones_do_not() {
    // Phya 4.7: the half-sine force of a contact of duration D has a spectrum flat to about
    // 1 / D; the engine drives the modes with that band-limited force (kernels).
    let fs = 48_000.0;
    let kernels = PulseKernels::new(fs, Isa::detect());
    let c = cup(CupMaterial::Glass, CupShape::Tumbler, 1.0, 0.0);
    let m = modes(&c);
    let low = m[0];
    let high = *m.iter().rev().find(|x| x.freq_hz < 16_000.0).expect("a high mode");
    let mut bank = ModalBank::new(fs, Isa::detect());
    bank.set_modes(&m, 0.4, 0.0);
    let mut ratio = |duration: f32| {
        let mut force = vec![0.0f32; kernels.taps()];
        kernels.accumulate(kernels.select(duration, 0.0), [1e-3, 0.0, 0.0], &mut force);
        let out = render(&mut bank, &force, 1, 8192);
        tone_energy(&out, high.freq_hz, fs) / tone_energy(&out, low.freq_hz, fs)
    };
    let (hard, soft) = (ratio(5e-6), ratio(150e-6));
    let db = 10.0 * (hard / soft).log10();
    eprintln!(
        "{:.0} Hz over {:.0} Hz: {db:.1} dB more for a 5 us contact than a 150 us one",
        high.freq_hz, low.freq_hz
    );
    assert!(db > 20.0, "{db}");
}

fn inspect(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_granary"))
        .arg("inspect")
        .arg("cup")
        .args(args)
        .output()
        .expect("run granary")
}

#[test]
fn inspect_cup_prints_the_runtime_modes_as_json() {
    let out = inspect(&[
        "--material",
        "steel",
        "--shape",
        "jar",
        "--size",
        "1.5",
        "--fill",
        "0.3",
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let modes = v["modes"].as_array().expect("modes");
    let args = CupArgs {
        material: "steel".into(),
        shape: "jar".into(),
        size: 1.5,
        fill: 0.3,
        grain: "sugar".into(),
        sample_rate: 48_000.0,
        closed: false,
        json: true,
    };
    let runtime = modes_of(&args.state().unwrap());
    assert_eq!(modes.len(), runtime.len());
    for (j, m) in modes.iter().zip(&runtime) {
        assert!((j["freq_hz"].as_f64().unwrap() / m.freq_hz as f64 - 1.0).abs() < 1e-6);
        assert!((j["t60_s"].as_f64().unwrap() / m.t60_s() as f64 - 1.0).abs() < 1e-6);
        let g = &j["gains"];
        assert!(g["floor"].as_f64().unwrap() >= 0.0 && g["rim"].as_f64().unwrap() >= 0.0);
        assert_eq!(g["wall"].as_array().unwrap().len(), 3);
    }
    assert!(v["diffuse"]["bands"].is_array());
    // the geometry the engine uses: the jar's asset at size 1.5
    let g = &v["geometry"];
    let jar = model(CupShape::Jar);
    let close = |key: &str, want: f64| {
        let got = g[key].as_f64().unwrap();
        assert!((got - want).abs() < 1e-6, "{key}: {got} vs {want}");
    };
    close("rim_radius_m", 1.5 * jar.rim_radius_m);
    close("floor_radius_m", 1.5 * jar.floor_radius_m);
    close("depth_m", 1.5 * (jar.height_m - jar.floor_m));
    close("pile_height_m", 0.3 * 1.5 * (jar.height_m - jar.floor_m));
    assert_eq!(
        g["inner_profile_m"].as_array().unwrap().len(),
        jar.inner_profile_m.len()
    );
    assert_eq!(g["ring_edges_m"].as_array().unwrap().len(), 4);
    assert!(v["diffuse"]["low_hz"].as_f64().unwrap() >= runtime.last().unwrap().freq_hz as f64 - 1.0);
    for bad in [
        &["--material", "cheese"][..],
        &["--material", "glass", "--shape", "teapot"],
        &["--material", "glass", "--size", "9"],
        &["--material", "glass", "--fill", "NaN"],
    ] {
        let out = inspect(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!out.stderr.is_empty());
    }
}

fn modes_of(c: &CupState) -> Vec<Mode> {
    let mut out = [Mode::ZERO; MAX_MODES];
    let n = build_modes(c, (0.45f32 * 48_000.0).min(20_000.0), &mut out);
    out[..n].to_vec()
}
