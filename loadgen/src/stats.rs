//! What one fan-out mode measured: counters and histograms that add up exactly, so per-worker
//! results merge into a mode's result and result files from several machines merge into one.
//! Rates and ratios are derived from these on output, never stored and never averaged.

use std::collections::BTreeMap;
use std::time::Duration;

use redlock_core::FanOut;
use serde::{Deserialize, Serialize};

use crate::hist::Hist;
use crate::locks::LockAlgorithm;

macro_rules! counts {
    ($($(#[$doc:meta])* $field:ident),* $(,)?) => {
        /// Event counters of one mode (DESIGN §4 definitions).
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct Counts {
            $($(#[$doc])* pub $field: u64,)*
        }

        impl Counts {
            /// Adds every counter of `other`.
            pub fn add(&mut self, other: &Counts) {
                $(self.$field += other.$field;)*
            }
        }
    };
}

counts! {
    /// Acquire calls made (each makes 1..=retry_count+1 attempts).
    acquire_calls,
    /// Acquire calls that returned a lock.
    acquired,
    /// Acquire calls that lost to contention (NotAcquired).
    not_acquired,
    /// Acquire calls refused because too few masters answered (Unavailable).
    unavailable,
    /// Acquire calls that failed otherwise (Internal).
    other_errors,
    /// Attempts (SET NX PX rounds).
    attempts,
    /// Attempts that won: granted ≥ quorum and validity > 0.
    attempts_won,
    /// Lost attempts with 0 < granted < quorum.
    split_votes,
    /// Split votes followed by another attempt of the same call.
    split_vote_retries,
    /// Lost attempts with granted = 0.
    clean_losses,
    /// Attempts that won a quorum after their validity ran out.
    expired_attempts,
    /// Releases made.
    releases,
    /// Releases that deleted the key on fewer than all masters.
    partial_releases,
    /// Extends made.
    extends,
    /// Extends that did not renew the lock.
    extend_failures,
    /// Redis commands sent: one per master for every attempt, cleanup, release and extend.
    redis_commands,
    /// Acquire calls cut off by the end-of-run grace (not in `acquire_calls`; their keys were
    /// deleted on every master).
    cancelled_calls,
    /// Open loop: slots intended in the measured window (each started, or dropped).
    scheduled_slots,
    /// Open loop: operations that started more than 1 ms after their intended start.
    late_starts,
    /// Open loop: late starts whose slot was already due when a client became free (every
    /// client was busy at the intended time).
    late_no_free_client,
    /// Open loop: slots of the measured window never started because the run ended first.
    dropped_slots,
    /// Open loop: warm-up slots not yet started when the measurement began, skipped (not run,
    /// not counted: every slot belongs to the phase of its intended start).
    warmup_slots_skipped,
    /// Ownership windows checked for mutual exclusion.
    windows_checked,
    /// Pairs of holders of one resource whose ownership windows overlapped.
    violations,
    /// Single-master baselines: releases that deleted someone else's lock (a `DEL` without
    /// a token after the lock had passed to another holder).
    foreign_releases,
    /// Clients that died holding the lock (the `crash` client fault).
    crashed_clients,
    /// Locks acquired after a client died holding one (the `crash` client fault): 0 means the
    /// dead client's lock was never freed (a stuck lock).
    acquired_after_crash,
}

/// What one master answered and how fast, over all operations of a mode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MasterStats {
    /// Round trips of its acquire-attempt requests (answered ones), µs.
    pub round_trip: Hist,
    /// Attempts it granted.
    pub granted: u64,
    /// Attempts it denied (key held by another token).
    pub denied: u64,
    /// Attempts decided before it answered (concurrent fan-out).
    pub not_awaited: u64,
    /// Errors it returned in any operation (attempt, cleanup, release, extend).
    pub errors: u64,
    /// Requests it did not answer within the per-master timeout, in any operation.
    pub timeouts: u64,
}

impl MasterStats {
    pub fn add(&mut self, other: &MasterStats) {
        self.round_trip.add(&other.round_trip);
        self.granted += other.granted;
        self.denied += other.denied;
        self.not_awaited += other.not_awaited;
        self.errors += other.errors;
        self.timeouts += other.timeouts;
    }
}

/// How the masters split in one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VotePattern {
    pub granted: u16,
    pub denied: u16,
    /// Errors and timeouts.
    pub failed: u16,
    pub not_awaited: u16,
}

/// One second of the measured window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    pub acquire_calls: u64,
    pub acquired: u64,
    pub attempts: u64,
    pub split_votes: u64,
    /// Whole-acquire latency of the calls that completed in this second, µs.
    pub acquire: Hist,
}

impl Interval {
    pub fn add(&mut self, other: &Interval) {
        self.acquire_calls += other.acquire_calls;
        self.acquired += other.acquired;
        self.attempts += other.attempts;
        self.split_votes += other.split_votes;
        self.acquire.add(&other.acquire);
    }
}

/// The load generator's own CPU over the measured window (user + sys time of the process: every
/// thread, the pacing thread's spinning included; local masters are other processes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorCpu {
    pub user_s: f64,
    pub sys_s: f64,
    /// Core-seconds the machine offered over the same window (wall time × cores).
    pub core_s: f64,
    /// Cores of the machine (merged: the largest).
    pub cores: u32,
}

impl GeneratorCpu {
    pub fn add(&mut self, other: &GeneratorCpu) {
        self.user_s += other.user_s;
        self.sys_s += other.sys_s;
        self.core_s += other.core_s;
        self.cores = self.cores.max(other.cores);
    }

    /// Share of the machine's cores the generator used (0..=1).
    pub fn core_share(&self) -> f64 {
        if self.core_s > 0.0 {
            (self.user_s + self.sys_s) / self.core_s
        } else {
            0.0
        }
    }
}

/// Everything one fan-out mode measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeStats {
    /// The lock algorithm measured (Redlock unless `--lock` chose a baseline).
    pub lock: LockAlgorithm,
    /// Redlock's fan-out (meaningless for the single-master baselines).
    pub fanout: FanOut,
    /// Length of the measured window (merged: the longest part; see `merge` for the rates).
    pub duration: Duration,
    /// Wall-clock start of the measured window, ms since the Unix epoch (merged: the earliest).
    pub measured_from_unix_ms: u64,
    /// Per-part measured windows of a merged result (`[from_ms, to_ms]`); empty for one run.
    pub windows_unix_ms: Vec<(u64, u64)>,
    pub counts: Counts,
    /// Whole acquire call, retries included, successful or not (open loop: from the intended start).
    pub acquire: Hist,
    /// One attempt (the vote's elapsed time).
    pub attempt: Hist,
    pub release: Hist,
    pub extend: Hist,
    /// Validity left when a lock was acquired, µs.
    pub validity_margin: Hist,
    /// Open loop: actual − intended start of each operation, µs (the generator's timing error,
    /// plus the wait for a free client when all were busy).
    pub start_lag: Hist,
    /// Open loop: the start lag of the operations a free client waited for — the pacing
    /// error alone, without the wait for a client to become free.
    pub pacing_lag: Hist,
    pub cpu: GeneratorCpu,
    pub masters: Vec<MasterStats>,
    pub vote_patterns: BTreeMap<VotePattern, u64>,
    /// Locks acquired by each worker (fairness).
    pub acquired_per_worker: Vec<u64>,
    /// Per-second series of the measured window, indexed by second.
    pub intervals: Vec<Interval>,
}

impl ModeStats {
    pub fn new(fanout: FanOut, n_masters: usize) -> ModeStats {
        ModeStats {
            lock: LockAlgorithm::Redlock,
            fanout,
            duration: Duration::ZERO,
            measured_from_unix_ms: 0,
            windows_unix_ms: Vec::new(),
            counts: Counts::default(),
            acquire: Hist::new(),
            attempt: Hist::new(),
            release: Hist::new(),
            extend: Hist::new(),
            validity_margin: Hist::new(),
            start_lag: Hist::new(),
            pacing_lag: Hist::new(),
            cpu: GeneratorCpu::default(),
            masters: vec![MasterStats::default(); n_masters],
            vote_patterns: BTreeMap::new(),
            acquired_per_worker: Vec::new(),
            intervals: Vec::new(),
        }
    }

    /// Adds `other` (same fan-out mode) as if measured over the same window: counts and
    /// histograms add, worker lists concatenate, intervals add second by second, the duration
    /// is the longer one. (Shards of one run; `merge` aligns result files by wall clock.)
    pub fn add(&mut self, other: &ModeStats) {
        self.duration = self.duration.max(other.duration);
        self.add_measurements(other);
        self.add_intervals(other.intervals.iter().cloned().enumerate());
    }

    /// Adds everything but the duration and the per-second series.
    pub fn add_measurements(&mut self, other: &ModeStats) {
        self.cpu.add(&other.cpu);
        self.start_lag.add(&other.start_lag);
        self.pacing_lag.add(&other.pacing_lag);
        self.counts.add(&other.counts);
        self.acquire.add(&other.acquire);
        self.attempt.add(&other.attempt);
        self.release.add(&other.release);
        self.extend.add(&other.extend);
        self.validity_margin.add(&other.validity_margin);
        if self.masters.len() < other.masters.len() {
            self.masters
                .resize(other.masters.len(), MasterStats::default());
        }
        for (mine, theirs) in self.masters.iter_mut().zip(&other.masters) {
            mine.add(theirs);
        }
        for (pattern, n) in &other.vote_patterns {
            *self.vote_patterns.entry(*pattern).or_default() += n;
        }
        self.acquired_per_worker
            .extend_from_slice(&other.acquired_per_worker);
    }

    /// Adds intervals given as (second, interval).
    pub fn add_intervals(&mut self, intervals: impl IntoIterator<Item = (usize, Interval)>) {
        for (second, interval) in intervals {
            if self.intervals.len() <= second {
                self.intervals.resize(second + 1, Interval::default());
            }
            self.intervals[second].add(&interval);
        }
    }

    fn per_second(&self, n: u64) -> f64 {
        let secs = self.duration.as_secs_f64();
        if secs > 0.0 {
            n as f64 / secs
        } else {
            0.0
        }
    }

    /// The mode's name in reports: the fan-out for Redlock, the algorithm for a baseline.
    pub fn label(&self) -> &'static str {
        match self.lock {
            LockAlgorithm::Redlock => self.fanout.as_str(),
            other => other.as_str(),
        }
    }

    /// Whether `other` measured the same lock and fan-out (merge pairs modes by this).
    pub fn same_mode(&self, lock: LockAlgorithm, fanout: FanOut) -> bool {
        self.lock == lock && (!lock.votes() || self.fanout == fanout)
    }

    /// Redis commands per lock acquired (attempts, cleanups and releases included).
    pub fn redis_commands_per_cycle(&self) -> f64 {
        ratio(self.counts.redis_commands, self.counts.acquired)
    }

    /// Locks acquired per second (goodput).
    pub fn acquires_per_s(&self) -> f64 {
        self.per_second(self.counts.acquired)
    }
    pub fn acquire_calls_per_s(&self) -> f64 {
        self.per_second(self.counts.acquire_calls)
    }
    pub fn attempts_per_s(&self) -> f64 {
        self.per_second(self.counts.attempts)
    }
    pub fn redis_commands_per_s(&self) -> f64 {
        self.per_second(self.counts.redis_commands)
    }
    /// Acquire calls started per second (open loop: the rate the schedule reached).
    pub fn started_per_s(&self) -> f64 {
        self.per_second(self.counts.acquire_calls + self.counts.cancelled_calls)
    }
    /// Generator CPU (user + sys) per acquire+release cycle, µs.
    pub fn cpu_per_cycle_us(&self) -> f64 {
        let cycles = self.counts.acquire_calls + self.counts.cancelled_calls;
        if cycles == 0 {
            return 0.0;
        }
        (self.cpu.user_s + self.cpu.sys_s) * 1e6 / cycles as f64
    }
    /// acquired / acquire calls.
    pub fn acquire_success_rate(&self) -> f64 {
        ratio(self.counts.acquired, self.counts.acquire_calls)
    }
    /// won attempts / attempts.
    pub fn quorum_success_rate(&self) -> f64 {
        ratio(self.counts.attempts_won, self.counts.attempts)
    }
    /// Attempts lost for any reason.
    pub fn attempts_lost(&self) -> u64 {
        self.counts.attempts - self.counts.attempts_won
    }

    /// Jain's fairness index of locks acquired per worker: 1 = perfectly even, 1/n = one
    /// worker got everything.
    pub fn jain_index(&self) -> f64 {
        let n = self.acquired_per_worker.len() as f64;
        let sum: f64 = self.acquired_per_worker.iter().map(|&x| x as f64).sum();
        let squares: f64 = self
            .acquired_per_worker
            .iter()
            .map(|&x| (x as f64) * (x as f64))
            .sum();
        if squares == 0.0 {
            return 1.0;
        }
        sum * sum / (n * squares)
    }
}

/// `num / den`, 0 when there is nothing to divide.
pub fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_is_one_when_even_and_one_over_n_when_one_worker_wins_all() {
        let mut s = ModeStats::new(FanOut::Concurrent, 5);
        s.acquired_per_worker = vec![10, 10, 10, 10];
        assert!((s.jain_index() - 1.0).abs() < 1e-12);
        s.acquired_per_worker = vec![40, 0, 0, 0];
        assert!((s.jain_index() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn adding_stats_adds_counts_histograms_and_intervals() {
        let mut a = ModeStats::new(FanOut::Sequential, 2);
        a.duration = Duration::from_secs(10);
        a.counts.attempts = 3;
        a.acquire.record(100);
        a.masters[1].errors = 2;
        a.acquired_per_worker = vec![1];
        a.add_intervals([(
            1,
            Interval {
                acquired: 2,
                ..Interval::default()
            },
        )]);
        let mut b = a.clone();
        b.duration = Duration::from_secs(12);
        b.add(&a);
        assert_eq!(b.duration, Duration::from_secs(12));
        assert_eq!(b.counts.attempts, 6);
        assert_eq!(b.acquire.count(), 2);
        assert_eq!(b.masters[1].errors, 4);
        assert_eq!(b.acquired_per_worker, vec![1, 1]);
        assert_eq!(b.intervals.len(), 2);
        assert_eq!(b.intervals[1].acquired, 4);
    }
}
