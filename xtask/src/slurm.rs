//! `cargo xtask bank-shards`: the databank's sweep in shards as a Slurm job array, on a
//! one-node Slurm cluster started on this machine for the run (Debian's `slurm-wlm`: munged,
//! slurmctld, slurmd with `dem/slurm/localhost.conf.in`), then merged (docs/dem.md, "Sharded
//! sweeps").
//!
//! - `cargo xtask bank-shards [--shards N] [--output FILE] [--resume] [-- granary-bank
//!   options]`: the sweep (`--sweep`, `--quick`, `--reuse` pass through) in N shards
//!   (default 4) under target/bank-shards/shards/ (emptied first, unless `--resume` goes on
//!   with a stopped sweep's files), merged into FILE (default target/bank-shards/bank.json).
//! - `--check`: the shards' test (in `cargo xtask test`): the short check sweep in four shards
//!   through Slurm, merged, against the same sweep in one process, byte for byte; then the
//!   array submitted again, which must find every shard complete and merge the same file.
//! - `--no-build`: use target/release/granary-bank as it is; `--bank PATH`: use that
//!   `granary-bank` (the suite's copy of its release build).
//!
//! The cluster needs root (slurmd starts each job as its user) and stops when the command
//! ends, whatever happened; a munged already answering is used, else one is started and
//! stopped again.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The cluster's ports: not Slurm's 6817/6818, so that a cluster of the machine's own is
/// left alone.
const CTLD_PORT: u16 = 6917;
const SLURMD_PORT: u16 = 6918;

/// The Slurm and munge programs the command runs.
const TOOLS: [&str; 7] = [
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "sinfo",
    "scontrol",
    "scancel",
];

/// The first tool that is not installed, if any (Debian: apt-get install slurm-wlm), or root
/// privileges, which the one-node cluster needs.
pub fn missing() -> Option<&'static str> {
    let tool = TOOLS.into_iter().find(|tool| {
        !Command::new("sh")
            .args(["-c", &format!("command -v {tool} || test -x /usr/sbin/{tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    tool.or_else(|| (!is_root()).then_some("root privileges"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

struct Options {
    shards: usize,
    output: Option<PathBuf>,
    check: bool,
    build: bool,
    resume: bool,
    bank: Option<PathBuf>,
    bank_args: Vec<String>,
}

const USAGE: &str =
    "usage: cargo xtask bank-shards [--shards N] [--output FILE] [--resume] [--check] [--no-build] [-- granary-bank options]";

fn parse(args: &[String]) -> anyhow::Result<Options> {
    let mut o = Options {
        shards: 4,
        output: None,
        check: false,
        build: true,
        resume: false,
        bank: None,
        bank_args: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--shards" => match it
                .next()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&n| (1..=1000).contains(&n))
            {
                Some(n) => o.shards = n,
                None => bail!("--shards needs a whole number from 1 to 1000\n{USAGE}"),
            },
            "--output" => match it.next() {
                Some(v) => o.output = Some(v.into()),
                None => bail!("--output needs a file\n{USAGE}"),
            },
            "--check" => o.check = true,
            "--resume" => o.resume = true,
            "--no-build" => o.build = false,
            "--bank" => match it.next() {
                Some(v) => {
                    o.bank = Some(v.into());
                    o.build = false;
                }
                None => bail!("--bank needs the granary-bank program\n{USAGE}"),
            },
            "--" => o.bank_args = it.by_ref().cloned().collect(),
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    if o.check && (!o.bank_args.is_empty() || o.output.is_some() || o.shards != 4) {
        bail!(
            "--check runs its own sweep in four shards: no --shards, --output or granary-bank options with it\n{USAGE}"
        );
    }
    Ok(o)
}

pub fn bank_shards(args: &[String]) -> nice_plug_xtask::Result<()> {
    let mut o = parse(args)?;
    // paths given relative to where the command was run, before moving to the workspace
    let here = std::env::current_dir()?;
    o.output = o.output.map(|p| here.join(p));
    o.bank = o.bank.map(|p| here.join(p));
    nice_plug_xtask::chdir_workspace_root()?;
    let root = std::env::current_dir()?;
    if let Some(tool) = missing() {
        bail!("{tool} is not installed: the shards run on Slurm (Debian: apt-get install slurm-wlm)");
    }
    if o.build {
        let mut build = super::cargo();
        build.args([
            "build",
            "--release",
            "--package",
            "granary-dem",
            "--bin",
            "granary-bank",
        ]);
        super::run(build)?;
    }
    let target = super::target_dir()?;
    let bank = o.bank.clone().unwrap_or_else(|| target.join("release/granary-bank"));
    if !bank.exists() {
        bail!(
            "{} is not there (build it: run without --no-build or --bank)",
            bank.display()
        );
    }
    let work = target.join("bank-shards");
    let cluster = Cluster::start(&root, &work.join("cluster"))?;
    let result = if o.check {
        check(&cluster, &root, &bank, &work)
    } else {
        let output = o.output.clone().unwrap_or_else(|| work.join("bank.json"));
        let shards = work.join("shards");
        // a fresh sweep unless asked to resume one stopped (its shards' files and partial
        // files kept: each task goes on where it was)
        if !o.resume && shards.exists() {
            std::fs::remove_dir_all(&shards)?;
        }
        sweep(&cluster, &root, &bank, &shards, o.shards, &o.bank_args, &output, None)
    };
    let stopped = cluster.stop();
    result?;
    stopped?;
    Ok(())
}

/// The sweep of `bank_args` in `n` shards through the cluster, merged into `output`.
#[allow(clippy::too_many_arguments)]
fn sweep(
    cluster: &Cluster,
    root: &Path,
    bank: &Path,
    shards: &Path,
    n: usize,
    bank_args: &[String],
    output: &Path,
    limit: Option<Duration>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(shards)?;
    let started = Instant::now();
    cluster.array(root, bank, shards, n, bank_args, limit)?;
    println!("{n} shards ran in {:.1} s", started.elapsed().as_secs_f64());
    let mut merge = Command::new(bank);
    merge.current_dir(root).args(bank_args).arg("--merge");
    merge.args((1..=n).map(|i| shards.join(format!("bank-{i}-of-{n}.json"))));
    merge.arg("--output").arg(output);
    super::run(merge)?;
    Ok(())
}

/// `--check`: the check sweep in four shards through Slurm against one process, byte for
/// byte; the array run again finds every shard complete.
fn check(cluster: &Cluster, root: &Path, bank: &Path, work: &Path) -> anyhow::Result<()> {
    let dir = work.join("check");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let args = ["--sweep".to_string(), "check".to_string()];
    let shards = dir.join("shards");
    let (merged, again, one) = (
        dir.join("merged.json"),
        dir.join("merged-again.json"),
        dir.join("one-process.json"),
    );
    // the check sweep takes about 10 s of one core: ten minutes is a hang
    let limit = Some(Duration::from_secs(600));
    sweep(cluster, root, bank, &shards, 4, &args, &merged, limit)?;
    let times: Vec<_> = (1..=4)
        .map(|i| std::fs::metadata(shards.join(format!("bank-{i}-of-4.json"))).and_then(|m| m.modified()))
        .collect::<Result<_, _>>()?;
    // submitted again: every task finds its shard complete (the files untouched)
    sweep(cluster, root, bank, &shards, 4, &args, &again, limit)?;
    for i in 1..=4 {
        let log = std::fs::read_to_string(shards.join(format!("task-{}.out", i - 1))).unwrap_or_default();
        if !log.contains("is complete: nothing to run") {
            bail!("shard {i}/4 run again did not find its file complete:\n{log}");
        }
        let t = std::fs::metadata(shards.join(format!("bank-{i}-of-4.json")))?.modified()?;
        if t != times[i - 1] {
            bail!("shard {i}/4 run again rewrote its file");
        }
    }
    let mut alone = Command::new(bank);
    alone
        .current_dir(root)
        .args(&args)
        .args(["--jobs", "2", "--output"])
        .arg(&one);
    super::run(alone)?;
    let (a, b, c) = (std::fs::read(&one)?, std::fs::read(&merged)?, std::fs::read(&again)?);
    if a != b {
        bail!(
            "the merge of four shards ({}) is not the one-process sweep ({}) byte for byte",
            merged.display(),
            one.display()
        );
    }
    if b != c {
        bail!("the second merge differs from the first");
    }
    println!(
        "bank-shards check: 4 shards through Slurm, merged: {} bytes, byte-identical to one process; run again, every shard complete",
        a.len()
    );
    Ok(())
}

/// A one-node cluster started for the command.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    /// munged, if this command started it (stopped again by its pid file).
    munged_pid_file: Option<PathBuf>,
    daemons: Vec<Child>,
}

impl Cluster {
    fn start(root: &Path, dir: &Path) -> anyhow::Result<Cluster> {
        if !is_root() {
            bail!(
                "the one-node Slurm cluster needs root (slurmd starts each job as its user); on a Slurm cluster of your own, submit dem/slurm/bank.sbatch (docs/dem.md)"
            );
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let memory_mb = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            })
            .map_or(1024, |kb| kb / 1024 / 2);
        let template = std::fs::read_to_string(root.join("dem/slurm/localhost.conf.in"))?;
        let text = template
            .replace("@DIR@", &dir.display().to_string())
            .replace("@CTLD_PORT@", &CTLD_PORT.to_string())
            .replace("@SLURMD_PORT@", &SLURMD_PORT.to_string())
            .replace("@CPUS@", &cpus.to_string())
            .replace("@MEMORY_MB@", &memory_mb.to_string());
        let conf = dir.join("slurm.conf");
        std::fs::write(&conf, text)?;
        let mut cluster = Cluster {
            dir: dir.into(),
            conf,
            munged_pid_file: None,
            daemons: Vec::new(),
        };
        if let Err(e) = cluster.up() {
            let _ = cluster.stop();
            return Err(e);
        }
        Ok(cluster)
    }

    fn up(&mut self) -> anyhow::Result<()> {
        if !munge_answers() {
            // Debian's munge package made the key; munged runs as its own user, its socket in
            // /run/munge, its pid file in a folder of its own here
            let pid_dir = self.dir.join("munge");
            for d in [Path::new("/run/munge"), &pid_dir] {
                let mut c = Command::new("install");
                c.args(["-d", "-o", "munge", "-g", "munge", "-m", "0755"]).arg(d);
                super::run(c)?;
            }
            let pid_file = pid_dir.join("munged.pid");
            let mut c = Command::new("runuser");
            c.args(["-u", "munge", "--", "/usr/sbin/munged", "--pid-file"])
                .arg(&pid_file);
            super::run(c).context("starting munged")?;
            self.munged_pid_file = Some(pid_file);
            wait_for("munged to answer", Duration::from_secs(10), munge_answers)?;
        }
        // in the foreground (-D), as children, stopped by `stop` whatever happened (a kill of
        // this command leaves them: `scontrol shutdown` with this cluster's slurm.conf ends them)
        for (daemon, extra) in [("slurmctld", &[][..]), ("slurmd", &["-N", "localhost"][..])] {
            let log = std::fs::File::create(self.dir.join(format!("{daemon}.out")))?;
            let child = Command::new(format!("/usr/sbin/{daemon}"))
                .arg("-D")
                .arg("-f")
                .arg(&self.conf)
                .args(extra)
                .env("SLURM_CONF", &self.conf)
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
                .with_context(|| format!("starting {daemon}"))?;
            self.daemons.push(child);
        }
        // until the node is idle, and as long as both daemons live (one that could not start,
        // a port taken say, fails at once)
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            for (name, child) in ["slurmctld", "slurmd"].iter().zip(&mut self.daemons) {
                if let Some(status) = child.try_wait()? {
                    bail!(
                        "{name} stopped ({status}); its log: {}",
                        self.dir.join(format!("{name}.out")).display()
                    );
                }
            }
            let idle = Command::new("sinfo")
                .args(["-h", "-o", "%T"])
                .env("SLURM_CONF", &self.conf)
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle");
            if idle {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "the cluster did not come up within 60 s; its logs are in {}",
                    self.dir.display()
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Submits `n` shards of the sweep as a job array and waits for it (at most `limit`, else
    /// a day); an error if any task failed, with its log. Task k's log is `task-k.out` beside
    /// the shards (k from 0: it runs shard k + 1).
    ///
    /// Waits by asking slurmctld for the array's tasks (`scontrol show job`) every 100 ms,
    /// not with `sbatch --wait`, whose polling backs off to seconds: an array of four short
    /// shards took 10 s with it, of which 3 s were the shards' work.
    fn array(
        &self,
        root: &Path,
        bank: &Path,
        shards: &Path,
        n: usize,
        bank_args: &[String],
        limit: Option<Duration>,
    ) -> anyhow::Result<()> {
        let mut c = Command::new("sbatch");
        c.env("SLURM_CONF", &self.conf)
            .current_dir(root)
            .arg(format!("--array=0-{}", n - 1))
            .arg(format!("--output={}/task-%a.out", shards.display()))
            .arg("--parsable")
            .arg(root.join("dem/slurm/bank.sbatch"))
            .arg(bank)
            .arg(shards)
            .arg(n.to_string())
            .args(bank_args);
        eprintln!("+ {c:?}");
        let out = c.output().context("sbatch")?;
        if !out.status.success() {
            bail!(
                "sbatch failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        // --parsable: "JOBID" or "JOBID;CLUSTER"
        let stdout = String::from_utf8_lossy(&out.stdout);
        let job = stdout.trim().split(';').next().unwrap_or_default().to_string();
        if job.is_empty() || !job.bytes().all(|b| b.is_ascii_digit()) {
            bail!("sbatch printed no job id: {stdout:?}");
        }
        let deadline = Instant::now() + limit.unwrap_or(Duration::from_secs(24 * 3600));
        let states = loop {
            let show = Command::new("scontrol")
                .args(["show", "job", "--oneliner", &job])
                .env("SLURM_CONF", &self.conf)
                .output()
                .context("scontrol show job")?;
            let states = task_states(&String::from_utf8_lossy(&show.stdout));
            if states.len() == n && states.iter().all(|(_, state)| is_final(state)) {
                break states;
            }
            if Instant::now() > deadline {
                // the array's tasks, not only this command
                let _ = Command::new("scancel").arg(&job).env("SLURM_CONF", &self.conf).status();
                bail!("the job array did not finish within {:?}", limit.unwrap_or_default());
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let failed: Vec<&(usize, String)> = states.iter().filter(|(_, state)| state != "COMPLETED").collect();
        if !failed.is_empty() {
            let logs: String = failed
                .iter()
                .map(|(k, state)| {
                    let log = std::fs::read_to_string(shards.join(format!("task-{k}.out"))).unwrap_or_default();
                    format!("--- task {k} (shard {}/{n}): {state}\n{log}", k + 1)
                })
                .collect();
            bail!("the job array failed:\n{logs}");
        }
        Ok(())
    }

    /// Shuts the cluster down (scontrol shutdown; killed if it does not end within 10 s) and
    /// munged if this command started it.
    fn stop(mut self) -> anyhow::Result<()> {
        let _ = Command::new("scontrol")
            .arg("shutdown")
            .env("SLURM_CONF", &self.conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        for child in &mut self.daemons {
            while child.try_wait()?.is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            if child.try_wait()?.is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        if let Some(pid) = self
            .munged_pid_file
            .take()
            .and_then(|p| std::fs::read_to_string(p).ok())
        {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
        Ok(())
    }
}

/// munged answers a credential request.
fn munge_answers() -> bool {
    Command::new("sh")
        .args(["-c", "munge -n | unmunge"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    while !ready() {
        if Instant::now() > deadline {
            bail!("waited {limit:?} for {what}");
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Ok(())
}

/// The tasks of a job array and their states, from `scontrol show job --oneliner`: one
/// line a record, `ArrayTaskId=K` and `JobState=STATE` among its fields. Tasks still
/// pending together (`ArrayTaskId=2-3`, one record) are left out: they have not started.
fn task_states(show: &str) -> Vec<(usize, String)> {
    show.lines()
        .filter_map(|line| {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|f| f.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            };
            let task = field("ArrayTaskId")?.parse().ok()?;
            Some((task, field("JobState")?.to_string()))
        })
        .collect()
}

/// A job state from which a task does not go on (Slurm's job state codes).
fn is_final(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED"
            | "FAILED"
            | "CANCELLED"
            | "TIMEOUT"
            | "NODE_FAIL"
            | "OUT_OF_MEMORY"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "PREEMPTED"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrays_task_states_are_read_from_scontrol() {
        // `scontrol show job --oneliner` of an array under way (fields shortened)
        let show =
            "JobId=7 ArrayJobId=5 ArrayTaskId=1 JobName=granary-bank JobState=COMPLETED Reason=None ExitCode=0:0\n\
                    JobId=8 ArrayJobId=5 ArrayTaskId=0 JobName=granary-bank JobState=RUNNING Reason=None ExitCode=0:0\n\
                    JobId=5 ArrayJobId=5 ArrayTaskId=2-3 JobName=granary-bank JobState=PENDING Reason=Resources\n";
        let states = task_states(show);
        assert_eq!(states, [(1, "COMPLETED".to_string()), (0, "RUNNING".to_string())]);
        assert!(is_final("COMPLETED") && is_final("FAILED") && !is_final("RUNNING") && !is_final("COMPLETING"));
        assert!(task_states("slurm_load_jobs error: Invalid job id specified\n").is_empty());
    }

    #[test]
    fn arguments_parse() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let o = parse(&args("--shards 8 --output b.json -- --sweep full --quick 3")).unwrap();
        assert_eq!(
            (o.shards, o.output, o.check, o.build),
            (8, Some("b.json".into()), false, true)
        );
        assert_eq!(o.bank_args, ["--sweep", "full", "--quick", "3"]);
        assert!(parse(&args("--check --no-build")).is_ok_and(|o| o.check && !o.build));
        assert!(parse(&args("--check --bank b")).is_ok_and(|o| !o.build && o.bank == Some("b".into())));
        assert!(parse(&args("--resume")).is_ok_and(|o| o.resume && !o.check));
        for bad in [
            "--shards 0",
            "--shards x",
            "--output",
            "--check --shards 2",
            "--frobnicate",
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad}");
        }
    }
}
