//! The databank's sweep in shards (docs/dem.md, "Sharded sweeps"): the sweep's runs divided
//! among N independent processes — the tasks of an array job (Slurm, a Kubernetes Indexed
//! Job) — each writing its own file, and merged into the bank file one process writes, byte
//! for byte.
//!
//! - A [`Plan`] is what a sweep will simulate: its scenes, the runs a `--reuse` file already
//!   holds, and the runs left to do, `(scene, seed)` in the sweep's order. Its fingerprint
//!   names it, so a shard of another sweep is never merged.
//! - Run k of the plan belongs to shard `k mod N + 1` (of `1..=N`): round robin, so the slow
//!   scenes (glass beads, the larger beds) spread over every shard.
//! - A shard ([`run_shard`]) appends each finished run to `FILE.partial` as one JSON line and,
//!   when all its runs are done, writes `FILE` whole (a temporary file renamed over it) and
//!   removes the partial one. Run again, it does nothing if `FILE` is complete, and resumes
//!   from the partial file's whole lines if it was stopped: safe to rerun, no partial `FILE`.
//!   While it runs it holds `FILE.lock` (an OS file lock), so that two processes never run
//!   one shard at once.
//! - [`merge`] reads the N shard files, checks that they are this plan's, each shard once and
//!   every run once, and builds each scene's entry from its held and new runs in seed order
//!   with `bank::merge`, exactly as the one-process sweep ([`Plan::assemble`]) does.
//!
//! Determinism: every run is seeded and rapier is deterministic on one machine and build; a
//! bank file holds no wall time (`bank::Entry`). Across machines of other CPUs or compilers
//! rapier promises it only with its `enhanced-determinism` feature, which this crate does not
//! turn on: shards of one sweep should run one build on one kind of machine.

use crate::bank::{self, BankFile, Entry, Spec};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The shard file's format name and version.
pub const SHARD_FORMAT: &str = "granary-bank-shard";
pub const SHARD_VERSION: u32 = 1;

/// What a sweep simulates: its scenes, what a reused file holds of them, and the runs to do.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The sweep's name (`full`, `check`, with `--quick N` when truncated).
    pub name: String,
    pub specs: Vec<Spec>,
    /// Each scene's entry in the `--reuse` file (its first seeds), if any.
    pub reused: Vec<Option<Entry>>,
    /// The runs to simulate, `(scene, seed)`: each scene's seeds beyond those held.
    pub todo: Vec<(usize, u64)>,
    /// 16 hex digits naming the plan: its name, scenes, reused entries and runs.
    pub fingerprint: String,
}

/// One simulated run of a plan: its index in `Plan::todo`, its scene and seed, the wall time
/// it took (s; kept in shard files and reports, never in the bank) and its one-run entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub run: usize,
    pub scene: usize,
    pub seed: u64,
    pub wall_s: f64,
    pub entry: Entry,
}

/// Shard `index` of `count` (1-based, as `--shard I/N` reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Run {
    /// The run as a shard file gives it back: its JSON line read again. serde_json reads a
    /// float to within its last bit, not always to it (0.9315999764658045 came back as
    /// …044), so a sweep in one process passes each run through the same text a shard writes,
    /// and both make the same bank file.
    pub fn as_read(&self) -> Run {
        serde_json::from_str(&serde_json::to_string(self).expect("a run serialises")).expect("a run's own line reads")
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    /// `I/N` with 1 ≤ I ≤ N; an error names the value.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard I/N with 1 <= I <= N (for example 3/8)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<usize>().map_err(|_| bad())?,
            n.trim().parse::<usize>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// FNV-1a, 64 bits, of `bytes`: the plan's fingerprint and a program's identity
/// (`Plan::with_build`). Not a security measure: it tells one sweep's shards from another's.
pub fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Plan {
    /// The plan of `specs` (the sweep `name`), reusing the runs `reuse` holds of each scene.
    pub fn new(name: &str, specs: Vec<Spec>, reuse: Option<&BankFile>) -> Plan {
        let reused: Vec<Option<Entry>> = specs
            .iter()
            .map(|spec| reuse.and_then(|old| old.entries.iter().find(|e| bank::runs_held(e, spec) > 0).cloned()))
            .collect();
        let todo: Vec<(usize, u64)> = specs
            .iter()
            .zip(&reused)
            .enumerate()
            .flat_map(|(i, (spec, held))| {
                let held = held.as_ref().map_or(0, |e| e.runs) as u64;
                (held..spec.runs as u64).map(move |k| (i, spec.seed + k))
            })
            .collect();
        let mut text = format!("{name}\n{}\n", bank::VERSION);
        for spec in &specs {
            text += &format!("{spec:?}\n");
        }
        for held in reused.iter().flatten() {
            text += &serde_json::to_string(held).expect("an entry serialises");
            text.push('\n');
        }
        text += &format!("{todo:?}");
        let fingerprint = format!("{:016x}", digest(text.as_bytes()));
        Plan {
            name: name.into(),
            specs,
            reused,
            todo,
            fingerprint,
        }
    }

    /// The plan as run by the build `build` (an identity of the program: `granary-bank` gives
    /// its executable's digest): mixed into the fingerprint, so that shards of another build,
    /// whose simulation or reduction may differ, are neither taken as complete nor merged.
    pub fn with_build(mut self, build: &str) -> Plan {
        let text = format!("{}\n{build}", self.fingerprint);
        self.fingerprint = format!("{:016x}", digest(text.as_bytes()));
        self
    }

    /// The runs of `shard`: every k of `todo` with k mod N = I − 1.
    pub fn runs_of(&self, shard: Shard) -> Vec<usize> {
        (shard.index - 1..self.todo.len()).step_by(shard.count).collect()
    }

    /// Simulates run `k` of `todo` (as the simulation gives it: [`Run::as_read`] is what a shard
    /// file keeps).
    pub fn run(&self, k: usize) -> Run {
        let (scene, seed) = self.todo[k];
        let started = Instant::now();
        let entry = bank::run_seed(&self.specs[scene], seed);
        Run {
            run: k,
            scene,
            seed,
            wall_s: started.elapsed().as_secs_f64(),
            entry,
        }
    }

    /// Simulates the runs `ks` on `jobs` threads (each run on one), calling `done` as each
    /// finishes (from its thread); the runs in `ks`'s order.
    pub fn run_many(&self, ks: &[usize], jobs: usize, done: &(dyn Fn(&Run) + Sync)) -> Vec<Run> {
        let next = AtomicUsize::new(0);
        let out: Mutex<Vec<Option<Run>>> = Mutex::new(vec![None; ks.len()]);
        std::thread::scope(|s| {
            for _ in 0..jobs.clamp(1, ks.len().max(1)) {
                s.spawn(|| loop {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&k) = ks.get(j) else { break };
                    let run = self.run(k);
                    done(&run);
                    out.lock().expect("no thread panicked")[j] = Some(run);
                });
            }
        });
        out.into_inner()
            .expect("no thread panicked")
            .into_iter()
            .flatten()
            .collect()
    }

    /// The bank file of the plan, from every run of `todo` (`runs[k]` is run k) as a shard
    /// file's line gives it back (`Run::as_read`): each scene's entry its held runs, then its
    /// new ones in seed order. One process and a merge of shards both end here.
    pub fn assemble(&self, runs: &[Run]) -> BankFile {
        assert_eq!(runs.len(), self.todo.len(), "every run of the plan");
        let mut new = runs.iter().map(|r| &r.entry);
        let entries: Vec<Entry> = self
            .reused
            .iter()
            .enumerate()
            .map(|(i, held)| {
                let fresh = self.specs[i].runs - held.as_ref().map_or(0, |e| e.runs);
                let parts: Vec<Entry> = held
                    .iter()
                    .cloned()
                    .chain(new.by_ref().take(fresh as usize).cloned())
                    .collect();
                bank::merge(&parts)
            })
            .collect();
        let runs: u32 = self.specs.iter().map(|s| s.runs).sum();
        let grains: usize = entries.iter().map(|e| e.grains).sum();
        let simulated: f64 = entries.iter().map(|e| e.simulated_s).sum();
        BankFile::new(
            format!(
                "granary-dem {} (rapier3d 0.36): {} scenes, {runs} runs, {grains} grains, {simulated:.1} s simulated",
                env!("CARGO_PKG_VERSION"),
                entries.len()
            ),
            entries,
        )
    }
}

/// The bank file's text: its header, then one entry a line (compact, and a sweep's change
/// reads as a diff).
pub fn bank_text(file: &BankFile) -> String {
    let mut head = serde_json::to_value(file).expect("a bank serialises");
    let entries = head
        .as_object_mut()
        .and_then(|o| o.remove("entries"))
        .unwrap_or_default();
    let head = serde_json::to_string(&head).expect("a bank serialises");
    let mut out = format!("{},\n\"entries\": [\n", head.trim_end_matches('}'));
    let entries = entries.as_array().cloned().unwrap_or_default();
    for (k, e) in entries.iter().enumerate() {
        out += &serde_json::to_string(e).expect("an entry serialises");
        out += if k + 1 < entries.len() { ",\n" } else { "\n" };
    }
    out + "]}\n"
}

/// Whether `path` may be written by `write_whole`: nothing there yet, or a regular file. A
/// rename replaces whatever entry is at the path, so a device (`-o /dev/null`), a FIFO, a
/// socket or a symbolic link would be swapped for a file; they are refused, named, as the
/// command line refuses them (`granary_cli::output::check_target`). `granary-bank` checks its
/// target before a sweep starts too, so that hours of runs do not end where they cannot be
/// written.
pub fn check_target(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => {
            let what = [
                (m.is_dir(), "a directory"),
                (m.file_type().is_symlink(), "a symbolic link"),
            ]
            .into_iter()
            .find(|&(is, _)| is)
            .map_or("a device, FIFO or socket", |(_, what)| what);
            let message = format!("it is {what}, not a regular file: only regular files are written or replaced");
            Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, message))
        }
    }
}

/// Writes `text` to `path` whole or not at all: a temporary file beside it, renamed over it
/// (a path `check_target` refuses is left as it is).
pub fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    check_target(path)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    // unique to this process and moment (two pods may both be PID 1)
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}-{nanos}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// A shard file's first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Head {
    format: String,
    version: u32,
    sweep: String,
    plan: String,
    shard: Shard,
    runs: usize,
}

impl Head {
    fn of(plan: &Plan, shard: Shard) -> Head {
        Head {
            format: SHARD_FORMAT.into(),
            version: SHARD_VERSION,
            sweep: plan.name.clone(),
            plan: plan.fingerprint.clone(),
            shard,
            runs: plan.runs_of(shard).len(),
        }
    }
}

/// A shard file: its head and its runs.
#[derive(Debug, Clone)]
pub struct ShardFile {
    pub sweep: String,
    pub plan: String,
    pub shard: Shard,
    pub runs: Vec<Run>,
}

/// Reads a shard file: its head and every run it says it holds; an error names the line.
pub fn read_shard(text: &str) -> Result<ShardFile, String> {
    let mut lines = text.lines();
    let head: Head = serde_json::from_str(lines.next().unwrap_or_default())
        .map_err(|e| format!("line 1: not a shard head ({e})"))?;
    if head.format != SHARD_FORMAT || head.version != SHARD_VERSION {
        return Err(format!(
            "line 1: {} version {}, not {SHARD_FORMAT} version {SHARD_VERSION}",
            head.format, head.version
        ));
    }
    if head.shard.index == 0 || head.shard.index > head.shard.count {
        return Err(format!(
            "line 1: shard {}/{} is not one of 1..=N",
            head.shard.index, head.shard.count
        ));
    }
    let runs = lines
        .enumerate()
        .map(|(n, l)| serde_json::from_str::<Run>(l).map_err(|e| format!("line {}: {e}", n + 2)))
        .collect::<Result<Vec<Run>, String>>()?;
    if runs.len() != head.runs {
        return Err(format!(
            "{} runs, its head says {}: an unfinished file",
            runs.len(),
            head.runs
        ));
    }
    Ok(ShardFile {
        sweep: head.sweep,
        plan: head.plan,
        shard: head.shard,
        runs,
    })
}

/// What [`run_shard`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardDone {
    /// The file was already the shard, complete: nothing run.
    AlreadyComplete,
    /// Runs simulated now, and runs taken from the partial file of an earlier attempt.
    Ran { now: usize, resumed: usize },
}

/// The partial file beside a shard file.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".partial");
    PathBuf::from(p)
}

/// Runs `shard` of `plan` into `path` on `jobs` threads (module doc): nothing if `path`
/// already holds it; the runs a partial file of an earlier attempt finished are kept.
/// `report` is called for each run simulated now. An error names the file and what is wrong
/// (a `path` holding another plan's shard is left alone).
pub fn run_shard(
    plan: &Plan,
    shard: Shard,
    path: &Path,
    jobs: usize,
    report: &(dyn Fn(&Run) + Sync),
) -> Result<ShardDone, String> {
    let head = Head::of(plan, shard);
    let shown = path.display();
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
        let old = read_shard(&text).map_err(|e| format!("{shown}: {e}; remove it to run shard {shard} again"))?;
        if old.plan != plan.fingerprint || old.shard != shard {
            return Err(format!(
                "{shown} holds shard {} of sweep `{}` (plan {}), not shard {shard} of `{}` (plan {}): remove it or choose another --output",
                old.shard, old.sweep, old.plan, plan.name, plan.fingerprint
            ));
        }
        return Ok(ShardDone::AlreadyComplete);
    }
    // `FILE.lock`, held while this process runs the shard: a second run of the same shard (a
    // requeued task, an overlapping pod) stops here instead of writing into its files
    let lock_path = {
        let mut p = path.as_os_str().to_owned();
        p.push(".lock");
        PathBuf::from(p)
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("{}: {e}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        return Err(format!(
            "{}: shard {shard} is being run by another process (its lock is held)",
            lock_path.display()
        ));
    }
    let mine = plan.runs_of(shard);
    // an earlier attempt's finished runs: its whole lines after a head of this shard, kept as
    // the text they were written as (a float read back from JSON need not print the same)
    let partial = partial_path(path);
    let mut lines: Vec<(usize, String)> = Vec::new();
    if let Ok(text) = std::fs::read_to_string(&partial) {
        let mut rest = text.lines();
        if rest.next().and_then(|l| serde_json::from_str::<Head>(l).ok()) == Some(head.clone()) {
            for l in rest {
                match serde_json::from_str::<Run>(l) {
                    Ok(r) if mine.contains(&r.run) && plan.todo[r.run] == (r.scene, r.seed) => {
                        lines.push((r.run, l.to_string()))
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            lines.sort_by_key(|l| l.0);
            lines.dedup_by_key(|l| l.0);
        }
    }
    let resumed = lines.len();
    // the partial file anew: the head and the kept runs (a torn last line dropped)
    write_whole(&partial, &with_head(&head, &lines)).map_err(|e| format!("{}: {e}", partial.display()))?;
    let todo: Vec<usize> = mine
        .iter()
        .copied()
        .filter(|k| lines.binary_search_by_key(k, |l| l.0).is_err())
        .collect();
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(&partial)
        .map_err(|e| format!("{}: {e}", partial.display()))?;
    let state = Mutex::new((log, lines, None::<String>));
    plan.run_many(&todo, jobs, &|r: &Run| {
        report(r);
        let line = serde_json::to_string(r).expect("a run serialises");
        let mut st = state.lock().expect("no thread panicked");
        let (log, lines, failed) = &mut *st;
        if let Err(e) = writeln!(log, "{line}").and_then(|()| log.flush()) {
            failed.get_or_insert(format!("{}: {e}", partial.display()));
        }
        lines.push((r.run, line));
    });
    let (_, mut lines, failed) = state.into_inner().expect("no thread panicked");
    if let Some(e) = failed {
        return Err(e);
    }
    lines.sort_by_key(|l| l.0);
    write_whole(path, &with_head(&head, &lines)).map_err(|e| format!("{shown}: {e}"))?;
    let _ = std::fs::remove_file(&partial);
    let _ = std::fs::remove_file(&lock_path);
    drop(lock);
    Ok(ShardDone::Ran {
        now: todo.len(),
        resumed,
    })
}

/// A shard file's text: its head, then the runs' lines (in run order).
fn with_head(head: &Head, lines: &[(usize, String)]) -> String {
    let mut out = serde_json::to_string(head).expect("a head serialises") + "\n";
    for (_, l) in lines {
        out += l;
        out.push('\n');
    }
    out
}

/// The bank file of `plan` from its shards (module doc). An error says which shard or run is
/// missing, doubled or of another plan.
pub fn merge(plan: &Plan, shards: &[(PathBuf, ShardFile)]) -> Result<BankFile, String> {
    let Some((_, first)) = shards.first() else {
        return Err("no shard files to merge".into());
    };
    let n = first.shard.count;
    let mut seen: Vec<Option<&Path>> = vec![None; n];
    let mut runs: Vec<Option<Run>> = vec![None; plan.todo.len()];
    for (path, s) in shards {
        let shown = path.display();
        if s.plan != plan.fingerprint {
            return Err(format!(
                "{shown}: a shard of sweep `{}` (plan {}), not of this sweep `{}` (plan {}): merge with the options the shards ran with",
                s.sweep, s.plan, plan.name, plan.fingerprint
            ));
        }
        if s.shard.count != n {
            return Err(format!(
                "{shown}: shard {}, but {} is shard {} (of {n})",
                s.shard,
                shards[0].0.display(),
                first.shard
            ));
        }
        if let Some(other) = seen[s.shard.index - 1].replace(path) {
            return Err(format!("shard {} twice: {} and {shown}", s.shard, other.display()));
        }
        let mine = plan.runs_of(s.shard);
        let ks: Vec<usize> = s.runs.iter().map(|r| r.run).collect();
        if ks != mine || s.runs.iter().any(|r| plan.todo[r.run] != (r.scene, r.seed)) {
            return Err(format!(
                "{shown}: shard {} holds runs {ks:?}, not the plan's {mine:?}",
                s.shard
            ));
        }
        for r in &s.runs {
            runs[r.run] = Some(r.clone());
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|i| seen[i - 1].is_none())
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing shard {}: run each (--shard I/N), then merge again",
            missing.join(", ")
        ));
    }
    let runs: Vec<Run> = runs
        .into_iter()
        .map(|r| r.expect("every shard's runs checked"))
        .collect();
    Ok(plan.assemble(&runs))
}

/// How a sweep divides over `n` shards given each run's cost (s): the busiest shard's and the
/// total's seconds.
pub fn shard_costs(plan: &Plan, cost_s: &[f64], n: usize) -> (f64, f64) {
    let busiest = (1..=n)
        .map(|i| {
            plan.runs_of(Shard { index: i, count: n })
                .iter()
                .map(|&k| cost_s[k])
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    (busiest, cost_s.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_reads_as_i_of_n_and_an_absurd_one_is_named() {
        assert_eq!("3/8".parse::<Shard>(), Ok(Shard { index: 3, count: 8 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "-1/4", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn every_run_is_in_exactly_one_shard() {
        let plan = Plan::new("check", bank::check_sweep(), None);
        assert_eq!(plan.todo.len(), 9);
        for n in 1..=12 {
            let mut all: Vec<usize> = (1..=n)
                .flat_map(|i| plan.runs_of(Shard { index: i, count: n }))
                .collect();
            all.sort();
            assert_eq!(all, (0..plan.todo.len()).collect::<Vec<_>>(), "{n} shards");
        }
        // a scene's three seeds fall in three shards of four
        let beads: Vec<usize> = (0..plan.todo.len()).filter(|&k| plan.todo[k].0 == 1).collect();
        assert_eq!(beads, [1, 2, 3]);
    }

    #[test]
    fn only_a_regular_file_is_replaced() {
        let dir = std::env::temp_dir().join(format!("granary-write-whole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bank.json");
        write_whole(&file, "one").unwrap();
        write_whole(&file, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "two");
        // a device stays a device (a rename would have swapped /dev/null for a file)
        let e = write_whole(Path::new("/dev/null"), "three").unwrap_err();
        assert!(
            e.to_string().contains("a device, FIFO or socket, not a regular file"),
            "{e}"
        );
        assert!(!std::fs::symlink_metadata("/dev/null").unwrap().is_file());
        let e = write_whole(&dir, "four").unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        #[cfg(unix)]
        {
            let link = dir.join("link.json");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            let e = write_whole(&link, "five").unwrap_err();
            assert!(e.to_string().contains("a symbolic link"), "{e}");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "two");
        }
        // nothing left beside them
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["bank.json", "link.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_fingerprint_names_the_sweep() {
        let a = Plan::new("check", bank::check_sweep(), None);
        assert_eq!(a.fingerprint, Plan::new("check", bank::check_sweep(), None).fingerprint);
        let mut specs = bank::check_sweep();
        specs[0].fall_height_m = 0.16;
        assert_ne!(a.fingerprint, Plan::new("check", specs, None).fingerprint);
        assert_ne!(a.fingerprint, Plan::new("full", bank::check_sweep(), None).fingerprint);
    }
}
