//! Stage 6, collision rendering: each collision's Hertz contact, both grains' acceleration
//! noise or shaped fields, the band-limited pulse kernels, and the batched fast path.

pub mod accel_noise;
pub(crate) mod batch;
pub mod collision;
pub mod contact;
pub mod kernels;
