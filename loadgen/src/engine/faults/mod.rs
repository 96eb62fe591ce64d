//! Faults the engine injects while one run goes on: master faults (`run --fault`) and client
//! faults (`run --client-fault`). What combines them into runs and judges them (one run with
//! a schedule, the `scenarios` matrix) is a plan: `crate::plans::faults`.
//!
//! - [`master`]: the `KIND:WHO[:ARG]@WHEN` specs (their schedule, which applies them during
//!   a run, is `crate::engine::schedule`), and [`words`]: a schedule as an answer names it;
//! - [`client`]: faults of the load clients themselves (a holder that crashes, a skewed clock):
//!   parsed, resolved for a run, and carried by each worker.
//!
//! The fault proxy itself is `redlock_local::proxy` (tests use it too).

pub mod client;
pub mod master;
pub mod words;
