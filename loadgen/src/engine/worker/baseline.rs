//! One acquire → hold → release cycle of a single-master baseline, measured the way the
//! Redlock cycle is: an acquire call makes up to `retry_count + 1` attempts with the same
//! jittered delay between them, and every attempt, call and release is recorded.

use std::time::{Duration, Instant};

use rand::Rng;

use super::Cycle;
use crate::engine::faults::client::WorkerFaults;
use crate::engine::history::{Lease, Op, Outcome};
use crate::engine::keys::Choices;
use crate::engine::locks::baseline::{AttemptResult, Baseline, Held};
use crate::engine::recorder::{Failure, WorkerState};

/// How an acquire call ended.
enum Call {
    /// After its attempts: won, or why not.
    Ended(Result<Held, Failure>),
    /// Cut off by the end-of-run grace (recorded): the worker goes on.
    Cancelled,
    /// The client crashed (recorded): it never comes back.
    Crashed,
}

impl Cycle<'_> {
    /// Runs one cycle of `baseline`; `false` when the worker crashed (it must stop for good).
    pub(super) async fn baseline(
        &self,
        baseline: &Baseline,
        worker: &mut WorkerState,
        choices: &mut Choices,
        intended: Instant,
        faults: &WorkerFaults,
    ) -> bool {
        let held = match self.call(baseline, worker, faults).await {
            Call::Ended(held) => held,
            Call::Cancelled => return true,
            Call::Crashed => return false,
        };
        let done = Instant::now();
        let latency = done.saturating_duration_since(intended);
        let held = match held {
            Ok(held) => held,
            Err(failure) => {
                self.lost(worker, failure, latency, done);
                return true;
            }
        };
        // A baseline's value need not be unique (setnx-getset writes a timestamp): the history's
        // token names the process too. Only a history reads it: no allocation per cycle without.
        let token = match self.log.history {
            Some(_) => format!("p{}-{}", self.log.process, held.value),
            None => String::new(),
        };
        let validity = held.valid_until.saturating_duration_since(done);
        let owned = lease(&token, Some(held.valid_until));
        self.won(
            worker,
            faults,
            (latency, done),
            validity,
            owned,
            held.completed,
        );

        self.wait(choices.hold()).await;

        let started = self.release_started(
            &held.value,
            lease(&token, None),
            held.completed,
            held.valid_until,
        );
        let released = baseline.release(self.log.key, &held, faults).await;
        let latency = started.elapsed();
        let lease = Some(lease(&token, None));
        self.log
            .complete(Op::Release, Outcome::Ok, lease, Instant::now);
        self.task
            .with(|r| r.baseline_released(worker, &released, latency));
        true
    }

    /// The acquire call: up to `retry_count + 1` attempts, a jittered delay between them.
    async fn call(
        &self,
        baseline: &Baseline,
        worker: &mut WorkerState,
        faults: &WorkerFaults,
    ) -> Call {
        let cfg = &self.setup.cfg;
        let mut attempts = 0;
        loop {
            if self.setup.hard_stop.is_set() {
                return self.cancelled(worker);
            }
            let attempt = baseline.try_acquire(self.log.key, cfg.ttl, faults).await;
            self.task.with(|r| r.baseline_attempt(worker, &attempt));
            let failure = match attempt.result {
                AttemptResult::Acquired(held) => return Call::Ended(Ok(held)),
                AttemptResult::Crashed => {
                    self.unknown(Instant::now());
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
            if !self.wait(jittered(cfg.retry_delay)).await {
                return self.cancelled(worker);
            }
        }
    }

    /// An acquire call cut off by the end-of-run grace.
    fn cancelled(&self, worker: &WorkerState) -> Call {
        self.unknown(Instant::now());
        self.task.with(|r| r.cancelled(worker));
        Call::Cancelled
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

/// A delay drawn uniformly from [d/2, d], as between Redlock's attempts.
fn jittered(d: Duration) -> Duration {
    if d.is_zero() {
        return d;
    }
    let nanos = d.as_nanos() as u64;
    Duration::from_nanos(rand::rng().random_range(nanos / 2..=nanos))
}
