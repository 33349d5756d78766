//! Stage 1, control: the parameter table, the settings it resolves to, the choices a sound
//! designer makes, events (notes, injected collisions) and presets. Nothing here allocates
//! in the audio thread; everything later reads `Settings`.

pub mod choices;
pub mod events;
pub mod params;
pub mod performance;
pub mod preset;
pub mod settings;
