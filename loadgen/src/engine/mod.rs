//! The engine: everything that runs load against masters, from one worker's cycle to a run
//! of all modes ([`runner`]), with its faults, its coordination across machines and the
//! checks it makes while running. It builds the result model ([`crate::model`]) and may hand
//! it to the readers beside it (renderers, merge, the exporter); none of them reaches up here.

pub mod checker;
pub mod config;
pub mod coordinator;
pub(crate) mod cpu;
pub mod faults;
pub mod history;
pub(crate) mod hooks;
pub(crate) mod keys;
pub mod locks;
pub(crate) mod mode;
pub(crate) mod pacing;
pub(crate) mod probe;
pub(crate) mod progress;
pub(crate) mod recorder;
pub(crate) mod runner;
pub mod storage;
pub(crate) mod target;
pub(crate) mod worker;
