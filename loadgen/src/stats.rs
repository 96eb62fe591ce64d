//! What one fan-out mode measured: counters and histograms that add up exactly, so per-worker
//! results merge into a mode's result and result files from several machines merge into one.
//! Rates and ratios are derived from these on output, never stored and never averaged.

use std::collections::BTreeMap;
use std::time::Duration;

use redlock_core::FanOut;
use serde::{Deserialize, Serialize};

use crate::hist::Hist;

macro_rules! counts {
    ($($(#[$doc:meta])* $field:ident),* $(,)?) => {
        /// Event counters of one mode (DESIGN §4 definitions).
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
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
    /// Open loop: operations that started more than 1 ms after their intended start.
    late_starts,
    /// Open loop: scheduled operations never started because the run ended first.
    dropped_slots,
    /// Ownership windows checked for mutual exclusion.
    windows_checked,
    /// Pairs of holders of one resource whose ownership windows overlapped.
    violations,
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

/// Everything one fan-out mode measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeStats {
    pub fanout: FanOut,
    /// Length of the measured window (merged files: the longest part).
    pub duration: Duration,
    pub counts: Counts,
    /// Whole acquire call, retries included, successful or not (open loop: from the intended start).
    pub acquire: Hist,
    /// One attempt (the vote's elapsed time).
    pub attempt: Hist,
    pub release: Hist,
    pub extend: Hist,
    /// Validity left when a lock was acquired, µs.
    pub validity_margin: Hist,
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
            fanout,
            duration: Duration::ZERO,
            counts: Counts::default(),
            acquire: Hist::new(),
            attempt: Hist::new(),
            release: Hist::new(),
            extend: Hist::new(),
            validity_margin: Hist::new(),
            masters: vec![MasterStats::default(); n_masters],
            vote_patterns: BTreeMap::new(),
            acquired_per_worker: Vec::new(),
            intervals: Vec::new(),
        }
    }

    /// Adds `other` (same fan-out mode): counts and histograms add, worker lists concatenate,
    /// intervals add second by second, the duration is the longer one.
    pub fn add(&mut self, other: &ModeStats) {
        self.duration = self.duration.max(other.duration);
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
        self.add_intervals(other.intervals.iter().cloned().enumerate());
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
