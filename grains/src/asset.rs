//! Asset files.
