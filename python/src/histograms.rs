//! Exact duration histograms aggregated in Rust: the bucket counts and sum of one series,
//! with the buckets every surface uses ([`DURATION_BUCKETS_S`]). A tally made for a
//! `redlock_rs.prometheus.RedlockCollector` keeps these instead of handing each value to
//! Python: recording is one addition under the tally's lock, and a collection reads the
//! counts (`Tally.histograms`).

use redlock_core::DURATION_BUCKETS_S;

/// Buckets of a histogram: one per upper bound, and the last for values above every bound.
pub(crate) const BUCKETS: usize = DURATION_BUCKETS_S.len() + 1;

/// One series' bucket counts (not cumulative) and sum of values, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Aggregate {
    pub counts: [u64; BUCKETS],
    pub sum: f64,
}

impl Default for Aggregate {
    fn default() -> Self {
        Aggregate {
            counts: [0; BUCKETS],
            sum: 0.0,
        }
    }
}

impl Aggregate {
    /// Counts `seconds` in the first bucket whose upper bound is at least it (a value equal
    /// to a bound belongs to that bound's bucket: Prometheus's `le`, OpenTelemetry's
    /// explicit buckets).
    pub(crate) fn record(&mut self, seconds: f64) {
        self.counts[bucket_of(seconds)] += 1;
        self.sum += seconds;
    }
}

/// The bucket of `seconds` (NaN, never measured, lands in the first).
fn bucket_of(seconds: f64) -> usize {
    DURATION_BUCKETS_S.partition_point(|&bound| bound < seconds)
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
    fn counts_and_sum_add_up() {
        let mut aggregate = Aggregate::default();
        for seconds in [0.00005, 0.0001, 0.0003, 0.0003, 20.0] {
            aggregate.record(seconds);
        }
        assert_eq!(aggregate.counts.iter().sum::<u64>(), 5);
        assert_eq!(aggregate.counts[0], 2);
        assert_eq!(aggregate.counts[2], 2);
        assert_eq!(aggregate.counts[BUCKETS - 1], 1);
        assert!((aggregate.sum - 20.000_75).abs() < 1e-9);
    }
}
