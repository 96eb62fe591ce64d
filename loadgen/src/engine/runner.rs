//! Running the workload: one measured run per fan-out mode against one set of masters.

use std::sync::Arc;
use std::time::Instant;

use redlock_core::FanOut;

use crate::engine::config::{Load, RunConfig};
use crate::engine::hooks::RunHooks;
use crate::engine::mode;
pub use crate::engine::mode::GRACE;
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::model::header::{new_run_id, unix_now_s, Header, Kind};
use crate::model::lock::LockAlgorithm;
use crate::model::mode::ModeStats;
use crate::model::report::{ConfigInfo, MasterInfo, NetworkInfo, Report};

/// The result of a run: its configuration, the masters, and each mode's measurements.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub config: RunConfig,
    /// Master URLs, passwords redacted.
    pub masters: Vec<String>,
    pub local_masters: bool,
    pub redis_versions: Vec<String>,
    pub started_unix_s: u64,
    /// Random id of this run (merge refuses the same run twice).
    pub run_id: String,
    /// The signal that ended the run early, if one did.
    pub interrupted: Option<crate::signals::Signal>,
    pub modes: Vec<ModeStats>,
    /// `--rtt`: the profile played and its proxy's CPU over the run.
    pub network: Option<NetworkInfo>,
}

impl Report {
    /// The result of a run as recorded and rendered.
    pub fn from_run(run: &RunResult) -> Report {
        let cfg = &run.config;
        let (load, rate_per_s) = match cfg.load {
            Load::Closed { .. } => ("closed", None),
            Load::Open { rate_per_s, .. } => ("open", Some(rate_per_s)),
        };
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let mut header = Header::new(Kind::Run, run.run_id.clone(), run.started_unix_s);
        header.interrupt(run.interrupted);
        let mut report = Report {
            header,
            part_run_ids: vec![run.run_id.clone()],
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
                locks: cfg.locks.iter().map(|l| l.as_str().to_string()).collect(),
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
                repeat: cfg.repeat,
                faults: Vec::new(),
            },
            modes: run.modes.clone(),
            comparison: None,
            against_redlock: Vec::new(),
            faults: Vec::new(),
            thresholds: Vec::new(),
            gate: None,
            network: run.network.clone(),
        };
        report.derive();
        report
    }
}

impl RunResult {
    /// Lays `next` (the same run again, its modes in any order) after this one, mode by mode
    /// ([`crate::model::repeats::append`]); a mode `next` did not reach (a stop) is left as it
    /// was. An interruption of `next` is this run's.
    pub fn append_repeat(&mut self, next: RunResult) {
        for m in &mut self.modes {
            if let Some(again) = next
                .modes
                .iter()
                .find(|n| n.lock == m.lock && n.fanout == m.fanout)
            {
                crate::model::repeats::append(m, again);
            }
        }
        if next.interrupted.is_some() {
            self.interrupted = next.interrupted;
        }
        if let (Some(mine), Some(theirs)) = (&mut self.network, next.network) {
            mine.wall_s += theirs.wall_s;
            mine.proxy_cpu_s = mine.proxy_cpu_s.zip(theirs.proxy_cpu_s).map(|(a, b)| a + b);
        }
    }

    /// Violations over all modes.
    pub fn violations(&self) -> u64 {
        self.modes.iter().map(|m| m.counts.violations).sum()
    }
}

/// Runs every mode of `cfg`, one after the other, against `target`. `stop` ends it early.
pub async fn run(
    cfg: &RunConfig,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &crate::signals::Signals,
) -> Result<RunResult, LoadgenError> {
    run_modes(cfg, &cfg.modes(), target, hooks, stop).await
}

/// Runs the modes of `cfg` in the order given (a repeat of `run --repeat` takes them in the
/// other order every second time, so a slow drift of the machine falls on each alike).
pub async fn run_modes(
    cfg: &RunConfig,
    order: &[(LockAlgorithm, FanOut)],
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &crate::signals::Signals,
) -> Result<RunResult, LoadgenError> {
    cfg.check_locks()?;
    let started_unix_s = unix_now_s();
    let (started, proxy_cpu) = (Instant::now(), target.network.as_ref().map(|n| n.cpu()));
    let cfg_shared = Arc::new(cfg.clone());
    let mut modes = Vec::with_capacity(order.len());
    for &(lock, fanout) in order {
        if stop.stop.is_set() {
            break;
        }
        modes.push(mode::run_mode(&cfg_shared, lock, fanout, target, hooks, &stop.stop).await?);
    }
    Ok(RunResult {
        config: cfg.clone(),
        masters: target.display_urls(),
        local_masters: target.local.is_some(),
        redis_versions: target.redis_versions.clone(),
        started_unix_s,
        run_id: new_run_id(),
        interrupted: stop.received(),
        modes,
        network: target
            .network
            .as_ref()
            .map(|n| n.info(proxy_cpu.flatten(), started.elapsed())),
    })
}
