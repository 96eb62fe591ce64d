//! One acquire → hold → release cycle of a single-master baseline, measured the way the
//! Redlock cycle is: an acquire call makes up to `retry_count + 1` attempts with the same
//! jittered delay between them, and every attempt, call and release is recorded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;

use super::{AttemptResult, Baseline, ClientFaults, Held, LockAlgorithm};
use crate::keys::Choices;
use crate::recorder::{ClientState, Failure};
use crate::worker::{hold_for, ShardRecorder, WorkerSetup};

/// Lock key of resource `index` for `algorithm`. Redlock keeps the shared names (several
/// generators pointed at the same masters contend for the same locks); each baseline gets
/// its own, so a key one algorithm left behind never blocks another.
pub fn key(algorithm: LockAlgorithm, index: u32) -> String {
    match algorithm {
        LockAlgorithm::Redlock => crate::runner::resource_key(index),
        other => format!("redlock-loadgen:{}:{index}", other.as_str()),
    }
}

/// What the clients of a mode lock with, and their client-side faults.
#[derive(Debug, Clone, Default)]
pub struct LockSetup {
    /// `None`: Redlock.
    pub baseline: Option<Arc<Baseline>>,
    /// The "holder dies" fault, shared by the clients.
    pub crash: Option<Arc<super::CrashPlan>>,
    /// (client index, clock offset in ms).
    pub clock_offsets: Vec<(u32, i64)>,
}

impl LockSetup {
    /// The faults of client `index`.
    pub fn faults_of(&self, index: u32) -> ClientFaults {
        ClientFaults {
            clock_offset_ms: self
                .clock_offsets
                .iter()
                .filter(|(c, _)| *c == index)
                .map(|(_, ms)| *ms)
                .sum(),
            crash: self.crash.clone(),
        }
    }
}

/// Runs one cycle; `false` when the client crashed (it must stop for good).
pub(crate) async fn run(
    setup: &WorkerSetup,
    baseline: &Baseline,
    shard: &ShardRecorder,
    client: &mut ClientState,
    choices: &mut Choices,
    intended: Instant,
    faults: &ClientFaults,
) -> bool {
    let cfg = &setup.cfg;
    let resource = choices.resource();
    let key = &setup.keys[resource as usize];
    client.begin_acquire();
    let mut attempts = 0;
    let held: Result<Held, Failure> = loop {
        if setup.hard_stop.is_set() {
            shard.with(|r| r.cancelled(client));
            return true;
        }
        let attempt = baseline.try_acquire(key, cfg.ttl, faults).await;
        shard.with(|r| r.baseline_attempt(client, &attempt));
        let failure = match attempt.result {
            AttemptResult::Acquired(held) => break Ok(held),
            AttemptResult::Crashed => {
                shard.with(|r| r.crashed());
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
        if !hold_for(setup, delay).await {
            shard.with(|r| r.cancelled(client));
            return true;
        }
    };
    let done = Instant::now();
    let latency = done.saturating_duration_since(intended);
    let held = match held {
        Ok(held) => held,
        Err(failure) => {
            shard.with(|r| r.baseline_acquired(client, Err(failure), latency, done));
            return true;
        }
    };
    if faults.crash_happened() {
        shard.with(|r| r.acquired_after_crash());
    }
    let validity = held.valid_until.saturating_duration_since(done);
    shard.with(|r| r.baseline_acquired(client, Ok(validity), latency, done));

    hold_for(setup, choices.hold()).await;

    let release_started = Instant::now();
    let owned_until = held.valid_until.min(release_started);
    shard.with(|r| r.owned(resource, held.completed, owned_until));
    let released = baseline.release(key, &held, faults).await;
    let latency = release_started.elapsed();
    shard.with(|r| r.baseline_released(client, &released, latency));
    true
}

/// A delay drawn uniformly from [d/2, d], as between Redlock's attempts.
fn jittered(d: Duration) -> Duration {
    if d.is_zero() {
        return d;
    }
    let nanos = d.as_nanos() as u64;
    Duration::from_nanos(rand::rng().random_range(nanos / 2..=nanos))
}
