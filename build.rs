//! Links the plugin library (`granary.clap`, and the `.so` inside `granary.vst3`) so that it
//! stays in memory once loaded (`-z nodelete`: the host's `dlclose` leaves it mapped).
//!
//! Why: the first `std::thread::current()` on a thread (nice-plug calls it when it makes an
//! instance, to know the main thread, and std calls it when a thread blocks on a channel or
//! panics) registers Rust std's thread-exit destructor with `pthread_key_create`, and that
//! destructor's code lives in this library. glibc calls it when the thread exits. A host that
//! calls into the plugin from a thread, unloads the library, and then lets the thread exit
//! would jump into unmapped code (SIGSEGV in `__nptl_deallocate_tsd`). Rust's own
//! `thread_local!` destructors are registered with `__cxa_thread_atexit_impl`, which keeps the
//! library loaded while they are pending, but the pthread key has no such guard, and any
//! dependency (or std itself) may call `thread::current()`: no edit of nice-plug can rule it
//! out. Keeping the library resident is what other plugin frameworks do; a host that loads
//! the bundle again gets the same copy, on which CLAP `init` runs again (`tests/unload.rs`).

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // `-z nodelete` is an ELF linker flag (GNU ld, lld); Granary is built and tested on Linux.
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly"
    ) {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
