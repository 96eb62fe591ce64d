//! The engine: everything that runs load against masters, from one worker's cycle to a run
//! of all modes ([`runner`]), with its faults, its coordination across machines and the
//! checks it makes while running. It builds the result model ([`crate::model`]) and may hand
//! it to the readers beside it (renderers, merge, the exporter); none of them reaches up here.

pub mod checker;
pub mod config;
pub mod coordinator;
pub mod cpu;
pub mod faults;
pub mod hooks;
pub mod keys;
pub mod locks;
pub mod pacing;
pub mod probe;
pub mod progress;
pub mod recorder;
pub mod runner;
pub mod storage;
pub mod target;
pub mod worker;
