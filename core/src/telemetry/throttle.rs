//! [`MasterWarnings`]: at most one warning per master per interval about its failures, the
//! next one carrying how many were held back. With one master down at 1,000 locks/s, a
//! warning per failed request would be thousands of lines a second saying the same thing.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The interval of [`MasterWarnings::new`]'s default: one warning per failing master per
/// second at most.
pub const MASTER_WARNING_INTERVAL: Duration = Duration::from_secs(1);

/// Decides, per master, whether a warning about its failure is due; shared by every thread
/// of a client (relaxed atomics, no lock).
#[derive(Debug)]
pub struct MasterWarnings {
    interval_us: u64,
    epoch: Instant,
    masters: Box<[Gate]>,
}

#[derive(Debug, Default)]
struct Gate {
    /// When its last warning was let through, in µs since `epoch` + 1 (0: never).
    last_us: AtomicU64,
    /// Failures held back since then.
    suppressed: AtomicU64,
}

impl MasterWarnings {
    /// For `n_masters` masters, one warning each per [`MASTER_WARNING_INTERVAL`].
    pub fn new(n_masters: usize) -> Self {
        Self::with_interval(n_masters, MASTER_WARNING_INTERVAL)
    }

    /// For `n_masters` masters, one warning each per `interval`.
    pub fn with_interval(n_masters: usize, interval: Duration) -> Self {
        MasterWarnings {
            interval_us: u64::try_from(interval.as_micros()).unwrap_or(u64::MAX),
            epoch: Instant::now(),
            masters: (0..n_masters).map(|_| Gate::default()).collect(),
        }
    }

    /// A failure of `master`: `Some(n)` when a warning is due now (`n` failures of it were
    /// held back since its last warning), `None` when it is held back (and counted).
    pub fn failure(&self, master: usize) -> Option<u64> {
        let gate = self.masters.get(master)?;
        let now = u64::try_from(self.epoch.elapsed().as_micros())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1);
        let last = gate.last_us.load(Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= self.interval_us;
        // One thread wins the interval; the others count themselves held back.
        if due
            && gate
                .last_us
                .compare_exchange(last, now, Relaxed, Relaxed)
                .is_ok()
        {
            return Some(gate.suppressed.swap(0, Relaxed));
        }
        gate.suppressed.fetch_add(1, Relaxed);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_warns_and_the_rest_of_the_interval_is_counted() {
        // An interval no test run can outlast: only the first failure is due.
        let warnings = MasterWarnings::with_interval(2, Duration::from_secs(3600));
        assert_eq!(warnings.failure(0), Some(0));
        for _ in 0..999 {
            assert_eq!(warnings.failure(0), None);
        }
        // Each master has its own gate; an unknown master is never due.
        assert_eq!(warnings.failure(1), Some(0));
        assert_eq!(warnings.failure(7), None);
    }

    #[test]
    fn the_next_warning_carries_the_count_held_back() {
        let warnings = MasterWarnings::with_interval(1, Duration::ZERO);
        assert_eq!(warnings.failure(0), Some(0));
        // A zero interval lets every failure through: none held back.
        assert_eq!(warnings.failure(0), Some(0));
        let warnings = MasterWarnings::with_interval(1, Duration::from_secs(3600));
        warnings.failure(0);
        warnings.failure(0);
        warnings.failure(0);
        // The interval has passed (as if it were over: the same gates, a zero interval).
        let warnings = MasterWarnings {
            interval_us: 0,
            ..warnings
        };
        assert_eq!(warnings.failure(0), Some(2));
        assert_eq!(warnings.failure(0), Some(0), "none held back since");
    }

    #[test]
    fn concurrent_failures_let_one_warning_through_per_interval() {
        let warnings = MasterWarnings::with_interval(1, Duration::from_secs(3600));
        let through = AtomicU64::new(0);
        let reported_held_back = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        if let Some(held_back) = warnings.failure(0) {
                            through.fetch_add(1, Relaxed);
                            reported_held_back.fetch_add(held_back, Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(through.load(Relaxed), 1);
        // Every other failure is counted exactly once: a failure held back between the
        // winner's claim and its read of the count rides on that warning, the rest waits
        // for the next one. None is lost, none counted twice.
        let still_held_back = warnings.masters[0].suppressed.load(Relaxed);
        assert_eq!(reported_held_back.load(Relaxed) + still_held_back, 39_999);
    }
}
