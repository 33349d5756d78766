//! The engine's integration tests, one module a file, built as one test binary
//! (`cargo test -p granary-engine --test integration [MODULE::]`): one crate to compile and
//! link instead of one a file, which is most of the suite's build (docs/testing.md).

mod air;
mod bank;
mod collision;
mod cup;
mod engine;
mod friction;
mod gesture;
mod ground;
mod levels;
mod living;
mod logged;
mod metal;
mod plate;
mod quality;
mod shake;
mod shapes;
mod stream;
mod surface;
mod timing;

// The allocation checker: it aborts on an allocation inside an `assert_no_alloc` scope (with
// debug assertions: the test and bench profiles), and lets every other allocation through.
#[cfg(debug_assertions)]
#[global_allocator]
static ALLOCATOR: nice_assert_no_alloc::AllocDisabler = nice_assert_no_alloc::AllocDisabler;
