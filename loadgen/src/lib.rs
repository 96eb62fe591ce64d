//! `redlock-loadgen`: contended Redlock load across N masters.
//!
//! Workers drive [`redlock_core::Redlock`] through its public API and read every attempt's
//! [`redlock_core::Vote`] (via `acquire_observed`); each worker records into its own
//! histograms and counters, merged when the run ends. The report covers goodput, quorum
//! success, split votes, per-master round trips and a mutual-exclusion check, for sequential
//! and concurrent fan-out side by side.

// Module docs link into the crate-internal modules (the engine's parts, renderers, commands):
// they are written for contributors (`cargo doc --document-private-items` renders them).
#![allow(rustdoc::private_intra_doc_links)]

pub mod app;
// Doc comments in `cli` are clap's help text (`[user:password@]`, `zipf[:EXPONENT]`), not
// rustdoc links.
#[allow(rustdoc::broken_intra_doc_links)]
pub mod cli;
pub(crate) mod commands;
pub mod engine;
pub mod error;
pub mod exporter;
pub mod hist;
pub(crate) mod merge;
pub mod model;
pub mod plans;
pub mod render;
pub mod signals;
