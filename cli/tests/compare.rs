//! `granary compare A B` on real renders: the three figures, the per-band tables, the exit
//! codes of its limits, and clear errors for files that cannot be compared.

use std::path::{Path, PathBuf};

use crate::support::{granary, path, stderr, stdout};

/// The number after `label: ` on its line of `text`.
fn figure(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label} in {text}"));
    line[label.len()..].split_whitespace().next().unwrap().parse().unwrap()
}

/// A 2 s render of a dense pour (rice in a steel cup).
fn render(dir: &Path) -> PathBuf {
    let wav = dir.join("a.wav");
    let out = granary(&[
        "render",
        "--preset",
        "rice_plastic_bowl",
        "--set",
        "cup_material=steel",
        "--seconds",
        "2",
        "--pour",
        "0:30",
        "-o",
        path(&wav),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    wav
}

/// `a` with `f` applied to each channel, written as 32-bit float to `to`.
fn transform(a: &Path, to: &Path, f: impl Fn(&mut Vec<f32>), rate: Option<u32>, channels: Option<u16>) {
    let r = hound::WavReader::open(a).unwrap();
    let mut spec = r.spec();
    let n = spec.channels as usize;
    let x: Vec<f32> = r.into_samples::<f32>().map(Result::unwrap).collect();
    let mut ch: Vec<Vec<f32>> = (0..n).map(|c| x.iter().skip(c).step_by(n).copied().collect()).collect();
    ch.iter_mut().for_each(&f);
    spec.sample_rate = rate.unwrap_or(spec.sample_rate);
    spec.channels = channels.unwrap_or(spec.channels);
    let mut w = hound::WavWriter::create(to, spec).unwrap();
    for i in 0..ch[0].len() {
        for c in ch.iter().take(spec.channels as usize) {
            w.write_sample(c[i]).unwrap();
        }
    }
    w.finalize().unwrap();
}

#[test]
fn a_file_and_itself_compare_at_zero() {
    let dir = tempfile::tempdir().unwrap();
    let a = render(dir.path());
    let out = granary(&["compare", path(&a), path(&a)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(figure(&text, "spectrum: "), 0.0, "{text}");
    assert_eq!(figure(&text, "envelope: "), 0.0, "{text}");
    assert_eq!(figure(&text, "crest: "), 0.0, "{text}");
    assert!(text.contains("23 bands from 100 Hz to 16 kHz"), "{text}");
}

#[test]
fn one_decibel_of_gain_reads_as_one_decibel_and_no_crest_change() {
    let dir = tempfile::tempdir().unwrap();
    let a = render(dir.path());
    let b = dir.path().join("louder.wav");
    let g = 10f32.powf(1.0 / 20.0);
    transform(&a, &b, |c| c.iter_mut().for_each(|x| *x *= g), None, None);
    let out = granary(&["compare", path(&a), path(&b)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(figure(&text, "spectrum: "), 1.0, "{text}");
    assert_eq!(figure(&text, "envelope: "), 1.0, "{text}");
    assert_eq!(figure(&text, "crest: "), 0.0, "{text}");
    // the limits: within passes (0), beyond fails (1) and says which
    let ok = granary(&[
        "compare",
        path(&a),
        path(&b),
        "--max-spectrum-db",
        "1.1",
        "--max-crest",
        "1",
    ]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let over = granary(&["compare", path(&a), path(&b), "--max-envelope-db", "0.5"]);
    assert_eq!(over.status.code(), Some(1));
    assert_eq!(stderr(&over).trim(), "granary: envelope 1.00 dB exceeds 0.5 dB");
    assert!(
        stdout(&over).contains("envelope: 1.00 dB"),
        "the figures are printed too"
    );
    // as JSON
    let out = granary(&["compare", path(&a), path(&b), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!((v["spectrum_db"].as_f64().unwrap() - 1.0).abs() < 1e-3, "{v}");
    assert!((v["envelope_db"].as_f64().unwrap() - 1.0).abs() < 1e-3, "{v}");
    assert!(v["crest"].as_f64().unwrap() < 1e-4, "{v}");
    assert_eq!(v["spectrum"].as_array().unwrap().len(), 23);
    assert_eq!(v["crest_bands"].as_array().unwrap().len(), 8);
}

#[test]
fn a_low_passed_copy_differs_in_the_high_bands() {
    let dir = tempfile::tempdir().unwrap();
    let a = render(dir.path());
    let b = dir.path().join("dull.wav");
    // four one-pole low-passes at 1 kHz
    let k = 1.0 - (-2.0 * std::f32::consts::PI * 1000.0 / 48_000.0).exp();
    transform(
        &a,
        &b,
        |c| {
            for _ in 0..4 {
                let mut y = 0.0;
                for x in c.iter_mut() {
                    y += k * (*x - y);
                    *x = y;
                }
            }
        },
        None,
        None,
    );
    let out = granary(&["compare", path(&a), path(&b), "--verbose", "--max-spectrum-db", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("spectrum"), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(figure(&text, "spectrum: ") > 40.0, "{text}");
    let band = |name: &str| -> f64 {
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in {text}"));
        row.split_whitespace().last().unwrap().parse().unwrap()
    };
    assert!(band("100 Hz") > -1.0 && band("100 Hz") < 0.1, "{text}");
    assert!(band("16 kHz") < -40.0, "{text}");
    assert!(band("8 kHz") < band("2 kHz"), "{text}");
    assert!(text.contains("octave band   crest A"), "{text}");
}

#[test]
fn files_that_cannot_be_compared_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let a = render(dir.path());
    let slow = dir.path().join("44k.wav");
    transform(&a, &slow, |_| {}, Some(44_100), None);
    let mono = dir.path().join("mono.wav");
    transform(&a, &mono, |_| {}, None, Some(1));
    let junk = dir.path().join("junk.wav");
    std::fs::write(&junk, "not a wav").unwrap();
    for (b, needle) in [
        (slow, "different sample rates, 48000 Hz and 44100 Hz"),
        (mono, "different channel counts, 2 and 1"),
        (junk.clone(), "junk.wav: not a WAV file we can read"),
        (dir.path().join("none.wav"), "none.wav: No such file or directory"),
    ] {
        let out = granary(&["compare", path(&a), path(&b)]);
        assert_eq!(out.status.code(), Some(2), "{needle}");
        assert!(stderr(&out).contains(needle), "{needle}: {}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
    let out = granary(&["compare", path(&a), path(&a), "--max-crest", "-5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--max-crest must be a number >= 0, got -5"),
        "{}",
        stderr(&out)
    );
}
