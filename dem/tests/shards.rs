//! The databank's sweep in shards (`granary_dem::shards`, docs/dem.md "Sharded sweeps"): the
//! merge of a sweep's shards is the one-process bank file byte for byte; a shard run again is
//! left as it is, one stopped mid-way resumes from its whole lines, one already running (its
//! lock held) is not run twice; a merge refuses a missing, doubled or foreign shard, naming it. On the check sweep's first two scenes (four short
//! runs; `cargo xtask bank-shards --check` runs all of it through Slurm).

use granary_dem::bank;
use granary_dem::shards::{self, Plan, Run, Shard, ShardDone, ShardFile};
use std::path::{Path, PathBuf};

fn plan() -> Plan {
    let mut specs = bank::check_sweep();
    specs.truncate(2);
    Plan::new("check --quick 2", specs, None)
}

/// A fresh folder of its own under the system's temporary one.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("granary-shards-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(path: &Path) -> (PathBuf, ShardFile) {
    let text = std::fs::read_to_string(path).unwrap();
    (path.to_path_buf(), shards::read_shard(&text).unwrap())
}

fn quiet(_: &Run) {}

#[test]
fn shards_merge_into_the_one_process_bank_byte_for_byte_and_rerun_safely() {
    let plan = plan();
    assert_eq!(plan.todo.len(), 4, "one sugar run, three seeds of glass beads");
    let all: Vec<usize> = (0..4).collect();
    let one: Vec<Run> = plan.run_many(&all, 2, &quiet).iter().map(Run::as_read).collect();
    let one = shards::bank_text(&plan.assemble(&one));

    let dir = folder("merge");
    let path = |i: usize| dir.join(format!("bank-{i}-of-2.json"));
    for i in 1..=2 {
        let done = shards::run_shard(&plan, Shard { index: i, count: 2 }, &path(i), 1, &quiet).unwrap();
        assert_eq!(done, ShardDone::Ran { now: 2, resumed: 0 });
        assert!(
            !shards::partial_path(&path(i)).exists(),
            "the partial file goes once the shard is whole"
        );
    }
    let files = [read(&path(1)), read(&path(2))];
    assert_eq!(files[0].1.runs.iter().map(|r| r.run).collect::<Vec<_>>(), [0, 2]);
    let merged = shards::bank_text(&shards::merge(&plan, &files).unwrap());
    assert!(
        merged == one,
        "the merge of two shards is the one-process file, byte for byte"
    );

    // run again: complete, untouched
    let before = std::fs::read(path(2)).unwrap();
    let again = shards::run_shard(&plan, Shard { index: 2, count: 2 }, &path(2), 1, &quiet).unwrap();
    assert_eq!(again, ShardDone::AlreadyComplete);
    assert_eq!(std::fs::read(path(2)).unwrap(), before);

    // stopped after its first run, in the middle of writing the second's line: resumed, the
    // first run kept as it was written, the same bank
    let partial = shards::partial_path(&path(2));
    let text = String::from_utf8(before.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&partial, format!("{}\n{}\n{}", lines[0], lines[1], &lines[2][..40])).unwrap();
    std::fs::remove_file(path(2)).unwrap();
    let resumed = shards::run_shard(&plan, Shard { index: 2, count: 2 }, &path(2), 1, &quiet).unwrap();
    assert_eq!(resumed, ShardDone::Ran { now: 1, resumed: 1 });
    let redone = std::fs::read_to_string(path(2)).unwrap();
    assert_eq!(redone.lines().nth(1), Some(lines[1]), "the kept run's line, as written");
    let files = [read(&path(1)), read(&path(2))];
    assert!(shards::bank_text(&shards::merge(&plan, &files).unwrap()) == one);

    // a file of another sweep's shard at the output: refused, left alone
    let other = Plan::new("check --quick 1", bank::check_sweep()[..1].to_vec(), None);
    let e = shards::run_shard(&other, Shard { index: 2, count: 2 }, &path(2), 1, &quiet).unwrap_err();
    assert!(
        e.contains("holds shard 2/2 of sweep `check --quick 2`") && e.contains("not shard 2/2 of `check --quick 1`"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(path(2)).unwrap(), redone);

    // a second process on a shard that runs (its lock held) stops, touching nothing
    std::fs::remove_file(path(1)).unwrap();
    let lock = std::fs::File::create(dir.join("bank-1-of-2.json.lock")).unwrap();
    lock.lock().unwrap();
    let e = shards::run_shard(&plan, Shard { index: 1, count: 2 }, &path(1), 1, &quiet).unwrap_err();
    assert!(e.contains("shard 1/2 is being run by another process"), "{e}");
    assert!(!path(1).exists() && !shards::partial_path(&path(1)).exists());
    drop(lock);

    // merges that cannot be: a shard missing, twice, of another plan, of another count
    let e = shards::merge(&plan, &files[..1]).unwrap_err();
    assert!(e.contains("missing shard 2/2"), "{e}");
    let e = shards::merge(&plan, &[files[0].clone(), files[0].clone()]).unwrap_err();
    assert!(e.contains("shard 1/2 twice"), "{e}");
    let e = shards::merge(&other, &files).unwrap_err();
    assert!(
        e.contains("a shard of sweep `check --quick 2`") && e.contains("not of this sweep `check --quick 1`"),
        "{e}"
    );
    let mut third = files[1].clone();
    third.1.shard = Shard { index: 2, count: 3 };
    let e = shards::merge(&plan, &[files[0].clone(), third]).unwrap_err();
    assert!(e.contains("shard 2/3, but") && e.contains("is shard 1/2"), "{e}");
    assert!(shards::merge(&plan, &[]).unwrap_err().contains("no shard files"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A shard file cut short (its head says more runs than it holds) or of another format is
/// refused, naming the line.
#[test]
fn an_unfinished_or_foreign_shard_file_is_refused() {
    let head = r#"{"format":"granary-bank-shard","version":1,"sweep":"check","plan":"0123456789abcdef","shard":{"index":1,"count":2},"runs":2}"#;
    let e = shards::read_shard(head).unwrap_err();
    assert!(e.contains("0 runs, its head says 2"), "{e}");
    let e = shards::read_shard(&format!("{head}\n{{\"run\": 0")).unwrap_err();
    assert!(e.starts_with("line 2:"), "{e}");
    let e = shards::read_shard(&head.replace("granary-bank-shard", "granary-bank")).unwrap_err();
    assert!(e.contains("not granary-bank-shard version 1"), "{e}");
    assert!(shards::read_shard("").unwrap_err().starts_with("line 1"));
    for bad in [
        r#""index":0,"count":2"#,
        r#""index":3,"count":2"#,
        r#""index":1,"count":0"#,
    ] {
        let e = shards::read_shard(&head.replace(r#""index":1,"count":2"#, bad)).unwrap_err();
        assert!(e.contains("is not one of 1..=N"), "{e}");
    }
}
