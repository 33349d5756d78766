//! Files a sound library can file: every WAV Granary writes carries a `bext` chunk (the take in
//! words, the originator, the EBU R 128 figures), an `iXML` chunk with the whole take (from
//! which `--from TAKE.wav` renders it again bit for bit) and cue points where the pour starts,
//! stops and has decayed to −60 dB; UCS names, loops and loudness normalisation. Read here
//! with Granary's own chunk reader and, for the loudness, `ebur128` on the samples;
//! `tests/wav_metadata.py` reads the same files with independent parsers (wavinfo,
//! libsndfile, pyloudnorm).

use std::path::Path;
use std::process::Command;

use granary_cli::bwf::{self, BextFields, Marker};
use granary_cli::vary::Sidecar;

use crate::support::{granary, names, path, stderr, stdout};

/// The chunks of `p`.
fn chunks(p: &Path) -> bwf::Chunks {
    bwf::read_chunks(std::fs::File::open(p).unwrap()).unwrap()
}

fn bext(p: &Path) -> BextFields {
    BextFields::parse(bwf::find(&chunks(p), b"bext").expect("a bext chunk")).unwrap()
}

/// The take in the file's iXML.
fn take(p: &Path) -> Sidecar {
    Sidecar::load(p).unwrap().0
}

/// The file's samples (interleaved) and sample rate, read by hound.
fn samples(p: &Path) -> (Vec<f32>, u32) {
    let r = hound::WavReader::open(p).unwrap();
    let rate = r.spec().sample_rate;
    (r.into_samples::<f32>().map(Result::unwrap).collect(), rate)
}

/// `ebur128`'s integrated loudness and true peak of the file, LUFS and dBTP.
fn r128(p: &Path) -> (f64, f64) {
    let (x, rate) = samples(p);
    let mut m = ebur128::EbuR128::new(2, rate, ebur128::Mode::I | ebur128::Mode::TRUE_PEAK).unwrap();
    m.add_frames_f32(&x).unwrap();
    let tp = (0..2).map(|c| m.true_peak(c).unwrap()).fold(0.0, f64::max);
    (m.loudness_global().unwrap(), 20.0 * tp.log10())
}

/// A number after `key` in `text` ("levels: -21.9 LUFS": `levels: ` gives -21.9).
fn number_after(text: &str, key: &str) -> f64 {
    let at = text.find(key).unwrap_or_else(|| panic!("`{key}` in {text}")) + key.len();
    text[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches(',')
        .parse()
        .unwrap()
}

#[test]
fn every_file_carries_its_take_its_loudness_and_its_markers() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("pour.wav");
    let out = granary(&[
        "render",
        "--preset",
        "sugar_ceramic_mug",
        "--set",
        "aim=0.3",
        "--seconds",
        "5",
        "--pour",
        "0:0,0.25:0,0.3:20,1.5:20,1.5:0",
        "--stems",
        "-o",
        path(&o),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let b = bext(&o);
    assert_eq!(
        b.description,
        "Sugar poured into a ceramic mug, up to 20 g/s from 15 cm, aim 0.3"
    );
    assert!(b.originator.starts_with("Granary "), "{}", b.originator);
    assert_eq!(b.version, 2);
    assert!(b.originator_reference.starts_with("GRN") && b.originator_reference.len() == 31);
    assert!(b.date.len() == 10 && b.time.len() == 8, "{b:?}");
    assert!(
        b.coding_history.starts_with("A=PCM,F=48000,W=32,M=stereo,T=Granary"),
        "{b:?}"
    );
    // the loudness fields: what the render printed, and ebur128 on the samples
    let printed = number_after(&stdout(&out), "levels: ");
    let (lufs, tp) = r128(&o);
    let stored = b.loudness.map(|x| x as f64 / 100.0);
    assert!((stored[0] - printed).abs() <= 0.051, "{stored:?} vs {printed}");
    assert!(
        (stored[0] - lufs).abs() < 0.1 && (stored[2] - tp).abs() < 0.1,
        "{stored:?} vs {lufs} {tp}"
    );
    // range, momentary and short-term maxima measured, in their order
    assert!(
        stored[1] >= 0.0 && stored[3] >= stored[4] && stored[3] >= stored[0],
        "{stored:?}"
    );
    // the take: its parameters as rendered
    let t = take(&o);
    assert_eq!(
        (t.preset.as_str(), t.file.as_str(), t.take, t.takes),
        ("Sugar, ceramic mug", "pour.wav", 1, 1)
    );
    assert_eq!(t.params.float("aim"), 0.3);
    assert_eq!(t.render.pour.as_deref(), Some("0:0,0.25:0,0.3:20,1.5:20,1.5:0"));
    // the markers: where the stream starts to rise, where it stops, where it has decayed
    let m = bwf::markers(&chunks(&o));
    assert_eq!(
        m[..2],
        [
            Marker {
                frame: 12_000,
                label: "pour starts".into()
            },
            Marker {
                frame: 72_000,
                label: "pour stops".into()
            }
        ]
    );
    assert_eq!(m.len(), 3, "{m:?}");
    assert_eq!(m[2].label, "decayed to -60 dB");
    assert!(m[2].frame > 72_000 && m[2].frame < 240_000, "{m:?}");
    // after the marker the mix stays 60 dB below its loudest 10 ms
    let (x, _) = samples(&o);
    let power: Vec<f64> = x
        .chunks(960)
        .map(|w| w.iter().map(|s| (*s as f64).powi(2)).sum::<f64>() / 960.0)
        .collect();
    let loudest = power.iter().copied().fold(0.0, f64::max);
    let after = (m[2].frame / 480) as usize;
    assert!(power[after..].iter().all(|&p| p < loudest * 1e-6));
    assert!(power[after - 1] >= loudest * 1e-6);
    // each stem: named, and its own loudness
    let cup = dir.path().join("pour.cup.wav");
    let bc = bext(&cup);
    assert!(bc.description.ends_with("aim 0.3 (cup stem)"), "{}", bc.description);
    let (cup_lufs, _) = r128(&cup);
    assert!((bc.loudness[0] as f64 / 100.0 - cup_lufs).abs() < 0.1);
    assert_ne!(bc.originator_reference, b.originator_reference);
    assert_eq!(bwf::markers(&chunks(&cup)), m);
}

#[test]
fn a_take_renders_again_bit_for_bit_from_any_of_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("rice.wav");
    let out = granary(&[
        "render",
        "--preset",
        "rice_plastic_bowl",
        "--seconds",
        "1.5",
        "--variations",
        "2",
        "--vary",
        "grain_size=±10%",
        "--loudness",
        "-30",
        "--stems",
        "-o",
        path(&o),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let take2 = dir.path().join("rice_002.wav");
    // the sidecar gone: the WAV alone (here its cup stem) holds the take
    std::fs::remove_file(dir.path().join("rice_002.json")).unwrap();
    let again = dir.path().join("again.wav");
    let out = granary(&[
        "render",
        "--from",
        path(&dir.path().join("rice_002.cup.wav")),
        "-o",
        path(&again),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stdout(&out).contains("normalised"),
        "the gain is kept, not measured again: {}",
        stdout(&out)
    );
    assert_eq!(samples(&again).0, samples(&take2).0);
    assert_eq!(
        samples(&dir.path().join("again.cup.wav")).0,
        samples(&dir.path().join("rice_002.cup.wav")).0
    );
    assert_eq!(take(&again).params, take(&take2).params);
    // a WAV Granary did not write: said so
    let plain = dir.path().join("plain.wav");
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    hound::WavWriter::create(&plain, spec).unwrap().finalize().unwrap();
    let out = granary(&["render", "--from", path(&plain)]);
    assert!(
        stderr(&out).contains("no iXML chunk: not a take Granary wrote"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn ucs_names_file_the_takes_by_category() {
    let dir = tempfile::tempdir().unwrap();
    let out = granary(&[
        "render",
        "--preset",
        "shaking_a_jar_of_rice",
        "--seconds",
        "1",
        "--pour",
        "0:60",
        "--variations",
        "2",
        "--name-style",
        "ucs",
        "--ucs-creator",
        "JD",
        "--ucs-source",
        "GRAINS",
        "--stems",
        "-o",
        path(dir.path()),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let n = names(dir.path());
    assert!(
        n.contains(&"FOODIngr_Rice Shake Glass Jar 01_JD_GRAINS.wav".to_string()),
        "{n:?}"
    );
    assert!(
        n.contains(&"FOODIngr_Rice Shake Glass Jar 02_JD_GRAINS_cup.wav".to_string()),
        "{n:?}"
    );
    assert_eq!(n.len(), 2 * 6, "{n:?}");
    // every block as UCS has it: four, or five with a stem's user data
    for f in n.iter().filter(|f| f.ends_with(".wav")) {
        let blocks = f.trim_end_matches(".wav").split('_').count();
        assert!(blocks == 4 || blocks == 5, "{f}");
    }
    // the take again from its UCS-named stem: the stems keep their UCS names
    let from = dir
        .path()
        .join("FOODIngr_Rice Shake Glass Jar 02_JD_GRAINS_friction.wav");
    let again = tempfile::tempdir().unwrap();
    let out = granary(&["render", "--from", path(&from), "-o", path(&again.path().join("x.wav"))]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(names(again.path()).contains(&"x_friction.wav".to_string()));
    // refused: a file for a folder, an id with an underscore
    let out = granary(&["render", "--name-style", "ucs", "-o", path(&dir.path().join("a.wav"))]);
    assert!(stderr(&out).contains("--output must be a folder"), "{}", stderr(&out));
    let out = granary(&[
        "render",
        "--name-style",
        "ucs",
        "--ucs-creator",
        "J_D",
        "-o",
        path(dir.path()),
    ]);
    assert!(stderr(&out).contains("--ucs-creator \"J_D\""), "{}", stderr(&out));
}

#[test]
fn a_loop_runs_its_end_into_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("bed.wav");
    let out = granary(&[
        "render",
        "--preset",
        "sugar_ceramic_mug",
        "--set",
        "auto_fill=off",
        "--set",
        "fill=0.3",
        "--loop",
        "8",
        "-o",
        path(&o),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(": 8 s at 48000 Hz"), "{}", stdout(&out));
    let (x, _) = samples(&o);
    let frames = x.len() / 2;
    assert_eq!(frames, 8 * 48_000);
    // a sampler loop over the whole file, no pour markers
    let c = chunks(&o);
    let smpl = bwf::find(&c, b"smpl").expect("a smpl chunk");
    assert_eq!(
        u32::from_le_bytes(smpl[48..52].try_into().unwrap()) as usize,
        frames - 1
    );
    assert!(bwf::markers(&c).is_empty());
    // the level across the join: the last 2 s against the first 2 s, within 0.5 dB (over
    // shorter windows the texture's own level wanders about as much: printed below)
    let level = |s: &[f32]| 10.0 * (s.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / s.len() as f64).log10();
    let two_s = 2 * 2 * 48_000;
    let step_db = level(&x[x.len() - two_s..]) - level(&x[..two_s]);
    let half_s = 48_000;
    println!(
        "loop: level across the join {step_db:.2} dB over 2 s, {:.2} dB over 0.5 s",
        level(&x[x.len() - half_s..]) - level(&x[..half_s])
    );
    assert!(step_db.abs() < 0.5, "{step_db:.2} dB");
    // no discontinuity at the join above the texture's own largest step
    let largest = x
        .chunks(2)
        .zip(x.chunks(2).skip(1))
        .map(|(a, b)| (a[0] - b[0]).abs().max((a[1] - b[1]).abs()))
        .fold(0.0, f32::max);
    let join = (x[0] - x[x.len() - 2]).abs().max((x[1] - x[x.len() - 1]).abs());
    assert!(join <= largest, "{join} > {largest}");
    // refused: a loop of a curve, a loop too short
    let out = granary(&["render", "--loop", "0.5", "-o", path(&o)]);
    assert!(
        stderr(&out).contains("--loop must be within 1..=600 s, got 0.5"),
        "{}",
        stderr(&out)
    );
    let out = granary(&["render", "--loop", "4", "--pour", "0:20", "-o", path(&o)]);
    assert!(!out.status.success());
}

#[test]
fn loudness_and_peak_normalise_each_take_or_the_batch() {
    let dir = tempfile::tempdir().unwrap();
    let one = |args: &[&str]| {
        let o = dir.path().join("n.wav");
        let mut a = vec!["render", "--preset", "steel_shot_tin", "--seconds", "2", "-o", path(&o)];
        a.extend_from_slice(args);
        let out = granary(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        (stdout(&out), r128(&o), bext(&o).loudness)
    };
    let (text, (lufs, _), stored) = one(&["--loudness", "-30"]);
    assert!(
        (lufs - -30.0).abs() < 0.1 && (stored[0] as f64 / 100.0 - lufs).abs() < 0.1,
        "{lufs} {stored:?}"
    );
    assert!(text.contains("normalised: "), "{text}");
    let (_, (_, tp), _) = one(&["--peak", "-6"]);
    assert!((tp - -6.0).abs() < 0.1, "{tp}");
    // both: the smaller gain, so the peak holds
    let (_, (lufs, tp), _) = one(&["--loudness", "-10", "--peak", "-3"]);
    assert!(tp < -2.9 && lufs < -10.0, "{lufs} {tp}");
    // a batch by one gain: its loudest take at the target, the others where they were relative to it
    let o = dir.path().join("b.wav");
    let batch = |extra: &[&str]| {
        let mut a = vec![
            "render",
            "--preset",
            "gravel_onto_soil",
            "--seconds",
            "2",
            "--variations",
            "3",
            "--vary",
            "pour_rate=±20%",
            "-o",
            path(&o),
        ];
        a.extend_from_slice(extra);
        let out = granary(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        let l: Vec<f64> = ["b_001.wav", "b_002.wav", "b_003.wav"]
            .iter()
            .map(|f| r128(&dir.path().join(f)).0)
            .collect();
        (stdout(&out), l)
    };
    let (_, raw) = batch(&[]);
    let (text, l) = batch(&["--loudness", "-28", "--loudness-batch"]);
    assert!(text.contains("normalised the batch by one gain"), "{text}");
    let loudest = l.iter().copied().fold(f64::MIN, f64::max);
    assert!((loudest - -28.0).abs() < 0.1, "{l:?}");
    for (a, b) in raw.iter().zip(&l) {
        assert!(
            (b - a - (l[0] - raw[0])).abs() < 0.05,
            "one gain for all: {raw:?} -> {l:?}"
        );
    }
    // refused
    for (args, says) in [
        (
            &["--loudness", "5"][..],
            "--loudness must be within -70..=0 LUFS, got 5",
        ),
        (&["--peak", "-100"][..], "--peak must be within -60..=0 dBTP, got -100"),
        (
            &["--variations", "2", "--loudness-batch"][..],
            "--loudness-batch needs --loudness or --peak",
        ),
    ] {
        let mut a = vec!["render", "-o", path(&o)];
        a.extend_from_slice(args);
        let out = granary(&a);
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_contact_takes_file_is_found_again_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("drop.csv");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/contacts/drop_beads.csv");
    std::fs::copy(&example, &csv).unwrap();
    let o = dir.path().join("drop.wav");
    let out = granary(&["render", "--collisions", path(&csv), "--seconds", "1", "-o", path(&o)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = take(&o);
    let source = t.render.collisions.as_ref().expect("the take names its contact file");
    assert!(Path::new(&source.file).is_absolute(), "{source:?}");
    assert!(
        bext(&o).description.contains("contacts logged in drop.csv"),
        "{}",
        bext(&o).description
    );
    // from another folder: the same take
    let again = dir.path().join("again.wav");
    let out = Command::new(env!("CARGO_BIN_EXE_granary"))
        .current_dir(std::env::temp_dir())
        .args(["render", "--from", path(&o), "-o", path(&again)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(samples(&again).0, samples(&o).0);
    // the file changed since: refused, not rendered differently
    let mut text = std::fs::read_to_string(&csv).unwrap();
    text.push_str("# a comment added later\n");
    std::fs::write(&csv, text).unwrap();
    let out = granary(&["render", "--from", path(&o), "-o", path(&again)]);
    assert!(
        stderr(&out).contains("the contact file changed since the take was rendered"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn what_cannot_be_done_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = path(dir.path());
    // a UCS name is the take's, not given: a second take of the same scene would replace the
    // first, so it is refused
    let first = granary(&[
        "render",
        "--seconds",
        "1",
        "--pour",
        "0:20",
        "--name-style",
        "ucs",
        "-o",
        d,
    ]);
    assert!(first.status.success(), "{}", stderr(&first));
    let second = granary(&[
        "render",
        "--seconds",
        "1",
        "--pour",
        "0:20",
        "--seed",
        "9",
        "--name-style",
        "ucs",
        "-o",
        d,
    ]);
    assert!(
        stderr(&second).contains("exists: UCS names are made from the take"),
        "{}",
        stderr(&second)
    );
    assert_eq!(names(dir.path()).len(), 1);
    let out = granary(&["render", "--ucs-creator", "JD", "-o", path(&dir.path().join("x.wav"))]);
    assert!(
        stderr(&out).contains("--ucs-creator names UCS files: it needs --name-style ucs"),
        "{}",
        stderr(&out)
    );
    let out = granary(&["render", "--loop", "5000", "-o", path(&dir.path().join("x.wav"))]);
    assert!(
        stderr(&out).contains("--loop must be within 1..=600 s, got 5000"),
        "{}",
        stderr(&out)
    );
    // a take too short for an integrated loudness: said, left at 0 dB, written
    let short = dir.path().join("short.wav");
    let out = granary(&[
        "render",
        "--seconds",
        "0.3",
        "--pour",
        "0:20",
        "--loudness",
        "-23",
        "-o",
        path(&short),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot be normalised"), "{}", stderr(&out));
    // its loudness fields: not computed, not -327.68
    assert_eq!(bext(&short).loudness[0], bwf::NOT_COMPUTED);
    // nothing poured: no markers
    let none = dir.path().join("none.wav");
    let out = granary(&["render", "--seconds", "0.5", "-o", path(&none)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(bwf::markers(&chunks(&none)).is_empty());
}
