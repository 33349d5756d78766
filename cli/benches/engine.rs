//! `cargo bench --profile release -p granary-cli`: the same cases and figures as `granary bench`
//! (GRANARY_BENCH_SECONDS sets the audio seconds per case, default 3; GRANARY_BENCH_CASE runs
//! one case). A plain `cargo bench` uses cargo's bench profile, which is the test suite's build
//! with debug assertions in Granary's crates (Cargo.toml): it says so before its figures.

fn main() {
    if cfg!(debug_assertions) {
        eprintln!(
            "note: built with debug assertions and overflow checks (cargo's bench profile is the \
             test suite's build); for the products' speed: cargo bench --profile release -p granary-cli"
        );
    }
    let seconds: f64 = std::env::var("GRANARY_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|s: &f64| s.is_finite() && *s > 0.0)
        .unwrap_or(3.0);
    let only = std::env::var("GRANARY_BENCH_CASE").ok();
    println!("{}", granary_cli::bench::machine());
    let mut figures = Vec::new();
    for case in granary_cli::bench::cases() {
        if only.as_ref().is_some_and(|o| *o != case.name) {
            continue;
        }
        figures.push(granary_cli::bench::run(&case, seconds));
    }
    print!("{}", granary_cli::bench::table(&figures));
    for (what, slope) in granary_cli::bench::slopes(&figures) {
        println!("cost against {what}: log-log slope {slope:.2} (1 = linear)");
    }
}
