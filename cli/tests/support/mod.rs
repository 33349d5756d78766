//! What the command-line tests share: running the built `granary` as a user does, and
//! reading what it printed and wrote. Each test file uses its own part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs the built `granary` with `args` and waits for it.
pub fn granary(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_granary"))
        .args(args)
        .output()
        .expect("granary runs")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The names in `dir`, sorted (hidden temporaries included).
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A path as the `&str` a command line takes.
pub fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The audio of a WAV file (or the bytes of any other file), for comparing renders bit for
/// bit: the samples' bits, read by hound, without the metadata that differs between two
/// renders of the same take (the `bext` date, time and reference; the iXML's file name).
pub fn audio(p: &Path) -> Vec<u32> {
    if p.extension().is_some_and(|e| e == "wav") {
        let r = hound::WavReader::open(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        r.into_samples::<f32>().map(|s| s.unwrap().to_bits()).collect()
    } else {
        std::fs::read(p).unwrap().into_iter().map(u32::from).collect()
    }
}
