//! Offline precomputed acceleration noise of Granary's grain shapes (seed 001, Chadwick,
//! Zheng & James, *Precomputed Acceleration Noise*, §4).
//!
//! `shape` describes the grains (inside test, normal, mass properties), `fdtd` solves linear
//! acoustics around a grain accelerated by the pulse `pulse::psi` in one of its six rigid-body
//! degrees of freedom, `reference` holds the closed forms the solver is checked against (the
//! rigid sphere, Lamb's ellipsoid), `fit` reduces the pressure at a few radii to the radial
//! series of eq. 20–25, and `asset` writes and reads the compact files in `assets/grains/`.
//! See docs/grains.md.

// Grid code indexes cells and faces as the difference formulas do.
#![allow(clippy::needless_range_loop)]

pub mod asset;
pub mod fdtd;
pub mod fit;
pub mod moments;
pub mod plots;
pub mod pulse;
pub mod reference;
pub mod shape;

/// Density of air, kg/m^3: the engine's `AIR_DENSITY` (engine/src/base/materials.rs), copied so this
/// offline crate does not depend on the engine. (Air at 20 °C and 101.325 kPa is 1.2041 kg/m^3;
/// the engine rounds it to 1.204, and the assets must agree with the engine.)
pub const AIR_DENSITY: f64 = 1.204;

/// Speed of sound in air, m/s: the engine's `SPEED_OF_SOUND` (engine/src/base/materials.rs).
pub const SPEED_OF_SOUND: f64 = 343.2;
