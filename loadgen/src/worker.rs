//! One load worker: acquire → hold (→ extend) → release → repeat, closed or open loop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redlock_core::{Redlock, Retry, Vote};

use crate::config::{Load, RunConfig};
use crate::keys::Choices;
use crate::recorder::Recorder;

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

/// Runs worker `index` until the clock's end (or a stop) and returns its measurements.
pub async fn run_worker(setup: WorkerSetup, index: u32, mut rec: Recorder) -> Recorder {
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
                count_dropped(&mut rec, &s, slot, &clock);
            }
            break;
        }
        slot += 1;
        rec.measuring = intended >= clock.measure_start;
        if schedule.is_some() {
            if intended > now {
                tokio::time::sleep_until(intended.into()).await;
            } else if rec.measuring && now - intended > LATE_AFTER {
                rec.stats.counts.late_starts += 1;
            }
        }
        cycle(&setup, &mut rec, &mut choices, intended).await;
    }
    rec.flush_interval();
    rec
}

fn count_dropped(rec: &mut Recorder, schedule: &Schedule, from_slot: u64, clock: &Clock) {
    let mut k = from_slot;
    while schedule.slot(k) < clock.end {
        if schedule.slot(k) >= clock.measure_start {
            rec.stats.counts.dropped_slots += 1;
        }
        k += 1;
    }
}

/// One acquire → hold → release cycle. `intended` is when the acquire should have started
/// (closed loop: when it did start).
async fn cycle(setup: &WorkerSetup, rec: &mut Recorder, choices: &mut Choices, intended: Instant) {
    let cfg = &setup.cfg;
    let resource = choices.resource();
    let key = &setup.keys[resource as usize];
    rec.begin_acquire();
    let result = setup
        .redlock
        .acquire_observed(key, cfg.ttl, Retry::Configured, &mut |vote: &Vote| {
            rec.attempt(vote)
        })
        .await;
    let done = Instant::now();
    let latency = done.saturating_duration_since(intended);
    let mut lock = match result {
        Ok(lock) => lock,
        Err(e) => {
            rec.acquired(Err(&e), latency, done);
            return;
        }
    };
    rec.acquired(Ok(lock.validity()), latency, done);
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
            Ok(()) => rec.extended(true, Some(lock.vote()), latency),
            Err(e) => rec.extended(false, e.vote(), latency),
        }
        if result.is_err() {
            break; // no longer held on a quorum: stop extending, still release what is left
        }
    }
    sleep(hold.saturating_sub(piece * cfg.extends_per_hold)).await;

    let release_started = Instant::now();
    rec.owned(
        resource,
        owned_from,
        lock.valid_until().min(release_started),
    );
    match setup.redlock.release(&lock).await {
        Ok(vote) => rec.released(&vote, release_started.elapsed()),
        Err(e) => {
            if let Some(vote) = e.vote() {
                rec.released(vote, release_started.elapsed());
            }
        }
    }
}

async fn sleep(d: Duration) {
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}
