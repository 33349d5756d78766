//! Is realtime quality transparent? Every factory preset rendered at realtime and at reference
//! quality (`quality`), compared as `granary compare` does: third-octave spectra, the 50 ms
//! level envelope and the octave bands' envelope crest factors, each side the mean of the
//! same seeds' takes (`compare::compare_takes`).
//!
//! A pour is random, and grouping changes the random draws from the first grouped window on:
//! realtime and reference takes of one seed are two realisations of the same pour, not the
//! same samples. So the figures compare the means of several seeds' takes, and beside them
//! stand the same figures for reference against reference with other seeds: how far two
//! means of that many takes are apart by chance alone. The tolerances (1 dB, 0.5 dB,
//! 10 %) are met where that chance spread is below them; the envelope and the crest are
//! checked against the larger of the tolerance and the chance spread (two means of 16 takes
//! of a sparse pour, differing only by their seeds, are more than 0.5 dB apart in some
//! 50 ms window), the spectrum against 1 dB.
//!
//! The full table (every preset, 16 takes of 8 s each side, 48 for the sparse pours and 8 for
//! sand, `takes_of`; about 13 minutes in a release build on 2 cores) is `#[ignore]`d; run it
//! with `cargo xtask transparency` (the same as
//! `cargo test --release -p granary-cli --test integration transparency:: -- --ignored --nocapture`).
//! CI runs a short version: the two densest grouped pours of sugar, 6 takes of 4 s.

use granary_cli::compare::{compare_takes, Audio, Comparison};
use granary_engine::control::preset;
use granary_engine::render::{RenderOptions, Renderer};

/// The takes of `preset` at `quality` with seeds `seeds`, `seconds` long (poured until one
/// second before the end), main output; rendered on every core.
fn takes(preset: &str, quality: &str, seeds: std::ops::Range<u64>, seconds: f64) -> Vec<Audio> {
    let render = |seed: u64| {
        let mut v = preset::find(preset).expect("factory preset").values;
        v.set_text("quality", quality).unwrap();
        v.set_text("seed", &seed.to_string()).unwrap();
        let opts = RenderOptions {
            seconds,
            sample_rate: 48_000.0,
            block_size: 512,
            pour: None,
        };
        Audio::main_of(&Renderer::pour(&v, &opts).collect())
    };
    let seeds: Vec<u64> = seeds.collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(seeds.len().max(1));
    let mut out: Vec<Option<Audio>> = vec![None; seeds.len()];
    std::thread::scope(|s| {
        for (t, chunk) in out.chunks_mut(seeds.len().div_ceil(threads)).enumerate() {
            let seeds = &seeds;
            let render = &render;
            s.spawn(move || {
                let first = t * seeds.len().div_ceil(threads);
                for (k, slot) in chunk.iter_mut().enumerate() {
                    *slot = Some(render(seeds[first + k]));
                }
            });
        }
    });
    out.into_iter().map(|a| a.expect("rendered")).collect()
}

/// (realtime against reference, reference against reference with other seeds) for `preset`.
fn figures(preset: &str, n: u64, seconds: f64) -> (Comparison, Comparison) {
    let reference = takes(preset, "reference", 1..1 + n, seconds);
    let realtime = takes(preset, "realtime", 1..1 + n, seconds);
    let other = takes(preset, "reference", 1 + n..1 + 2 * n, seconds);
    (
        compare_takes(&reference, &realtime).unwrap(),
        compare_takes(&reference, &other).unwrap(),
    )
}

fn row(preset: &str, (rt, chance): &(Comparison, Comparison)) -> String {
    format!(
        "{preset:<34} {:>6.2} {:>6.2}   {:>6.2} {:>6.2}   {:>6.1} {:>6.1}",
        rt.spectrum_db,
        chance.spectrum_db,
        rt.envelope_db,
        chance.envelope_db,
        100.0 * rt.crest,
        100.0 * chance.crest
    )
}

const HEADER: &str = "preset                             spectrum dB     envelope dB     crest %\n\
                      \x20                                  rt   chance     rt   chance     rt  chance";

/// Takes each side: 16; 48 for the sparse pours; 8 for the presets whose reference renders
/// are slow (sand: 19 and 236 million collisions a second, minutes a take). The chance
/// spread of a mean goes as one over the square root of its takes, and a sparse pour's is
/// wide: a few loud takes carry a band (with 16 takes, realtime against reference of glass
/// beads in a steel cup moved between 0.0 and 1.6 dB at 400 Hz, and lentils in an aluminium
/// pot between 0.6 and 1.6 dB at 200 Hz, as nothing but the random draws changed; with 64,
/// 0.1 and 0.6 dB); they render fast. The dense ones are many collisions a take.
fn takes_of(preset: &str) -> u64 {
    const SPARSE: [&str; 8] = [
        "glass_beads_steel_cup",
        "coffee_beans_glass_jar",
        "steel_shot_tin",
        "lentils_aluminium_pot",
        "gravel_large_wooden_bowl",
        "rice_spilled_on_a_wooden_table",
        "gravel_onto_soil",
        "steel_shot_onto_a_steel_plate",
    ];
    if preset.starts_with("sand_") {
        8
    } else if SPARSE.contains(&preset) {
        48
    } else {
        16
    }
}

#[test]
#[ignore = "slow: about 13 minutes in a release build; see the module's doc"]
fn every_factory_preset_realtime_against_reference() {
    println!("n takes of 8 s each side (16; 48 for the sparse pours, 8 for sand); rt: realtime against reference (seeds 1..n); chance: reference (seeds n+1..2n) against reference (seeds 1..n)");
    println!("{HEADER}");
    let mut misses = Vec::new();
    for (stem, _) in preset::factory() {
        let f = figures(stem, takes_of(stem), 8.0);
        println!("{}", row(stem, &f));
        let (rt, chance) = &f;
        // the 1 dB, 100 Hz to 16 kHz
        if rt.spectrum_db > 1.0 {
            misses.push(format!("{stem}: spectrum {:.2} dB", rt.spectrum_db));
        }
        // the 10 %, or what chance alone gives for that many takes
        if rt.crest > 0.10f64.max(chance.crest) {
            misses.push(format!("{stem}: crest {:.1} %", 100.0 * rt.crest));
        }
        // the 0.5 dB over the pour's body (the windows within 20 dB of its loudest,
        // `compare::ENVELOPE_RANGE_DB`), or what chance alone gives
        if rt.envelope_db > 0.5f64.max(chance.envelope_db) {
            misses.push(format!("{stem}: envelope {:.2} dB", rt.envelope_db));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// The short version CI runs (`cargo xtask test`): the two dense pours grouping shapes most,
/// the default preset and sugar overflowing a mug (the pile's pushes through the bed, the
/// spills onto the surface), 6 takes of 4 s each side, every figure held to the issue's
/// tolerance or twice what chance alone gives for so few takes (a second set of reference
/// takes), whichever is larger. If realtime is transparent its figure and the chance figure
/// are two draws of the same quantity, either the larger as often (the default preset's
/// crest: 12.4 % against a chance 11.7 %); twice the chance figure catches what breaks
/// grouping outright (without the groups' mean push the default preset's cup was 16 dB low
/// at 125 Hz), not tenths of a decibel: the full table above is the measure
/// (`cargo xtask transparency`). About 30 s in a debug build.
#[test]
fn the_dense_pours_realtime_against_reference_in_short() {
    let mut misses = Vec::new();
    println!("{HEADER}");
    for stem in ["sugar_ceramic_mug", "sugar_overflowing_a_mug"] {
        let f = figures(stem, 6, 4.0);
        println!("{}", row(stem, &f));
        let (rt, chance) = &f;
        if rt.spectrum_db > 1.0f64.max(2.0 * chance.spectrum_db) {
            misses.push(format!("{stem}: spectrum {:.2} dB", rt.spectrum_db));
        }
        if rt.envelope_db > 0.5f64.max(2.0 * chance.envelope_db) {
            misses.push(format!("{stem}: envelope {:.2} dB", rt.envelope_db));
        }
        if rt.crest > 0.10f64.max(2.0 * chance.crest) {
            misses.push(format!("{stem}: crest {:.1} %", 100.0 * rt.crest));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}
