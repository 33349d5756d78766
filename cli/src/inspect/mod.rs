//! Physics you can check: the quantities the engine computes, for one collision or one
//! table of the seeds, as numbers, JSON and plots (`granary inspect`).

pub mod bank;
pub mod cli;
pub mod contact;
pub mod contacts;
pub mod cup;
pub mod friction;
pub mod grain;
pub mod ground;
pub mod plot;
pub mod table;
