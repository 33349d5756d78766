//! The `granary` command line (`src/main.rs`): offline renders and batches of takes
//! (`vary`), the comparison of two renders (`compare`), inspection of the physics against the
//! seeds' published figures, presets, and the engine benchmark. Everything here drives the
//! `granary-engine` crate; nothing links the plugin.

pub mod bench;
pub mod bwf;
pub mod compare;
pub mod contacts;
pub mod inspect;
pub mod levels;
pub mod library;
pub mod output;
pub mod render;
pub mod spectrogram;
pub mod vary;
