//! From clap's argument structs to domain values, once: the engine and the model never see a
//! clap type.

use std::time::Duration;

use crate::cli::{parse_run_words, AgentArgs, RunArgs, WorkloadArgs};
use crate::engine::config::{command_line, Load, RunConfig, RUN_TIMING};
use crate::engine::faults::client::WorkerFaultPlan;
use crate::engine::faults::master::FaultSpec;
use crate::error::LoadgenError;
use crate::plans::coordinator::Coordination;

impl RunConfig {
    /// Resolves the shared workload flags with `load` and the command's default timing.
    pub fn new(w: &WorkloadArgs, load: Load, timing: (Duration, Duration)) -> RunConfig {
        RunConfig {
            locks: w.lock.0.clone(),
            fanouts: w.fanout.modes(),
            load,
            resources: w.resources.unwrap_or(1),
            key_dist: w.key_dist,
            hold: w.hold,
            extends_per_hold: w.extend,
            ttl: w.ttl,
            retry_count: w.retry_count,
            retry_delay: w.retry_delay,
            instance_timeout: w.instance_timeout,
            quorum: w.quorum.map(|q| q as usize),
            duration: w.duration.unwrap_or(timing.0),
            warmup: w.warmup.unwrap_or(timing.1),
            interval: w.interval,
            seed: w.seed.unwrap_or_else(rand::random),
            repeat: 1,
            quiet: w.quiet,
            command_line: command_line(),
            worker_faults: WorkerFaultPlan::default(),
            progress_label: None,
            fencing: false,
            storage: None,
            live: None,
            write_at_release: false,
            history: None,
        }
    }

    /// Applies `run`'s own flags: client faults, `--fencing`, `--storage`.
    pub fn with_run_flags(mut self, args: &RunArgs) -> Result<RunConfig, LoadgenError> {
        self.worker_faults =
            WorkerFaultPlan::new(&args.client_faults, args.clients).map_err(LoadgenError::Usage)?;
        self.fencing = args.fencing;
        self.write_at_release = args.write_at_release;
        self.storage = args.storage.clone();
        self.repeat = args.repeat;
        Ok(self)
    }
}

impl Coordination {
    /// `Some` when `--coordinator` was given (clap makes it and `--agents` come together).
    pub fn from_args(args: &AgentArgs) -> Option<Coordination> {
        Some(Coordination {
            url: args.coordinator.clone()?,
            agents: args.agents?,
            run_id: args.run_id.clone(),
            join_timeout: args.join_timeout,
        })
    }
}

/// A `scenarios` row's `run` flags, read exactly as `redlock-loadgen run` would: its
/// configuration and its master faults.
pub fn scenario_run(flags: &str) -> Result<(RunConfig, Vec<FaultSpec>), LoadgenError> {
    let bad = |e: String| LoadgenError::Failed(format!("scenario flags {flags:?}: {e}"));
    let args = parse_run_words(flags.split_whitespace()).map_err(|e| bad(e.to_string()))?;
    let load = Load::Closed {
        workers: args.clients,
    };
    let cfg = RunConfig::new(&args.workload, load, RUN_TIMING)
        .with_run_flags(&args)
        .map_err(|e| bad(e.to_string()))?;
    Ok((cfg, args.faults))
}

#[cfg(test)]
mod tests {
    use redlock_core::FanOut;

    use super::*;
    use crate::plans::faults::scenarios::select;

    #[test]
    fn every_row_is_a_valid_run_command_line() {
        for s in select(&[]).unwrap() {
            for mode in [FanOut::Sequential, FanOut::Concurrent] {
                let flags = s.run_flags(mode);
                let line = scenario_run(&flags);
                assert!(line.is_ok(), "{}: {flags}: {:?}", s.name, line.err());
            }
        }
    }
}
