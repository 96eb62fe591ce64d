//! Recording without shared state: each group of workers (one tokio task) owns one [`Recorder`]
//! and hands its finished seconds to the run's control loop over a channel, once per second.
//! Per-worker bookkeeping lives in [`WorkerState`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use redlock_core::{Error, ErrorKind, Outcome, Verdict, Vote};
use tokio::sync::mpsc::UnboundedSender;

use crate::engine::checker::Window;
use crate::engine::locks::baseline::{Attempt, AttemptResult, Released};
use crate::engine::locks::master::RequestError;
use crate::engine::storage::Written;
use crate::hist::{Hist, PackedHist};
use crate::model::interval::{CallOutcome, Interval, MasterFailures};
use crate::model::mode::{ModeStats, VotePattern};

/// An open-loop operation that starts later than this after its intended start is "late".
pub const LATE_AFTER: Duration = Duration::from_millis(1);

/// A finished interval of one task: (its index, its counts and histograms).
pub type IntervalReport = (usize, Interval);

/// The interval being recorded: counts, and live histograms packed when it is sent.
#[derive(Debug)]
struct OpenInterval {
    index: usize,
    counts: Interval,
    /// Whole-acquire latency by how the call ended (their sum is the interval's `acquire`).
    acquire: BTreeMap<CallOutcome, Hist>,
    attempt: Hist,
    release: Hist,
    round_trip: Vec<Hist>,
    start_lag: Hist,
    /// Failed requests by (master, failure kind).
    failures: BTreeMap<(usize, &'static str), u64>,
}

/// The `error.type` of a request that timed out (docs/src/design.md#observability).
const TIMEOUT: &str = "timeout";

/// The `error.type` of a master's answer in a vote, `None` when it answered.
fn failure_kind(outcome: &Outcome) -> Option<&'static str> {
    match outcome {
        Outcome::Granted | Outcome::Denied | Outcome::NotAwaited => None,
        Outcome::TimedOut => Some(TIMEOUT),
        Outcome::Failed(kind) => Some(kind.as_str()),
        _ => Some("other"),
    }
}

/// The `error.type` of a single-master baseline's failed request (its error is text only).
fn request_failure_kind(e: &RequestError) -> &'static str {
    match e {
        RequestError::TimedOut => TIMEOUT,
        RequestError::Failed(_) => "other",
    }
}

/// Why an acquire call returned no lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Someone else held the lock.
    NotAcquired,
    /// Too few masters answered.
    Unavailable,
    Other,
}

impl Failure {
    /// Why a Redlock acquire call failed with `e`.
    pub fn of(e: &Error) -> Failure {
        match e.kind() {
            ErrorKind::NotAcquired => Failure::NotAcquired,
            ErrorKind::Unavailable => Failure::Unavailable,
            _ => Failure::Other,
        }
    }
}

/// What a worker keeps for itself while its task's recorder counts.
#[derive(Debug, Clone, Default)]
pub struct WorkerState {
    /// The worker's position in its task (its entry of `acquired_per_worker`).
    pub index: usize,
    /// The worker's global index (its process in a history).
    pub process: u32,
    /// False during the warm-up: operations are then not counted (their windows still are).
    pub measuring: bool,
    /// The previous attempt of the current acquire call was a split vote.
    previous_split: bool,
    /// Attempts of the current acquire call so far.
    call_attempts: u32,
}

impl WorkerState {
    pub fn new(index: usize, process: u32) -> WorkerState {
        WorkerState {
            index,
            process,
            ..WorkerState::default()
        }
    }

    /// Starts an acquire call (resets the split-vote-retry tracking).
    pub fn begin_acquire(&mut self) {
        self.previous_split = false;
        self.call_attempts = 0;
    }
}

/// One task's measurements.
#[derive(Debug)]
pub struct Recorder {
    pub stats: ModeStats,
    /// Ownership windows of every lock this worker held (warm-up included: safety is checked
    /// over the whole run).
    pub windows: Vec<Window>,
    epoch: Instant,
    measure_start: Instant,
    n_masters: u64,
    interval: Duration,
    current: Option<OpenInterval>,
    intervals: UnboundedSender<IntervalReport>,
}

impl Recorder {
    /// Records into `stats` (the empty figures of its mode) for `workers` workers.
    pub fn new(
        mut stats: ModeStats,
        workers: usize,
        (epoch, measure_start): (Instant, Instant),
        interval: Duration,
        intervals: UnboundedSender<IntervalReport>,
    ) -> Recorder {
        stats.fairness.acquired_per_worker = vec![0; workers];
        Recorder {
            n_masters: stats.masters.len() as u64,
            stats,
            windows: Vec::new(),
            epoch,
            measure_start,
            interval,
            current: None,
            intervals,
        }
    }

    /// The interval `at` falls in (flushing the previous one when it changed).
    fn interval_at(&mut self, at: Instant) -> &mut OpenInterval {
        let elapsed = at.saturating_duration_since(self.measure_start);
        let index = (elapsed.as_nanos() / self.interval.as_nanos().max(1)) as usize;
        if self.current.as_ref().is_some_and(|i| i.index != index) {
            self.flush_interval();
        }
        let n_masters = self.n_masters as usize;
        self.current.get_or_insert_with(|| OpenInterval {
            index,
            counts: Interval::default(),
            acquire: BTreeMap::new(),
            attempt: Hist::new(),
            release: Hist::new(),
            round_trip: vec![Hist::new(); n_masters],
            start_lag: Hist::new(),
            failures: BTreeMap::new(),
        })
    }

    /// Sends the current interval to the control loop.
    pub fn flush_interval(&mut self) {
        if let Some(open) = self.current.take() {
            let mut interval = open.counts;
            interval.acquire_by_outcome = open
                .acquire
                .iter()
                .map(|(outcome, h)| (*outcome, PackedHist::pack(h)))
                .collect();
            interval.acquire = match open.acquire.len() {
                // Usually every call of an interval ended one way: its histogram is the sum.
                1 => interval
                    .acquire_by_outcome
                    .values()
                    .next()
                    .cloned()
                    .unwrap_or_default(),
                _ => {
                    let mut sum = Hist::new();
                    open.acquire.values().for_each(|h| sum.add(h));
                    PackedHist::pack(&sum)
                }
            };
            interval.start_lag = PackedHist::pack(&open.start_lag);
            interval.failures = open
                .failures
                .iter()
                .map(|(&(master, kind), &requests)| MasterFailures {
                    master,
                    error_type: kind.to_string(),
                    requests,
                })
                .collect();
            interval.attempt = PackedHist::pack(&open.attempt);
            interval.release = PackedHist::pack(&open.release);
            interval.round_trip = open.round_trip.iter().map(PackedHist::pack).collect();
            interval.add_to(&mut self.stats.counts);
            // The receiver only goes away when the run is over: nothing left to report to.
            let _ = self.intervals.send((open.index, interval));
        }
    }

    /// One attempt's vote, seen by the acquire observer.
    pub fn attempt(&mut self, worker: &mut WorkerState, vote: &Vote) {
        let verdict = vote.verdict();
        let retried_after_split =
            std::mem::replace(&mut worker.previous_split, verdict == Verdict::SplitVote);
        worker.call_attempts += 1;
        if !worker.measuring {
            return;
        }
        let c = &mut self.stats.counts;
        c.retried_calls += u64::from(worker.call_attempts == 2);
        c.split_vote_retries += u64::from(retried_after_split);
        // A lost attempt's cleanup is one more command on every master.
        c.redis_commands += self.n_masters * if verdict == Verdict::Won { 1 } else { 2 };
        let mut pattern = VotePattern {
            granted: 0,
            denied: 0,
            failed: 0,
            not_awaited: 0,
        };
        for m in vote.masters() {
            let Some(master) = self.stats.masters.get_mut(m.master) else {
                continue;
            };
            match m.outcome {
                Outcome::Granted => {
                    master.granted += 1;
                    pattern.granted += 1;
                }
                Outcome::Denied => {
                    master.denied += 1;
                    pattern.denied += 1;
                }
                Outcome::NotAwaited => {
                    master.not_awaited += 1;
                    pattern.not_awaited += 1;
                }
                _ => pattern.failed += 1,
            }
            if let Some(kind) = failure_kind(&m.outcome) {
                self.master_failed(m.master, kind, vote.completed());
            }
        }
        *self.stats.vote_patterns.entry(pattern).or_default() += 1;
        // Only answers are round trips: a failed request's time is not (docs/src/design.md#metrics).
        let round_trips = vote.masters().iter().filter_map(|m| match m.outcome {
            Outcome::Granted | Outcome::Denied => Some((m.master, m.round_trip?)),
            _ => None,
        });
        self.count_attempt(verdict, vote.elapsed(), vote.completed(), round_trips);
    }

    /// An attempt of any lock algorithm that ended at `at`: its verdict, its duration and
    /// its round trips by master, in the mode's and the interval's figures.
    fn count_attempt(
        &mut self,
        verdict: Verdict,
        elapsed: Duration,
        at: Instant,
        round_trips: impl Iterator<Item = (usize, Duration)> + Clone,
    ) {
        self.stats.latency.attempt.record_duration(elapsed);
        for (m, rtt) in round_trips.clone() {
            if let Some(master) = self.stats.masters.get_mut(m) {
                master.round_trip.record_duration(rtt);
            }
        }
        let open = self.interval_at(at);
        open.attempt.record_duration(elapsed);
        for (m, rtt) in round_trips {
            if let Some(h) = open.round_trip.get_mut(m) {
                h.record_duration(rtt);
            }
        }
        let i = &mut open.counts;
        i.attempts += 1;
        match verdict {
            Verdict::Won => i.attempts_won += 1,
            Verdict::SplitVote => i.split_votes += 1,
            Verdict::CleanLoss => i.clean_losses += 1,
            Verdict::Expired => i.expired_attempts += 1,
            Verdict::Unavailable => i.unavailable_attempts += 1,
            _ => {}
        }
    }

    /// An open-loop operation started `lag` after its intended start; `no_free_worker`: its
    /// slot was already due when a worker became free.
    pub fn started(&mut self, worker: &WorkerState, lag: Duration, no_free_worker: bool) {
        if !worker.measuring {
            return;
        }
        self.stats.latency.start_lag.record_duration(lag);
        self.interval_at(Instant::now())
            .start_lag
            .record_duration(lag);
        if !no_free_worker {
            self.stats.latency.pacing_lag.record_duration(lag);
        }
        if lag > LATE_AFTER {
            self.stats.counts.late_starts += 1;
            self.stats.counts.late_no_free_client += u64::from(no_free_worker);
        }
    }

    /// An acquire call cut off by the end-of-run grace.
    pub fn cancelled(&mut self, worker: &WorkerState) {
        if worker.measuring {
            self.stats.counts.cancelled_calls += 1;
        }
    }

    /// The end of an acquire call of any lock algorithm; `latency` counts from its
    /// (intended) start.
    pub fn acquired(
        &mut self,
        worker: &WorkerState,
        result: Result<Duration, Failure>,
        latency: Duration,
        done: Instant,
    ) {
        if !worker.measuring {
            return;
        }
        if let Ok(validity) = result {
            self.stats.fairness.acquired_per_worker[worker.index] += 1;
            self.stats.latency.validity_margin.record_duration(validity);
        }
        self.stats.latency.acquire.record_duration(latency);
        let at_ms = done
            .saturating_duration_since(self.measure_start)
            .as_millis() as u64;
        let outcome = match result {
            Ok(_) => CallOutcome::Acquired,
            Err(Failure::NotAcquired) => CallOutcome::NotAcquired,
            Err(Failure::Unavailable) => CallOutcome::Unavailable,
            Err(Failure::Other) => CallOutcome::Error,
        };
        let open = self.interval_at(done);
        open.acquire
            .entry(outcome)
            .or_default()
            .record_duration(latency);
        let i = &mut open.counts;
        i.acquire_calls += 1;
        match outcome {
            CallOutcome::Acquired => {
                i.acquired += 1;
                i.first_acquired_ms = Some(i.first_acquired_ms.map_or(at_ms, |f| f.min(at_ms)));
                i.last_acquired_ms = i.last_acquired_ms.max(Some(at_ms));
            }
            CallOutcome::NotAcquired => i.not_acquired += 1,
            CallOutcome::Unavailable => i.unavailable += 1,
            CallOutcome::Error => i.other_errors += 1,
        }
    }

    /// A release and its vote.
    pub fn released(&mut self, worker: &WorkerState, vote: &Vote, latency: Duration) {
        if !worker.measuring {
            return;
        }
        let c = &mut self.stats.counts;
        c.redis_commands += self.n_masters;
        if vote.granted() < vote.masters().len() {
            c.partial_releases += 1;
        }
        self.stats.latency.release.record_duration(latency);
        self.count_failures(vote);
        self.interval_released(latency);
    }

    /// An extend; `vote` is its vote when one was made.
    pub fn extended(
        &mut self,
        worker: &WorkerState,
        ok: bool,
        vote: Option<&Vote>,
        latency: Duration,
    ) {
        if !worker.measuring {
            return;
        }
        let c = &mut self.stats.counts;
        c.extends += 1;
        c.redis_commands += self.n_masters;
        c.extend_failures += u64::from(!ok);
        self.stats.latency.extend.record_duration(latency);
        if let Some(vote) = vote {
            self.count_failures(vote);
        }
    }

    fn count_failures(&mut self, vote: &Vote) {
        let now = Instant::now();
        for m in vote.masters() {
            if let Some(kind) = failure_kind(&m.outcome) {
                self.master_failed(m.master, kind, now);
            }
        }
    }

    /// A request to master `index` failed at `at` (`kind`: its `error.type`).
    fn master_failed(&mut self, index: usize, kind: &'static str, at: Instant) {
        let Some(master) = self.stats.masters.get_mut(index) else {
            return;
        };
        if kind == TIMEOUT {
            master.timeouts += 1;
        } else {
            master.errors += 1;
        }
        *self
            .interval_at(at)
            .failures
            .entry((index, kind))
            .or_default() += 1;
    }

    /// A lock (`token`) this worker owned from `from` until `until` (both monotonic).
    pub fn owned(&mut self, resource: u32, token: &str, from: Instant, until: Instant) {
        let ns = |t: Instant| t.saturating_duration_since(self.epoch).as_nanos() as u64;
        self.windows.push(Window {
            resource,
            start_ns: ns(from),
            end_ns: ns(until),
            token: crate::engine::checker::token_bytes(token),
        });
    }

    /// One attempt of a single-master baseline (no vote: master 0 is the only master).
    pub fn baseline_attempt(&mut self, worker: &mut WorkerState, attempt: &Attempt) {
        if !worker.measuring {
            return;
        }
        self.stats.counts.redis_commands += attempt.commands;
        let verdict = match &attempt.result {
            AttemptResult::Acquired(_) | AttemptResult::Crashed => Verdict::Won,
            AttemptResult::Denied => Verdict::CleanLoss,
            // No denial: the master was unreachable, not held by another (docs/src/design.md#metrics).
            AttemptResult::Failed(e) => {
                self.master_failed(0, request_failure_kind(e), Instant::now());
                Verdict::Unavailable
            }
        };
        if let Some(m) = self.stats.masters.first_mut() {
            m.granted += u64::from(verdict == Verdict::Won);
            m.denied += u64::from(verdict == Verdict::CleanLoss);
        }
        let round_trip = attempt.first_round_trip.map(|rtt| (0, rtt));
        self.count_attempt(
            verdict,
            attempt.elapsed,
            Instant::now(),
            round_trip.into_iter(),
        );
    }

    /// A baseline's release.
    pub fn baseline_released(
        &mut self,
        worker: &WorkerState,
        released: &Released,
        latency: Duration,
    ) {
        if !worker.measuring {
            return;
        }
        let c = &mut self.stats.counts;
        c.redis_commands += released.commands;
        c.partial_releases += u64::from(!released.deleted);
        c.foreign_releases += u64::from(released.foreign);
        if let Some(e) = &released.error {
            self.master_failed(0, request_failure_kind(e), Instant::now());
        }
        self.stats.latency.release.record_duration(latency);
        self.interval_released(latency);
    }

    /// A release that ended now, in the current interval.
    fn interval_released(&mut self, latency: Duration) {
        let open = self.interval_at(Instant::now());
        open.release.record_duration(latency);
        open.counts.releases += 1;
    }

    /// A worker died holding the lock (the crash fault); counted even during the warm-up.
    pub fn crashed(&mut self) {
        self.stats.counts.crashed_clients += 1;
    }

    /// A lock acquired with a fencing token; `in_order`: above every token completed before
    /// its acquisition began. Counted even during the warm-up (a safety figure).
    pub fn token_issued(&mut self, in_order: bool) {
        let f = self.stats.fencing.get_or_insert_with(Default::default);
        f.tokens_issued += 1;
        f.token_order_violations += u64::from(!in_order);
    }

    /// A holder's write to the protected resource; `stale`: sent after its lock's validity
    /// had ended. Counted even during the warm-up.
    pub fn stored(&mut self, written: &Written, stale: bool) {
        let f = self.stats.fencing.get_or_insert_with(Default::default);
        f.storage_writes += 1;
        match written {
            Written::Stored => f.stale_writes_accepted += u64::from(stale),
            Written::Refused => {
                f.storage_writes_rejected += 1;
                f.stale_writes_rejected += u64::from(stale);
            }
            Written::Failed(_) => f.storage_errors += 1,
        }
    }

    /// A lock won after a worker died holding one; counted even during the warm-up.
    pub fn acquired_after_crash(&mut self) {
        self.stats.counts.acquired_after_crash += 1;
    }
}
