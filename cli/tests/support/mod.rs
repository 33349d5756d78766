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
