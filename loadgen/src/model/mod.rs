//! The result files' model: what `--json` writes and `merge` reads, one module per kind, and
//! [`document`] to tell them apart.

pub mod capacity;
pub mod document;
pub mod result;
pub mod sweep;
