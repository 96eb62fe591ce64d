//! Faults while the load runs, all from here: master faults (`run --fault`), client faults
//! (`run --client-fault`) and the `scenarios` matrix that combines them.
//!
//! - [`master`]: the `KIND:WHO[:ARG]@WHEN` specs, and their schedule as the runner's
//!   [`RunHooks`](crate::engine::runner::RunHooks), which kills, pauses and restarts local masters,
//!   drives the fault proxies and logs each step;
//! - [`client`]: faults of the load clients themselves (a holder that crashes, a skewed clock):
//!   parsed, resolved for a run, and carried by each worker;
//! - [`run`]: one run with a schedule, and the check that no lock key outlives its TTL;
//! - [`scenarios`]: the fixed matrix with its expectations (negative controls included); its
//!   table is [`crate::render::scenarios`], its command [`crate::commands::scenarios`].
//!
//! The fault proxy itself is `redlock_local::proxy` (tests use it too). Mutual exclusion is
//! judged by the load generator's own checker ([`crate::engine::checker`]) from the same ownership
//! windows as any other run: the scenarios add no second checker.

pub mod client;
pub mod master;
pub(crate) mod run;
pub mod scenarios;
pub mod verdict;

pub use master::{FaultEvent, FaultSchedule, FaultSpec};
