//! Offline finite-element modal analysis of Granary's cups (thesis = seed 000, ch. 3).
//!
//! `mesh` builds quadratic tetrahedral meshes, `element` the element matrices, `solve`
//! assembles K and M and finds the lowest elastic modes, `cup` describes the parametric
//! cups and reduces their modes to what the runtime needs (`assets/cups/*.json`).

// Element and matrix code indexes rows and columns as the formulas do.
#![allow(clippy::needless_range_loop)]

pub mod cup;
pub mod element;
pub mod mesh;
pub mod solve;

pub use element::Material;
pub use mesh::Mesh;
pub use solve::{lowest_modes, EigenOptions, FemError, Modes, System};
