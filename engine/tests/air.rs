//! The air in the vessel, heard in renders (issue 44): over a 20-second pour into a mug and
//! into a tall glass the air's resonance rises with the fill, and a bed of finer grains damps
//! it more than one of coarser grains (down to a quarter of a millimetre; finer still, the
//! bed resists the air so much that it reflects more: `resonators::air`). The resonance is found in the rendered sound: the same
//! pour (same seed, same events) rendered with the air and without it, the difference of the
//! two cup stems is the air's sound, and its transfer from the grains' stem (the cross
//! spectrum over the grains' own, Welch's averages) peaks at the resonance.

use granary_engine::control::params::ParamValues;
use granary_engine::control::preset;
use granary_engine::fft::{self, Complex64};
use granary_engine::render::{PourCurve, RenderOptions, Renderer};

const FS: f64 = 48_000.0;
/// FFT length of the Welch averages (11.7 Hz bins).
const N: usize = 4096;

fn values(set: &[(&str, &str)]) -> ParamValues {
    let mut v = preset::find("sugar_ceramic_mug").unwrap().values;
    for (id, x) in set {
        v.set_text(id, x).unwrap();
    }
    v
}

/// The grains stem and the air's sound (the cup stem with the air less the cup stem without
/// it), mid of left and right, for `values` following `curve` for `seconds`.
fn grains_and_air(v: &ParamValues, curve: PourCurve, seconds: f64) -> (Vec<f64>, Vec<f64>) {
    let opts = RenderOptions {
        seconds,
        sample_rate: FS as f32,
        block_size: 512,
        pour: Some(curve),
    };
    let with = Renderer::pour(v, &opts).collect();
    let without = Renderer::pour(v, &opts).air(false).collect();
    let mid = |x: &[Vec<f32>; 2]| -> Vec<f64> {
        x[0].iter()
            .zip(&x[1])
            .map(|(l, r)| 0.5 * (*l as f64 + *r as f64))
            .collect()
    };
    assert_eq!(mid(&with.grains), mid(&without.grains), "the air changed the grains");
    let (a, b) = (mid(&with.cup), mid(&without.cup));
    (mid(&with.grains), a.iter().zip(&b).map(|(x, y)| x - y).collect())
}

/// |S_xy / S_xx| over `x[range]`, Hann windows overlapping by three quarters.
fn transfer(x: &[f64], y: &[f64]) -> Vec<f64> {
    let fft = fft::forward(N);
    let hann: Vec<f64> = (0..N)
        .map(|i| 0.5 - 0.5 * (2.0 * std::f64::consts::PI * i as f64 / N as f64).cos())
        .collect();
    let mut sxy = vec![Complex64::new(0.0, 0.0); N / 2 + 1];
    let mut sxx = vec![0.0f64; N / 2 + 1];
    let (mut bx, mut by) = (vec![0.0; N], vec![0.0; N]);
    let (mut fx, mut fy) = (fft.make_output_vec(), fft.make_output_vec());
    let mut start = 0;
    while start + N <= x.len() {
        for i in 0..N {
            bx[i] = x[start + i] * hann[i];
            by[i] = y[start + i] * hann[i];
        }
        fft.process(&mut bx, &mut fx).unwrap();
        fft.process(&mut by, &mut fy).unwrap();
        for k in 0..fx.len() {
            sxy[k] += fx[k].conj() * fy[k];
            sxx[k] += fx[k].norm_sqr();
        }
        start += N / 4;
    }
    sxy.iter().zip(&sxx).map(|(c, p)| c.norm() / p.max(1e-300)).collect()
}

/// The highest peak of `h` between `lo` and `hi` Hz (parabolic between bins), Hz, and its
/// half-power bandwidth's quality factor f / (f_hi - f_lo).
fn peak(h: &[f64], lo: f64, hi: f64) -> (f64, f64) {
    let bin = FS / N as f64;
    let (a, b) = ((lo / bin) as usize, (hi / bin) as usize);
    let k = (a..b).max_by(|&i, &j| h[i].total_cmp(&h[j])).unwrap();
    let (l, c, r) = (h[k - 1].ln(), h[k].ln(), h[k + 1].ln());
    let shift = 0.5 * (l - r) / (l - 2.0 * c + r);
    let f = (k as f64 + shift.clamp(-0.5, 0.5)) * bin;
    let half = h[k] / std::f64::consts::SQRT_2;
    let (mut i, mut j) = (k, k);
    while i > 1 && h[i] > half {
        i -= 1;
    }
    while j + 1 < h.len() && h[j] > half {
        j += 1;
    }
    (f, f / ((j - i) as f64 * bin))
}

#[test]
fn the_air_resonance_rises_as_a_mug_and_a_tall_glass_fill() {
    // sugar poured for 20 s at the rate that fills each about to the brim
    for (name, set, rate) in [
        ("mug", &[][..], "15"),
        (
            "tall glass",
            &[("cup_shape", "tumbler"), ("cup_material", "glass")][..],
            "15",
        ),
    ] {
        let v = values(set);
        let (grains, air) = grains_and_air(
            &v,
            PourCurve::parse(&format!("0:{rate},20:{rate},20.01:0")).unwrap(),
            20.0,
        );
        let seg = (2.0 * FS) as usize;
        let mut found = Vec::new();
        for s in 0..10 {
            let r = s * seg..(s + 1) * seg;
            if air[r.clone()].iter().all(|x| *x == 0.0) {
                // the vessel is full: no column, no resonance
                println!("{name}, {:2}-{:2} s: full, the air is silent", 2 * s, 2 * s + 2);
                break;
            }
            let h = transfer(&grains[r.clone()], &air[r]);
            let (f, q) = peak(&h, 200.0, 4_000.0);
            println!(
                "{name}, {:2}-{:2} s: the air resonates at {f:6.0} Hz, Q {q:4.1}",
                2 * s,
                2 * s + 2
            );
            found.push(f);
        }
        for w in found.windows(2) {
            // one bin of the averages' resolution allowed between neighbours
            assert!(w[1] >= w[0] - FS / N as f64, "{name}: the resonance fell, {found:?}");
        }
        let last = found.len() - 1;
        assert!(last >= 6, "{name}: the air fell silent at {} s", 2 * found.len());
        assert!(
            found[last] > 1.5 * found[0],
            "{name}: the resonance rose only from {:.0} to {:.0} Hz",
            found[0],
            found[last]
        );
    }
}

#[test]
fn finer_grains_damp_the_air_more() {
    // a mug a third full of sugar, poured on for 4 s: grains of half, once and four times
    // sugar's size (0.25, 0.5 and 2 mm). Damping is the resonance's bandwidth B (its
    // amplitude decays as exp(-pi B t)).
    let mut bands = Vec::new();
    for size in ["0.5", "1", "4"] {
        let v = values(&[("fill", "0.3"), ("grain_size", size), ("auto_fill", "off")]);
        let (grains, air) = grains_and_air(&v, PourCurve::parse("0:20,4:20,4.01:0").unwrap(), 4.0);
        let h = transfer(&grains[(0.5 * FS) as usize..], &air[(0.5 * FS) as usize..]);
        let (f, q) = peak(&h, 200.0, 4_000.0);
        println!(
            "grain size {size}x sugar: the air resonates at {f:.0} Hz, Q {q:.1}, bandwidth {:.0} Hz",
            f / q
        );
        bands.push(f / q);
    }
    assert!(
        bands[0] > 1.05 * bands[1] && bands[1] > 1.5 * bands[2],
        "bandwidth by grain size (fine to coarse): {bands:?} Hz"
    );
}

#[test]
fn a_shaken_jar_sounds_its_air_through_its_lid() {
    // the jar of rice shaken is closed under a twist-off lid (`resonators::air::Lid`): the
    // air's sound (the cup stem with it less without it) over the grains' own peaks at the
    // lid's own mode, which the air beneath stiffens by under 3 % (`air::tests`, the lumped
    // lid and cavity), not at an open jar's quarter wave
    let v = preset::find("shaking_a_jar_of_rice").unwrap().values;
    let shake = PourCurve::parse_for("0:60,2.5:60,2.51:0", granary_engine::control::choices::Gesture::Shake).unwrap();
    let (grains, air) = grains_and_air(&v, shake, 3.0);
    assert!(air.iter().any(|&x| x != 0.0), "no air under the lid");
    let h = transfer(&grains, &air);
    let (f, q) = peak(&h, 150.0, 5_000.0);
    let settings = v.to_settings();
    let cup = granary_engine::derived::cups::Cup::for_settings(&settings);
    let lid = granary_engine::resonators::air::Lid::over(&cup).fundamental_hz();
    let mut open = [granary_engine::resonators::air::AirMode::ZERO; granary_engine::resonators::air::AIR_MODES];
    let state = granary_engine::derived::cups::CupState {
        material: settings.cup_material,
        cup,
        fill: settings.fill,
        grain_density: settings.grain_material.data().elastic.density,
        grain_diameter_m: 2.0 * settings.grain_radius_m(),
    };
    let n = granary_engine::resonators::air::for_cup(&state, 20_000.0, &mut open);
    println!(
        "shaken jar: the air under the lid peaks at {f:.1} Hz (Q {q:.0}), the lid's own mode {lid:.1} Hz; open, the jar's air would peak at {:?} Hz",
        open[..n].iter().map(|m| m.freq_hz.round()).collect::<Vec<_>>()
    );
    assert!(f / lid > 0.995 && f / lid < 1.03, "{f} Hz against the lid's {lid} Hz");
    // and an open jar's air would not pass that check
    assert!(
        open[..n]
            .iter()
            .all(|m| !(m.freq_hz as f64 / lid > 0.995 && (m.freq_hz as f64) / lid < 1.03)),
        "the open jar's air is where the lid's is"
    );
}
