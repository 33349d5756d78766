//! The plugin's integration tests, one module a file, built as one test binary
//! (`cargo test -p granary --features assert_process_allocs --test integration [MODULE::]`):
//! one crate to compile and link instead of one a file (docs/testing.md).

mod support;

mod clap_bundle;
mod clap_plugin;
mod daw;
mod fuzz;
mod realtime;
mod unload;
mod vst3_layout;

// The allocation checker, where nice-plug's `assert_process_allocs` does not install it: it
// aborts on an allocation inside an `assert_no_alloc` scope (with debug assertions) and lets
// every other allocation through.
#[cfg(all(debug_assertions, not(feature = "assert_process_allocs")))]
#[global_allocator]
static ALLOCATOR: nice_assert_no_alloc::AllocDisabler = nice_assert_no_alloc::AllocDisabler;
