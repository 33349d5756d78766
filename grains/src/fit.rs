//! Radial series fit (seed 001 eq. 20–25).
