//! The sections of a mode's result ([`crate::model::mode::ModeStats`], the JSON `mode`
//! object): each master's answers, vote patterns, latency histograms, the generator's cost and
//! judgement, fairness and rates. The measured ones add up exactly; the rest are derived.

use serde::{Deserialize, Serialize};

use crate::hist::Hist;

/// What one master answered and how fast, over all operations of a mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MasterStats {
    /// Its position in the result's `masters` (derived).
    pub index: usize,
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
        add_counts!(self, other; granted, denied, not_awaited, errors, timeouts);
    }
}

/// How the masters split in one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct VotePattern {
    pub granted: u16,
    pub denied: u16,
    /// Errors and timeouts.
    pub failed: u16,
    pub not_awaited: u16,
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
    /// Seconds the generator's threads were ready to run but waited for a core (Linux's run
    /// delay; absent where the platform does not tell). Other work on the machine, or more
    /// runnable threads than cores, shows up here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_s: Option<f64>,
}

impl GeneratorCpu {
    pub fn add(&mut self, other: &GeneratorCpu) {
        // The default (nothing measured yet) takes the other's wait; a part that could not
        // tell its wait leaves the sum unknown.
        let nothing_yet = self.core_s == 0.0;
        self.wait_s = match (self.wait_s, other.wait_s) {
            (Some(a), Some(b)) => Some(a + b),
            (None, b) if nothing_yet => b,
            _ => None,
        };
        self.user_s += other.user_s;
        self.sys_s += other.sys_s;
        self.core_s += other.core_s;
        self.cores = self.cores.max(other.cores);
    }

    /// Share of the time the generator was ready to run that it spent waiting for a core:
    /// wait ÷ (wait + CPU used). Near 0 on a machine with cores to spare.
    pub fn wait_share(&self) -> Option<f64> {
        let wait = self.wait_s?;
        let ready = wait + self.user_s + self.sys_s;
        (ready > 0.0).then(|| wait / ready)
    }

    /// Share of the machine's cores the generator used (0..=1).
    pub fn core_share(&self) -> f64 {
        super::per(self.user_s + self.sys_s, self.core_s)
    }
}

/// Rates and shares of one mode (derived from the counts and the duration).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Locks acquired per second of the measured window (merged: of the union of the parts'
    /// windows).
    pub acquires_per_s: f64,
    /// Merged results: locks acquired per second while every part was measuring (null for a
    /// single run, or when the parts never measured at the same time).
    pub acquires_per_s_while_all_measured: Option<f64>,
    /// Acquire calls started per second (open loop: the rate the schedule reached).
    pub started_per_s: f64,
    pub acquire_calls_per_s: f64,
    pub attempts_per_s: f64,
    pub redis_commands_per_s: f64,
    /// Redis commands per lock acquired (attempts, cleanups and releases included).
    #[serde(default)]
    pub redis_commands_per_cycle: f64,
    pub acquire_success_rate: f64,
    pub quorum_success_rate: f64,
}

/// The latency histograms of one mode, µs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Whole acquire call, retries included, successful or not (open loop: from the intended start).
    pub acquire: Hist,
    /// One attempt (the vote's elapsed time).
    pub attempt: Hist,
    pub release: Hist,
    pub extend: Hist,
    /// Validity left when a lock was acquired.
    pub validity_margin: Hist,
    /// Open loop: actual − intended start of each operation (the generator's timing error,
    /// plus the wait for a free client when all were busy).
    pub start_lag: Hist,
    /// Open loop: the start lag of the operations a free client waited for — the pacing
    /// error alone, without the wait for a client to become free.
    pub pacing_lag: Hist,
}

impl Latency {
    pub fn add(&mut self, other: &Latency) {
        self.acquire.add(&other.acquire);
        self.attempt.add(&other.attempt);
        self.release.add(&other.release);
        self.extend.add(&other.extend);
        self.validity_margin.add(&other.validity_margin);
        self.start_lag.add(&other.start_lag);
        self.pacing_lag.add(&other.pacing_lag);
    }
}

/// The generator's own cost and its judgement of the measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Generator {
    pub cpu: GeneratorCpu,
    /// (user + sys) ÷ acquire+release cycles started (derived).
    pub cpu_per_cycle_us: f64,
    /// (user + sys) ÷ (wall time × cores) (derived).
    pub core_share: f64,
    /// Derived ([`crate::model::generator::judge`]).
    #[serde(flatten)]
    pub judgement: Judgement,
}

/// Locks acquired per worker and how evenly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Derived: the length of `acquired_per_worker`.
    pub workers: usize,
    /// Derived.
    pub min_acquired: u64,
    /// Derived.
    pub max_acquired: u64,
    /// Derived: Jain's index of `acquired_per_worker`.
    pub jain_index: f64,
    pub acquired_per_worker: Vec<u64>,
}

/// What the generator says about one mode's measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Open loop: the rate asked for was not reached (dropped slots > 1% of the schedule).
    pub target_missed: bool,
    /// The figures measure this machine (or the generator's settings), not the masters.
    pub generator_bound: bool,
    /// Why, in words (empty when neither applies).
    pub reasons: Vec<String>,
}
