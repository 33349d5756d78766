//! The sliding-friction sound of one contact (`friction`: seed 003's micro-rectangles,
//! Phya §6.2.4's stick-slip): eq. 18 against numbers computed by hand, the spectrum against
//! the speed (eq. 8), the level against the load, stick-slip only where mu_s > mu_d, and the
//! block API's contract (block-size independence, no allocation, no NaN).

use granary_engine::base::materials::{
    CupMaterial, Elastic, FrictionMaterial, FrictionPairData, GrainMaterial, PatchSurface, SurfaceMaterial,
    FRICTION_REFERENCE_SPEED, GRAVITY,
};
use granary_engine::resonators::friction::{
    level_db_spl, patch_sides, plate_mode_hz, spectral_centroid_hz, Friction, Patch, StickSlip, MAX_FREQ_HZ,
};
use nice_assert_no_alloc::assert_no_alloc;

const SR: f32 = 48_000.0;

fn sugar_on_ceramic() -> FrictionPairData {
    FrictionPairData::new(
        FrictionMaterial::Grain(GrainMaterial::Sugar),
        FrictionMaterial::Cup(CupMaterial::Ceramic),
    )
}

fn render(pair: FrictionPairData, seed: u64, speed: f32, load: f32, n: usize) -> (Vec<f32>, Friction) {
    let mut f = Friction::new(SR, seed, pair);
    let mut out = vec![0.0f32; n];
    f.render(speed, load, &mut out);
    (out, f)
}

/// Eq. 18 (with the mass per area rho h, see `plate_mode_hz`) for a 1 mm x 2 mm patch,
/// 10 µm thick, E = 70 GPa, nu = 0.3, rho = 2700 kg/m^3, computed by hand:
/// c = sqrt(E / (12 rho (1 - nu^2))) = sqrt(70e9 / 29484) = 1540.83 m/s, and
/// f_mn = (pi / 2) (m^2/a^2 + n^2/b^2) h c:
/// f11 = 1.5708 x 1.25e6 x 1e-5 x 1540.83 = 30 254 Hz, f31 = 1.5708 x 9.25e6 x ... = 223 881 Hz,
/// f13 = 1.5708 x 3.25e6 x ... = 78 661 Hz, f33 = 9 f11 = 272 288 Hz.
#[test]
fn plate_frequencies_follow_eq_18_for_given_sides_and_thickness() {
    let e = Elastic {
        youngs_pa: 70e9,
        poisson: 0.3,
        density: 2700.0,
    };
    let (a, b, h) = (1e-3, 2e-3, 1e-5);
    for (m, n, want) in [(1, 1, 30_254.2), (3, 1, 223_881.1), (1, 3, 78_660.9), (3, 3, 272_287.8)] {
        let f = plate_mode_hz(m, n, a, b, h, e);
        assert!((f / want - 1.0).abs() < 1e-4, "f{m}{n} = {f}, by hand {want}");
    }
    // thickness and sides: f scales with h and with 1/side^2
    let f = plate_mode_hz(1, 1, a, b, h, e);
    assert!((plate_mode_hz(1, 1, a, b, 2.0 * h, e) / f - 2.0).abs() < 1e-5);
    assert!((plate_mode_hz(1, 1, 2.0 * a, 2.0 * b, h, e) / f - 0.25).abs() < 1e-5);
}

/// Eq. 8 and the tables' fit: at the reference speed every material's mean patch has the
/// stated sides and its (1,1) mode at the stated frequency; at twice the speed the sides
/// halve and the frequency quadruples.
#[test]
fn material_tables_put_the_mean_patch_where_the_fit_says() {
    let all = GrainMaterial::ALL
        .map(FrictionMaterial::Grain)
        .into_iter()
        .chain(CupMaterial::ALL.map(FrictionMaterial::Cup))
        .chain(SurfaceMaterial::ALL.map(FrictionMaterial::Surface));
    for m in all {
        let s = m.friction_surface();
        let p = PatchSurface::from_surface(m.elastic(), &s);
        let (a, b) = patch_sides(p.alpha_s_m2, p.beta_s_m2, FRICTION_REFERENCE_SPEED);
        assert!((a / s.patch_side_m - 1.0).abs() < 1e-5, "{m:?}");
        assert!((b / (s.aspect * s.patch_side_m) - 1.0).abs() < 1e-5, "{m:?}");
        let f = plate_mode_hz(1, 1, a, b, p.thickness_m, m.elastic());
        assert!((f / s.plate_hz - 1.0).abs() < 1e-4, "{m:?}: {f} vs {}", s.plate_hz);
        let (a2, _) = patch_sides(p.alpha_s_m2, p.beta_s_m2, 2.0 * FRICTION_REFERENCE_SPEED);
        assert!((a2 / a - 0.5).abs() < 1e-5);
        let f2 = plate_mode_hz(1, 1, a2, 0.5 * b, p.thickness_m, m.elastic());
        assert!((f2 / f - 4.0).abs() < 1e-4);
        assert!(s.mu_static > 0.0 && s.mu_dynamic > 0.0 && p.thickness_m > 0.0, "{m:?}");
    }
}

/// Eq. 8: faster sliding, smaller patches, higher plate modes: the spectral centroid of a
/// second of sugar sliding on a ceramic mug rises with the speed; and the patches' mean
/// side falls as 1/v (all of them on the mug, so that the two surfaces' sizes do not mix,
/// and a steady slide, so that the slip speed is the driving speed).
#[test]
fn spectral_centroid_rises_with_sliding_speed() {
    let mut last_centroid = 0.0;
    let mut last_side = 0.0;
    for speed in [0.03, 0.06, 0.12, 0.24] {
        let (out, _) = render(sugar_on_ceramic(), 7, speed, 1.0, SR as usize);
        let c = spectral_centroid_hz(&out, SR);
        assert!(
            c > last_centroid * 1.2,
            "{speed} m/s: centroid {c} Hz after {last_centroid} Hz"
        );
        // audible: well above the threshold of hearing at 1 m under 1 N
        assert!(level_db_spl(&out) > 15.0, "{speed} m/s: {} dB", level_db_spl(&out));
        last_centroid = c;

        let mut on_mug = sugar_on_ceramic();
        on_mug.share_a = 0.0;
        on_mug.mu_static = on_mug.mu_dynamic;
        let (_, f) = render(on_mug, 7, speed, 1.0, SR as usize);
        let (a, _) = f.stats().side_a();
        let want = 1.0 / (on_mug.sides[1].alpha_s_m2 as f64 * speed as f64);
        assert!(
            (a / want - 1.0).abs() < 0.1,
            "{speed} m/s: mean side {a} m, eq. 8 {want} m"
        );
        if last_side > 0.0 {
            assert!(a < 0.6 * last_side, "{speed} m/s: side {a} m after {last_side} m");
        }
        last_side = a;
    }
}

/// The patches' energy is a share of the friction work, mu_d W per distance slid: the
/// pressure scales with sqrt(W), 10 dB per decade of load.
#[test]
fn level_rises_with_normal_load() {
    let levels: Vec<f64> = [0.1f32, 1.0, 10.0]
        .iter()
        .map(|&w| level_db_spl(&render(sugar_on_ceramic(), 3, 0.08, w, SR as usize).0))
        .collect();
    for pair in levels.windows(2) {
        let step = pair[1] - pair[0];
        assert!((step - 10.0).abs() < 0.1, "levels {levels:?}");
    }
}

/// Phya §6.2.4: with mu_s > mu_d the contact sticks (slip speed 0) and slips, again and
/// again, its friction force swinging about mu_d W as the spring-slider's solution has it;
/// with mu_s = mu_d, or
/// below (aluminium on aluminium, CRC), it slides steadily at the driving speed, never
/// sticks, and the force is mu_d W.
#[test]
fn stick_slip_appears_only_when_static_exceeds_dynamic_friction() {
    let stuck = |pair: FrictionPairData| {
        let mut s = StickSlip::new(pair.mu_static, pair.mu_dynamic, pair.stick_slip_hz, SR);
        let (mut zeros, mut slips) = (0, 0);
        for i in 0..SR as usize {
            let (u, started) = s.step(0.02);
            // after the first stick
            if i > SR as usize / 10 {
                zeros += (u == 0.0) as usize;
                slips += started as usize;
            } else {
                assert!(pair.stick_slip() || (u - 0.02).abs() < 1e-9, "{u}");
            }
        }
        (zeros, slips)
    };
    let glass = FrictionPairData::new(
        FrictionMaterial::Grain(GrainMaterial::GlassBeads1),
        FrictionMaterial::Cup(CupMaterial::Glass),
    );
    assert!(glass.mu_static > glass.mu_dynamic);
    let (zeros, slips) = stuck(glass);
    assert!(
        zeros > 100 && slips > 5,
        "glass on glass: {zeros} samples stuck, {slips} slips"
    );

    let mut equal = glass;
    equal.mu_static = equal.mu_dynamic;
    assert_eq!(stuck(equal), (0, 0));
    let aluminium = FrictionPairData::new(
        FrictionMaterial::Cup(CupMaterial::Aluminium),
        FrictionMaterial::Cup(CupMaterial::Aluminium),
    );
    assert!(aluminium.mu_static < aluminium.mu_dynamic);
    assert_eq!(stuck(aluminium), (0, 0));

    // the contact's own count, and the sound: bursts at the stick-slip rate
    let (_, f) = render(glass, 1, 0.02, 1.0, SR as usize);
    assert!(f.stats().slips_per_s(SR) > 5.0, "{:?}", f.stats());
    let (_, f) = render(equal, 1, 0.02, 2.0, SR as usize);
    assert_eq!(f.stats().slips, 0);
    // the friction force: mu_d W in a steady slide; the spring's, never above mu_s W, where
    // it sticks and slips
    assert!((f.tangential_force_n() - 2.0 * equal.mu_dynamic).abs() < 1e-6);
    let mut f = Friction::new(SR, 1, glass);
    let mut out = [0.0f32; 1];
    let (mut lo, mut hi) = (f32::INFINITY, 0.0f32);
    for i in 0..SR as usize {
        f.render(0.02, 2.0, &mut out);
        if i > SR as usize / 10 {
            lo = lo.min(f.tangential_force_n());
            hi = hi.max(f.tangential_force_n());
        }
    }
    // in each slip the force over the load swings about mu_d with the amplitude
    // R = sqrt((mu_s - mu_d)^2 + (v omega0 / g)^2) (slip starts at mu_s, at the rate k v)
    let w0 = 2.0 * std::f32::consts::PI * glass.stick_slip_hz;
    let r = ((glass.mu_static - glass.mu_dynamic).powi(2) + (0.02 * w0 / GRAVITY).powi(2)).sqrt();
    let (want_hi, want_lo) = (2.0 * (glass.mu_dynamic + r), 2.0 * (glass.mu_dynamic - r));
    assert!(
        (hi - want_hi).abs() < 0.02 * want_hi,
        "peak {hi} N, analytic {want_hi} N"
    );
    assert!(
        (lo - want_lo).abs() < 0.02 * want_hi,
        "trough {lo} N, analytic {want_lo} N"
    );
}

/// One call of 4096 samples, or calls of 1, 7, 64, 333, ... samples: the same samples,
/// bit for bit, with the speed and load changing between calls at the same sample times.
#[test]
fn output_does_not_depend_on_block_sizes() {
    let pair = FrictionPairData::new(
        FrictionMaterial::Grain(GrainMaterial::GlassBeads1),
        FrictionMaterial::Surface(SurfaceMaterial::Steel),
    );
    // (samples, speed, load): changes at fixed times
    let segments = [(4096usize, 0.05f32, 1.0f32), (4096, 0.1, 0.5), (8192, 0.02, 2.0)];
    let total: usize = segments.iter().map(|s| s.0).sum();
    let mut whole = vec![0.0f32; total];
    let mut f = Friction::new(SR, 11, pair);
    let mut at = 0;
    for &(n, v, w) in &segments {
        f.render(v, w, &mut whole[at..at + n]);
        at += n;
    }
    assert!(whole.iter().any(|&x| x != 0.0));
    for sizes in [&[1usize, 7, 64, 333][..], &[4096], &[13, 1000, 2]] {
        let mut split = vec![0.0f32; total];
        let mut f = Friction::new(SR, 11, pair);
        let mut at = 0;
        let mut k = 0;
        for &(n, v, w) in &segments {
            let end = at + n;
            while at < end {
                let len = sizes[k % sizes.len()].min(end - at);
                f.render(v, w, &mut split[at..at + len]);
                at += len;
                k += 1;
            }
        }
        let first = whole.iter().zip(&split).position(|(a, b)| a.to_bits() != b.to_bits());
        assert_eq!(first, None, "blocks {sizes:?} differ from whole calls");
    }
}

/// `render` adds into `out`, and a reset contact plays the same again.
#[test]
fn render_adds_and_reset_replays() {
    let (once, mut f) = render(sugar_on_ceramic(), 5, 0.1, 1.0, 8192);
    f.reset();
    let mut twice = once.clone();
    f.render(0.1, 1.0, &mut twice);
    for (x, y) in once.iter().zip(&twice) {
        assert_eq!((2.0 * x).to_bits(), y.to_bits());
    }
}

/// Zero speed or zero load is silent; NaN, infinite or negative speeds and loads count as 0;
/// a contact ringing when bad input arrives rings on and never gives NaN.
#[test]
fn bad_inputs_are_silent_and_never_nan() {
    let bad = [0.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0];
    for &x in &bad {
        for (v, w) in [(x, 1.0), (0.1, x), (x, x)] {
            let (out, _) = render(sugar_on_ceramic(), 2, v, w, 4800);
            assert!(out.iter().all(|&s| s == 0.0), "speed {v}, load {w}");
        }
    }
    let mut f = Friction::new(SR, 2, sugar_on_ceramic());
    let mut out = vec![0.0f32; 4800];
    f.render(0.1, 1.0, &mut out);
    for &x in &bad {
        f.render(x, x, &mut out);
        assert!(out.iter().all(|s| s.is_finite()), "after {x}");
        f.render(1e30, 1e30, &mut out);
        assert!(out.iter().all(|s| s.is_finite()), "huge inputs");
    }
}

/// `render` never allocates (debug builds: the allocator aborts inside `assert_no_alloc`).
#[test]
fn render_never_allocates() {
    let mut f = Friction::new(SR, 9, sugar_on_ceramic());
    let mut out = vec![0.0f32; 4096];
    assert_no_alloc(|| {
        for (i, v) in [0.005f32, 0.05, 0.2, 0.0, f32::NAN].iter().cycle().take(40).enumerate() {
            f.render(*v, 0.5 + i as f32, &mut out);
        }
    });
    assert!(f.stats().patches > 0);
}

/// The recursion `Friction` renders a patch with against the patch's closed form (eq. 17–22,
/// `Patch::pressure_at`): one junction, from a contact that slides just far enough for one.
#[test]
fn a_lone_patch_rings_as_its_closed_form() {
    let mut pair = sugar_on_ceramic();
    pair.mu_static = pair.mu_dynamic; // steady slide
    pair.share_a = 0.0; // every patch on the mug
    let v = 0.1;
    let mut f = Friction::new(SR, 4, pair);
    // slide sample by sample until the first junction, then stop
    let mut out = [0.0f32; 1];
    while f.stats().patches == 0 {
        f.render(v, 1.0, &mut out);
    }
    let s = *f.stats();
    let (a, b) = (s.sum_a as f32, s.sum_b as f32);
    let mut ring = vec![0.0f32; 2400];
    ring[0] = out[0];
    f.render(0.0, 1.0, &mut ring[1..]);
    // the junction's energy: the share of mu_d W over the distance slid to it, which the
    // slide stopped at; recover it from the first sample (every mode starts at its peak)
    let unit = Patch::new(&pair.sides[1], a, b, 1.0);
    let p0 = unit.pressure_at(0.0, pair.patch_loss_factor, MAX_FREQ_HZ) as f32;
    let energy = (ring[0] / p0).powi(2);
    let patch = Patch::new(&pair.sides[1], a, b, energy);
    let peak = ring.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    assert!(peak > 0.0);
    for (i, &x) in ring.iter().enumerate() {
        let want = patch.pressure_at(i as f64 / SR as f64, pair.patch_loss_factor, MAX_FREQ_HZ) as f32;
        assert!((x - want).abs() < 1e-3 * peak, "sample {i}: {x} vs {want}");
    }
    // the energy is kappa mu_d W times a distance of the order of the asperity spacing
    let work = energy / (pair.vibration_share * pair.mu_dynamic);
    assert!(
        work > 1e-3 * pair.asperity_spacing_m && work < 20.0 * pair.asperity_spacing_m,
        "{work}"
    );
}

/// The cost of a typical contact (sugar on a ceramic mug at 0.1 m/s under 1 N), printed:
/// `cargo test -p granary-engine --release --test integration friction:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_cost_and_levels() {
    for (name, pair) in [
        ("sugar on ceramic", sugar_on_ceramic()),
        (
            "glass beads on glass",
            FrictionPairData::new(
                FrictionMaterial::Grain(GrainMaterial::GlassBeads1),
                FrictionMaterial::Cup(CupMaterial::Glass),
            ),
        ),
        (
            "rice on steel",
            FrictionPairData::new(
                FrictionMaterial::Grain(GrainMaterial::Rice),
                FrictionMaterial::Cup(CupMaterial::Steel),
            ),
        ),
    ] {
        for speed in [0.03f32, 0.1, 0.2] {
            let n = 10 * SR as usize;
            let mut f = Friction::new(SR, 1, pair);
            let mut out = vec![0.0f32; n];
            let t = std::time::Instant::now();
            for chunk in out.chunks_mut(64) {
                f.render(speed, 1.0, chunk);
            }
            let ns = t.elapsed().as_nanos() as f64 / n as f64;
            println!(
                "{name:<22} {speed:>5} m/s, 1 N: {ns:6.1} ns/sample, {:5.1} dB SPL at 1 m, centroid {:7.0} Hz, {:6.0} patches/s, {:4.1} slips/s, {} dropped",
                level_db_spl(&out),
                spectral_centroid_hz(&out, SR),
                f.stats().patches_per_s(SR),
                f.stats().slips_per_s(SR),
                f.stats().dropped
            );
        }
    }
}
