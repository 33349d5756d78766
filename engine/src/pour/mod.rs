//! Stage 4, pour mechanics: where the grains are and how fast they arrive. The pour scene
//! (fill, heap, stream), the unsteady stream and the gestures (stir, shake, tilt,
//! avalanches), stepped once per window.

pub mod gesture;
pub mod scene;
pub mod stream;
