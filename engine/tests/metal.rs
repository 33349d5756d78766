//! The thin metal cup's nonlinear ring (`nonlinear`): a hard strike glides in pitch and a
//! soft one does not, ceramic (and every non-metal) stays linear, and grains on the floor
//! buzz only when the floor's acceleration exceeds g.

use granary_engine::base::materials::{CupMaterial, GRAVITY};
use granary_engine::base::simd::Isa;
use granary_engine::control::choices::CupShape;
use granary_engine::derived::cups::Cup;
use granary_engine::derived::cups::{wall_bus, CupState, CUP_BUSES, FLOOR_BUS};
use granary_engine::resonators::modal::{build_modes, ModalBank, Mode, MAX_MODES};
use granary_engine::resonators::nonlinear::Nonlinear;

const FS: f32 = 48_000.0;
/// The engine's control grid (one glide update per window).
const WINDOW: usize = granary_engine::base::window::WINDOW;

fn cup(material: CupMaterial, fill: f32) -> CupState {
    CupState {
        material,
        // the thin metal cup: 0.8 mm wall, 1 mm floor
        cup: Cup::new(CupShape::MetalCup, 1.0),
        fill,
        grain_density: 1587.0,
        grain_diameter_m: 0.5e-3,
    }
}

fn modes(state: &CupState) -> Vec<Mode> {
    let mut m = [Mode::ZERO; MAX_MODES];
    let n = build_modes(state, 20_000.0, &mut m);
    m[..n].to_vec()
}

/// The bank of `state` (with its nonlinear path, if it has one) struck at t = 0 with an
/// impulse `impulse` (N s) on `bus`, then ringing for `seconds`, in engine windows with a
/// control step before each (as `Engine::window` runs it). Returns the left channel (Pa)
/// and the buzzing grains' force (N).
fn strike(state: &CupState, bus: usize, impulse: f32, seconds: f32) -> (Vec<f32>, Vec<f32>) {
    let modes = modes(state);
    let mut bank = ModalBank::new(FS, Isa::detect());
    bank.set_modes(&modes, 0.5, 0.0);
    bank.set_nonlinear(Nonlinear::for_cup(state));
    let len = (seconds * FS) as usize;
    let mut force = vec![vec![0.0f32; len]; CUP_BUSES];
    force[bus][0] = impulse * FS;
    let (mut l, mut r, mut buzz) = (vec![0.0f32; len], vec![0.0f32; len], vec![0.0f32; len]);
    let mut t = 0;
    while t < len {
        let end = (t + WINDOW).min(len);
        bank.control();
        let f: [&[f32]; CUP_BUSES] = std::array::from_fn(|b| &force[b][t..end]);
        bank.process_buzz(&f, &mut l[t..end], &mut r[t..end], &mut buzz[t..end]);
        t = end;
    }
    (l, buzz)
}

/// Frequency (Hz) of the strongest spectral peak of `x[from..from + len]` within `band`
/// (Hz): Hann window, zero-padded to 2^18 points (0.18 Hz bins), the peak refined by a
/// parabola through the log magnitudes of its bin and its neighbours.
fn peak_hz(x: &[f32], from: usize, len: usize, band: (f64, f64)) -> f64 {
    let n = 1 << 18;
    let mut buf = vec![0.0f64; n];
    for (i, v) in x[from..from + len].iter().enumerate() {
        let w = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / len as f64).cos();
        buf[i] = *v as f64 * w;
    }
    let fft = granary_engine::fft::forward(n);
    let mut spec = fft.make_output_vec();
    fft.process(&mut buf, &mut spec).unwrap();
    let hz = FS as f64 / n as f64;
    let lo = (band.0 / hz) as usize;
    let hi = (band.1 / hz) as usize;
    let mag = |k: usize| spec[k].norm().max(1e-300).ln();
    let k = (lo..hi).max_by(|&a, &b| mag(a).total_cmp(&mag(b))).unwrap();
    let (a, b, c) = (mag(k - 1), mag(k), mag(k + 1));
    let offset = 0.5 * (a - c) / (a - 2.0 * b + c);
    (k as f64 + offset) * hz
}

/// Where the glide tests strike: the top wall ring, where the lowest (n = 2) pair of
/// modes moves most.
const TOP_RING: usize = wall_bus(2, 0);

/// Early (50-150 ms) and late (1.0-1.1 s) peak of the lowest mode (the n = 2 pair, the
/// strongest under a strike at the top of the wall, with no other mode within an octave
/// above it) after an impulse `impulse` on the top wall ring.
fn glide_of(material: CupMaterial, impulse: f32) -> (f64, f64) {
    let state = cup(material, 0.0);
    let m = modes(&state);
    let f0 = m[0].freq_hz as f64;
    assert!(m[2].freq_hz as f64 > 2.0 * f0);
    let (l, _) = strike(&state, TOP_RING, impulse, 1.1);
    let band = (0.99 * f0, 1.5 * f0);
    let win = (0.1 * FS) as usize;
    let early = peak_hz(&l, (0.05 * FS) as usize, win, band);
    let late = peak_hz(&l, (1.0 * FS) as usize, win, band);
    (early, late)
}

/// A hard strike: an impulse of 0.02 N s (a 20 g spoon at 1 m/s) at the top of the wall,
/// which takes the lowest mode's peak displacement to a fraction of the wall thickness; a
/// soft one 1/100 of that (delta 1/10^4 of the hard one's).
const HARD: f32 = 0.02;
const SOFT: f32 = 0.0002;

#[test]
fn a_hard_strike_on_a_thin_steel_cup_glides_down_and_a_soft_one_does_not() {
    let (early, late) = glide_of(CupMaterial::Steel, HARD);
    let glide = early / late - 1.0;
    // the stretch decays with the ring: the pitch falls by more than 0.5 % (9 cents)
    eprintln!("steel: {early} Hz early, {late} Hz late: {:.3} %", 100.0 * glide);
    assert!(glide > 5e-3, "hard: {early} Hz early, {late} Hz late");
    // soft: delta scales as the square of the amplitude, 1e-4 of the hard one; the same
    // measurement finds no movement beyond 0.02 % (the peak's resolution in a linear ring)
    let (early, late) = glide_of(CupMaterial::Steel, SOFT);
    assert!(
        (early / late - 1.0).abs() < 2e-4,
        "soft: {early} Hz early, {late} Hz late"
    );
    // and the late peak of the hard strike has settled near the soft one's (the rest
    // frequency)
    let (_, hard_late) = glide_of(CupMaterial::Steel, HARD);
    assert!((hard_late / late - 1.0).abs() < 0.5 * glide, "{hard_late} vs {late}");
}

#[test]
fn aluminium_glides_and_ceramic_glass_porcelain_wood_plastic_stay_linear() {
    let (early, late) = glide_of(CupMaterial::Aluminium, HARD);
    assert!(early / late - 1.0 > 5e-3, "aluminium: {early} Hz early, {late} Hz late");
    for m in [
        CupMaterial::Ceramic,
        CupMaterial::Porcelain,
        CupMaterial::Glass,
        CupMaterial::Wood,
        CupMaterial::Plastic,
    ] {
        assert_eq!(Nonlinear::for_cup(&cup(m, 0.2)), None, "{m:?}");
        let (early, late) = glide_of(m, HARD);
        assert!(
            (early / late - 1.0).abs() < 2e-4,
            "{m:?}: {early} Hz early, {late} Hz late"
        );
    }
}

#[test]
fn a_hard_strike_spreads_energy_upward_in_steel_and_not_in_ceramic() {
    // the hard strike's response, scaled down to the soft one's size, against the soft
    // one: a linear cup gives the same signal; the coupled sections add energy to the
    // upper modes (above the first section's 16)
    for (material, coupled) in [(CupMaterial::Steel, true), (CupMaterial::Ceramic, false)] {
        let state = cup(material, 0.0);
        let m = modes(&state);
        let split = m[16].freq_hz as f64;
        let (hard, _) = strike(&state, TOP_RING, HARD, 0.2);
        let (soft, _) = strike(&state, TOP_RING, SOFT, 0.2);
        let scale = SOFT / HARD;
        let energy_above = |x: &[f32], k: f32| {
            let n = x.len().next_power_of_two();
            let mut buf = vec![0.0f64; n];
            for (b, v) in buf.iter_mut().zip(x) {
                *b = (*v * k) as f64;
            }
            let fft = granary_engine::fft::forward(n);
            let mut spec = fft.make_output_vec();
            fft.process(&mut buf, &mut spec).unwrap();
            let lo = (split * 0.98 / (FS as f64 / n as f64)) as usize;
            spec[lo..].iter().map(|c| c.norm_sqr()).sum::<f64>()
        };
        let ratio = energy_above(&hard, scale) / energy_above(&soft, 1.0);
        if coupled {
            eprintln!("{material:?}: upper modes x{ratio}");
            assert!(ratio > 2.0, "{material:?}: upper modes x{ratio}");
        } else {
            assert!((ratio - 1.0).abs() < 1e-3, "{material:?}: upper modes x{ratio}");
        }
    }
}

/// The floor's peak acceleration (m/s^2) after an impulse `impulse` on the floor of the
/// linear bank of `modes`, from the modes' data alone: each mode's velocity at its peak
/// starts at `shape_floor impulse / M` and rings as `e^{(-delta + i w) t}`; the floor's
/// acceleration is `sum_i shape_floor w Im(-v_i)`. Over the first 20 ms (its peak).
fn floor_peak_acceleration(modes: &[Mode], impulse: f64) -> f64 {
    let mut peak = 0.0f64;
    for t in 0..(0.02 * FS) as usize {
        let t = t as f64 / FS as f64;
        let a: f64 = modes
            .iter()
            .map(|m| {
                let s = m.shape[FLOOR_BUS] as f64;
                let w = 2.0 * std::f64::consts::PI * m.freq_hz as f64;
                let v = s * impulse / m.mass_kg as f64 * (-(m.decay_per_s as f64) * t).exp();
                -s * w * v * (w * t).sin()
            })
            .sum();
        peak = peak.max(a.abs());
    }
    peak
}

#[test]
fn grains_buzz_on_a_steel_floor_only_above_g() {
    let state = cup(CupMaterial::Steel, 0.05);
    let nl = Nonlinear::for_cup(&state).unwrap();
    assert!(nl.layer_kg > 0.0);
    // the impulse that takes the floor's peak acceleration to g, from the modes alone
    let unit = floor_peak_acceleration(&modes(&state), 1.0);
    let threshold = GRAVITY as f64 / unit;
    let peak_buzz = |impulse: f64| {
        let (_, buzz) = strike(&state, FLOOR_BUS, impulse as f32, 0.05);
        buzz.iter().fold(0.0f32, |m, x| m.max(x.abs()))
    };
    // below g: silent, not a single sample of buzz
    assert_eq!(
        peak_buzz(0.8 * threshold),
        0.0,
        "buzz below g (threshold {threshold} N s)"
    );
    // above: the grains chatter, with a force of the layer's mass times the excess
    let above = peak_buzz(2.0 * threshold);
    assert!(above > 0.0, "no buzz above g");
    let expected = nl.layer_kg * (2.0 - 1.0) * GRAVITY as f64;
    assert!(
        (above as f64 / expected - 1.0).abs() < 0.1,
        "buzz {above} N vs {expected} N"
    );
    // no grains on the floor: no buzz however hard the strike
    let empty = cup(CupMaterial::Steel, 0.0);
    assert_eq!(Nonlinear::for_cup(&empty).unwrap().layer_kg, 0.0);
    let (_, buzz) = strike(&empty, FLOOR_BUS, (10.0 * threshold) as f32, 0.05);
    assert!(buzz.iter().all(|&x| x == 0.0));
    // and a ceramic floor has no buzzing path
    let (_, buzz) = strike(
        &cup(CupMaterial::Ceramic, 0.05),
        FLOOR_BUS,
        (10.0 * threshold) as f32,
        0.05,
    );
    assert!(buzz.iter().all(|&x| x == 0.0));
}
