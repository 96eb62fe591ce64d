//! `redlock.locks.held` per lock: +1 when a lock is won, and the hook that takes it off again
//! once the lock stops being held ([`crate::lock::Held`] says when).

use std::sync::Arc;

use super::sink::{Measurement, MetricsSink};
use crate::lock::Held;

/// A lock just won: counts it, and returns its mark, which uncounts it once.
pub(crate) fn won(sink: &Arc<dyn MetricsSink>) -> Arc<Held> {
    sink.record(Measurement::LocksHeld { delta: 1 });
    let sink = Arc::clone(sink);
    Held::new(Box::new(move || {
        sink.record(Measurement::LocksHeld { delta: -1 });
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    #[derive(Default)]
    struct Gauge(AtomicI64);

    impl MetricsSink for Gauge {
        fn record(&self, measurement: Measurement) {
            if let Measurement::LocksHeld { delta } = measurement {
                self.0.fetch_add(delta, Ordering::Relaxed);
            }
        }
    }

    #[test]
    fn a_lock_is_uncounted_once_whatever_ends_it() {
        let gauge = Arc::new(Gauge::default());
        let sink: Arc<dyn MetricsSink> = gauge.clone();
        let held = won(&sink);
        let copy = Arc::clone(&held);
        assert_eq!(gauge.0.load(Ordering::Relaxed), 1);
        // Lost, then released, then every copy dropped: one decrement.
        held.end();
        copy.end();
        drop(held);
        drop(copy);
        assert_eq!(gauge.0.load(Ordering::Relaxed), 0);
        // Forgotten: the drop of the last copy uncounts it.
        let forgotten = won(&sink);
        assert_eq!(gauge.0.load(Ordering::Relaxed), 1);
        drop(forgotten);
        assert_eq!(gauge.0.load(Ordering::Relaxed), 0);
    }
}
