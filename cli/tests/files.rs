//! The command line never loses work or the machine: outputs appear whole or not at all
//! (full disk, blocked paths, signals), devices are never replaced, and a long render's
//! memory stays flat.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{granary, names, stderr};

/// A 1 MiB tmpfs, mounted for the life of the value (needs root; `None` where it cannot
/// be mounted: the injected-writer tests in `granary_cli::render` cover the same path).
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("cannot mount a tmpfs here: the disk-full case is covered by the injected writer only");
        }
        ok.then_some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_leaves_no_file_behind() {
    let Some(disk) = SmallDisk::mount() else { return };
    let wav = disk.path().join("pour.wav");
    // 2 s of stereo float at 48 kHz is 768 kB a file: the mix fits, its stems do not
    let out = granary(&["render", "--seconds", "2", "--stems", "-o", wav.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("No space left on device") && !err.contains("Os {"),
        "{err}"
    );
    assert!(names(disk.path()).is_empty(), "{:?}", names(disk.path()));
    // without stems it fits
    let out = granary(&["render", "--seconds", "2", "-o", wav.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(names(disk.path()), ["pour.wav"]);

    // `presets save` on a disk with no room left
    std::fs::remove_file(&wav).unwrap();
    let filler = disk.path().join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 2 << 20]);
    let preset = disk.path().join("mine.json");
    let out = granary(&["presets", "save", "--name", "Mine", "-o", preset.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("No space left on device"), "{}", stderr(&out));
    assert_eq!(names(disk.path()), ["filler"]);
}

#[test]
fn a_blocked_stem_path_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("pour.wav");
    std::fs::create_dir(dir.path().join("pour.cup.wav")).unwrap();
    let out = granary(&["render", "--seconds", "1.5", "--stems", "-o", wav.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pour.cup.wav is a directory"), "{}", stderr(&out));
    assert_eq!(names(dir.path()), ["pour.cup.wav"]);
}

#[test]
fn force_replaces_regular_files_only() {
    use std::os::unix::fs::FileTypeExt;
    // a device and a FIFO of the test's own (a regression must not replace /dev/full)
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.wav");
    let fifo = dir.path().join("fifo.wav");
    let c = |p: &Path| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    let made = unsafe { libc::mknod(c(&full).as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) } == 0;
    assert_eq!(unsafe { libc::mkfifo(c(&fifo).as_ptr(), 0o666) }, 0);
    if made {
        let out = granary(&[
            "presets",
            "save",
            "--name",
            "Mine",
            "-o",
            full.to_str().unwrap(),
            "--force",
        ]);
        assert_eq!(out.status.code(), Some(2));
        let want = format!("{} is not a regular file", full.display());
        assert!(stderr(&out).contains(&want), "{}", stderr(&out));
        assert!(std::fs::metadata(&full).unwrap().file_type().is_char_device());
    } else {
        eprintln!("cannot make a device node here (not root): the FIFO stands for it");
    }
    let out = granary(&[
        "presets",
        "save",
        "--name",
        "Mine",
        "-o",
        fifo.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a regular file"), "{}", stderr(&out));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    if made {
        let out = granary(&["render", "--seconds", "1.5", "-o", full.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("is not a regular file"), "{}", stderr(&out));
        assert!(std::fs::metadata(&full).unwrap().file_type().is_char_device());
    }
    // a directory, even with --force
    let d = dir.path().join("d.json");
    std::fs::create_dir(&d).unwrap();
    let out = granary(&["presets", "save", "--name", "M", "-o", d.to_str().unwrap(), "--force"]);
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    assert!(d.is_dir());
}

/// Starts a long render with stems in `dir`, waits until its temporaries hold data, sends
/// `signal` and returns the exit code.
fn interrupted_render(dir: &Path, signal: i32) -> Option<i32> {
    let wav = dir.join("long.wav");
    let mut child = Command::new(env!("CARGO_BIN_EXE_granary"))
        .args(["render", "--seconds", "600", "--stems", "-o", wav.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let written: u64 = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        if written > 3 << 20 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the render wrote nothing");
        assert!(child.try_wait().unwrap().is_none(), "the render ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(names(dir).len(), 5, "five temporaries while rendering");
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("interrupted by SIG") && err.contains("nothing written"),
        "{err}"
    );
    out.status.code()
}

#[test]
fn a_signal_during_a_render_leaves_nothing_and_says_so() {
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(interrupted_render(dir.path(), signal), Some(code));
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }
}

/// Peak resident memory of a finished child, kB (`wait4`, which also reaps it).
#[allow(clippy::zombie_processes)]
fn run_measuring_peak_rss_kb(cmd: &mut Command) -> (i32, i64) {
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn a_ten_minute_render_with_stems_stays_under_200_mb() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("ten.wav");
    // a sparse pour (2 g/s): the render streams ten minutes of five stereo outputs (1.15 GB
    // were they held whole) through the same offline path as every render in a tenth of
    // the default pour's time; what is measured is the output's memory, not the collisions'
    let (code, kb) = run_measuring_peak_rss_kb(Command::new(env!("CARGO_BIN_EXE_granary")).args([
        "render",
        "--seconds",
        "600",
        "--stems",
        "--set",
        "pour_rate=2",
        "-o",
        wav.to_str().unwrap(),
    ]));
    assert_eq!(code, 0);
    eprintln!(
        "granary render --seconds 600 --stems --set pour_rate=2: peak resident memory {} MB",
        kb / 1024
    );
    assert!(kb < 200 * 1024, "{} MB", kb / 1024);
    let reader = hound::WavReader::open(dir.path().join("ten.cup.wav")).unwrap();
    assert_eq!(reader.duration(), 600 * 48_000);
}
