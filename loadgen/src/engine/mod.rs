//! The engine: one run of one configuration against one target, from one worker's cycle to
//! the run of its modes ([`runner`]), with the faults it injects as hooks and the checks it
//! makes while running. It builds the result model ([`crate::model`]) and feeds the live
//! exporter; what composes runs (turns, fault scenarios, the capacity search, agents) is
//! `crate::plans`, above it, and neither renderers nor merge are called from here.

pub mod checker;
pub mod config;
pub(crate) mod cpu;
pub mod faults;
pub mod history;
pub(crate) mod hooks;
pub(crate) mod keys;
pub mod locks;
pub(crate) mod mode;
pub mod network;
pub(crate) mod pacing;
pub(crate) mod probe;
pub(crate) mod progress;
pub(crate) mod recorder;
pub(crate) mod runner;
pub mod schedule;
pub mod storage;
pub(crate) mod target;
pub(crate) mod worker;
