//! What a run calls back while a mode runs: the place where a fault schedule or a
//! coordinating agent plugs into the runner (`runner::run`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::future::LocalBoxFuture;
use redlock_core::FanOut;

use crate::engine::checker::Window;
use crate::engine::target::Target;
use crate::error::LoadgenError;

/// Called by the control loop about every 100 ms while a mode runs, with the masters at hand:
/// the place where a fault schedule plugs in.
pub trait RunHooks {
    /// Called once before the mode's Redlock client and workers start (after the masters were reset),
    /// e.g. to take masters down from the very start.
    fn mode_start(&mut self, _fanout: FanOut, _target: &Target) -> Result<(), LoadgenError> {
        Ok(())
    }
    /// Called once the mode's client is connected, just before its warm-up. An instant
    /// returned (once it has come) is the warm-up's start — so agents on several machines start
    /// together; `None` starts now.
    fn start_at(
        &mut self,
        _fanout: FanOut,
        _warmup: Duration,
    ) -> LocalBoxFuture<'_, Result<Option<Instant>, LoadgenError>> {
        Box::pin(async { Ok(None) })
    }
    /// The mode's ownership windows (ns from its warm-up's start), before they are checked.
    fn windows(&mut self, _fanout: FanOut, _windows: &[Window]) {}
    /// `since_measure_start` counts from the start of the measured window (zero during the
    /// warm-up): the clock of fault times and of the per-second intervals.
    /// `first_lock`: when the mode's first lock was granted, on the same clock (zero if during
    /// the warm-up; `None` before any).
    fn tick(
        &mut self,
        _fanout: FanOut,
        _since_measure_start: Duration,
        _first_lock: Option<Duration>,
        _target: &Target,
    ) -> Result<(), LoadgenError> {
        Ok(())
    }
    /// Called once after the mode's workers stopped (e.g. to heal every fault).
    fn mode_done(&mut self, _fanout: FanOut, _target: &Target) -> Result<(), LoadgenError> {
        Ok(())
    }
}

/// When a mode granted its first lock: what a fault timed `lock+D` waits for, so a schedule
/// that needs a holder in place gets one however slow the machine is. Set by the workers (any
/// lock algorithm), read by the control loop.
#[derive(Debug)]
pub struct FirstLock {
    measure_start: Instant,
    /// ns since `measure_start` + 1; 0 until the first grant.
    at: AtomicU64,
}

impl FirstLock {
    pub fn new(measure_start: Instant) -> FirstLock {
        FirstLock {
            measure_start,
            at: AtomicU64::new(0),
        }
    }

    /// A lock was granted at `done`; only the first one counts.
    pub fn granted(&self, done: Instant) {
        if self.at.load(Ordering::Relaxed) != 0 {
            return;
        }
        let ns = done
            .saturating_duration_since(self.measure_start)
            .as_nanos();
        let stamp = u64::try_from(ns).unwrap_or(u64::MAX - 1) + 1;
        let _ = self
            .at
            .compare_exchange(0, stamp, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// When the first lock was granted, since the measured start.
    pub fn at(&self) -> Option<Duration> {
        match self.at.load(Ordering::Relaxed) {
            0 => None,
            stamp => Some(Duration::from_nanos(stamp - 1)),
        }
    }
}

/// No hooks.
#[derive(Debug, Default)]
pub struct NoHooks;
impl RunHooks for NoHooks {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_grant_counts_and_the_warm_up_counts_as_zero() {
        let start = Instant::now() + Duration::from_secs(1);
        let first = FirstLock::new(start);
        assert_eq!(first.at(), None);
        first.granted(start - Duration::from_millis(10));
        assert_eq!(first.at(), Some(Duration::ZERO));
        first.granted(start + Duration::from_millis(10));
        assert_eq!(first.at(), Some(Duration::ZERO));
        let later = FirstLock::new(start);
        later.granted(start + Duration::from_millis(250));
        assert_eq!(later.at(), Some(Duration::from_millis(250)));
    }
}
