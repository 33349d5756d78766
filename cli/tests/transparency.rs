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
//! 10 %) are met where that chance spread is below them.
//!
//! The full table (every preset, 8 takes of 8 s each side, 7 to 12 minutes in a release
//! build on 2 cores) is `#[ignore]`d; run it with
//! `cargo test --release -p granary-cli --test transparency -- --ignored --nocapture`.

use granary_cli::compare::{compare_takes, Audio, Comparison};
use granary_engine::preset;
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

/// Presets whose realtime spectrum is not yet within 1 dB of reference (docs/performance.md,
/// "Reference quality"), with the figure they must stay under meanwhile, dB.
const SPECTRUM_NOT_YET: [(&str, f64); 2] = [("sand_wooden_bowl", 3.0), ("sand_onto_concrete", 2.5)];
/// Presets whose octave bands' crest differs by more than 10 % and the chance spread, with
/// the figure they must stay under meanwhile.
const CREST_NOT_YET: [(&str, f64); 4] = [
    ("fine_glass_beads_tumbler", 0.16),
    ("sugar_overflowing_a_mug", 0.16),
    ("plastic_discs_ceramic_cup", 0.13),
    ("sand_onto_concrete", 0.25),
];

#[test]
#[ignore = "slow: 7 to 12 minutes in a release build; see the module's doc"]
fn every_factory_preset_realtime_against_reference() {
    println!("8 takes of 8 s each side; rt: realtime against reference (seeds 1-8); chance: reference (seeds 9-16) against reference (seeds 1-8)");
    println!("{HEADER}");
    let mut misses = Vec::new();
    for (stem, _) in preset::factory() {
        let f = figures(stem, 8, 8.0);
        println!("{}", row(stem, &f));
        let limit =
            |list: &[(&str, f64)], default: f64| list.iter().find(|(id, _)| *id == stem).map_or(default, |l| l.1);
        let (rt, chance) = &f;
        // the 1 dB, 100 Hz to 16 kHz
        if rt.spectrum_db > limit(&SPECTRUM_NOT_YET, 1.0) {
            misses.push(format!("{stem}: spectrum {:.2} dB", rt.spectrum_db));
        }
        // the 10 %, or what chance alone gives for 8 takes
        if rt.crest > limit(&CREST_NOT_YET, 0.10f64.max(chance.crest)) {
            misses.push(format!("{stem}: crest {:.1} %", 100.0 * rt.crest));
        }
        // the envelope's largest difference is the tail's last grains' (the module's doc):
        // printed, not checked
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}
