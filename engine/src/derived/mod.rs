//! Stage 2, derived: what follows from the settings alone, computed when they change and
//! read every window after: the cup (its geometry, modes' data and force buses) and the
//! grains' shapes. See docs/architecture.md, "Derived once".

pub mod cups;
pub mod shape;
