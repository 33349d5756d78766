//! Stage 8, mix: the stems' gains and the look-ahead limiter on the main output.

pub mod limiter;
