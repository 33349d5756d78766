//! Is realtime quality transparent? Every factory preset rendered at realtime and at reference
//! quality (`quality`), compared as `granary compare` does: third-octave spectra, the 50 ms
//! level envelope and the octave bands' envelope crest factors, each side the mean of the
//! same seeds' takes (`compare::Takes`, as `compare::compare_takes`).
//!
//! A pour is random, and grouping changes the random draws from the first grouped window on:
//! realtime and reference takes of one seed are two realisations of the same pour, not the
//! same samples. So the figures compare the means of several seeds' takes, and beside them
//! stands how far they come apart by chance alone: a paired permutation test's null
//! distribution (`compare::chance`), each figure's 99.9th percentile over 4,000
//! relabellings, each seed's realtime and reference takes swapped between the sides at
//! random. The tolerances (1 dB, 0.5 dB, 10 %) are met where that chance spread is
//! below them; the envelope and the crest are checked against the larger of the tolerance
//! and the chance spread (two means of 16 takes of a sparse pour, differing only by their
//! seeds, are more than 0.5 dB apart in some 50 ms window), the spectrum against 1 dB. Were
//! realtime transparent, its figure would pass with the chance 0.999. The chance figure was
//! once reference takes of other seeds against the same reference takes: one draw of a wider
//! distribution (it ignores the pairing), as likely as not below a realtime figure drawn
//! from it. It failed coffee beans in a glass jar by 1.46 dB against 1.10 in the pour's
//! tail (7.40 s, each mean of 48 takes 0.5 dB uncertain in a window there), where seeds
//! 201..248 gave −1.64 dB in the same window.
//!
//! The full table (every preset, 16 takes of 8 s each side, 48 for the sparse pours and the discs and 8 for
//! sand, `takes_of`; about 7 minutes in a release build on 2 cores) is `#[ignore]`d; run it
//! with `cargo xtask transparency` (the same as
//! `cargo test --release -p granary-cli --test integration transparency:: -- --ignored --nocapture`).
//! CI runs a short version: the two densest grouped pours of sugar, 8 takes of 4 s.

use granary_cli::compare::{chance, Audio, Chance, Comparison, Takes};
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

/// Relabellings of the pairs and the quantile `figures` takes of them (`compare::chance`).
const SPLITS: usize = 4000;
const QUANTILE: f64 = 0.999;

/// (realtime against reference, chance) for `preset`: n takes a side of seeds 1..n, each
/// realtime take paired with its seed's reference take (`compare::chance`).
fn figures(preset: &str, n: u64, seconds: f64) -> (Comparison, Chance) {
    let reference = takes(preset, "reference", 1..1 + n, seconds);
    let realtime = takes(preset, "realtime", 1..1 + n, seconds);
    let all: Vec<&Audio> = reference.iter().chain(&realtime).collect();
    let takes = Takes::of(&all).unwrap();
    let n = n as usize;
    let (a, b): (Vec<usize>, Vec<usize>) = ((0..n).collect(), (n..2 * n).collect());
    (
        takes.compare(&a, &b),
        chance(&takes, &a, &b, SPLITS, QUANTILE, 7).unwrap(),
    )
}

fn row(preset: &str, (rt, chance): &(Comparison, Chance)) -> String {
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

/// Takes each side: 16; 48 for the sparse pours and the discs; 8 for the presets whose reference renders
/// are slow (sand: 19 and 236 million collisions a second, minutes a take). The chance
/// spread of a mean goes as one over the square root of its takes, and a sparse pour's is
/// wide: a few loud takes carry a band (with 16 takes, realtime against reference of glass
/// beads in a steel cup moved between 0.0 and 1.6 dB at 400 Hz, and lentils in an aluminium
/// pot between 0.6 and 1.6 dB at 200 Hz, as nothing but the random draws changed; with 64,
/// 0.1 and 0.6 dB); they render fast. So do the plastic discs, whose envelope figure sits in
/// the last windows of the pour's tail: with 16 takes, realtime against reference 1.13 dB
/// there against chance's 1.12 at seeds 1 to 16, 0.41 at seeds 17 to 32; with 48, 0.59
/// against 0.66. The dense ones are many collisions a take.
fn takes_of(preset: &str) -> u64 {
    const SPARSE: [&str; 9] = [
        "plastic_discs_ceramic_cup",
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
#[ignore = "slow: about 7 minutes in a release build; see the module's doc"]
fn every_factory_preset_realtime_against_reference() {
    println!("n takes of 8 s each side (16; 48 for the sparse pours and the discs, 8 for sand); rt: realtime against reference (seeds 1..n); chance: the 99.9th percentile of the figures over 4,000 relabellings, each seed's two takes swapped between the sides at random");
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
/// spills onto the surface; both draw from the bank), 8 takes of 4 s each side, every figure
/// held to the tolerance or what chance alone gives for so few takes (`figures`: the
/// largest figure of the 254 relabellings that swap some but not all of the eight pairs, so
/// a transparent realtime passes with the chance 254/256 a figure; with six pairs, 62/64 a
/// figure and six figures, the default preset on the bank failed its envelope, 0.77 dB
/// against 0.73, where 16 takes of 8 s put it within chance: 0.60 dB against 0.71), whichever
/// is larger. It catches
/// what breaks grouping outright (without the groups' mean push the default preset's cup was
/// 16 dB low at 125 Hz; with the mean push blind to a banked cell's speeds, the overflow's
/// third octaves 2.90 dB from reference), not tenths of a decibel: the full table above is
/// the measure (`cargo xtask transparency`). About 30 s in a debug build.
#[test]
fn the_dense_pours_realtime_against_reference_in_short() {
    let mut misses = Vec::new();
    println!("{HEADER}");
    for stem in ["sugar_ceramic_mug", "sugar_overflowing_a_mug"] {
        let f = figures(stem, 8, 4.0);
        println!("{}", row(stem, &f));
        let (rt, chance) = &f;
        if rt.spectrum_db > 1.0f64.max(chance.spectrum_db) {
            misses.push(format!("{stem}: spectrum {:.2} dB", rt.spectrum_db));
        }
        if rt.envelope_db > 0.5f64.max(chance.envelope_db) {
            misses.push(format!("{stem}: envelope {:.2} dB", rt.envelope_db));
        }
        if rt.crest > 0.10f64.max(chance.crest) {
            misses.push(format!("{stem}: crest {:.1} %", 100.0 * rt.crest));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}
