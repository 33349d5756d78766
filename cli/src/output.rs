//! Output files that appear whole or not at all.
//!
//! Each output is written to a hidden temporary file beside its target (`.NAME.PID.XXXXXX.tmp`,
//! same directory, so the final rename stays on one file system) and the targets appear only
//! when every one of them is complete ([`Staged::commit`]): a mix and its stems together or
//! none. On an error, or when [`Interrupt`] reports SIGINT/SIGTERM/SIGHUP and the command
//! stops, the temporaries are removed (dropped). A target is written only where it is absent
//! or a regular file: a directory, device, FIFO or symbolic link is never replaced. A render
//! killed outright (SIGKILL, a power cut) cannot remove its temporaries: the next one into the
//! same target removes those whose process is gone ([`remove_stale`]).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tempfile::NamedTempFile;

/// Whether `path` exists; an error unless it is absent or a regular file.
pub fn check_target(path: &Path) -> Result<bool, String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!("{}: {}", path.display(), io_message(&e))),
        Ok(m) if m.file_type().is_file() => Ok(true),
        Ok(m) => {
            let what = if m.is_dir() {
                "a directory"
            } else if m.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file (a device, FIFO or socket)"
            };
            Err(format!(
                "{} is {what}: only regular files are written or replaced",
                path.display()
            ))
        }
    }
}

/// `px` (8-bit RGB, row by row, `size` = (width, height) px) as a PNG into `file`: the
/// spectrogram's image and the inspection plots'.
pub fn write_png(file: &File, size: (u32, u32), px: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let message = |e: png::EncodingError| match e {
        png::EncodingError::IoError(e) => io_message(&e),
        e => e.to_string(),
    };
    let mut out = std::io::BufWriter::new(file);
    let mut encoder = png::Encoder::new(&mut out, size.0, size.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(message)?;
    writer.write_image_data(px).map_err(message)?;
    writer.finish().map_err(message)?;
    out.flush().map_err(|e| io_message(&e))
}

/// An I/O error as a sentence, without the Rust error value (`No space left on device`, not
/// `Os { code: 28, … }`).
pub fn io_message(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Temporaries for a set of targets, renamed onto them together.
pub struct Staged {
    items: Vec<(PathBuf, NamedTempFile)>,
}

impl Staged {
    /// Checks every target ([`check_target`]) and creates its temporary beside it.
    pub fn new(targets: &[PathBuf]) -> Result<Staged, String> {
        Staged::with_suffix(targets, ".tmp")
    }

    /// As [`Staged::new`], the temporaries' names ending in `suffix` (e.g. `.png`, for
    /// writers that choose the format by the name).
    pub fn with_suffix(targets: &[PathBuf], suffix: &str) -> Result<Staged, String> {
        for t in targets {
            check_target(t)?;
        }
        let mut items = Vec::with_capacity(targets.len());
        for t in targets {
            let name = t
                .file_name()
                .ok_or_else(|| format!("{}: not a file name", t.display()))?
                .to_string_lossy();
            let dir = match t.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            remove_stale(dir, &name, suffix);
            let prefix = format!(".{name}.{}.", std::process::id());
            let mut builder = tempfile::Builder::new();
            builder.prefix(&prefix).suffix(suffix);
            // as a file the command created itself: read-write for all, less the umask
            #[cfg(unix)]
            builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
            let tmp = builder
                .tempfile_in(dir)
                .map_err(|e| format!("{}: cannot write there: {}", t.display(), io_message(&e)))?;
            items.push((t.clone(), tmp));
        }
        Ok(Staged { items })
    }

    /// The temporaries, in the order of the targets.
    pub fn files(&self) -> Vec<&File> {
        self.items.iter().map(|(_, t)| t.as_file()).collect()
    }

    /// The temporaries' paths, in the order of the targets.
    pub fn temp_paths(&self) -> Vec<&Path> {
        self.items.iter().map(|(_, t)| t.path()).collect()
    }

    /// The targets, in their order.
    pub fn targets(&self) -> Vec<&Path> {
        self.items.iter().map(|(p, _)| p.as_path()).collect()
    }

    /// Flushes every temporary to disk, then renames each onto its target. If a rename fails,
    /// the targets already renamed are removed again and the other temporaries deleted.
    pub fn commit(self) -> Result<(), String> {
        for (target, tmp) in &self.items {
            tmp.as_file()
                .sync_all()
                .map_err(|e| format!("{}: {}", target.display(), io_message(&e)))?;
            check_target(target)?;
        }
        let mut done: Vec<PathBuf> = Vec::new();
        for (target, tmp) in self.items {
            if let Err(e) = tmp.persist(&target) {
                for d in &done {
                    let _ = std::fs::remove_file(d);
                }
                return Err(format!("{}: {}", target.display(), io_message(&e.error)));
            }
            done.push(target);
        }
        Ok(())
    }
}

/// Removes the temporaries for the target `name` in `dir` that a killed render left: those
/// named `.NAME.PID.XXXXXX` + `suffix` whose process `PID` no longer runs, and those of the
/// older form `.NAME.XXXXXX` + `suffix` (no process id) untouched for a day. Errors are
/// ignored: a temporary that cannot be read or removed is left as it was.
pub fn remove_stale(dir: &Path, name: &str, suffix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(middle) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|f| f.strip_suffix(suffix))
        else {
            continue;
        };
        let random = |r: &str| r.len() == 6 && r.bytes().all(|b| b.is_ascii_alphanumeric());
        let stale = match middle.split_once('.') {
            Some((pid, r)) if random(r) => pid.parse::<u32>().is_ok_and(|pid| !process_runs(pid)),
            None if random(middle) => entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() > 24 * 3600)),
            _ => false,
        };
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if stale && regular {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a process `pid` runs (or may: where this cannot be told, it is taken to run).
fn process_runs(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // signal 0: nothing is sent, only whether the process exists is checked
        // SAFETY: kill with signal 0 has no effect on any process.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// SIGINT, SIGTERM and SIGHUP, caught: a long command polls [`Interrupt::signal`] and stops
/// cleanly (its temporaries removed) instead of dying mid-write.
#[derive(Clone)]
pub struct Interrupt(Arc<AtomicUsize>);

impl Interrupt {
    /// Catches the signals from now on (for the rest of the process).
    pub fn install() -> Result<Interrupt, String> {
        let flag = Arc::new(AtomicUsize::new(0));
        #[cfg(unix)]
        for sig in [
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ] {
            signal_hook::flag::register_usize(sig, flag.clone(), sig as usize)
                .map_err(|e| format!("cannot catch signal {sig}: {}", io_message(&e)))?;
        }
        Ok(Interrupt(flag))
    }

    /// A flag that no signal sets (for tests and library callers).
    pub fn never() -> Interrupt {
        Interrupt(Arc::new(AtomicUsize::new(0)))
    }

    /// The signal caught, if any.
    pub fn signal(&self) -> Option<i32> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// Raises `signal` on this flag (tests).
    pub fn raise(&self, signal: i32) {
        self.0.store(signal as usize, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// The names in `d`, sorted.
    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn targets_appear_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.wav");
        let b = dir.path().join("b.wav");
        // dropped before commit: nothing is left
        let s = Staged::new(&[a.clone(), b.clone()]).unwrap();
        s.files()[0].write_all(b"x").unwrap();
        assert_eq!(names(dir.path()).len(), 2);
        drop(s);
        assert!(names(dir.path()).is_empty());
        // committed: both, nothing else
        let s = Staged::new(&[a.clone(), b.clone()]).unwrap();
        s.files()[1].write_all(b"y").unwrap();
        s.commit().unwrap();
        assert_eq!(names(dir.path()), ["a.wav", "b.wav"]);
        assert_eq!(std::fs::read(&b).unwrap(), b"y");
        // a blocked target: refused before anything is written
        std::fs::remove_file(&b).unwrap();
        std::fs::create_dir(&b).unwrap();
        let err = Staged::new(&[a.clone(), b.clone()]).err().unwrap();
        assert!(err.contains("is a directory"), "{err}");
        assert_eq!(names(dir.path()), ["a.wav", "b.wav"]);
        // a target blocked between the start and the commit: neither is replaced
        std::fs::remove_dir(&b).unwrap();
        std::fs::remove_file(&a).unwrap();
        let s = Staged::new(&[a.clone(), b.clone()]).unwrap();
        std::fs::create_dir(&b).unwrap();
        assert!(s.commit().is_err());
        assert_eq!(names(dir.path()), ["b.wav"]);
        assert!(b.is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn a_killed_renders_temporaries_are_removed_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        // a process that has ended: its pid names no process now
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let own = std::process::id();
        let old_form = dir.path().join(".take.wav.Ab12Cd.tmp");
        for f in [
            format!(".take.wav.{dead}.xY12zW.tmp"),
            format!(".take.wav.{own}.Qq34Rr.tmp"),
            ".take.wav.Ab12Cd.tmp".to_string(),
            ".take.wav.Zz99Yy.tmp".to_string(),
            format!(".other.wav.{dead}.xY12zW.tmp"),
            format!(".take.wav.{dead}.notes.txt"),
        ] {
            std::fs::write(dir.path().join(f), b"part of a render").unwrap();
        }
        let two_days = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 24 * 3600);
        std::fs::File::options()
            .write(true)
            .open(&old_form)
            .unwrap()
            .set_modified(two_days)
            .unwrap();
        let s = Staged::new(&[dir.path().join("take.wav")]).unwrap();
        let ours = s.temp_paths()[0].file_name().unwrap().to_string_lossy().into_owned();
        assert!(ours.starts_with(&format!(".take.wav.{own}.")), "{ours}");
        let mut want = vec![
            format!(".other.wav.{dead}.xY12zW.tmp"),
            format!(".take.wav.{dead}.notes.txt"),
            format!(".take.wav.{own}.Qq34Rr.tmp"),
            ".take.wav.Zz99Yy.tmp".to_string(),
            ours,
        ];
        want.sort();
        // the dead process's and the day-old one gone; a running process's, a recent old-form
        // one, another target's and files of other names kept
        assert_eq!(names(dir.path()), want);
    }

    #[test]
    fn devices_are_never_targets() {
        assert!(check_target(Path::new("/dev/null"))
            .unwrap_err()
            .contains("not a regular file"));
        assert!(!check_target(Path::new("/nonexistent-granary-dir/x")).unwrap());
    }
}
