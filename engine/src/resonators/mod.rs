//! Stage 7, resonators: what the contact forces drive. The cup's modes (with their
//! nonlinear coupling) and diffuse field, the ground's radiation and the friction voices.

pub mod air;
pub mod body;
pub mod cup;
pub mod diffuse;
pub mod friction;
pub mod ground;
pub mod modal;
pub mod nonlinear;
pub mod plate;
pub mod sliding;
pub mod surface;
