//! Variation batches (`granary render --variations N`): N takes of one pour, each with its
//! own seed and, for the parameters named with `--vary`, its own random offsets; each take
//! written with a JSON sidecar ([`Sidecar`]) that renders it again bit for bit
//! (`granary render --from`).
//!
//! Everything random is decided before any take is rendered, from the base seed alone: take
//! k (1-based) renders with seed `(base + k - 1) mod 1000000` ([`take_seed`]), and its
//! offsets are drawn, in the order of the `--vary` options, from a Xoshiro256++ stream seeded
//! with that seed xor [`OFFSET_STREAM`]. So a batch is the same whatever the number of
//! threads or the order the takes finish in.

use crate::library::Ucs;
use crate::output::{check_target, io_message, Interrupt};
use crate::render::{Failure, Job, Options, Report};
use granary_engine::control::params;
use granary_engine::control::params::{Kind, ParamValues, Plain, BOOL_WORDS};
use indicatif::ProgressBar;
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Most takes in a batch (fewer than seeds, so no two takes of a batch share one; the plan of
/// a batch holds every take's settings and sidecar, about 2 kB a take).
pub const MAX_TAKES: i64 = 100_000;

/// Mixed into a take's seed to seed its offsets' stream (so the offsets are not the engine's
/// own first draws, which come from the seed itself).
pub const OFFSET_STREAM: u64 = 0x6772_616e_6172_7976;

/// The sidecar's `format` field.
pub const SIDECAR_FORMAT: &str = "granary-take";
/// The take record's version: 2 (1, before it could hold a contact file, a loop, UCS names
/// and a normalising gain, is read too).
pub const SIDECAR_VERSION: u32 = 2;

/// This build's version, as sidecars record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The seed of take `k` (1-based) of a batch from seed `base`: `(base + k - 1)` wrapped into
/// the seed parameter's range (0..=999999), so take 1 has the base seed and the takes of a
/// batch have different seeds.
pub fn take_seed(base: i64, k: usize) -> i64 {
    let modulus = match params::spec("seed").map(|s| s.kind) {
        Some(Kind::Int { max, .. }) => max as i64 + 1,
        _ => MAX_TAKES,
    };
    (base + k as i64 - 1).rem_euclid(modulus)
}

/// The file of take `k` of `n` for `--output DIR/NAME.wav`: `DIR/NAME_001.wav`, the number
/// zero-padded to the width `n` needs, at least 3 digits, so the names sort.
pub fn take_path(output: &Path, k: usize, n: usize) -> PathBuf {
    let width = n.to_string().len().max(3);
    let stem = output.file_stem().unwrap_or_default().to_string_lossy();
    let ext = output.extension().map_or("wav".into(), |e| e.to_string_lossy());
    output.with_file_name(format!("{stem}_{k:0width$}.{ext}"))
}

/// The UCS name of take `k` of `n` ([`Ucs::file_name`]), the number zero-padded to the width
/// `n` needs, at least 2 digits (UCS examples number ` 01`).
pub fn ucs_take_name(ucs: &Ucs, values: &ParamValues, k: usize, n: usize) -> String {
    ucs.file_name(values, Some((k, n.to_string().len().max(2))))
}

/// How one `--vary` option spreads a parameter.
#[derive(Debug, Clone, PartialEq)]
enum Spread {
    /// Uniform within ± this much, in the parameter's unit.
    Plus(f64),
    /// Uniform within ± this fraction of the base value.
    Fraction(f64),
    /// One of these values, each as likely.
    Choices(Vec<Plain>),
}

/// One `--vary ID=±X`, `ID=±X%` or `ID=a,b,c`, checked against the base values.
#[derive(Debug, Clone, PartialEq)]
pub struct Vary {
    pub id: &'static str,
    /// As given (`pour_rate=±10%`).
    pub text: String,
    spread: Spread,
}

impl Vary {
    /// Parses `text` and checks it against the parameter table and `base`: a ± offset must
    /// keep the parameter within its range from the base value (offsets that would leave the
    /// range are refused, not clamped, so every take draws from the spread asked for).
    pub fn parse(text: &str, base: &ParamValues) -> Result<Vary, String> {
        let bad = |why: String| format!("--vary {text}: {why}");
        let (id, value) = text
            .split_once('=')
            .ok_or_else(|| bad("expected ID=±X, ID=±X% or, for a choice, ID=a,b,c".into()))?;
        let id = id.trim();
        let spec = params::spec(id).ok_or_else(|| bad(format!("unknown parameter id `{id}`")))?;
        if id == "seed" {
            return Err(bad(
                "every take has its own seed already (take k: the base seed + k - 1); set the base with --seed".into(),
            ));
        }
        let value = value.trim();
        let ranged = |min: f64, max: f64| {
            let spread = offset(value).map_err(bad)?;
            check_range(spec.id, base, &spread, min, max).map_err(bad)?;
            Ok::<_, String>(spread)
        };
        let spread = match spec.kind {
            Kind::Float { min, max, .. } => ranged(min as f64, max as f64)?,
            Kind::Int { min, max, .. } => ranged(min as f64, max as f64)?,
            Kind::Bool { .. } => {
                let words = format!("{}/{}", BOOL_WORDS[0].join("|"), BOOL_WORDS[1].join("|"));
                let choices = list(value, |c| params::parse_bool(c).map(Plain::Bool))
                    .map_err(|c| bad(format!("`{c}` is not on or off ({words}); e.g. --vary {id}=on,off")))?;
                Spread::Choices(choices)
            }
            Kind::Enum { ids, .. } => {
                let choices = list(value, |c| ids.iter().position(|i| *i == c).map(Plain::Choice))
                    .map_err(|c| bad(format!("`{c}` is not one of: {}", ids.join(", "))))?;
                Spread::Choices(choices)
            }
        };
        Ok(Vary {
            id: spec.id,
            text: text.to_string(),
            spread,
        })
    }

    /// Draws this parameter's value for one take from `rng` into `values` (snapped to the
    /// parameter's step, as every value is).
    fn draw(&self, base: &ParamValues, rng: &mut Xoshiro256PlusPlus, values: &mut ParamValues) {
        let b = base.get(self.id).map_or(0.0, |p| p.as_f32() as f64);
        // uniform in [-1, 1): 53 random bits
        let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        let v = match &self.spread {
            Spread::Plus(x) => Value::from(b + unit() * x),
            Spread::Fraction(f) => Value::from(b * (1.0 + unit() * f)),
            Spread::Choices(c) => {
                let i = ((rng.next_u64() as u128 * c.len() as u128) >> 64) as usize;
                match (c[i], params::spec(self.id).map(|s| s.kind)) {
                    (Plain::Bool(x), _) => Value::from(x),
                    (Plain::Choice(i), Some(Kind::Enum { ids, .. })) => Value::from(ids[i]),
                    (p, _) => Value::from(p.as_f32() as f64),
                }
            }
        };
        let v = match (&self.spread, params::spec(self.id).map(|s| s.kind)) {
            (Spread::Plus(_) | Spread::Fraction(_), Some(Kind::Int { .. })) => {
                Value::from(v.as_f64().unwrap_or(0.0).round())
            }
            _ => v,
        };
        values
            .set(self.id, &v)
            .expect("offsets are checked against the range before drawing");
    }
}

/// The value of `id` in `values` as the command line writes it (`16.24`, `steel`, `on`).
pub fn show_value(values: &ParamValues, id: &str) -> String {
    match (values.get(id), params::spec(id).map(|s| s.kind)) {
        (Some(Plain::Float(x)), _) => x.to_string(),
        (Some(Plain::Int(x)), _) => x.to_string(),
        (Some(Plain::Bool(x)), _) => BOOL_WORDS[usize::from(!x)][0].to_string(),
        (Some(Plain::Choice(i)), Some(Kind::Enum { ids, .. })) => ids[i].to_string(),
        _ => "?".into(),
    }
}

/// `±X`, `+-X`, `±X%` or `+-X%`.
fn offset(text: &str) -> Result<Spread, String> {
    let rest = text
        .strip_prefix('±')
        .or_else(|| text.strip_prefix("+-"))
        .ok_or_else(|| format!("expected an offset ±X or ±X% (or +-X, +-X%), got `{text}`"))?
        .trim();
    let (number, percent) = match rest.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (rest, false),
    };
    let x: f64 = match number.parse() {
        Ok(x) if f64::is_finite(x) => x,
        _ => return Err(format!("`{number}` is not a number")),
    };
    if x < 0.0 {
        return Err(format!("the offset must not be negative, got {number}"));
    }
    Ok(if percent {
        Spread::Fraction(x / 100.0)
    } else {
        Spread::Plus(x)
    })
}

/// A comma-separated list, each item parsed by `item`; the first item it refuses.
fn list(text: &str, item: impl Fn(&str) -> Option<Plain>) -> Result<Vec<Plain>, String> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    items.iter().map(|c| item(c).ok_or_else(|| c.to_string())).collect()
}

/// Refuses a spread that would leave `min..=max` from the base value.
fn check_range(id: &str, base: &ParamValues, spread: &Spread, min: f64, max: f64) -> Result<(), String> {
    let b = base.get(id).map_or(0.0, |p| p.as_f32() as f64);
    let (a, z) = match spread {
        Spread::Plus(x) => (b - x, b + x),
        Spread::Fraction(f) => (b * (1.0 - f), b * (1.0 + f)),
        Spread::Choices(_) => return Ok(()),
    };
    let (lo, hi) = (a.min(z), a.max(z));
    // the range is the f32 the engine holds, as `--set` checks it
    if (lo as f32) < min as f32 || (hi as f32) > max as f32 {
        let show = params::show_number;
        return Err(format!(
            "{} would reach {}..={}, outside {id}'s range {}..={} (offsets are refused, not clamped: \
             narrow the offset, or --set a base value further from the range's ends)",
            show(b),
            show(lo),
            show(hi),
            show(min),
            show(max)
        ));
    }
    Ok(())
}

/// A take's record: everything that decides its sound, so `granary render --from` renders it
/// again bit for bit. Every WAV file Granary writes carries it in its iXML chunk
/// ([`crate::library::ixml`]); a batch's takes also have it beside them as a JSON sidecar
/// (`NAME_001.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    /// [`SIDECAR_FORMAT`].
    pub format: String,
    /// [`SIDECAR_VERSION`].
    pub version: u32,
    /// The Granary that wrote it ([`VERSION`]).
    pub granary_version: String,
    /// The preset the batch started from (its name) and the `--set` changes (for people: the
    /// values are in `params`).
    pub preset: String,
    pub set: Vec<String>,
    /// The take's WAV file name (beside the sidecar).
    pub file: String,
    /// Take `take` of `takes`.
    pub take: usize,
    pub takes: usize,
    /// The batch's base seed and this take's seed (also `params.seed`).
    pub base_seed: i64,
    pub seed: i64,
    /// The `--vary` options of the batch (for people: the values drawn are in `params`).
    pub vary: Vec<String>,
    /// The render's other options.
    pub render: Options,
    /// Every parameter by id, as rendered.
    pub params: ParamValues,
}

impl Sidecar {
    /// The sidecar as written: pretty JSON and a final newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a sidecar serialises") + "\n"
    }

    /// The record of a single render (take 1 of 1) of `params` with `render`'s options into
    /// `file`.
    pub fn single(preset: &str, set: &[String], render: &Options, params: &ParamValues, file: &Path) -> Sidecar {
        let seed = params.int("seed");
        Sidecar {
            format: SIDECAR_FORMAT.into(),
            version: SIDECAR_VERSION,
            granary_version: VERSION.into(),
            preset: preset.into(),
            set: set.to_vec(),
            file: file.file_name().unwrap_or_default().to_string_lossy().into_owned(),
            take: 1,
            takes: 1,
            base_seed: seed,
            seed,
            vary: Vec::new(),
            render: render.clone(),
            params: params.clone(),
        }
    }

    /// Reads and checks a take's record: a sidecar (`NAME_001.json`), or a WAV file Granary
    /// wrote (its iXML); the warnings for stderr (another Granary version wrote it).
    pub fn load(path: &Path) -> Result<(Sidecar, Vec<String>), String> {
        let name = path.display();
        let is_wav = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("wav"));
        let text = if is_wav {
            let f = std::fs::File::open(path).map_err(|e| format!("{name}: {}", io_message(&e)))?;
            let chunks = crate::bwf::read_chunks(std::io::BufReader::new(f)).map_err(|e| format!("{name}: {e}"))?;
            crate::library::take_json(&chunks).map_err(|e| format!("{name}: {e}"))?
        } else {
            std::fs::read_to_string(path).map_err(|e| format!("{name}: {}", io_message(&e)))?
        };
        let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{name}: not JSON: {e}"))?;
        if doc.get("format").and_then(Value::as_str) != Some(SIDECAR_FORMAT) {
            return Err(format!(
                "{name}: not a take's sidecar (expected \"format\": \"{SIDECAR_FORMAT}\")"
            ));
        }
        match doc.get("version").and_then(Value::as_u64) {
            Some(v) if (1..=SIDECAR_VERSION as u64).contains(&v) => {}
            v => {
                return Err(format!(
                    "{name}: sidecar version {} is not supported (this build reads 1 to {SIDECAR_VERSION})",
                    v.map_or("?".into(), |v| v.to_string())
                ))
            }
        }
        let s: Sidecar = serde_json::from_value(doc).map_err(|e| format!("{name}: {e}"))?;
        if Path::new(&s.file).file_name() != Some(std::ffi::OsStr::new(&s.file)) {
            return Err(format!(
                "{name}: `file` must be a file name (the take's WAV beside the sidecar), got {:?}",
                s.file
            ));
        }
        let params_seed = s.params.int("seed");
        if params_seed != s.seed {
            return Err(format!(
                "{name}: `seed` is {} but `params.seed` is {params_seed}",
                s.seed
            ));
        }
        let mut warnings = Vec::new();
        if s.granary_version != VERSION {
            warnings.push(format!(
                "{name} was written by Granary {}, this is {VERSION}: the render may differ",
                s.granary_version
            ));
        }
        Ok((s, warnings))
    }
}

/// A batch, planned: every take's job (its record, `Job::take`, is its sidecar), nothing
/// rendered yet.
pub struct Batch {
    pub takes: Vec<Job>,
}

/// What the command line asked for, for [`Batch::plan`].
pub struct Request<'a> {
    pub base: &'a ParamValues,
    pub preset: &'a str,
    pub set: &'a [String],
    pub vary: &'a [String],
    pub takes: i64,
    pub options: &'a Options,
    pub output: &'a Path,
}

impl Batch {
    /// Checks everything and draws every take's settings, before any work: the number of
    /// takes, each `--vary` (unknown ids, malformed offsets or choices, offsets leaving a
    /// range, a parameter given twice), the render options, and that the output folder can
    /// be written and no take's file is blocked by a directory or special file.
    pub fn plan(r: &Request) -> Result<Batch, String> {
        if !(1..=MAX_TAKES).contains(&r.takes) {
            return Err(format!("--variations must be within 1..={MAX_TAKES}, got {}", r.takes));
        }
        let n = r.takes as usize;
        let mut vary: Vec<Vary> = Vec::new();
        for text in r.vary {
            let v = Vary::parse(text, r.base)?;
            if let Some(first) = vary.iter().find(|w| w.id == v.id) {
                return Err(format!(
                    "--vary {text}: `{}` is varied twice (also --vary {})",
                    v.id, first.text
                ));
            }
            vary.push(v);
        }
        // the options, checked once (every take has the same)
        Sidecar::single(r.preset, r.set, r.options, r.base, r.output).job(r.output.to_path_buf())?;
        if r.output.file_stem().is_none_or(|s| s.is_empty()) || r.output.file_name().is_none() {
            return Err(format!(
                "--output {}: expected DIR/NAME.wav (the takes are NAME_001.wav, ...)",
                r.output.display()
            ));
        }
        check_folder(r.output)?;
        let base_seed = r.base.int("seed");
        let mut takes = Vec::with_capacity(n);
        for k in 1..=n {
            let seed = take_seed(base_seed, k);
            let mut values = r.base.clone();
            values
                .set("seed", &Value::from(seed))
                .expect("take seeds are in the seed's range");
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed as u64 ^ OFFSET_STREAM);
            for v in &vary {
                v.draw(r.base, &mut rng, &mut values);
            }
            let output = match &r.options.ucs {
                Some(u) => r.output.with_file_name(ucs_take_name(u, &values, k, n)),
                None => take_path(r.output, k, n),
            };
            let sidecar = Sidecar {
                format: SIDECAR_FORMAT.into(),
                version: SIDECAR_VERSION,
                granary_version: VERSION.into(),
                preset: r.preset.into(),
                set: r.set.to_vec(),
                file: output.file_name().unwrap_or_default().to_string_lossy().into_owned(),
                take: k,
                takes: n,
                base_seed,
                seed,
                vary: r.vary.to_vec(),
                render: r.options.clone(),
                params: values.clone(),
            };
            let mut job = sidecar.job(output)?;
            job.write_sidecar = true;
            for t in job.targets() {
                check_target(&t)?;
            }
            takes.push(job);
        }
        Ok(Batch { takes })
    }

    /// Measures every take that is normalised and sets its gain (`threads` at a time): each
    /// its own, or with `--loudness-batch` one for all, the smallest any take asks for (so the
    /// loudest take meets the targets and the takes keep their levels relative to each
    /// other; silent takes ask for none). Returns the gain of the batch, if one.
    pub fn normalise(
        &mut self,
        threads: usize,
        interrupt: &Interrupt,
        progress: &ProgressBar,
    ) -> Result<Option<f64>, Failure> {
        use rayon::prelude::*;
        if !self.takes.iter().any(Job::needs_measuring) {
            return Ok(None);
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| format!("cannot start the render threads: {e}"))?;
        // each take's gain: `None` where it cannot be normalised (silent, too short)
        let gains: Vec<Result<Option<f64>, Failure>> = pool.install(|| {
            self.takes
                .par_iter()
                .with_max_len(1)
                .map(|job| {
                    if !job.needs_measuring() {
                        return Ok(None);
                    }
                    let l = job.measure(interrupt, progress)?;
                    Ok(job.gain_for(&l))
                })
                .collect()
        });
        if let Some(sig) = interrupt.signal() {
            return Err(Failure::Interrupted(sig));
        }
        let gains = gains.into_iter().collect::<Result<Vec<_>, _>>()?;
        let batch = self.takes[0].take.render.normalise.as_ref().is_some_and(|n| n.batch);
        let one = batch.then(|| gains.iter().flatten().copied().fold(f64::INFINITY, f64::min));
        let one = one.map(|g| if g.is_finite() { g } else { 0.0 });
        let mut unmeasured = 0;
        for (job, g) in self.takes.iter_mut().zip(gains) {
            if job.needs_measuring() {
                unmeasured += usize::from(g.is_none());
                job.set_gain_db(one.or(g).unwrap_or(0.0));
            }
        }
        if unmeasured > 0 {
            eprintln!(
                "granary: warning: {unmeasured} takes could not be measured for normalising (silent, or an integrated loudness needs 400 ms above -70 LUFS): {}",
                if batch { "the batch's gain leaves them out" } else { "left at 0 dB" }
            );
        }
        Ok(one)
    }

    /// Frames of audio in the whole batch.
    pub fn frames(&self) -> u64 {
        self.takes.iter().map(|j| j.opts.frames() as u64).sum()
    }

    /// Renders every take, `threads` at a time (one take per task; 0: one per core). Each
    /// take appears whole (its WAV files and sidecar together) or not at all; after an error
    /// or a signal no new take starts, and the takes already finished are kept.
    pub fn run(&self, threads: usize, interrupt: &Interrupt, progress: &ProgressBar) -> Result<Vec<Report>, Failure> {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| format!("cannot start the render threads: {e}"))?;
        let failed = AtomicBool::new(false);
        let finished = AtomicUsize::new(0);
        let results: Vec<Option<Result<Report, Failure>>> = pool.install(|| {
            self.takes
                .par_iter()
                .with_max_len(1)
                .map(|job| {
                    if failed.load(Ordering::Relaxed) || interrupt.signal().is_some() {
                        return None;
                    }
                    let r = job.run(interrupt, progress);
                    match r {
                        Ok(_) => {
                            finished.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => failed.store(true, Ordering::Relaxed),
                    }
                    Some(r)
                })
                .collect()
        });
        let kept = finished.load(Ordering::Relaxed);
        if let Some(sig) = interrupt.signal() {
            return Err(Failure::InterruptedBatch(sig, kept));
        }
        let mut reports = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Some(Ok(report)) => reports.push(report),
                Some(Err(Failure::Error(e))) if kept > 0 => {
                    return Err(Failure::Error(format!(
                        "{e} (the {kept} takes finished are kept, each with its sidecar)"
                    )))
                }
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        Ok(reports)
    }
}

/// Checks that the folder of `output` exists and a file can be created in it (by creating
/// and removing a hidden temporary).
pub fn check_folder(output: &Path) -> Result<(), String> {
    let dir = match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".granary-check.")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| format!("{}: cannot write there: {}", dir.display(), io_message(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ParamValues {
        let mut v = ParamValues::default();
        v.set_text("pour_rate", "20").unwrap();
        v
    }

    #[test]
    fn take_names_sort_and_seeds_wrap() {
        let o = Path::new("/lib/rice.wav");
        assert_eq!(take_path(o, 1, 20), Path::new("/lib/rice_001.wav"));
        assert_eq!(take_path(o, 20, 20), Path::new("/lib/rice_020.wav"));
        assert_eq!(take_path(o, 7, 1000), Path::new("/lib/rice_0007.wav"));
        assert_eq!(take_path(Path::new("pour"), 2, 5), Path::new("pour_002.wav"));
        assert_eq!(take_seed(7, 1), 7);
        assert_eq!(take_seed(7, 3), 9);
        assert_eq!(take_seed(999_999, 2), 0);
    }

    #[test]
    fn offsets_parse_and_stay_in_range() {
        let b = base();
        let v = Vary::parse("pour_rate=±5", &b).unwrap();
        assert_eq!(v.spread, Spread::Plus(5.0));
        assert_eq!(
            Vary::parse("pour_rate=+-10%", &b).unwrap().spread,
            Spread::Fraction(0.1)
        );
        let c = Vary::parse("cup_material=steel, glass", &b).unwrap();
        assert_eq!(c.spread.clone(), {
            let ids = match params::spec("cup_material").unwrap().kind {
                Kind::Enum { ids, .. } => ids,
                _ => unreachable!(),
            };
            let at = |n: &str| Plain::Choice(ids.iter().position(|i| *i == n).unwrap());
            Spread::Choices(vec![at("steel"), at("glass")])
        });
        assert!(Vary::parse("auto_fill=on,off", &b).is_ok());
        for (text, needle) in [
            ("pour_rate=5", "expected an offset ±X"),
            ("pour_rate", "expected ID=±X"),
            ("pour_rate=±x", "`x` is not a number"),
            ("pour_rate=±-3", "must not be negative"),
            (
                "pour_rate=±30",
                "20 would reach -10..=50, outside pour_rate's range 0..=200",
            ),
            ("pour_rate=±200%", "refused, not clamped"),
            ("colour=±1", "unknown parameter id `colour`"),
            ("cup_material=steel,gold", "`gold` is not one of: "),
            ("cup_material=±1", "`±1` is not one of"),
            ("auto_fill=on,maybe", "`maybe` is not on or off"),
            ("seed=±5", "every take has its own seed"),
        ] {
            let e = Vary::parse(text, &b).unwrap_err();
            assert!(
                e.starts_with(&format!("--vary {text}: ")) && e.contains(needle),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn draws_cover_the_spread_and_snap() {
        let b = base();
        let v = Vary::parse("pour_rate=±5", &b).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let (mut lo, mut hi) = (f32::MAX, f32::MIN);
        for _ in 0..2000 {
            let mut x = b.clone();
            v.draw(&b, &mut rng, &mut x);
            let r = x.float("pour_rate");
            assert!((15.0..=25.0).contains(&r), "{r}");
            // on the step grid: a value read back from its decimal is itself
            let mut again = ParamValues::default();
            again.set_text("pour_rate", &r.to_string()).unwrap();
            assert_eq!(again.float("pour_rate"), r);
            lo = lo.min(r);
            hi = hi.max(r);
        }
        assert!(lo < 15.1 && hi > 24.9, "{lo}..{hi}");
        let c = Vary::parse("cup_material=steel,glass", &b).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..100 {
            let mut x = b.clone();
            c.draw(&b, &mut rng, &mut x);
            seen.insert(params::CUP_IDS[x.choice("cup_material")]);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["glass", "steel"]);
    }
}
