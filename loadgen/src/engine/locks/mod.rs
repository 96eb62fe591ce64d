//! The lock algorithms the load generator can drive: Redlock (the product, through
//! `redlock_core`) and three single-master baselines written from the Redis documentation's
//! lock patterns, so their cost and their failure modes can be measured next to Redlock's.
//!
//! The baselines live here, in the load generator only: they are yardsticks, not products.
//!
//! - `single`: `SET key token NX PX ttl` on one master, released by a Lua compare-and-delete.
//! - `setnx-expire`: `SETNX key value`, then `EXPIRE key ttl` (two round trips, no token),
//!   released by `DEL`.
//! - `setnx-getset`: `SETNX key <now + ttl + 1>` (the value is the expiry time, on the
//!   client's clock, in ms); on failure `GET`, and when that time has passed `GETSET` and
//!   compare; released by `DEL` only when the client's clock says the lock has not expired.
//!
//! Instrumentation, not algorithm: the legacy releases are sent as `GETDEL`, which deletes
//! exactly as `DEL` does and also returns the value it deleted, so the generator can count
//! releases that removed *someone else's* lock. The value written by `setnx-expire` is unique
//! per acquire for the same reason (the algorithm never reads it).

pub mod baseline;
pub mod master;
pub(crate) mod setup;

pub use crate::model::lock::{LockAlgorithm, LockList};
