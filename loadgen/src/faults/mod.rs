//! Faults while the load runs: `run --fault SPEC` and the `scenarios` matrix.
//!
//! - [`spec`]: the `KIND:WHO[:ARG]@WHEN` specs and their parser;
//! - [`schedule`]: the schedule as the runner's [`RunHooks`](crate::runner::RunHooks), which
//!   kills, pauses and restarts local masters, drives the fault proxies and logs each step;
//! - [`run`]: one run with a schedule, and the check that no lock key outlives its TTL;
//! - [`scenarios`]: the fixed matrix with its expectations (negative controls included); its
//!   table is [`crate::render::scenarios`], its command [`crate::commands::scenarios`].
//!
//! Mutual exclusion is judged by the load generator's own checker ([`crate::checker`]) from
//! the same ownership windows as any other run: the scenarios add no second checker.

pub mod run;
pub mod scenarios;
pub mod schedule;
pub mod spec;

pub use schedule::{FaultEvent, FaultSchedule};
pub use spec::FaultSpec;
