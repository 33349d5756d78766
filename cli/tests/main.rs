//! The command line's integration tests, one module a file, built as one test binary
//! (`cargo test -p granary-cli --test integration [MODULE::]`): one crate to compile and link
//! instead of one a file (docs/testing.md).

mod support;

mod bank;
mod cli;
mod compare;
mod contacts;
mod cups;
mod files;
mod friction;
mod gestures;
mod ground;
mod library;
mod perf;
mod physics;
mod quality;
mod spectrogram;
mod transparency;
mod vary;
