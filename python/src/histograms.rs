//! Exact duration histograms aggregated in Rust: the bucket counts and sum of one series,
//! with the buckets every surface uses ([`DURATION_BUCKETS_S`]). A tally made for a
//! `redlock_rs.prometheus.RedlockCollector` keeps these instead of handing each value to
//! Python: recording is a few relaxed atomic operations, no lock (the 16 threads of a busy
//! client record into the same series), and a collection reads the counts
//! (`Tally.histograms`).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use redlock_core::{AcquireOutcome, Measurement, DURATION_BUCKETS_S};

/// Buckets of a histogram: one per upper bound, and the last for values above every bound.
pub(crate) const BUCKETS: usize = DURATION_BUCKETS_S.len() + 1;

/// One series' bucket counts (not cumulative) and sum of values, in seconds.
#[derive(Debug, Default)]
pub(crate) struct Aggregate {
    counts: [AtomicU64; BUCKETS],
    /// The sum's `f64` bits (added with a compare-and-swap: no atomic float add).
    sum_bits: AtomicU64,
}

impl Aggregate {
    /// Counts `seconds` in the first bucket whose upper bound is at least it (a value equal
    /// to a bound belongs to that bound's bucket: Prometheus's `le`, OpenTelemetry's
    /// explicit buckets).
    pub(crate) fn record(&self, seconds: f64) {
        self.counts[bucket_of(seconds)].fetch_add(1, Relaxed);
        let _ = self.sum_bits.fetch_update(Relaxed, Relaxed, |bits| {
            Some((f64::from_bits(bits) + seconds).to_bits())
        });
    }

    /// The counts per bucket and the sum, as they are now (each read once: a value recorded
    /// meanwhile may be in the counts and not yet in the sum).
    pub(crate) fn snapshot(&self) -> ([u64; BUCKETS], f64) {
        let counts = std::array::from_fn(|i| self.counts[i].load(Relaxed));
        (counts, f64::from_bits(self.sum_bits.load(Relaxed)))
    }
}

/// Every `db.operation.name` the core reports for a request.
const OPERATIONS: [&str; 4] = ["SET", "EVALSHA", "DELIFEQ", "DELEX"];

/// One client's handles on the series it records most (every acquire outcome, extend, release,
/// each master's answered requests by command), taken once when the client is created: a
/// measurement then finds its series by index, without hashing or the tally's lock.
pub(crate) struct Direct {
    /// By [`AcquireOutcome::index`].
    acquire: [Arc<Aggregate>; AcquireOutcome::ALL.len()],
    extend: Arc<Aggregate>,
    release: Arc<Aggregate>,
    /// By master (configured order), then by [`OPERATIONS`]: answered requests.
    requests: Vec<[Arc<Aggregate>; OPERATIONS.len()]>,
}

impl Direct {
    /// `series_of` gives the tally's series (made on first use); `servers`: each master's
    /// server id there, in configured order.
    pub(crate) fn new(
        series_of: impl Fn(Series) -> Arc<Aggregate>,
        servers: &[usize],
        fanout: &'static str,
    ) -> Self {
        Direct {
            acquire: AcquireOutcome::ALL
                .map(|outcome| series_of(Series::Acquire { outcome, fanout })),
            extend: series_of(Series::Extend),
            release: series_of(Series::Release),
            requests: servers
                .iter()
                .map(|&server| {
                    OPERATIONS.map(|operation| {
                        series_of(Series::Request {
                            server,
                            operation,
                            error_type: None,
                        })
                    })
                })
                .collect(),
        }
    }

    /// Records a duration of one of its series; false for any other measurement (a failed
    /// request, which also counts a failure; a command or master it does not know).
    pub(crate) fn record(&self, measurement: Measurement) -> bool {
        let (aggregate, seconds) = match measurement {
            Measurement::Acquire { outcome, seconds } => (&self.acquire[outcome.index()], seconds),
            Measurement::Extend { seconds } => (&self.extend, seconds),
            Measurement::Release { seconds } => (&self.release, seconds),
            Measurement::Request {
                master,
                operation,
                seconds,
                error_type: None,
            } => {
                let known = OPERATIONS.iter().position(|&name| name == operation);
                match (self.requests.get(master), known) {
                    (Some(by_operation), Some(index)) => (&by_operation[index], seconds),
                    _ => return false,
                }
            }
            _ => return false,
        };
        aggregate.record(seconds);
        true
    }
}

/// The bucket of `seconds` (NaN, never measured, lands in the first).
fn bucket_of(seconds: f64) -> usize {
    DURATION_BUCKETS_S.partition_point(|&bound| bound < seconds)
}

/// Which histogram a value goes to, with its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Series {
    Acquire {
        outcome: AcquireOutcome,
        fanout: &'static str,
    },
    Extend,
    Release,
    Request {
        /// The master's server attributes (`Tally::add_server`).
        server: usize,
        operation: &'static str,
        error_type: Option<&'static str>,
    },
}

impl Series {
    /// Position of its histogram in `Tally::histograms`.
    pub(crate) fn histogram(self) -> usize {
        match self {
            Series::Acquire { .. } => 0,
            Series::Extend => 1,
            Series::Release => 2,
            Series::Request { .. } => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_on_a_bound_belongs_to_that_bound() {
        for (i, &bound) in DURATION_BUCKETS_S.iter().enumerate() {
            assert_eq!(bucket_of(bound), i, "{bound}");
            assert_eq!(bucket_of(bound * 1.000_001), i + 1, "{bound}");
        }
        assert_eq!(bucket_of(0.0), 0);
        assert_eq!(bucket_of(1e9), BUCKETS - 1);
    }

    #[test]
    fn threads_recording_at_once_lose_no_count_and_no_sum() {
        let aggregate = Aggregate::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        aggregate.record(0.0003);
                        aggregate.record(20.0);
                    }
                });
            }
        });
        let (counts, sum) = aggregate.snapshot();
        assert_eq!(counts.iter().sum::<u64>(), 80_000);
        assert_eq!(counts[2], 40_000);
        assert_eq!(counts[BUCKETS - 1], 40_000);
        assert!((sum - 40_000.0 * 20.0003).abs() < 1e-6, "{sum}");
    }
}
