//! Redlock: a distributed lock over N independent Redis masters.
//!
//! A lock is won when a quorum (N/2+1 by default) of masters accept `SET key token NX PX ttl`
//! and validity (`ttl − elapsed − drift`) is still positive; it is released with a Lua
//! compare-and-delete. Every operation reports its [`Vote`]: what each master answered and how
//! long it took.
//!
//! ```no_run
//! use std::time::Duration;
//! use redlock_core::{FanOut, Redlock};
//!
//! # async fn demo() -> Result<(), redlock_core::Error> {
//! let redlock = Redlock::builder(["redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003"])
//!     .fanout(FanOut::Concurrent)
//!     .build()?;
//! let lock = redlock.acquire("orders:42", Duration::from_secs(10)).await?;
//! // ... act as the owner while lock.is_valid() ...
//! redlock.release(&lock).await?;
//! # Ok(()) }
//! ```
//!
//! From synchronous code use [`blocking::Redlock`] (same operations).

mod answer;
mod argument;
mod client;
mod collector;
mod config;
mod error;
mod fanout;
mod handoff;
mod lock;
mod master;
pub mod quorum;
mod redact;
mod telemetry;
pub mod validity;
mod vote;
mod watchdog;

pub mod blocking;

pub use argument::{
    deadline_after, shown_text, ArgValue, DurationUnit, InvalidArgument, Surface, MAX_SHOWN_CHARS,
};
pub use client::{Redlock, Retry, MAX_ROUNDS_IN_FLIGHT};
pub use config::{
    check_master_url, check_resource, duration_from_secs, FanOut, RedlockBuilder, Settings,
    DEFAULT_DRIFT_FACTOR, DEFAULT_FANOUT, DEFAULT_INSTANCE_TIMEOUT, DEFAULT_MAX_EXTENSIONS,
    DEFAULT_RETRY_COUNT, DEFAULT_RETRY_DELAY, DEFAULT_TTL, MAX_RESOURCE_BYTES,
};
pub use error::{Error, ErrorKind, LostReason, Result};
pub use lock::Lock;
pub use master::{counter_key as fencing_counter_key, MAX_FENCING_TOKEN};
pub use master::{ExtendCommand, MasterServer, NativeRefusal, ReleaseCommand};
pub use redact::{redact_url, redact_url_bytes};
pub use telemetry::{
    AcquireCounts, AcquireOutcome, AttemptCounts, AttemptResult, ClientStats, LatencyHistogram,
    LatencySnapshot, MasterCounts, MasterWarnings, Measurement, MetricsSink, StatsSnapshot,
    DURATION_BUCKETS_S, ERROR_TYPES, MASTER_WARNING_INTERVAL,
};
pub use vote::{FailureKind, MasterVote, Outcome, Verdict, Vote};
pub use watchdog::AutoExtend;

/// Compiles the repository README's Rust example as a doc test, so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Compiles this crate's README (its crates.io page) as a doc test too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
