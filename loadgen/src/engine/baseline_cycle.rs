//! One acquire → hold → release cycle of a single-master baseline, measured the way the
//! Redlock cycle is: an acquire call makes up to `retry_count + 1` attempts with the same
//! jittered delay between them, and every attempt, call and release is recorded.

use std::time::{Duration, Instant};

use rand::Rng;

use crate::engine::config::RunConfig;
use crate::engine::faults::client::WorkerFaults;
use crate::engine::history::{Lease, Op, Outcome};
use crate::engine::hooks::FirstLock;
use crate::engine::keys::Choices;
use crate::engine::locks::baseline::{AttemptResult, Baseline, Held};
use crate::engine::pacing;
use crate::engine::recorder::{Failure, Recorder, WorkerState};
use crate::signals::Stop;

/// Where a cycle records: the recorder of the worker's task.
pub trait Record {
    fn with<R>(&self, f: impl FnOnce(&mut Recorder) -> R) -> R;
}

/// What a cycle reads from its mode.
#[derive(Debug, Clone, Copy)]
pub struct Mode<'a> {
    pub cfg: &'a RunConfig,
    /// Lock keys, by resource index.
    pub keys: &'a [String],
    /// Set when the end-of-run grace has passed: no new attempt, holds cut short.
    pub hard_stop: &'a Stop,
    /// When the mode's first lock was granted.
    pub first_lock: &'a FirstLock,
}

/// Runs one cycle; `false` when the worker crashed (it must stop for good).
pub async fn run(
    mode: Mode<'_>,
    baseline: &Baseline,
    task: &impl Record,
    worker: &mut WorkerState,
    choices: &mut Choices,
    intended: Instant,
    faults: &WorkerFaults,
) -> bool {
    let cfg = mode.cfg;
    let resource = choices.resource();
    let key = &mode.keys[resource as usize];
    worker.begin_acquire();
    let history = cfg.history.as_deref();
    let process = worker.process;
    if let Some(h) = history {
        h.invoke(process, Op::Acquire, key, None, Instant::now());
    }
    // Ends the history's acquire without a lease (cancelled, crashed: outcome unknown).
    let unknown = || {
        if let Some(h) = history {
            h.complete(
                process,
                Op::Acquire,
                key,
                Outcome::Info,
                None,
                Instant::now(),
            );
        }
    };
    let mut attempts = 0;
    let held: Result<Held, Failure> = loop {
        if mode.hard_stop.is_set() {
            unknown();
            task.with(|r| r.cancelled(worker));
            return true;
        }
        let attempt = baseline.try_acquire(key, cfg.ttl, faults).await;
        task.with(|r| r.baseline_attempt(worker, &attempt));
        let failure = match attempt.result {
            AttemptResult::Acquired(held) => break Ok(held),
            AttemptResult::Crashed => {
                unknown();
                task.with(|r| r.crashed());
                return false;
            }
            AttemptResult::Denied => Failure::NotAcquired,
            AttemptResult::Failed(_) => Failure::Unavailable,
        };
        attempts += 1;
        if attempts > cfg.retry_count {
            break Err(failure);
        }
        let delay = jittered(cfg.retry_delay);
        if !hold_for(mode.hard_stop, delay).await {
            unknown();
            task.with(|r| r.cancelled(worker));
            return true;
        }
    };
    let done = Instant::now();
    let latency = done.saturating_duration_since(intended);
    let held = match held {
        Ok(held) => held,
        Err(failure) => {
            if let Some(h) = history {
                h.complete(process, Op::Acquire, key, Outcome::Fail, None, done);
            }
            task.with(|r| r.baseline_acquired(worker, Err(failure), latency, done));
            return true;
        }
    };
    if faults.crash_happened() {
        task.with(|r| r.acquired_after_crash());
    }
    // A baseline's value need not be unique (setnx-getset writes a timestamp): the history's
    // token names the process too.
    let token = format!("p{process}-{}", held.value);
    let lease = |valid_until| Lease {
        token: &token,
        fence: None,
        valid_until,
    };
    if let Some(h) = history {
        let owned = lease(Some(held.valid_until));
        h.complete(
            process,
            Op::Acquire,
            key,
            Outcome::Ok,
            Some(owned),
            held.completed,
        );
    }
    mode.first_lock.granted(done);
    let validity = held.valid_until.saturating_duration_since(done);
    task.with(|r| r.baseline_acquired(worker, Ok(validity), latency, done));

    hold_for(mode.hard_stop, choices.hold()).await;

    let release_started = Instant::now();
    let owned_until = held.valid_until.min(release_started);
    task.with(|r| r.owned(resource, &held.value, held.completed, owned_until));
    if let Some(h) = history {
        h.invoke(
            process,
            Op::Release,
            key,
            Some(lease(None)),
            release_started,
        );
    }
    let released = baseline.release(key, &held, faults).await;
    let latency = release_started.elapsed();
    if let Some(h) = history {
        let at = Instant::now();
        h.complete(
            process,
            Op::Release,
            key,
            Outcome::Ok,
            Some(lease(None)),
            at,
        );
    }
    task.with(|r| r.baseline_released(worker, &released, latency));
    true
}

/// Waits `d` (sub-millisecond waits included); `false` when the end-of-run grace cut it short.
async fn hold_for(hard_stop: &Stop, d: Duration) -> bool {
    if d.is_zero() {
        return !hard_stop.is_set();
    }
    tokio::select! {
        () = pacing::sleep(d) => true,
        () = hard_stop.wait() => false,
    }
}

/// A delay drawn uniformly from [d/2, d], as between Redlock's attempts.
fn jittered(d: Duration) -> Duration {
    if d.is_zero() {
        return d;
    }
    let nanos = d.as_nanos() as u64;
    Duration::from_nanos(rand::rng().random_range(nanos / 2..=nanos))
}
