//! The report every renderer reads: a header (configuration, masters, versions) and each fan-out
//! mode's measurements. A run produces one; `merge` builds one from result files.

use serde::{Deserialize, Serialize};

use crate::config::Load;
use crate::runner::RunResult;
use crate::stats::ModeStats;

/// Versions of the tools that produced a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    pub core_version: String,
}

impl ToolInfo {
    pub fn current() -> ToolInfo {
        ToolInfo {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
            // The core is a path dependency of the same workspace version.
            core_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The run's configuration, as recorded in results (units in the key names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfo {
    pub command_line: String,
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
    pub seed: u64,
}

/// One master as recorded in results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MasterInfo {
    /// URL with any password redacted.
    pub url: String,
    pub redis_version: String,
}

/// Everything but the measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub tool: ToolInfo,
    /// Random id of the run (a merged result: of the merge).
    pub run_id: String,
    pub started_unix_s: u64,
    /// True when a signal ended the run early.
    pub interrupted: bool,
    /// The signal that did (null when none did).
    pub interrupted_by: Option<crate::signals::Signal>,
    /// Files this result was merged from (empty for a single run).
    pub merged_from: Vec<String>,
    /// Run ids of every run in this result (one, or all parts of a merge).
    pub part_run_ids: Vec<String>,
    /// What a merge had to accept (`--allow-mixed`, `--allow-disjoint`), in words.
    pub merge_notes: Vec<String>,
    pub local_masters: bool,
    pub masters: Vec<MasterInfo>,
    pub config: ConfigInfo,
}

/// What the renderers read.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub header: Header,
    pub modes: Vec<ModeStats>,
    /// Faults applied during the run (`run --fault`), in order.
    pub faults: Vec<crate::faults::schedule::FaultEvent>,
}

impl Report {
    pub fn from_run(run: &RunResult) -> Report {
        let cfg = &run.config;
        let (load, rate_per_s) = match cfg.load {
            Load::Closed { .. } => ("closed", None),
            Load::Open { rate_per_s, .. } => ("open", Some(rate_per_s)),
        };
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let header = Header {
            tool: ToolInfo::current(),
            run_id: run.run_id.clone(),
            started_unix_s: run.started_unix_s,
            interrupted: run.interrupted.is_some(),
            interrupted_by: run.interrupted,
            merged_from: Vec::new(),
            part_run_ids: vec![run.run_id.clone()],
            merge_notes: Vec::new(),
            local_masters: run.local_masters,
            masters: run
                .masters
                .iter()
                .enumerate()
                .map(|(i, url)| MasterInfo {
                    url: url.clone(),
                    redis_version: run
                        .redis_versions
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| "unknown".into()),
                })
                .collect(),
            config: ConfigInfo {
                command_line: cfg.command_line.clone(),
                fanouts: cfg.fanouts.iter().map(|f| f.as_str().to_string()).collect(),
                load: load.into(),
                clients: cfg.load.workers(),
                rate_per_s,
                resources: cfg.resources,
                key_dist: cfg.key_dist.to_string(),
                hold_min_us: cfg.hold.min.as_micros() as u64,
                hold_max_us: cfg.hold.max.as_micros() as u64,
                extends_per_hold: cfg.extends_per_hold,
                ttl_ms: cfg.ttl.as_millis() as u64,
                retry_count: cfg.retry_count,
                retry_delay_ms: ms(cfg.retry_delay),
                instance_timeout_ms: ms(cfg.instance_timeout),
                quorum: cfg.quorum.map(|q| q as u32),
                duration_s: cfg.duration.as_secs_f64(),
                warmup_s: cfg.warmup.as_secs_f64(),
                seed: cfg.seed,
            },
        };
        Report {
            header,
            modes: run.modes.clone(),
            faults: Vec::new(),
        }
    }

    /// The mode measured with this fan-out, if any.
    pub fn mode(&self, fanout: &str) -> Option<&ModeStats> {
        self.modes.iter().find(|m| m.fanout.as_str() == fanout)
    }

    /// Violations over all modes.
    pub fn violations(&self) -> u64 {
        self.modes.iter().map(|m| m.counts.violations).sum()
    }

    /// The generator's judgement of mode `m` (see [`crate::generator`]).
    pub fn judge(&self, m: &ModeStats) -> crate::generator::Judgement {
        let c = &self.header.config;
        let hold_mean_us = (c.hold_min_us + c.hold_max_us) as f64 / 2.0;
        crate::generator::judge(m, c.rate_per_s, c.clients, hold_mean_us)
    }
}
