//! `redlock.locks.held` per lock: +1 when a lock is won, and the hook that takes it off again
//! once the lock stops being held ([`crate::lock::Held`] says when).

use std::sync::Arc;

use super::sink::{Measurement, MetricsSink};
use crate::lock::{Held, HeldGauge};

/// The client's sink as the gauge every lock's mark gives its place back to.
pub(crate) struct SinkGauge(pub(crate) Arc<dyn MetricsSink>);

impl HeldGauge for SinkGauge {
    fn ended(&self) {
        self.0.record(Measurement::LocksHeld { delta: -1 });
    }
}

/// A lock just won: counts it, and returns its mark, which uncounts it once.
pub(crate) fn won(gauge: &Arc<SinkGauge>) -> Arc<Held> {
    gauge.0.record(Measurement::LocksHeld { delta: 1 });
    Held::new(Arc::clone(gauge) as Arc<dyn HeldGauge>)
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
        let sink = Arc::new(SinkGauge(gauge.clone()));
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
