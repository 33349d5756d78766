//! The built `granary.clap` loaded, used and unloaded as a host does after a scan or when the
//! last instance is removed: the library is loaded, instances are created and processed on
//! spawned host threads and destroyed, the library is unloaded (its last handle is closed) while
//! one of those threads still runs, and then that thread exits. A thread-exit destructor that
//! the bundle left on the host thread would then jump into unmapped code and kill the host
//! (it did: std's `thread::current()` registers one, see `build.rs`). After that the bundle is
//! loaded again and must render the same samples.
//!
//! A crash kills the whole process, so the scenario runs in a child process (this test binary
//! re-run with `GRANARY_UNLOAD_CHILD` set), and the parent reports how it ended.
//!
//! `#[ignore]`d in a plain `cargo test` (there is no bundle there); `cargo xtask test` builds
//! the bundle and runs it with `--ignored` and `GRANARY_CLAP_BUNDLE` set (without the variable
//! it fails).

use crate::support::{first_non_finite, load_bundle, peak, Ev, Host, Ports, BUNDLE_ENV};
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;

/// Set in the child process that runs the scenario.
const CHILD_ENV: &str = "GRANARY_UNLOAD_CHILD";
/// Printed by the child when the scenario has run to its end.
const DONE: &str = "unload scenario complete";
const TEST_NAME: &str = "unload::unloading_the_bundle_before_its_host_thread_exits_is_safe";

const BLOCK: usize = 512;
const BLOCKS: usize = 100;

/// `BLOCKS` blocks of `BLOCK` frames from a new instance, a note at the start; returns the
/// main output's left channel.
fn render(host: &mut Host, round: usize) -> Vec<f32> {
    host.activate(48_000.0, BLOCK as u32);
    let mut main = Vec::with_capacity(BLOCK * BLOCKS);
    for b in 0..BLOCKS {
        let note = [(
            0,
            Ev::NoteOn {
                key: 60,
                channel: 0,
                velocity: 1.0,
            },
        )];
        let out = host.process(BLOCK, if b == 0 { &note } else { &[] }, Ports::All);
        if let Some((ch, i, x)) = first_non_finite(&out) {
            panic!("round {round}, block {b}: channel {ch}, frame {i}: {x}");
        }
        main.extend_from_slice(&out[0]);
    }
    host.deactivate();
    main
}

/// One load → use on two host threads → destroy → unload → thread exit; returns what the
/// second thread's instance rendered.
///
/// Two threads, as in a host where one thread made the first instance and another thread
/// makes and plays a second one: the first thread's instance starts nice-plug's shared
/// background thread, and a thread that spawns a thread from inside the library keeps the
/// library mapped while it lives (glibc counts its thread-local destructors), which would hide
/// the fault. The second thread, which only makes and plays an instance, is the one that
/// outlives the library.
fn one_round(path: &Path, round: usize) -> Vec<f32> {
    let entry = load_bundle(path);
    let (first_ready_tx, first_ready_rx) = mpsc::channel::<()>();
    let (first_close_tx, first_close_rx) = mpsc::channel::<()>();
    let first_entry = entry.clone();
    let first = std::thread::spawn(move || {
        let mut host = Host::new(first_entry);
        render(&mut host, round);
        first_ready_tx.send(()).unwrap();
        first_close_rx.recv().unwrap();
        drop(host);
    });
    first_ready_rx.recv().expect("the first host thread made its instance");

    let (rendered_tx, rendered_rx) = mpsc::channel();
    let (exit_tx, exit_rx) = mpsc::channel::<()>();
    let second_entry = entry.clone();
    let second = std::thread::spawn(move || {
        let mut host = Host::new(second_entry);
        let main = render(&mut host, round);
        // destroys the instance and drops this thread's handle on the entry
        drop(host);
        rendered_tx.send(main).unwrap();
        // stay alive until the library is unloaded, then exit: glibc runs the thread's
        // thread-specific-data destructors now
        exit_rx.recv().unwrap();
    });
    let main = rendered_rx.recv().expect("the second host thread rendered");
    first_close_tx.send(()).unwrap();
    first.join().expect("the first host thread");
    // the last handle: CLAP `deinit`, then the library is closed
    drop(entry);
    exit_tx.send(()).unwrap();
    second.join().expect("the second host thread");
    main
}

fn scenario(path: &Path) {
    let first = one_round(path, 1);
    assert!(
        peak(std::slice::from_ref(&first)) > 0.0,
        "the first round rendered silence"
    );
    // and a second time, as a host that reloads the bundle
    let second = one_round(path, 2);
    assert!(
        first == second,
        "the reloaded bundle rendered other samples than the first load"
    );
    // a thread that never called the bundle exits too, after all that
    std::thread::spawn(|| ()).join().unwrap();
}

#[test]
#[ignore = "needs the built bundle (GRANARY_CLAP_BUNDLE); cargo xtask test runs it"]
fn unloading_the_bundle_before_its_host_thread_exits_is_safe() {
    let path = match std::env::var_os(BUNDLE_ENV) {
        Some(p) if !p.is_empty() => p,
        _ => panic!("{BUNDLE_ENV} is not set: build the bundle and point it there (cargo xtask test does both)"),
    };
    if std::env::var_os(CHILD_ENV).is_some() {
        scenario(Path::new(&path));
        println!("{DONE}");
        return;
    }
    let exe = std::env::current_exe().expect("current_exe");
    let out = Command::new(exe)
        .args([TEST_NAME, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run the child process");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let how = describe(out.status);
    assert!(
        out.status.success() && stdout.contains(DONE),
        "the load/unload scenario ended badly: {how}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
}

/// How a process ended, naming the signal that killed it.
fn describe(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig} (11 is SIGSEGV: a thread-exit destructor in unloaded code)");
        }
    }
    status.to_string()
}
