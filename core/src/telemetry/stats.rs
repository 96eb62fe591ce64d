//! [`ClientStats`]: a [`MetricsSink`] that keeps a client's figures in memory since it was
//! built (the counters of the metrics instruments and the acquire latency's distribution),
//! for a binding that hands out snapshots instead of exporting metrics (the C surface's
//! `redlock_client_stats`).
//!
//! Every thread that uses the client records here, inside its operations: only relaxed atomic
//! adds, no lock and no allocation. A snapshot reads each atomic once, so one taken while
//! operations are in flight may count an attempt whose acquire has not ended yet.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

use super::latency::{LatencyHistogram, LatencySnapshot};
use super::sink::{Measurement, MetricsSink};
use super::vocabulary::{AcquireOutcome, AttemptResult};

/// Collects a client's measurements; install it with
/// [`crate::RedlockBuilder::metrics_sink`] and read it with [`ClientStats::snapshot`].
#[derive(Debug)]
pub struct ClientStats {
    /// By [`AcquireOutcome::index`].
    acquires: [AtomicU64; AcquireOutcome::ALL.len()],
    /// By [`AttemptResult::index`].
    attempts: [AtomicU64; AttemptResult::ALL.len()],
    extends: AtomicU64,
    releases: AtomicU64,
    locks_held: AtomicI64,
    locks_lost: AtomicU64,
    /// Per master, in configured order; the totals are their sums.
    masters: Box<[MasterCounters]>,
    acquire_latency: LatencyHistogram,
}

#[derive(Debug, Default)]
struct MasterCounters {
    requests: AtomicU64,
    failures: AtomicU64,
}

impl ClientStats {
    /// Empty figures for a client of `n_masters` masters.
    pub fn new(n_masters: usize) -> Self {
        ClientStats {
            acquires: Default::default(),
            attempts: Default::default(),
            extends: AtomicU64::new(0),
            releases: AtomicU64::new(0),
            locks_held: AtomicI64::new(0),
            locks_lost: AtomicU64::new(0),
            masters: (0..n_masters).map(|_| MasterCounters::default()).collect(),
            acquire_latency: LatencyHistogram::new(),
        }
    }

    /// The figures as they are now.
    pub fn snapshot(&self) -> StatsSnapshot {
        let [acquired, not_acquired, unavailable, cancelled, error] = load_all(&self.acquires);
        let [won, split, clean_loss, expired, unavailable_attempts] = load_all(&self.attempts);
        StatsSnapshot {
            acquires: AcquireCounts {
                acquired,
                not_acquired,
                unavailable,
                cancelled,
                error,
            },
            attempts: AttemptCounts {
                won,
                split,
                clean_loss,
                expired,
                unavailable: unavailable_attempts,
            },
            extends: self.extends.load(Relaxed),
            releases: self.releases.load(Relaxed),
            locks_held: self.locks_held.load(Relaxed),
            locks_lost: self.locks_lost.load(Relaxed),
            masters: self
                .masters
                .iter()
                .map(|m| MasterCounts {
                    requests: m.requests.load(Relaxed),
                    failures: m.failures.load(Relaxed),
                })
                .collect(),
            acquire_latency: self.acquire_latency.snapshot(),
        }
    }
}

fn load_all<const N: usize>(counters: &[AtomicU64; N]) -> [u64; N] {
    std::array::from_fn(|i| counters[i].load(Relaxed))
}

impl MetricsSink for ClientStats {
    fn record(&self, measurement: Measurement) {
        match measurement {
            Measurement::Acquire { outcome, seconds } => {
                self.acquires[outcome.index()].fetch_add(1, Relaxed);
                self.acquire_latency.record_seconds(seconds);
            }
            Measurement::Attempt { result } => {
                self.attempts[result.index()].fetch_add(1, Relaxed);
            }
            Measurement::Extend { .. } => {
                self.extends.fetch_add(1, Relaxed);
            }
            Measurement::Release { .. } => {
                self.releases.fetch_add(1, Relaxed);
            }
            Measurement::LocksHeld { delta } => {
                self.locks_held.fetch_add(delta, Relaxed);
            }
            Measurement::LockLost => {
                self.locks_lost.fetch_add(1, Relaxed);
            }
            Measurement::Request {
                master, error_type, ..
            } => {
                if let Some(m) = self.masters.get(master) {
                    m.requests.fetch_add(1, Relaxed);
                    if error_type.is_some() {
                        m.failures.fetch_add(1, Relaxed);
                    }
                }
            }
        }
    }
}

/// Acquire calls by how they ended (`redlock.outcome`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AcquireCounts {
    /// Returned a lock.
    pub acquired: u64,
    /// Lost to contention.
    pub not_acquired: u64,
    /// Too few masters answered.
    pub unavailable: u64,
    /// Cancelled by the caller.
    pub cancelled: u64,
    /// Any other error (an invalid argument, an internal error).
    pub error: u64,
}

/// Acquire attempts by how each ended (`redlock.attempt.result`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AttemptCounts {
    /// Won the quorum with validity left.
    pub won: u64,
    /// Split vote.
    pub split: u64,
    /// Clean loss.
    pub clean_loss: u64,
    /// Won the quorum, but the validity ran out.
    pub expired: u64,
    /// Failures and timeouts alone kept the quorum out of reach.
    pub unavailable: u64,
}

/// Requests to one master (`db.client.operation.duration` and `redlock.master.failures`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MasterCounts {
    /// Requests answered, failed or timed out (not those a concurrent round did not wait
    /// for).
    pub requests: u64,
    /// Of these, the ones that failed or timed out.
    pub failures: u64,
}

/// A client's figures since it was built ([`ClientStats::snapshot`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StatsSnapshot {
    /// Acquire calls by outcome.
    pub acquires: AcquireCounts,
    /// Acquire attempts by result.
    pub attempts: AttemptCounts,
    /// Extends that asked the masters (extended, lost or unavailable).
    pub extends: u64,
    /// Releases.
    pub releases: u64,
    /// Locks acquired and not released (`redlock.locks.held`: a lock dropped without a
    /// release stays counted).
    pub locks_held: i64,
    /// Held locks found lost.
    pub locks_lost: u64,
    /// Per master, in configured order.
    pub masters: Vec<MasterCounts>,
    /// The whole acquire call's duration, every outcome.
    pub acquire_latency: LatencySnapshot,
}

impl StatsSnapshot {
    /// Requests to every master.
    pub fn master_requests(&self) -> u64 {
        self.masters.iter().map(|m| m.requests).sum()
    }

    /// Failed or timed-out requests to every master.
    pub fn master_failures(&self) -> u64 {
        self.masters.iter().map(|m| m.failures).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Threads recording at once lose no count.
    #[test]
    fn concurrent_records_are_all_counted() {
        let stats = ClientStats::new(2);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let stats = &stats;
                s.spawn(move || {
                    for i in 0..10_000u64 {
                        stats.record(Measurement::Acquire {
                            outcome: AcquireOutcome::Acquired,
                            seconds: (t * 10_000 + i) as f64 * 1e-6,
                        });
                        stats.record(Measurement::LocksHeld { delta: 1 });
                        stats.record(Measurement::Request {
                            master: (i % 2) as usize,
                            operation: "SET",
                            seconds: 0.0,
                            error_type: (i % 4 == 0).then_some("timeout"),
                        });
                    }
                });
            }
        });
        let snapshot = stats.snapshot();
        assert_eq!(snapshot.acquires.acquired, 40_000);
        assert_eq!(snapshot.acquire_latency.count(), 40_000);
        assert_eq!(snapshot.locks_held, 40_000);
        assert_eq!(snapshot.master_requests(), 40_000);
        assert_eq!(snapshot.master_failures(), 10_000);
        assert_eq!(snapshot.masters[0].failures, 10_000);
        assert_eq!(
            snapshot.acquire_latency.max(),
            Some(Duration::from_micros(39_999))
        );
    }

    #[test]
    fn every_measurement_lands_in_its_counter() {
        let stats = ClientStats::new(1);
        for outcome in AcquireOutcome::ALL {
            stats.record(Measurement::Acquire {
                outcome,
                seconds: 0.001,
            });
        }
        for result in AttemptResult::ALL {
            stats.record(Measurement::Attempt { result });
        }
        stats.record(Measurement::Extend { seconds: 0.0 });
        stats.record(Measurement::Release { seconds: 0.0 });
        stats.record(Measurement::LocksHeld { delta: -1 });
        stats.record(Measurement::LockLost);
        // A master the client does not have is not counted (and does not panic).
        stats.record(Measurement::Request {
            master: 5,
            operation: "SET",
            seconds: 0.0,
            error_type: None,
        });
        let s = stats.snapshot();
        let a = s.acquires;
        assert_eq!(
            (
                a.acquired,
                a.not_acquired,
                a.unavailable,
                a.cancelled,
                a.error
            ),
            (1, 1, 1, 1, 1)
        );
        let t = s.attempts;
        assert_eq!(
            (t.won, t.split, t.clean_loss, t.expired, t.unavailable),
            (1, 1, 1, 1, 1)
        );
        assert_eq!(
            (s.extends, s.releases, s.locks_held, s.locks_lost),
            (1, 1, -1, 1)
        );
        assert_eq!((s.master_requests(), s.acquire_latency.count()), (0, 5));
        assert_eq!(
            s.acquire_latency.quantile(0.5),
            Some(Duration::from_millis(1))
        );
    }
}
