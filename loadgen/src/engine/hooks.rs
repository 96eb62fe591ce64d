//! What a run calls back while a mode runs: the place where a fault schedule or a
//! coordinating agent plugs into the runner ([`crate::engine::runner::run`]).

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
    fn tick(
        &mut self,
        _fanout: FanOut,
        _since_measure_start: Duration,
        _target: &Target,
    ) -> Result<(), LoadgenError> {
        Ok(())
    }
    /// Called once after the mode's workers stopped (e.g. to heal every fault).
    fn mode_done(&mut self, _fanout: FanOut, _target: &Target) -> Result<(), LoadgenError> {
        Ok(())
    }
}

/// No hooks.
#[derive(Debug, Default)]
pub struct NoHooks;
impl RunHooks for NoHooks {}
