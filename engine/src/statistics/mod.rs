//! Stage 3, statistics: what the simulated pours measured, per cell: the databank of
//! collision statistics (speeds, angles, lifetimes) and logged contact files.

pub mod bank;
pub mod logged;
