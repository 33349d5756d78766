//! Shaking against real shaker strokes (issue 45's recordings of rice in a glass jar, 2 mm
//! glass beads in a tumbler and lentils in a plastic jar, at 30, 60 and 100 %): a stroke rises
//! over 10–40 ms and falls 20 dB within 100 ms of its peak; at 8 strokes a second the strokes
//! stay apart (the level dips 20 dB between them); at 4 Hz every amount from 5 % rattles,
//! louder the harder, brighter (up to 50 %, then as bright), and a softer stroke never lasts
//! longer than a harder one.
//! (Before the mechanics under gravity: strokes fell 20 dB in 0.1–0.7 s, rose in 4–6 ms, and
//! nothing sounded below 1 g.)

use granary_engine::control::choices::Gesture;
use granary_engine::control::params::ParamValues;
use granary_engine::control::preset;
use granary_engine::render::{render, PourCurve, RenderOptions, Renderer};

const FS: f64 = 48_000.0;

/// The three setups of the recordings: the factory preset's jar of rice, and the same hand
/// with beads in a tumbler and lentils in a plastic jar.
const SETUPS: [(&str, &[(&str, &str)]); 3] = [
    ("rice in a glass jar", &[]),
    (
        "2 mm beads in a tumbler",
        &[
            ("grain_material", "glass_beads_2mm"),
            ("cup_material", "glass"),
            ("cup_shape", "tumbler"),
        ],
    ),
    (
        "lentils in a plastic jar",
        &[
            ("grain_material", "lentils"),
            ("cup_material", "plastic"),
            ("cup_shape", "jar"),
        ],
    ),
];

fn values(set: &[(&str, &str)], rate_hz: f32) -> ParamValues {
    let mut v = preset::find("shaking_a_jar_of_rice").unwrap().values;
    for (id, x) in set {
        v.set_text(id, x).unwrap();
    }
    v.set_text("shake_rate", &rate_hz.to_string()).unwrap();
    v
}

/// The main output (left and right) of a shake following `curve` (amount in percent).
fn shake(v: &ParamValues, curve: &str, seconds: f64) -> Vec<f32> {
    let opts = RenderOptions {
        seconds,
        sample_rate: FS as f32,
        block_size: 512,
        pour: Some(PourCurve::parse_for(curve, Gesture::Shake).unwrap()),
    };
    let r = render(v, &opts);
    r.main[0].iter().zip(&r.main[1]).map(|(l, r)| 0.5 * (l + r)).collect()
}

/// The level in dB of the power averaged over 5 ms around each sample.
fn envelope_db(x: &[f32]) -> Vec<f64> {
    let w = (0.005 * FS) as usize;
    let mut sum = vec![0.0f64; x.len() + 1];
    for (i, s) in x.iter().enumerate() {
        sum[i + 1] = sum[i] + (*s as f64).powi(2);
    }
    (0..x.len())
        .map(|i| {
            let (a, b) = (i.saturating_sub(w / 2), (i + w / 2).min(x.len()));
            10.0 * ((sum[b] - sum[a]) / (b - a) as f64 + 1e-30).log10()
        })
        .collect()
}

/// A stroke's figures, ms: its 10–90 % rise (of the envelope's amplitude) and the time from
/// its peak until it is 20 dB down.
fn stroke_figures(x: &[f32]) -> (f64, f64) {
    let e = envelope_db(x);
    let (peak_at, peak) = e
        .iter()
        .enumerate()
        .fold((0, f64::MIN), |m, (i, &d)| if d > m.1 { (i, d) } else { m });
    let first_above = |db: f64| e[..=peak_at].iter().position(|&d| d >= db).unwrap();
    let rise = (first_above(peak - 0.9) - first_above(peak - 20.0)) as f64;
    let fall = e[peak_at..].iter().position(|&d| d < peak - 20.0).unwrap_or(e.len()) as f64;
    (rise / FS * 1e3, fall / FS * 1e3)
}

#[test]
fn a_stroke_rises_over_tens_of_milliseconds_and_falls_within_a_hundred() {
    for (name, set) in SETUPS {
        let v = values(set, 5.0);
        for amount in [30, 60, 100] {
            // one stroke: the amount held over the first reversal only
            let x = shake(&v, &format!("0:{amount},0.12:{amount},0.12:0"), 1.0);
            let (rise_ms, fall_ms) = stroke_figures(&x);
            println!("{name} at {amount} %: rises in {rise_ms:.1} ms, 20 dB down {fall_ms:.1} ms after its peak");
            assert!(
                (10.0..=40.0).contains(&rise_ms),
                "{name} at {amount} %: rises in {rise_ms:.1} ms"
            );
            assert!(
                fall_ms <= 100.0,
                "{name} at {amount} %: 20 dB down after {fall_ms:.1} ms"
            );
        }
    }
}

#[test]
fn strokes_eight_times_a_second_stay_apart() {
    for (name, set) in SETUPS {
        // a shake at 4 Hz: a stroke at each reversal, 8 a second
        let x = shake(&values(set, 4.0), "0:60", 2.5);
        let e = envelope_db(&x);
        let per = (FS / 8.0) as usize;
        let mut dips: Vec<f64> = e[(0.5 * FS) as usize..(2.4 * FS) as usize]
            .chunks(per)
            .map(|s| s.iter().copied().fold(f64::MIN, f64::max) - s.iter().copied().fold(f64::MAX, f64::min))
            .collect();
        dips.sort_by(f64::total_cmp);
        let median = dips[dips.len() / 2];
        println!("{name}: the level dips {median:.1} dB between strokes (median)");
        assert!(median >= 20.0, "{name}: dips {median:.1} dB");
    }
}

#[test]
fn gentle_shakes_rattle_and_harder_ones_are_louder_brighter_and_never_shorter() {
    let v = values(&[], 4.0);
    let mut last: Option<(u32, f64, f64, f64)> = None;
    let mut softest = None;
    for amount in [5, 10, 25, 50, 75, 100] {
        let x = shake(&v, &format!("0:{amount}"), 3.5);
        let e = envelope_db(&x);
        // each stroke (half a shake) after the first half second: its peak and how long it
        // stays within 20 dB of it
        let per = (FS / 8.0) as usize;
        let start = (0.5 * FS) as usize;
        let fft = granary_engine::fft::forward(2048);
        let (mut peaks, mut lengths, mut centroids) = (Vec::new(), Vec::new(), Vec::new());
        for (k, s) in e[start..].chunks_exact(per).enumerate() {
            let (at, peak) = s
                .iter()
                .enumerate()
                .fold((0, f64::MIN), |m, (i, &d)| if d > m.1 { (i, d) } else { m });
            let first = s.iter().position(|&d| d > peak - 20.0).unwrap();
            let last = s.iter().rposition(|&d| d > peak - 20.0).unwrap();
            peaks.push(peak);
            lengths.push((last - first) as f64 / FS * 1e3);
            // the spectral centroid (power-weighted) of the 40 ms around the stroke's peak
            let at = start + k * per + at;
            let mut input: Vec<f64> = (0..2048)
                .map(|i| {
                    let j = (at + i).checked_sub(480).filter(|&j| j < x.len() && i < 1920);
                    j.map_or(0.0, |j| x[j] as f64)
                })
                .collect();
            let mut spectrum = fft.make_output_vec();
            fft.process(&mut input, &mut spectrum).unwrap();
            let (num, den) = spectrum.iter().enumerate().fold((0.0, 0.0), |(a, b), (k, c)| {
                (a + k as f64 * c.norm_sqr(), b + c.norm_sqr())
            });
            centroids.push(num / den * FS / 2048.0);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (peak, length, centroid) = (median(&mut peaks), median(&mut lengths), median(&mut centroids));
        println!(
            "{amount:3} %: strokes peak at {peak:.1} dB, last {length:.1} ms within 20 dB, centroid {centroid:.0} Hz"
        );
        assert!(peak > -80.0, "{amount} %: silent ({peak:.1} dB)");
        if let Some((a, p, l, c)) = last {
            assert!(
                peak > p,
                "{amount} % is not louder than {a} %: {peak:.1} against {p:.1} dB"
            );
            // never darker (within 3 %: from 50 % up the clicks are as short as a rice
            // grain's contact gets, about as bright, and the median centroid of the strokes
            // moves by a few per cent with the seed: seeds 1 to 5 from 50 to 100 % went
            // 14,425 -> 14,074 Hz (-2.4 %) at the worst, with the grouped draws by speed
            // and by energy alike)
            assert!(
                centroid > 0.97 * c,
                "{amount} % is darker than {a} %: {centroid:.0} against {c:.0} Hz"
            );
            // within the envelope's 2 ms
            assert!(
                l <= length + 2.0,
                "{a} % lasts {l:.1} ms, longer than {amount} %'s {length:.1} ms"
            );
        }
        last = Some((amount, peak, length, centroid));
        softest.get_or_insert(centroid);
    }
    // brighter overall: the hardest shake's strokes against the gentlest's
    let (hardest, softest) = (last.unwrap().3, softest.unwrap());
    assert!(hardest > 1.05 * softest, "{hardest:.0} Hz against {softest:.0} Hz");
}

/// The share of `x`'s energy below and above `edge_hz` (power spectrum of the whole signal).
fn split_at(x: &[f32], edge_hz: f64) -> (f64, f64) {
    let n = x.len().next_power_of_two();
    let mut buf: Vec<f64> = x
        .iter()
        .map(|&s| s as f64)
        .chain(std::iter::repeat(0.0))
        .take(n)
        .collect();
    let f = granary_engine::fft::forward(n);
    let mut out = f.make_output_vec();
    f.process(&mut buf, &mut out).unwrap();
    let p: Vec<f64> = out.iter().map(|c| c.norm_sqr()).collect();
    let edge = (edge_hz / (FS / n as f64)) as usize;
    (p[1..edge].iter().sum::<f64>(), p[edge..].iter().sum::<f64>())
}

/// A shaken jar jolts as a whole when its bed slams the wall (`resonators::body`): real
/// shakers carry 10–20 dB more of their energy below 500 Hz than the jar's modes and the
/// grains gave. In each setup, at 4 strokes a second and full strength, the jolt raises the
/// main output below 500 Hz by at least 8 dB (measured 10–12 dB) and leaves it above 2 kHz
/// within 0.5 dB (measured 0.0–0.1 dB): a low thump, not a louder rattle.
#[test]
fn a_shaken_jar_thumps_below_500_hz() {
    for (name, set) in SETUPS {
        let opts = RenderOptions {
            seconds: 3.0,
            sample_rate: FS as f32,
            block_size: 512,
            pour: Some(PourCurve::parse_for("0:100", Gesture::Shake).unwrap()),
        };
        let v = values(set, 4.0);
        let with = Renderer::pour(&v, &opts).collect();
        let without = Renderer::pour(&v, &opts).body(false).collect();
        let (low, _) = split_at(&with.main[0], 500.0);
        let (low0, _) = split_at(&without.main[0], 500.0);
        let (_, high) = split_at(&with.main[0], 2000.0);
        let (_, high0) = split_at(&without.main[0], 2000.0);
        let (rise, high_change) = (10.0 * (low / low0).log10(), 10.0 * (high / high0).log10());
        println!("{name}: below 500 Hz {rise:+.1} dB, above 2 kHz {high_change:+.2} dB");
        assert!(rise >= 8.0, "{name}: the jolt adds {rise:+.1} dB below 500 Hz");
        assert!(high_change.abs() <= 0.5, "{name}: {high_change:+.2} dB above 2 kHz");
        assert_eq!(
            with.grains, without.grains,
            "{name}: the jolt is the jar's, not the grains'"
        );
    }
}
