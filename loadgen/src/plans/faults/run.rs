//! One run under a fault schedule, and what it left behind on the masters.

use std::time::{Duration, Instant};

use crate::engine::config::RunConfig;
use crate::engine::faults::master::FaultSpec;
use crate::engine::runner::{self, RunResult};
use crate::engine::schedule::{FaultEvent, FaultSchedule};
use crate::engine::target::Target;
use crate::error::LoadgenError;

/// Lock keys of a run (every lock algorithm's).
pub fn lock_keys(cfg: &RunConfig) -> Vec<String> {
    cfg.locks
        .iter()
        .flat_map(|&lock| {
            (0..cfg.resources).map(move |i| crate::engine::locks::setup::key(lock, i))
        })
        .collect()
}

/// Prepares the schedule of `specs` for `target` (routing the client through fault proxies
/// when a fault needs them: call before anything connects to `target.urls`).
pub async fn prepare(
    cfg: &RunConfig,
    target: &mut Target,
    specs: &[FaultSpec],
) -> Result<FaultSchedule, LoadgenError> {
    let mut schedule = FaultSchedule::new(specs, target, cfg.ttl, lock_keys(cfg))?;
    schedule.log_to(cfg.history.clone());
    schedule.route_through_proxies(target).await?;
    Ok(schedule)
}

/// Runs `cfg` against `target` while applying `specs`; returns the result and the fault log.
pub async fn run_with_faults(
    cfg: &RunConfig,
    target: &mut Target,
    specs: &[FaultSpec],
    stop: &crate::signals::Signals,
) -> Result<(RunResult, Vec<FaultEvent>), LoadgenError> {
    let mut schedule = prepare(cfg, target, specs).await?;
    let result = runner::run(cfg, target, &mut schedule, stop).await?;
    Ok((result, schedule.into_events()))
}

/// `run`'s plan: the schedule of `specs` prepared before anything connects, the masters
/// probed and a quorum required, `announce` told what is about to run, then `cfg.repeat`
/// turns ([`crate::plans::turns`]) with the schedule applied in each mode; returns the
/// result and the fault log.
pub async fn repeated_with_faults(
    cfg: &RunConfig,
    target: &mut Target,
    specs: &[FaultSpec],
    signals: &crate::signals::Signals,
    announce: &dyn Fn(&Target),
) -> Result<(RunResult, Vec<FaultEvent>), LoadgenError> {
    let mut schedule = prepare(cfg, target, specs).await?;
    target.probe_versions().await;
    crate::engine::probe::require_quorum(target, cfg.quorum).await?;
    announce(target);
    let result = crate::plans::turns::run_repeated(cfg, target, &mut schedule, signals).await?;
    Ok((result, schedule.into_events()))
}

/// Lock keys of `keys` present on each running local master: (master, count) for every
/// master holding some.
pub fn lock_keys_left(target: &Target, keys: &[String]) -> Result<Vec<(usize, u64)>, LoadgenError> {
    let Some(local) = &target.local else {
        return Ok(Vec::new());
    };
    let mut left = Vec::new();
    for i in 0..local.len() {
        let up = local
            .is_up(i)
            .map_err(|e| LoadgenError::Failed(format!("m{i}: {e}")))?;
        if !up || keys.is_empty() {
            continue;
        }
        let mut args = vec!["EXISTS"];
        args.extend(keys.iter().map(String::as_str));
        let reply = local
            .command(i, &args)
            .map_err(|e| LoadgenError::Failed(format!("counting lock keys on m{i}: {e}")))?;
        let count = reply
            .as_integer()
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| LoadgenError::Failed(format!("m{i} answered EXISTS with {reply}")))?;
        if count > 0 {
            left.push((i, count));
        }
    }
    Ok(left)
}

/// Waits (bounded by `ttl` plus a margin) until no lock key is left on any master; returns
/// what is still there when the bound passes (empty: all gone).
pub fn wait_until_keys_expire(
    target: &Target,
    keys: &[String],
    ttl: Duration,
) -> Result<Vec<(usize, u64)>, LoadgenError> {
    const POLL: Duration = Duration::from_millis(20);
    let deadline = Instant::now() + ttl + Duration::from_millis(500);
    loop {
        let left = lock_keys_left(target, keys)?;
        if left.is_empty() || Instant::now() >= deadline {
            return Ok(left);
        }
        std::thread::sleep(POLL);
    }
}
