//! [`LatencyHistogram`]: the lock-free latency distribution of [`super::ClientStats`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// A lock-free latency histogram with log-linear buckets (HdrHistogram's layout, with
/// atomics): exact below 256 µs, then 128 buckets per power of two, up to about 19 hours
/// (longer values count as that). Values are recorded to the microsecond.
///
/// Why not the `hdrhistogram` crate: recording there needs `&mut` (or a per-thread recorder
/// merged later), and the sink is called through `&self` from whichever thread ran the
/// operation. A fixed array of atomic counters takes concurrent records without a lock; its
/// 30 KiB are allocated once per client.
///
/// **Error:** a quantile is the midpoint of the bucket holding the value of that rank, so it
/// is within [`LatencyHistogram::RELATIVE_ERROR`] (1/256, 0.39 %) of the exact value, and is
/// clamped to the exact maximum.
#[derive(Debug)]
pub struct LatencyHistogram {
    buckets: Box<[AtomicU64]>,
    max_us: AtomicU64,
}

/// Sub-buckets per power of two are `2^SUB_BUCKET_BITS`; values below
/// `2^(SUB_BUCKET_BITS + 1)` µs get a bucket each.
const SUB_BUCKET_BITS: u32 = 7;
/// Largest value recorded, in µs (2^36 − 1 µs, about 19 hours).
const HIGHEST_US: u64 = (1 << 36) - 1;
const BUCKETS: usize = bucket_of(HIGHEST_US) + 1;

/// The bucket of `us` (at most `HIGHEST_US`).
const fn bucket_of(us: u64) -> usize {
    if us < 1 << (SUB_BUCKET_BITS + 1) {
        return us as usize;
    }
    let shift = 63 - us.leading_zeros() - SUB_BUCKET_BITS;
    ((shift as usize) << SUB_BUCKET_BITS) + (us >> shift) as usize
}

/// The lowest value of `bucket` and its width, in µs.
fn bounds_of(bucket: usize) -> (u64, u64) {
    if bucket < 1 << (SUB_BUCKET_BITS + 1) {
        return (bucket as u64, 1);
    }
    let shift = (bucket >> SUB_BUCKET_BITS) as u32 - 1;
    let sub = (bucket - ((shift as usize) << SUB_BUCKET_BITS)) as u64;
    (sub << shift, 1 << shift)
}

impl LatencyHistogram {
    /// Most a quantile differs from the exact value, relative to it.
    pub const RELATIVE_ERROR: f64 = 1.0 / (1u64 << (SUB_BUCKET_BITS + 1)) as f64;

    /// An empty histogram.
    pub fn new() -> Self {
        LatencyHistogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            max_us: AtomicU64::new(0),
        }
    }

    /// Counts one value (rounded to the microsecond).
    pub fn record(&self, value: Duration) {
        let nanos = value.as_nanos().min(u128::from(HIGHEST_US) * 1000) as u64;
        self.record_micros((nanos + 500) / 1000);
    }

    /// Counts one value given in seconds (a negative or NaN one as 0).
    pub fn record_seconds(&self, seconds: f64) {
        // `as` saturates: NaN and negatives become 0, huge values u64::MAX.
        self.record_micros((seconds * 1e6).round() as u64);
    }

    fn record_micros(&self, us: u64) {
        let us = us.min(HIGHEST_US);
        self.buckets[bucket_of(us)].fetch_add(1, Relaxed);
        // x86 has no atomic max (fetch_max is a compare-and-swap loop): skip it when the
        // maximum stands, as it does for nearly every value.
        if us > self.max_us.load(Relaxed) {
            self.max_us.fetch_max(us, Relaxed);
        }
    }

    /// The counts as they are now.
    pub fn snapshot(&self) -> LatencySnapshot {
        let counts: Box<[u64]> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        LatencySnapshot {
            count: counts.iter().sum(),
            counts,
            max_us: self.max_us.load(Relaxed),
        }
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

/// A [`LatencyHistogram`]'s counts at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencySnapshot {
    counts: Box<[u64]>,
    count: u64,
    max_us: u64,
}

impl LatencySnapshot {
    /// How many values were recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest value recorded (exact, to the microsecond); `None` when empty.
    pub fn max(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_micros(self.max_us))
    }

    /// The value at quantile `q` in [0, 1]: the smallest recorded value that at least a
    /// fraction `q` of the values do not exceed (within
    /// [`LatencyHistogram::RELATIVE_ERROR`]); `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        let bucket = self
            .counts
            .iter()
            .position(|&n| {
                seen += n;
                seen >= rank
            })
            .unwrap_or(self.counts.len() - 1);
        let (low, width) = bounds_of(bucket);
        // The middle of the bucket's values [low, low + width − 1], in ns (an exact integer).
        let middle_ns = low * 1000 + (width - 1) * 500;
        Some(Duration::from_nanos(middle_ns.min(self.max_us * 1000)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn buckets_are_contiguous_and_hold_their_values() {
        let mut expected_low = 0;
        for bucket in 0..BUCKETS {
            let (low, width) = bounds_of(bucket);
            assert_eq!(low, expected_low, "bucket {bucket}");
            assert_eq!(bucket_of(low), bucket);
            assert_eq!(bucket_of(low + width - 1), bucket);
            // The width relative to the lowest value is what bounds the error.
            assert!(
                (width - 1) as f64 / 2.0 <= low as f64 * LatencyHistogram::RELATIVE_ERROR,
                "bucket {bucket}: [{low}, +{width})"
            );
            expected_low = low + width;
        }
        assert_eq!(expected_low, HIGHEST_US + 1);
    }

    /// Quantiles against the exact values of 100 000 durations spread from 1 µs to 100 s
    /// (log-uniform) and of a tight cluster with a far outlier.
    #[test]
    fn quantiles_are_within_the_stated_error_of_the_exact_values() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let spread: Vec<u64> = (0..100_000)
            .map(|_| 10f64.powf(rng.random_range(0.0..8.0)).round() as u64)
            .collect();
        let mut cluster: Vec<u64> = (0..9_999).map(|i| 300 + i % 50).collect();
        cluster.push(2_000_000);
        for values in [spread, cluster] {
            let histogram = LatencyHistogram::new();
            for &us in &values {
                histogram.record(Duration::from_micros(us));
            }
            let snapshot = histogram.snapshot();
            let mut sorted = values.clone();
            sorted.sort_unstable();
            assert_eq!(snapshot.count(), sorted.len() as u64);
            assert_eq!(
                snapshot.max(),
                Some(Duration::from_micros(*sorted.last().unwrap()))
            );
            for q in [0.0, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
                let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
                let exact = sorted[rank - 1] as f64;
                let got = snapshot.quantile(q).unwrap().as_nanos() as f64 / 1000.0;
                let error = (got - exact).abs() / exact;
                assert!(
                    error <= LatencyHistogram::RELATIVE_ERROR,
                    "q {q}: {got} µs, exact {exact} µs, error {error}"
                );
            }
        }
    }

    #[test]
    fn an_empty_histogram_has_no_quantiles_and_extremes_are_clamped() {
        let histogram = LatencyHistogram::new();
        assert_eq!(histogram.snapshot().quantile(0.5), None);
        assert_eq!(histogram.snapshot().max(), None);
        histogram.record(Duration::from_secs(100 * 3600));
        histogram.record(Duration::ZERO);
        for odd in [f64::NAN, -1.0, f64::INFINITY, 1e300] {
            histogram.record_seconds(odd);
        }
        assert_eq!(histogram.snapshot().count(), 6);
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.max(), Some(Duration::from_micros(HIGHEST_US)));
        assert_eq!(snapshot.quantile(0.0), Some(Duration::ZERO));
        assert!(snapshot.quantile(1.0).unwrap() <= snapshot.max().unwrap());
    }
}
