//! Runs under faults, composed from the engine's fault hooks (`crate::engine::faults`):
//!
//! - [`run`]: one run with a schedule, and the check that no lock key outlives its TTL;
//! - [`scenarios`]: the fixed matrix with its expectations (negative controls included);
//!   its table is `crate::render::scenarios`, its command `crate::commands::scenarios`;
//! - [`verdict`]: what each scenario expects and how a run is judged against it.
//!
//! Mutual exclusion is judged by the load generator's own checker
//! ([`crate::engine::checker`]) from the same ownership windows as any other run: the
//! scenarios add no second checker.

pub(crate) mod run;
pub mod scenarios;
pub mod verdict;
