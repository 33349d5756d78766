//! Stage 6, collision rendering: each collision's Hertz contact, both grains' acceleration
//! noise or shaped fields, the band-limited pulse kernels, and the batched fast path.

pub mod accel_noise;
pub(crate) mod batch;
pub mod collision;
pub mod contact;
pub mod foot;
pub mod kernels;
pub(crate) mod push;

use crate::base::window::WINDOW;

/// Collisions land this many samples after the window boundary that generates them: one
/// window, over which their rendering is spread (so no block carries a whole window's
/// collisions, whatever the host's block size), plus the band-limited pulses' leading taps.
/// (A collision's `time` counts from there: `collision::render_one`'s `origin`.)
pub const GENERATOR_LEAD: usize = WINDOW + kernels::HALF + 1;
