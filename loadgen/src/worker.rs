//! The load clients: acquire → hold (→ extend) → release → repeat, closed or open loop.
//!
//! Clients run in shards: one tokio task per shard drives its clients concurrently and owns
//! one [`Recorder`], so memory stays bounded however many clients run, and no state is
//! shared between tasks on the hot path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use redlock_core::{Redlock, Retry, Vote};

use crate::config::{Load, RunConfig};
use crate::keys::Choices;
use crate::recorder::{ClientState, Recorder};

/// An open-loop operation that starts later than this after its intended start is "late".
const LATE_AFTER: Duration = Duration::from_millis(1);

/// The run's clock: the warm-up runs from `epoch` to `measure_start`, the measurement from
/// `measure_start` to `end`. No operation starts at or after `end`.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub epoch: Instant,
    pub measure_start: Instant,
    pub end: Instant,
}

/// What a worker needs; cheap to clone per worker.
#[derive(Debug, Clone)]
pub struct WorkerSetup {
    pub redlock: Redlock,
    pub cfg: Arc<RunConfig>,
    /// Resource names, by index.
    pub keys: Arc<[String]>,
    pub clock: Clock,
    /// Set to stop early (Ctrl-C): no new operation starts.
    pub stop: Arc<AtomicBool>,
}

/// Open-loop schedule of one worker: slot k is intended to start at `first + k × period`.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    first: Instant,
    period: Duration,
}

impl Schedule {
    fn new(clock: &Clock, worker: u32, rate_per_s: f64, workers: u32) -> Schedule {
        // The workers' slots interleave: together they start one operation every 1/rate s.
        Schedule {
            first: clock.epoch + Duration::from_secs_f64(f64::from(worker) / rate_per_s),
            period: Duration::from_secs_f64(f64::from(workers) / rate_per_s),
        }
    }
    fn slot(&self, k: u64) -> Instant {
        self.first + self.period.mul_f64(k as f64)
    }
}

/// The recorder of one shard. Only the clients of the shard's task touch it, and a task is
/// polled by one thread at a time, so the lock is never contended; it exists because the
/// task must be `Send` to run on the multi-threaded runtime.
#[derive(Debug)]
struct ShardRecorder(Mutex<Recorder>);

impl ShardRecorder {
    fn with<R>(&self, f: impl FnOnce(&mut Recorder) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Runs the clients `indices` (their global indices) in one task until the clock's end (or a
/// stop) and returns the shard's measurements.
pub async fn run_shard(setup: WorkerSetup, indices: Vec<u32>, rec: Recorder) -> Recorder {
    let shard = ShardRecorder(Mutex::new(rec));
    let clients = indices
        .iter()
        .enumerate()
        .map(|(slot, &index)| run_client(&setup, index, ClientState::new(slot), &shard));
    futures_util::future::join_all(clients).await;
    let mut rec = shard.0.into_inner().unwrap_or_else(PoisonError::into_inner);
    rec.flush_interval();
    rec
}

async fn run_client(
    setup: &WorkerSetup,
    index: u32,
    mut client: ClientState,
    shard: &ShardRecorder,
) {
    let cfg = &setup.cfg;
    let clock = setup.clock;
    let mut choices = Choices::new(cfg.seed, index, cfg.resources, cfg.key_dist, cfg.hold);
    let schedule = match cfg.load {
        Load::Open {
            rate_per_s,
            workers,
        } => Some(Schedule::new(&clock, index, rate_per_s, workers)),
        Load::Closed { .. } => None,
    };
    let mut slot = 0u64;
    loop {
        if setup.stop.load(Ordering::Relaxed) {
            break;
        }
        let now = Instant::now();
        let intended = match schedule {
            Some(s) => s.slot(slot),
            None => now,
        };
        if intended >= clock.end {
            break;
        }
        if now >= clock.end {
            // Open loop, behind schedule when the run ended: the remaining slots never ran.
            if let Some(s) = schedule {
                let dropped = count_dropped(&s, slot, &clock);
                shard.with(|r| r.stats.counts.dropped_slots += dropped);
            }
            break;
        }
        slot += 1;
        client.measuring = intended >= clock.measure_start;
        if schedule.is_some() {
            if intended > now {
                tokio::time::sleep_until(intended.into()).await;
            } else if client.measuring && now - intended > LATE_AFTER {
                shard.with(|r| r.stats.counts.late_starts += 1);
            }
        }
        cycle(setup, shard, &mut client, &mut choices, intended).await;
    }
}

/// Measured slots from `from_slot` on that were due before the end.
fn count_dropped(schedule: &Schedule, from_slot: u64, clock: &Clock) -> u64 {
    (from_slot..)
        .map(|k| schedule.slot(k))
        .take_while(|&t| t < clock.end)
        .filter(|&t| t >= clock.measure_start)
        .count() as u64
}

/// One acquire → hold → release cycle. `intended` is when the acquire should have started
/// (closed loop: when it did start).
async fn cycle(
    setup: &WorkerSetup,
    shard: &ShardRecorder,
    client: &mut ClientState,
    choices: &mut Choices,
    intended: Instant,
) {
    let cfg = &setup.cfg;
    let resource = choices.resource();
    let key = &setup.keys[resource as usize];
    client.begin_acquire();
    let result = setup
        .redlock
        .acquire_observed(key, cfg.ttl, Retry::Configured, &mut |vote: &Vote| {
            shard.with(|r| r.attempt(client, vote))
        })
        .await;
    let done = Instant::now();
    let latency = done.saturating_duration_since(intended);
    let mut lock = match result {
        Ok(lock) => lock,
        Err(e) => {
            shard.with(|r| r.acquired(client, Err(&e), latency, done));
            return;
        }
    };
    shard.with(|r| r.acquired(client, Ok(lock.validity()), latency, done));
    // Ownership starts when the holder learns it won.
    let owned_from = lock.vote().completed();

    let hold = choices.hold();
    let pieces = cfg.extends_per_hold + 1;
    let piece = hold / pieces;
    for _ in 0..cfg.extends_per_hold {
        sleep(piece).await;
        let started = Instant::now();
        let result = setup.redlock.extend(&mut lock, cfg.ttl).await;
        let latency = started.elapsed();
        match &result {
            Ok(()) => shard.with(|r| r.extended(client, true, Some(lock.vote()), latency)),
            Err(e) => shard.with(|r| r.extended(client, false, e.vote(), latency)),
        }
        if result.is_err() {
            break; // no longer held on a quorum: stop extending, still release what is left
        }
    }
    sleep(hold.saturating_sub(piece * cfg.extends_per_hold)).await;

    let release_started = Instant::now();
    let owned_until = lock.valid_until().min(release_started);
    shard.with(|r| r.owned(resource, owned_from, owned_until));
    let released = setup.redlock.release(&lock).await;
    let latency = release_started.elapsed();
    // A release reports 0 released rather than failing; an error still carries a vote.
    let vote = match &released {
        Ok(vote) => Some(vote),
        Err(e) => e.vote(),
    };
    if let Some(vote) = vote {
        shard.with(|r| r.released(client, vote, latency));
    }
}

async fn sleep(d: Duration) {
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}
