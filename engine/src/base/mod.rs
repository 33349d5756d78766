//! What every stage stands on: material data in SI units, the window/cell grid and the
//! collision record, and the numerics (fast approximations, SIMD kernels, denormal control).
//! Nothing here imports a stage.

pub mod fastmath;
pub mod ftz;
pub mod materials;
pub mod simd;
pub mod svf;
pub mod window;
