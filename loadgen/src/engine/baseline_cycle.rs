//! One acquire → hold → release cycle of a single-master baseline, measured the way the
//! Redlock cycle is: an acquire call makes up to `retry_count + 1` attempts with the same
//! jittered delay between them, and every attempt, call and release is recorded.

use std::time::{Duration, Instant};

use rand::Rng;

use crate::engine::config::RunConfig;
use crate::engine::faults::client::WorkerFaults;
use crate::engine::history::{CycleLog, Lease, Op, Outcome};
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
    let c = Cycle::new(mode, baseline, task, worker.process, choices.resource());
    worker.begin_acquire();
    c.log.invoke(Op::Acquire, None, Instant::now);
    let held = match c.call(worker, faults).await {
        Call::Ended(held) => held,
        Call::Cancelled => return true,
        Call::Crashed => return false,
    };
    let done = Instant::now();
    let latency = done.saturating_duration_since(intended);
    let held = match held {
        Ok(held) => held,
        Err(failure) => {
            c.log.complete(Op::Acquire, Outcome::Fail, None, || done);
            task.with(|r| r.baseline_acquired(worker, Err(failure), latency, done));
            return true;
        }
    };
    if faults.crash_happened() {
        task.with(|r| r.acquired_after_crash());
    }
    // A baseline's value need not be unique (setnx-getset writes a timestamp): the history's
    // token names the process too. Only a history reads it: no allocation per cycle without.
    let token = match c.log.history {
        Some(_) => format!("p{}-{}", c.log.process, held.value),
        None => String::new(),
    };
    let owned = lease(&token, Some(held.valid_until));
    c.log
        .complete(Op::Acquire, Outcome::Ok, Some(owned), || held.completed);
    mode.first_lock.granted(done);
    let validity = held.valid_until.saturating_duration_since(done);
    task.with(|r| r.baseline_acquired(worker, Ok(validity), latency, done));

    hold_for(mode.hard_stop, choices.hold()).await;

    c.release(worker, &held, &token, faults).await;
    true
}

/// What one baseline cycle works on: its mode, lock and recorder, the resource it locks, and
/// its history lines. Built once per cycle from borrows only.
struct Cycle<'a, R> {
    mode: Mode<'a>,
    baseline: &'a Baseline,
    task: &'a R,
    resource: u32,
    /// The resource's lock key, the process that locks it, and the history they go to.
    log: CycleLog<'a>,
}

/// How an acquire call ended.
enum Call {
    /// After its attempts: won, or why not.
    Ended(Result<Held, Failure>),
    /// Cut off by the end-of-run grace (recorded): the worker goes on.
    Cancelled,
    /// The client crashed (recorded): it never comes back.
    Crashed,
}

impl<'a, R: Record> Cycle<'a, R> {
    #[inline]
    fn new(
        mode: Mode<'a>,
        baseline: &'a Baseline,
        task: &'a R,
        process: u32,
        resource: u32,
    ) -> Self {
        let log = CycleLog {
            history: mode.cfg.history.as_deref(),
            process,
            key: &mode.keys[resource as usize],
        };
        Cycle {
            mode,
            baseline,
            task,
            resource,
            log,
        }
    }

    /// The acquire call: up to `retry_count + 1` attempts, a jittered delay between them.
    async fn call(&self, worker: &mut WorkerState, faults: &WorkerFaults) -> Call {
        let cfg = self.mode.cfg;
        let mut attempts = 0;
        loop {
            if self.mode.hard_stop.is_set() {
                return self.cancelled(worker);
            }
            let attempt = self
                .baseline
                .try_acquire(self.log.key, cfg.ttl, faults)
                .await;
            self.task.with(|r| r.baseline_attempt(worker, &attempt));
            let failure = match attempt.result {
                AttemptResult::Acquired(held) => return Call::Ended(Ok(held)),
                AttemptResult::Crashed => {
                    self.unknown();
                    self.task.with(|r| r.crashed());
                    return Call::Crashed;
                }
                AttemptResult::Denied => Failure::NotAcquired,
                AttemptResult::Failed(_) => Failure::Unavailable,
            };
            attempts += 1;
            if attempts > cfg.retry_count {
                return Call::Ended(Err(failure));
            }
            let delay = jittered(cfg.retry_delay);
            if !hold_for(self.mode.hard_stop, delay).await {
                return self.cancelled(worker);
            }
        }
    }

    /// Ends the history's acquire without a lease (cancelled, crashed: outcome unknown).
    #[inline]
    fn unknown(&self) {
        self.log
            .complete(Op::Acquire, Outcome::Info, None, Instant::now);
    }

    /// An acquire call cut off by the end-of-run grace.
    #[inline]
    fn cancelled(&self, worker: &WorkerState) -> Call {
        self.unknown();
        self.task.with(|r| r.cancelled(worker));
        Call::Cancelled
    }

    /// Releases `held` (`token`: its name in the history) and records its ownership window.
    async fn release(&self, worker: &WorkerState, held: &Held, token: &str, faults: &WorkerFaults) {
        let release_started = Instant::now();
        let owned_until = held.valid_until.min(release_started);
        self.task
            .with(|r| r.owned(self.resource, &held.value, held.completed, owned_until));
        self.log
            .invoke(Op::Release, Some(lease(token, None)), || release_started);
        let released = self.baseline.release(self.log.key, held, faults).await;
        let latency = release_started.elapsed();
        self.log.complete(
            Op::Release,
            Outcome::Ok,
            Some(lease(token, None)),
            Instant::now,
        );
        self.task
            .with(|r| r.baseline_released(worker, &released, latency));
    }
}

/// What a history line says of a baseline's lock named `token`.
fn lease(token: &str, valid_until: Option<Instant>) -> Lease<'_> {
    Lease {
        token,
        fence: None,
        valid_until,
    }
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
