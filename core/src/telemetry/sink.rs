//! A client's measurements for a binding's own metrics (the Python extension records them
//! through Python's OpenTelemetry API): the same facts the `otel` feature records, as plain
//! values, with no resource name, token or address in them.

#[cfg(feature = "otel")]
use std::sync::Arc;

use super::vocabulary::{AcquireOutcome, AttemptResult};

/// One measurement of a client (the book's design page, `docs/src/design.md`, names the
/// instruments it feeds under "observability").
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Measurement {
    /// An acquire ended: `redlock.acquire.duration` with `redlock.outcome`.
    Acquire {
        /// `redlock.outcome`.
        outcome: AcquireOutcome,
        /// Every attempt and wait of the acquire.
        seconds: f64,
    },
    /// An acquire attempt's vote is in: `redlock.attempts` with `redlock.attempt.result`.
    Attempt {
        /// `redlock.attempt.result`.
        result: AttemptResult,
    },
    /// An extend ended: `redlock.extend.duration`.
    Extend {
        /// Its duration.
        seconds: f64,
    },
    /// A release ended: `redlock.release.duration`.
    Release {
        /// Its duration.
        seconds: f64,
    },
    /// `redlock.locks.held` changes by `delta` (+1 acquired, −1 released).
    LocksHeld {
        /// The change.
        delta: i64,
    },
    /// A held lock was found lost: `redlock.locks.lost`.
    LockLost,
    /// One request to a master: `db.client.operation.duration`, and with `error_type`
    /// `redlock.master.failures`.
    Request {
        /// The master's position in the configured list.
        master: usize,
        /// `db.operation.name`: `SET` (acquire) or `EVALSHA` (extend, release).
        operation: &'static str,
        /// Its round trip (for a timed-out request: the round's duration).
        seconds: f64,
        /// `error.type` when it failed (`connection`, `server`, `protocol`, `auth`, `tls`,
        /// `overloaded`, `other`, `timeout`).
        error_type: Option<&'static str>,
    },
}

impl Measurement {
    /// True for the measurement that ends an operation (acquire, extend, release) or
    /// reports a lost lock: a sink that batches may flush then.
    pub fn ends_operation(&self) -> bool {
        matches!(
            self,
            Measurement::Acquire { .. }
                | Measurement::Extend { .. }
                | Measurement::Release { .. }
                | Measurement::LockLost
        )
    }
}

/// Receives every [`Measurement`] of a client built with
/// [`crate::RedlockBuilder::metrics_sink`]. Called on the thread that made the measurement
/// (a runtime worker or a blocked caller), inside the operation: keep it short.
pub trait MetricsSink: Send + Sync {
    /// Takes one measurement.
    fn record(&self, measurement: Measurement);
}

/// Two sinks fed the same measurements (the `otel` feature's instruments and a binding's).
#[cfg(feature = "otel")]
pub(crate) struct Both(pub Arc<dyn MetricsSink>, pub Arc<dyn MetricsSink>);

#[cfg(feature = "otel")]
impl MetricsSink for Both {
    fn record(&self, measurement: Measurement) {
        self.0.record(measurement);
        self.1.record(measurement);
    }
}
