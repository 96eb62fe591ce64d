//! The load workers: acquire → hold (→ extend) → release → repeat, closed or open loop.
//!
//! Workers run in groups: one tokio task per group drives its workers concurrently and owns
//! one [`Recorder`], so memory stays bounded however many workers run, and no state is
//! shared between tasks on the hot path except the open-loop slot counter.
//!
//! Open loop: the schedule is one sequence of slots, slot k intended at `epoch + k / rate`.
//! A worker that is free takes the next slot (one atomic add), waits for its intended start
//! with [`crate::engine::pacing`] and runs it; when no worker is free at a slot's time, the first one
//! to become free takes it late. Latency counts from the intended start, so a stall is not
//! hidden (coordinated omission stays corrected), and the start lag shows the generator's own
//! timing error.

mod baseline;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use redlock_core::{Lock, Redlock, Retry, Vote};

use crate::engine::config::RunConfig;
use crate::engine::faults::client::WorkerFaults;
use crate::engine::history::{CycleLog, Lease, Op, Outcome};
use crate::engine::hooks::FirstLock;
use crate::engine::keys::Choices;
use crate::engine::locks::setup::LockSetup;
use crate::engine::pacing;
use crate::engine::recorder::{Failure, Recorder, WorkerState};
use crate::engine::storage::{self, Protected, Written};
use crate::signals::Stop;

/// The run's clock: the warm-up runs from `epoch` to `measure_start`, the measurement from
/// `measure_start` to `end`. No operation starts at or after `end`.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub epoch: Instant,
    pub measure_start: Instant,
    pub end: Instant,
}

/// The open-loop schedule, shared by all workers of a mode.
#[derive(Debug)]
pub struct Slots {
    next: AtomicU64,
    epoch: Instant,
    period_s: f64,
    /// The first slot intended at or after the measurement's start.
    pub first_measured: u64,
    /// The first slot intended at or after the end (never started).
    pub end: u64,
    /// Warm-up slots that were started.
    pub warmup_started: AtomicU64,
}

impl Slots {
    pub fn new(clock: &Clock, rate_per_s: f64) -> Slots {
        let slots_before =
            |t: Instant| ((t - clock.epoch).as_secs_f64() * rate_per_s).ceil() as u64;
        Slots {
            next: AtomicU64::new(0),
            epoch: clock.epoch,
            period_s: 1.0 / rate_per_s,
            first_measured: slots_before(clock.measure_start),
            end: slots_before(clock.end),
            warmup_started: AtomicU64::new(0),
        }
    }

    /// When slot `k` is intended to start.
    pub fn at(&self, k: u64) -> Instant {
        self.epoch + Duration::from_secs_f64(k as f64 * self.period_s)
    }

    /// Slots intended before `t` (from the epoch).
    pub fn before(&self, t: Instant) -> u64 {
        (((t - self.epoch).as_secs_f64() / self.period_s).ceil() as u64).min(self.end)
    }

    /// Takes the next slot for a worker that is free at `now`; `None` once the schedule is
    /// over. Warm-up slots still waiting when the measurement begins are skipped: every slot
    /// belongs to the phase of its intended start, and the measured phase starts on schedule.
    fn take(&self, now: Instant, measure_start: Instant) -> Option<u64> {
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k >= self.end {
                return None;
            }
            if k < self.first_measured && now >= measure_start {
                self.next.fetch_max(self.first_measured, Ordering::Relaxed);
                continue;
            }
            if k < self.first_measured {
                self.warmup_started.fetch_add(1, Ordering::Relaxed);
            }
            return Some(k);
        }
    }
}

/// What a worker needs; cheap to clone per worker.
#[derive(Debug, Clone)]
pub struct WorkerSetup {
    pub redlock: Redlock,
    pub cfg: Arc<RunConfig>,
    /// Resource names, by index.
    pub keys: Arc<[String]>,
    pub clock: Clock,
    /// The open-loop schedule (`None`: closed loop).
    pub slots: Option<Arc<Slots>>,
    /// Set to stop early (a signal): no new operation starts.
    pub stop: Arc<Stop>,
    /// Set when the grace after the end has passed: in-flight acquires are cancelled and
    /// holds cut short, so a run ends within its duration plus the grace.
    pub hard_stop: Arc<Stop>,
    /// The lock algorithm when it is not Redlock, and the client-side faults.
    pub lock: LockSetup,
    /// The protected resource and the token order (fenced or storage-writing runs).
    pub protected: Option<Arc<Protected>>,
    /// When the mode's first lock was granted (what faults timed `lock+D` wait for).
    pub first_lock: Arc<FirstLock>,
}

/// The recorder of one task. Only the workers of the task's task touch it, and a task is
/// polled by one thread at a time, so the lock is never contended; it exists because the
/// task must be `Send` to run on the multi-threaded runtime.
#[derive(Debug)]
struct TaskRecorder(Mutex<Recorder>);

impl TaskRecorder {
    fn with<R>(&self, f: impl FnOnce(&mut Recorder) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Runs the workers `indices` (their global indices) in one task until the clock's end (or a
/// stop) and returns the task's measurements.
pub async fn run_task(setup: WorkerSetup, indices: Vec<u32>, rec: Recorder) -> Recorder {
    let task = TaskRecorder(Mutex::new(rec));
    let workers = indices.iter().enumerate().map(|(position, &index)| {
        run_worker(&setup, index, WorkerState::new(position, index), &task)
    });
    futures_util::future::join_all(workers).await;
    let mut rec = task.0.into_inner().unwrap_or_else(PoisonError::into_inner);
    rec.flush_interval();
    rec
}

async fn run_worker(setup: &WorkerSetup, index: u32, mut worker: WorkerState, task: &TaskRecorder) {
    let cfg = &setup.cfg;
    let clock = setup.clock;
    let mut choices = Choices::new(cfg.seed, index, cfg.resources, cfg.key_dist, cfg.hold);
    let faults = setup.lock.faults_of(index);
    while !setup.stop.is_set() {
        let now = Instant::now();
        if now >= clock.end {
            break;
        }
        let intended = match &setup.slots {
            None => now,
            Some(slots) => {
                let Some(k) = slots.take(now, clock.measure_start) else {
                    break;
                };
                let intended = slots.at(k);
                let waited = intended > now;
                if waited {
                    // The hard stop too: whatever a wait does, the mode ends by its grace.
                    tokio::select! {
                        () = pacing::sleep_until(intended) => {}
                        () = setup.stop.wait() => break,
                        () = setup.hard_stop.wait() => break,
                    }
                }
                worker.measuring = intended >= clock.measure_start;
                let lag = Instant::now().saturating_duration_since(intended);
                task.with(|r| r.started(&worker, lag, !waited));
                intended
            }
        };
        worker.measuring = intended >= clock.measure_start;
        let c = Cycle::new(setup, task, worker.process, choices.resource());
        worker.begin_acquire();
        c.log.invoke(Op::Acquire, None, Instant::now);
        let alive = match &setup.lock.baseline {
            Some(baseline) => {
                c.baseline(baseline, &mut worker, &mut choices, intended, &faults)
                    .await
            }
            None => {
                c.redlock(&mut worker, &mut choices, intended, &faults)
                    .await
            }
        };
        if !alive {
            break; // crashed holding the lock (client fault): it never comes back
        }
    }
}

/// What one cycle works on: its worker's setup and recorder, the resource it locks, and its
/// history lines. Built once per cycle from borrows only (no allocation).
struct Cycle<'a> {
    setup: &'a WorkerSetup,
    task: &'a TaskRecorder,
    resource: u32,
    /// The resource's lock key, the process that locks it, and the history they go to.
    log: CycleLog<'a>,
}

/// How an acquire call ended.
// Moved once per cycle and matched at once, like the core's `Result<Option<Lock>>` it comes
// from: boxing the lock would allocate on the hot path.
#[allow(clippy::large_enum_variant)]
enum Acquired {
    /// Won: the lock, and when its holder learnt it won (ownership starts there).
    Held(Lock, Instant),
    /// Not won (failed, or cut off by the end-of-run grace): the worker goes on.
    NotHeld,
    /// Won, and the client crashed holding it (client fault): it never comes back.
    Crashed,
}

impl<'a> Cycle<'a> {
    #[inline]
    fn new(setup: &'a WorkerSetup, task: &'a TaskRecorder, process: u32, resource: u32) -> Self {
        let log = CycleLog {
            history: setup.cfg.history.as_deref(),
            process,
            key: &setup.keys[resource as usize],
        };
        Cycle {
            setup,
            task,
            resource,
            log,
        }
    }

    /// One Redlock acquire → hold → release cycle. `intended` is when the acquire should have
    /// started (closed loop: when it did start). `false` when the client crashed (client fault).
    async fn redlock(
        &self,
        worker: &mut WorkerState,
        choices: &mut Choices,
        intended: Instant,
        faults: &WorkerFaults,
    ) -> bool {
        let (setup, cfg) = (self.setup, &self.setup.cfg);
        // The highest token of the acquisitions completed before this one began.
        let token_floor = setup
            .protected
            .as_ref()
            .map(|p| p.order.floor(self.resource));
        let result = setup
            .redlock
            .acquire_cancellable(
                self.log.key,
                cfg.ttl,
                Retry::Configured,
                &mut |vote: &Vote| self.task.with(|r| r.attempt(worker, vote)),
                setup.hard_stop.wait(),
            )
            .await;
        let (mut lock, owned_from) = match self.acquired(worker, result, intended, faults) {
            Acquired::Held(lock, owned_from) => (lock, owned_from),
            Acquired::NotHeld => return true,
            Acquired::Crashed => return false, // dies holding the lock: its keys expire with the TTL
        };
        if let (Some(protected), Some(floor)) = (&setup.protected, token_floor) {
            if let Some(token) = lock.fencing_token() {
                let in_order = protected.order.completed(self.resource, floor, token);
                self.task.with(|r| r.token_issued(in_order));
            }
            self.write_while_held(protected, &lock, Some(faults)).await;
        }
        self.hold(worker, choices.hold(), &mut lock).await;
        if let (Some(protected), true) = (&setup.protected, cfg.write_at_release) {
            self.write_while_held(protected, &lock, None).await;
        }
        self.release(worker, &lock, owned_from).await;
        true
    }

    /// Ends the history's acquire at `at` without a lease (cancelled, crashed: outcome unknown).
    fn unknown(&self, at: Instant) {
        self.log.complete(Op::Acquire, Outcome::Info, None, || at);
    }

    /// An acquire call that ended at `done` (`latency` from its intended start) without a lock.
    fn lost(&self, worker: &WorkerState, failure: Failure, latency: Duration, done: Instant) {
        self.log.complete(Op::Acquire, Outcome::Fail, None, || done);
        self.task
            .with(|r| r.acquired(worker, Err(failure), latency, done));
    }

    /// An acquire call that won at `done`, its holder believing it owns the lock for
    /// `validity` from `owned_from` (`lease`: its history line).
    fn won(
        &self,
        worker: &WorkerState,
        faults: &WorkerFaults,
        (latency, done): (Duration, Instant),
        validity: Duration,
        lease: Lease<'_>,
        owned_from: Instant,
    ) {
        self.setup.first_lock.granted(done);
        if faults.crash_happened() {
            self.task.with(|r| r.acquired_after_crash());
        }
        self.task
            .with(|r| r.acquired(worker, Ok(validity), latency, done));
        self.log
            .complete(Op::Acquire, Outcome::Ok, Some(lease), || owned_from);
    }

    /// The start of a release (now) of the lock `token`, owned from `from` and believed valid
    /// until `valid_until`: records its ownership window and logs the invoke.
    fn release_started(
        &self,
        token: &str,
        lease: Lease<'_>,
        from: Instant,
        valid_until: Instant,
    ) -> Instant {
        let started = Instant::now();
        self.task
            .with(|r| r.owned(self.resource, token, from, valid_until.min(started)));
        self.log.invoke(Op::Release, Some(lease), || started);
        started
    }

    /// Waits `d` (sub-millisecond waits included); `false` when the end-of-run grace cut it
    /// short.
    async fn wait(&self, d: Duration) -> bool {
        if d.is_zero() {
            return !self.setup.hard_stop.is_set();
        }
        tokio::select! {
            () = pacing::sleep(d) => true,
            () = self.setup.hard_stop.wait() => false,
        }
    }

    /// Records the end of the acquire call that returned `result` just now; its latency counts
    /// from `intended`. A client fault may crash the winner here.
    #[inline]
    fn acquired(
        &self,
        worker: &WorkerState,
        result: redlock_core::Result<Option<Lock>>,
        intended: Instant,
        faults: &WorkerFaults,
    ) -> Acquired {
        let done = Instant::now();
        let latency = done.saturating_duration_since(intended);
        let lock = match result {
            Ok(Some(lock)) => lock,
            Ok(None) => {
                // Cut off by the end-of-run grace (its keys were deleted on every master).
                self.unknown(done);
                self.task.with(|r| r.cancelled(worker));
                return Acquired::NotHeld;
            }
            Err(e) => {
                self.lost(worker, Failure::of(&e), latency, done);
                return Acquired::NotHeld;
            }
        };
        self.setup.first_lock.granted(done);
        if faults.crash_now() {
            // Nobody learns the crashed holder's outcome: the own checker has no window for it.
            self.unknown(done);
            self.task.with(|r| r.crashed());
            return Acquired::Crashed;
        }
        // Ownership starts when the holder learns it won.
        let owned_from = lock.vote().completed();
        let timing = (latency, done);
        self.won(
            worker,
            faults,
            timing,
            lock.validity(),
            lease(&lock),
            owned_from,
        );
        Acquired::Held(lock, owned_from)
    }

    /// Holds `lock` for `hold`, extending it `extends_per_hold` times at even intervals; after
    /// a failed extend it only holds what is left.
    async fn hold(&self, worker: &WorkerState, hold: Duration, lock: &mut Lock) {
        let cfg = &self.setup.cfg;
        let piece = hold / (cfg.extends_per_hold + 1);
        for _ in 0..cfg.extends_per_hold {
            if !self.wait(piece).await {
                break;
            }
            let started = Instant::now();
            self.log.invoke(Op::Extend, Some(lease(lock)), || started);
            let result = self.setup.redlock.extend(lock, cfg.ttl).await;
            let latency = started.elapsed();
            let outcome = if result.is_ok() {
                Outcome::Ok
            } else {
                Outcome::Fail
            };
            self.log
                .complete(Op::Extend, outcome, Some(lease(lock)), Instant::now);
            let vote = result
                .as_ref()
                .map_or_else(|e| e.vote(), |()| Some(lock.vote()));
            let ok = result.is_ok();
            self.task.with(|r| r.extended(worker, ok, vote, latency));
            if !ok {
                break; // no longer held on a quorum: stop extending, still release what is left
            }
        }
        self.wait(hold.saturating_sub(piece * cfg.extends_per_hold))
            .await;
    }

    /// Releases `lock`, owned since `owned_from`, and records its ownership window.
    async fn release(&self, worker: &WorkerState, lock: &Lock, owned_from: Instant) {
        let token_only = Lease {
            valid_until: None,
            ..lease(lock)
        };
        let started =
            self.release_started(lock.token(), token_only, owned_from, lock.valid_until());
        let released = self.setup.redlock.release(lock).await;
        let latency = started.elapsed();
        let outcome = if released.is_ok() {
            Outcome::Ok
        } else {
            Outcome::Info
        };
        self.log
            .complete(Op::Release, outcome, Some(token_only), Instant::now);
        // A release reports 0 released rather than failing; an error still carries a vote.
        if let Some(vote) = released.as_ref().map_or_else(|e| e.vote(), Some) {
            self.task.with(|r| r.released(worker, vote, latency));
        }
    }

    /// The holder's write to the protected resource: checks that its lock is still valid,
    /// stops there when a pause is due (the fault), then writes (resource, token). A write
    /// sent after the validity ended is stale. A pause cut short by the end-of-run grace
    /// writes nothing (the lock is still released).
    async fn write_while_held(
        &self,
        protected: &Protected,
        lock: &Lock,
        faults: Option<&WorkerFaults>,
    ) {
        if !lock.is_valid() {
            return; // the holder knows it lost the lock: it does not write
        }
        // A holder pause (client fault) strikes the first write of a lock only.
        let pause = faults.map_or(Duration::ZERO, WorkerFaults::pause_now);
        if !pause.is_zero() && !self.wait(pause).await {
            return;
        }
        // The fencing token when fenced; an unfenced write stores the lock's own token.
        let value = lock
            .fencing_token()
            .map_or_else(|| lock.token().to_string(), |t| t.to_string());
        let sent = Instant::now();
        let claim = Lease {
            valid_until: None,
            ..lease(lock)
        };
        self.log.invoke(Op::Write, Some(claim), || sent);
        let written = protected.storage.write(self.resource, &value).await;
        let outcome = match written {
            Written::Stored => Outcome::Ok,
            Written::Refused => Outcome::Fail,
            Written::Failed(_) => Outcome::Info,
        };
        self.log
            .complete(Op::Write, outcome, Some(claim), Instant::now);
        let stale = storage::is_stale(sent, lock.valid_until());
        self.task.with(|r| r.stored(&written, stale));
    }
}

/// What a history line says of a held lock.
fn lease(lock: &Lock) -> Lease<'_> {
    Lease {
        token: lock.token(),
        fence: lock.fencing_token(),
        valid_until: Some(lock.valid_until()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(warmup_ms: u64, measured_ms: u64) -> Clock {
        let epoch = Instant::now();
        Clock {
            epoch,
            measure_start: epoch + Duration::from_millis(warmup_ms),
            end: epoch + Duration::from_millis(warmup_ms + measured_ms),
        }
    }

    #[test]
    fn slots_follow_the_rate_and_end_with_the_run() {
        let c = clock(250, 1000);
        let slots = Slots::new(&c, 400.0);
        assert_eq!((slots.first_measured, slots.end), (100, 500));
        assert_eq!(slots.at(0), c.epoch);
        assert_eq!(slots.at(100), c.measure_start);
        let mut taken = 0;
        while slots.take(c.epoch, c.measure_start).is_some() {
            taken += 1;
        }
        assert_eq!(taken, 500, "every slot before the end, once");
        assert_eq!(slots.warmup_started.load(Ordering::Relaxed), 100);
    }

    #[test]
    fn warm_up_slots_left_when_the_measurement_begins_are_skipped() {
        let c = clock(1000, 1000);
        let slots = Slots::new(&c, 1000.0);
        assert_eq!(slots.take(c.epoch, c.measure_start), Some(0));
        // A worker free only after the measurement began goes straight to its first slot.
        assert_eq!(slots.take(c.measure_start, c.measure_start), Some(1000));
        assert_eq!(slots.take(c.measure_start, c.measure_start), Some(1001));
        assert_eq!(slots.warmup_started.load(Ordering::Relaxed), 1);
        assert_eq!(slots.before(c.end), 2000);
    }
}
