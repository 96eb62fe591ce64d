//! What one fan-out mode measured: counters and histograms that add up exactly, so per-worker
//! results merge into a mode's result and result files from several machines merge into one.
//! Rates, shares and the generator's judgement are derived from them by
//! [`ModeStats::derive`] (never added, never averaged); this struct is also the JSON `mode`
//! object (`loadgen/schema.json`), so the derived figures are kept next to what they come from.

use std::collections::BTreeMap;
use std::time::Duration;

use redlock_core::FanOut;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use super::counts::Counts;
use super::interval::Interval;
pub use super::mode_sections::{
    Fairness, Generator, GeneratorCpu, Judgement, Latency, MasterStats, Rates, VotePattern,
};
use super::per;
use crate::model::lock::LockAlgorithm;

/// Everything one fan-out mode measured (the JSON `mode`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeStats {
    /// The lock algorithm measured (Redlock unless `--lock` chose a baseline).
    #[serde(default)]
    pub lock: LockAlgorithm,
    /// Redlock's fan-out (meaningless for the single-master baselines).
    #[serde(with = "fanout_name")]
    pub fanout: FanOut,
    /// Length of the measured window (merged: the longest part; see `merge` for the rates).
    #[serde(rename = "duration_s", with = "seconds")]
    pub duration: Duration,
    /// Wall-clock start of the measured window, ms since the Unix epoch (merged: the earliest).
    pub measured_from_unix_ms: u64,
    /// Per-part measured windows of a merged result (`[from_ms, to_ms]`); empty for one run.
    pub windows_unix_ms: Vec<(u64, u64)>,
    pub counts: Counts,
    pub rates: Rates,
    pub latency: Latency,
    pub generator: Generator,
    pub masters: Vec<MasterStats>,
    #[serde(with = "pattern_list")]
    pub vote_patterns: BTreeMap<VotePattern, u64>,
    pub fairness: Fairness,
    /// Length of one interval of `intervals`, ms (schema version 2 and 3 results: 1000).
    #[serde(default = "one_second_ms")]
    pub interval_ms: u64,
    /// The measured window interval by interval, indexed by interval.
    pub intervals: Vec<Interval>,
    /// Where no lock was acquired while masters were missing (derived from `intervals`).
    #[serde(default)]
    pub outages: Vec<super::outage::Outage>,
    /// Merged results: each part's own series, on the merged timeline (absent for one run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub part_series: Vec<PartSeries>,
    /// Fencing tokens and the protected resource's writes (absent: neither was used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fencing: Option<super::fencing::FencingStats>,
    /// `run --repeat N`: each repeat's span of `intervals` (absent for one run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<Repeat>,
    /// Derived: the headline figures with their 95 % intervals, resampled from `intervals`
    /// (absent when there are no intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimates: Option<super::uncertainty::ModeEstimates>,
}

/// One repeat of a mode: where its intervals lie in the mode's series and how long it measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Repeat {
    /// Index of its first interval in the mode's `intervals`.
    pub first_interval: usize,
    /// How many intervals it has.
    pub intervals: usize,
    /// Its measured window, s.
    pub duration_s: f64,
    /// Wall-clock start of its measured window, ms since the Unix epoch.
    pub measured_from_unix_ms: u64,
    /// Its own Jain's fairness index over the clients' locks (absent: no lock acquired, or
    /// a file written before it was recorded): the whole mode's index adds every repeat's
    /// locks per client, so each repeat's own is kept for the figure's interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jain_index: Option<f64>,
}

impl Repeat {
    /// Its intervals' indexes in the mode's series.
    pub fn span(&self) -> std::ops::Range<usize> {
        self.first_interval..self.first_interval + self.intervals
    }
}

/// One part of a merged result (a file, an agent) over time: what it measured in each interval,
/// placed on the merged result's intervals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PartSeries {
    /// The file (or agent) it came from.
    pub name: String,
    /// Its first interval's index in the merged `intervals`.
    pub first_index: usize,
    /// Locks acquired in each of its intervals.
    pub acquired: Vec<u64>,
    /// Acquire p99 of each of its intervals, µs (0: no call completed).
    pub acquire_p99_us: Vec<u64>,
}

impl PartSeries {
    /// The series of `m` (one run, or each part of `m` when it is a merge itself), shifted
    /// by `shift` intervals and named after `name`.
    pub fn of(name: &str, m: &ModeStats, shift: usize) -> Vec<PartSeries> {
        let moved = |p: &PartSeries| PartSeries {
            name: format!("{name}: {}", p.name),
            first_index: p.first_index + shift,
            ..p.clone()
        };
        if !m.part_series.is_empty() {
            return m.part_series.iter().map(moved).collect();
        }
        let p99 = |i: &Interval| i.acquire.unpack().quantile(0.99);
        vec![PartSeries {
            name: name.to_string(),
            first_index: shift,
            acquired: m.intervals.iter().map(|i| i.acquired).collect(),
            acquire_p99_us: m.intervals.iter().map(p99).collect(),
        }]
    }
}

impl ModeStats {
    /// An empty mode whose intervals are `interval` long.
    pub fn new(fanout: FanOut, n_masters: usize, interval: Duration) -> ModeStats {
        ModeStats {
            fanout,
            masters: vec![MasterStats::default(); n_masters],
            interval_ms: interval.as_millis() as u64,
            ..ModeStats::default()
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
        self.generator.cpu.add(&other.generator.cpu);
        self.counts.add(&other.counts);
        super::fencing::add_optional(&mut self.fencing, &other.fencing);
        self.latency.add(&other.latency);
        super::add_each(&mut self.masters, &other.masters, MasterStats::add);
        for (pattern, n) in &other.vote_patterns {
            let sum = self.vote_patterns.entry(*pattern).or_default();
            *sum = sum.saturating_add(*n);
        }
        let theirs = &other.fairness.acquired_per_worker;
        self.fairness.acquired_per_worker.extend_from_slice(theirs);
    }

    /// Adds intervals given as (index, interval).
    pub fn add_intervals(&mut self, intervals: impl IntoIterator<Item = (usize, Interval)>) {
        for (index, interval) in intervals {
            while self.intervals.len() <= index {
                let index = self.intervals.len();
                self.intervals.push(Interval {
                    index,
                    ..Default::default()
                });
            }
            self.intervals[index].add(&interval);
        }
    }

    /// Merged results: locks acquired per second over the whole intervals of the merged
    /// series that lie inside the time every part was measuring (`None` for a single run, or when
    /// there is no such interval).
    pub fn rate_while_all_measured(&self) -> Option<f64> {
        if self.windows_unix_ms.len() < 2 {
            return None;
        }
        let (from, to) = overlap(&self.windows_unix_ms)?;
        let base = self.measured_from_unix_ms;
        let step = self.interval_ms.max(1);
        let start = |s: usize| base + s as u64 * step;
        let inside = |(s, _): &(usize, &Interval)| start(*s) >= from && start(*s) + step <= to;
        let kept = self.intervals.iter().enumerate().filter(inside);
        let inside: Vec<u64> = kept.map(|(_, i)| i.acquired).collect();
        if inside.is_empty() {
            return None;
        }
        let seconds = inside.len() as f64 * step as f64 / 1000.0;
        Some(inside.iter().sum::<u64>() as f64 / seconds)
    }

    /// Length of one interval.
    pub fn interval(&self) -> Duration {
        Duration::from_millis(self.interval_ms.max(1))
    }

    /// Fills in every derived figure (rates, shares, fairness, indexes, interval p99s, the
    /// generator's judgement) from the measurements. Called whenever a result is built: after
    /// a run, a merge, or reading a file (derived figures are recomputed, never read).
    pub fn derive(&mut self, judgement: Judgement) {
        // Place every interval at its index (a file's intervals may come in any order).
        let intervals = std::mem::take(&mut self.intervals);
        self.add_intervals(intervals.into_iter().map(|i| (i.index, i)));
        let masters = self.masters.len();
        for i in &mut self.intervals {
            // An interval nothing finished in (a stalled machine leaves gaps) holds an empty
            // round-trip histogram per master too, as every other does.
            if i.round_trip.len() < masters {
                i.round_trip.resize(masters, Default::default());
            }
            let acquire = i.acquire.unpack();
            i.acquire_p50_us = acquire.quantile(0.50);
            i.acquire_p99_us = acquire.quantile(0.99);
            i.acquire_p999_us = acquire.quantile(0.999);
        }
        self.outages = super::outage::find(&self.intervals, self.duration, self.interval());
        self.masters
            .iter_mut()
            .enumerate()
            .for_each(|(index, m)| m.index = index);
        self.rates = Rates {
            acquires_per_s: self.acquires_per_s(),
            acquires_per_s_while_all_measured: self.rate_while_all_measured(),
            started_per_s: self.started_per_s(),
            acquire_calls_per_s: self.per_second(self.counts.acquire_calls),
            attempts_per_s: self.per_second(self.counts.attempts),
            redis_commands_per_s: self.redis_commands_per_s(),
            redis_commands_per_cycle: self.redis_commands_per_cycle(),
            acquire_success_rate: self.acquire_success_rate(),
            quorum_success_rate: self.quorum_success_rate(),
        };
        self.generator.cpu_per_cycle_us = self.cpu_per_cycle_us();
        self.generator.core_share = self.generator.cpu.core_share();
        self.generator.judgement = judgement;
        let per_worker = &self.fairness.acquired_per_worker;
        self.fairness.workers = per_worker.len();
        self.fairness.min_acquired = per_worker.iter().copied().min().unwrap_or(0);
        self.fairness.max_acquired = per_worker.iter().copied().max().unwrap_or(0);
        self.fairness.jain_index = self.jain_index();
    }

    pub fn per_second(&self, n: u64) -> f64 {
        per(n as f64, self.duration.as_secs_f64())
    }

    /// The mode's name in reports ([`LockAlgorithm::mode_label`]).
    pub fn label(&self) -> &'static str {
        self.lock.mode_label(self.fanout)
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
    pub fn redis_commands_per_s(&self) -> f64 {
        self.per_second(self.counts.redis_commands)
    }
    /// Acquire calls started per second (open loop: the rate the schedule reached).
    pub fn started_per_s(&self) -> f64 {
        self.per_second(self.started_calls())
    }
    /// Acquire calls started: finished plus cancelled (saturating: a file's counters may be
    /// anything up to 2^64 - 1).
    fn started_calls(&self) -> u64 {
        let c = &self.counts;
        c.acquire_calls.saturating_add(c.cancelled_calls)
    }
    /// Generator CPU (user + sys) per acquire+release cycle, µs.
    pub fn cpu_per_cycle_us(&self) -> f64 {
        let cpu = &self.generator.cpu;
        per((cpu.user_s + cpu.sys_s) * 1e6, self.started_calls() as f64)
    }
    /// acquired / acquire calls.
    pub fn acquire_success_rate(&self) -> f64 {
        ratio(self.counts.acquired, self.counts.acquire_calls)
    }
    /// won attempts / attempts.
    pub fn quorum_success_rate(&self) -> f64 {
        ratio(self.counts.attempts_won, self.counts.attempts)
    }

    /// Jain's index when at least one lock was acquired (`None`: nothing to be fair about).
    pub fn fairness_index(&self) -> Option<f64> {
        let any = self.fairness.acquired_per_worker.iter().any(|&n| n > 0);
        any.then(|| self.jain_index())
    }

    /// Jain's fairness index of locks acquired per worker: 1 = perfectly even, 1/n = one
    /// worker got everything.
    pub fn jain_index(&self) -> f64 {
        let per_worker = &self.fairness.acquired_per_worker;
        let n = per_worker.len() as f64;
        let sum: f64 = per_worker.iter().map(|&x| x as f64).sum();
        let squares: f64 = per_worker.iter().map(|&x| (x as f64) * (x as f64)).sum();
        if squares == 0.0 {
            return 1.0;
        }
        sum * sum / (n * squares)
    }
}

fn one_second_ms() -> u64 {
    1000
}

/// `num / den`, 0 when there is nothing to divide.
pub fn ratio(num: u64, den: u64) -> f64 {
    per(num as f64, den as f64)
}

/// A fan-out as its name.
mod fanout_name {
    use super::*;

    pub fn serialize<S: Serializer>(f: &FanOut, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(f.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<FanOut, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A duration as seconds (a float).
mod seconds {
    use super::*;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs)
            .map_err(|_| serde::de::Error::custom(format!("{secs} is not a valid duration")))
    }
}

/// The vote patterns as a list of `{granted, denied, failed, not_awaited, attempts}`.
mod pattern_list {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Entry {
        #[serde(flatten)]
        pattern: VotePattern,
        attempts: u64,
    }

    pub fn serialize<S: Serializer>(
        map: &BTreeMap<VotePattern, u64>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            map.iter()
                .map(|(&pattern, &attempts)| Entry { pattern, attempts }),
        )
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<VotePattern, u64>, D::Error> {
        let mut map = BTreeMap::new();
        for e in Vec::<Entry>::deserialize(d)? {
            *map.entry(e.pattern).or_default() += e.attempts;
        }
        Ok(map)
    }
}

/// The time every window covers, if any.
pub fn overlap(windows: &[(u64, u64)]) -> Option<(u64, u64)> {
    let from = windows.iter().map(|w| w.0).max()?;
    let to = windows.iter().map(|w| w.1).min()?;
    (from < to).then_some((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_is_one_when_even_and_one_over_n_when_one_worker_wins_all() {
        let mut s = ModeStats::new(FanOut::Concurrent, 5, Duration::from_secs(1));
        s.fairness.acquired_per_worker = vec![10, 10, 10, 10];
        assert!((s.jain_index() - 1.0).abs() < 1e-12);
        s.fairness.acquired_per_worker = vec![40, 0, 0, 0];
        assert!((s.jain_index() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn an_interval_nothing_finished_in_has_a_round_trip_histogram_per_master() {
        let mut s = ModeStats::new(FanOut::Concurrent, 3, Duration::from_secs(1));
        // Index 2 arrives alone: 0 and 1 are gaps.
        s.add_intervals([(
            2,
            Interval {
                index: 2,
                round_trip: vec![Default::default(); 3],
                ..Interval::default()
            },
        )]);
        s.derive(Default::default());
        assert_eq!(s.intervals.len(), 3);
        for i in &s.intervals {
            assert_eq!(i.round_trip.len(), 3, "interval {}", i.index);
        }
    }

    #[test]
    fn adding_stats_adds_counts_histograms_and_intervals() {
        let mut a = ModeStats::new(FanOut::Sequential, 2, Duration::from_secs(1));
        a.duration = Duration::from_secs(10);
        a.counts.attempts = 3;
        a.latency.acquire.record(100);
        a.masters[1].errors = 2;
        a.fairness.acquired_per_worker = vec![1];
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
        assert_eq!(b.latency.acquire.count(), 2);
        assert_eq!(b.masters[1].errors, 4);
        assert_eq!(b.fairness.acquired_per_worker, vec![1, 1]);
        assert_eq!(b.intervals.len(), 2);
        assert_eq!(b.intervals[1].acquired, 4);
    }
}
