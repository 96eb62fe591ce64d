//! A run's result (`kind: "run"`), what every renderer reads: the header, the configuration
//! and masters, each fan-out mode's measurements, the figures that compare modes, and the
//! faults applied. A run produces one; `merge` builds one from result files; a sweep level and
//! a capacity step are one each.

use serde::{Deserialize, Serialize};

use super::header::Header;
use super::mode::ModeStats;
use crate::model::lock::LockAlgorithm;

/// The run's configuration, as recorded in results (units in the key names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfo {
    pub command_line: String,
    /// Lock algorithms measured (older results: Redlock only).
    #[serde(default = "redlock_only")]
    pub locks: Vec<String>,
    pub fanouts: Vec<String>,
    /// "closed" or "open".
    pub load: String,
    /// Closed loop: clients; open loop: workers the schedule is spread over.
    pub clients: u32,
    pub rate_per_s: Option<f64>,
    pub resources: u32,
    pub key_dist: String,
    pub hold_min_us: u64,
    pub hold_max_us: u64,
    pub extends_per_hold: u32,
    pub ttl_ms: u64,
    pub retry_count: u32,
    pub retry_delay_ms: f64,
    pub instance_timeout_ms: f64,
    /// Votes needed (null: majority).
    pub quorum: Option<u32>,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// The seed of the first repeat (repeat r: seed + r).
    pub seed: u64,
    /// `run --repeat N`: how many times the modes were measured (older results: 1).
    #[serde(default = "one_repeat")]
    pub repeat: u32,
    /// The fault schedule the run was given (`--fault` specs as written; empty: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
}

fn one_repeat() -> u32 {
    1
}

fn redlock_only() -> Vec<String> {
    vec![crate::model::lock::LockAlgorithm::Redlock.as_str().into()]
}

/// One master as recorded in results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MasterInfo {
    /// URL with any password redacted.
    pub url: String,
    /// What the master runs, as the lock client saw it (`valkey 9.1.2 (release delifeq,
    /// extend set)`); older results hold a bare Redis version.
    pub redis_version: String,
}

impl MasterInfo {
    /// The server as shown in reports: a bare version (older results) is Redis's.
    pub fn server(&self) -> String {
        if self.redis_version.starts_with(|c: char| c.is_ascii_digit()) {
            format!("redis {}", self.redis_version)
        } else {
            self.redis_version.clone()
        }
    }
}

/// Concurrent ÷ sequential for the figures users compare (null when undefined).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub acquires_per_s_ratio: Option<f64>,
    pub acquire_p50_ratio: Option<f64>,
    pub acquire_p99_ratio: Option<f64>,
    pub attempt_p50_ratio: Option<f64>,
    pub attempt_p99_ratio: Option<f64>,
    pub quorum_success_rate_ratio: Option<f64>,
    pub split_votes_ratio: Option<f64>,
    /// The headline figures' ratios with their 95 % intervals and the order they show
    /// (older results: absent).
    #[serde(default)]
    pub intervals: Vec<super::estimates::RatioEstimate>,
}

/// One baseline ÷ Redlock (the Redlock mode of the same fan-out, or the first one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgainstRedlock {
    pub lock: String,
    /// The Redlock mode compared with.
    pub redlock_fanout: String,
    pub acquires_per_s_ratio: Option<f64>,
    pub acquire_p50_ratio: Option<f64>,
    pub acquire_p99_ratio: Option<f64>,
    pub redis_commands_per_cycle_ratio: Option<f64>,
}

/// The whole result of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    #[serde(flatten)]
    pub header: Header,
    /// Run ids of every run in this result (one, or all parts of a merge).
    pub part_run_ids: Vec<String>,
    pub local_masters: bool,
    pub masters: Vec<MasterInfo>,
    pub config: ConfigInfo,
    pub modes: Vec<ModeStats>,
    /// Derived: concurrent ÷ sequential, when both were measured.
    pub comparison: Option<Comparison>,
    /// Derived: each single-master baseline against Redlock (absent when not both were
    /// measured).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub against_redlock: Vec<AgainstRedlock>,
    /// Faults applied during the run (`run --fault`), in order (absent when there were none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<FaultEvent>,
    /// `run --threshold`: each threshold judged on each mode (absent when none was given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<super::threshold::JudgedThreshold>,
    /// What those thresholds mean for the exit status (absent when none was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<super::gate::Gate>,
    /// `--rtt`: the network distance added between the generator and the masters (absent:
    /// loopback, nothing added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkInfo>,
}

/// The network profile a run played (`--rtt`) and what its proxy process cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworkInfo {
    /// `--rtt` as written: a profile name (`same-zone`, `cross-zone`), `1ms±0.2ms`, or one per
    /// master.
    pub profile: String,
    /// The round trip added to each master, and its jitter (±), ms.
    pub rtt_ms: Vec<f64>,
    pub jitter_ms: Vec<f64>,
    /// CPU (user + system) the proxy process used over the run, warm-ups included: not in the
    /// generator's figures (null: /proc could not tell).
    pub proxy_cpu_s: Option<f64>,
    /// The run's wall time the proxy CPU was measured over.
    pub wall_s: f64,
}

impl NetworkInfo {
    /// The header's line: the profile, what it adds, and the proxy's cost.
    pub fn describe(&self) -> String {
        let same = self.rtt_ms.windows(2).all(|w| w[0] == w[1])
            && self.jitter_ms.windows(2).all(|w| w[0] == w[1]);
        let rtt = |i: usize| format!("{} ms ± {} ms", self.rtt_ms[i], self.jitter_ms[i]);
        let added = match (same, self.rtt_ms.is_empty()) {
            (_, true) => "nothing".to_string(),
            (true, false) => format!("{} to every master's round trip", rtt(0)),
            (false, false) => {
                let each = (0..self.rtt_ms.len()).map(|i| format!("m{i} {}", rtt(i)));
                let each: Vec<String> = each.collect();
                each.join(", ")
            }
        };
        let cost = match self.proxy_cpu_s {
            Some(cpu) => format!(
                "; its proxy process used {cpu:.2} s of CPU ({:.0} % of a core) over {:.1} s, not counted in the generator's CPU",
                100.0 * cpu / self.wall_s.max(1e-9),
                self.wall_s
            ),
            None => "; its proxy process's CPU could not be read".into(),
        };
        format!("{}: {added} added through a proxy{cost}", self.profile)
    }
}

/// One thing the schedule did to the masters, as logged in the reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultEvent {
    /// Fan-out mode that was running.
    pub fanout: String,
    /// When it was applied, in ms from the start of that mode's measured window (the clock of
    /// the fault specs and of the per-second intervals; a fault due at 0 applies before the
    /// warm-up and is logged at 0).
    pub at_ms: f64,
    /// When the step had finished (the masters killed, or answering again), on the same clock;
    /// absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_ms: Option<f64>,
    /// The spec it belongs to (`heal` for the clean-up at the end of a mode).
    pub fault: String,
    /// What was done, e.g. `killed m0, m1`.
    pub action: String,
}

impl Report {
    /// Judges `thresholds` on every mode and the gate they make under `policy`.
    pub fn judge_thresholds(
        &mut self,
        thresholds: &[super::threshold::Threshold],
        policy: super::gate::GatePolicy,
    ) {
        self.thresholds = super::estimates::judge_modes(&self.modes, thresholds);
        self.gate = super::gate::Gate::of(&self.thresholds, policy);
    }

    /// Fills in every derived figure of every mode and of the report (see
    /// [`ModeStats::derive`]); whoever builds or changes a report's modes calls it.
    pub fn derive(&mut self) {
        let judgements: Vec<_> = self.modes.iter().map(|m| self.judge(m)).collect();
        for (m, judgement) in self.modes.iter_mut().zip(judgements) {
            m.derive(judgement);
            m.estimates = super::estimates::of_mode(m);
        }
        self.comparison = self.compare();
        self.against_redlock = self.against_redlock();
    }

    /// The mode of this label (a Redlock fan-out, or a baseline's name), if measured.
    pub fn mode(&self, label: &str) -> Option<&ModeStats> {
        self.modes.iter().find(|m| m.label() == label)
    }

    /// Violations over all modes.
    pub fn violations(&self) -> u64 {
        self.modes.iter().map(|m| m.counts.violations).sum()
    }

    /// The generator's judgement of mode `m` (see [`crate::model::generator`]).
    fn judge(&self, m: &ModeStats) -> crate::model::generator::Judgement {
        let c = &self.config;
        let hold_mean_us = (c.hold_min_us + c.hold_max_us) as f64 / 2.0;
        crate::model::generator::judge(m, c.rate_per_s, c.clients, hold_mean_us)
    }

    /// Concurrent ÷ sequential, when both modes are in the report.
    fn compare(&self) -> Option<Comparison> {
        let (s, c) = (self.mode("sequential")?, self.mode("concurrent")?);
        Some(Comparison {
            acquires_per_s_ratio: of(c, s, ModeStats::acquires_per_s),
            acquire_p50_ratio: of(c, s, acquire(0.5)),
            acquire_p99_ratio: of(c, s, acquire(0.99)),
            attempt_p50_ratio: of(c, s, attempt(0.5)),
            attempt_p99_ratio: of(c, s, attempt(0.99)),
            quorum_success_rate_ratio: of(c, s, ModeStats::quorum_success_rate),
            split_votes_ratio: of(c, s, |m| m.counts.split_votes as f64),
            intervals: super::estimates::ratios(c, s),
        })
    }

    /// Each single-master baseline ÷ Redlock (same fan-out when measured, else the first).
    fn against_redlock(&self) -> Vec<AgainstRedlock> {
        let is_redlock = |m: &&ModeStats| m.lock == LockAlgorithm::Redlock;
        let redlock: Vec<&ModeStats> = self.modes.iter().filter(is_redlock).collect();
        let Some(&first) = redlock.first() else {
            return Vec::new();
        };
        let baselines = self.modes.iter().filter(|m| !m.lock.votes());
        baselines
            .map(|b| {
                let same_fanout = redlock.iter().find(|r| r.fanout == b.fanout);
                let r = same_fanout.copied().unwrap_or(first);
                AgainstRedlock {
                    lock: b.lock.as_str().into(),
                    redlock_fanout: r.fanout.as_str().into(),
                    acquires_per_s_ratio: of(b, r, ModeStats::acquires_per_s),
                    acquire_p50_ratio: of(b, r, acquire(0.5)),
                    acquire_p99_ratio: of(b, r, acquire(0.99)),
                    redis_commands_per_cycle_ratio: of(b, r, ModeStats::redis_commands_per_cycle),
                }
            })
            .collect()
    }
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0 && num.is_finite()).then(|| num / den)
}

/// `a ÷ b` of what `figure` reads of each mode.
fn of(a: &ModeStats, b: &ModeStats, figure: impl Fn(&ModeStats) -> f64) -> Option<f64> {
    ratio(figure(a), figure(b))
}

/// Quantile `q` of a mode's acquire latency, and of its attempt latency.
fn acquire(q: f64) -> impl Fn(&ModeStats) -> f64 {
    move |m| m.latency.acquire.quantile(q) as f64
}

fn attempt(q: f64) -> impl Fn(&ModeStats) -> f64 {
    move |m| m.latency.attempt.quantile(q) as f64
}
