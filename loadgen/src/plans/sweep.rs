//! The sweep as a plan: one run per load level, the same seed at every level (so levels differ
//! only by their load), kept as one result. What is printed as the levels go is the caller's
//! ([`Levels`]).

use crate::engine::config::{Load, RunConfig};
use crate::engine::hooks::NoHooks;
use crate::engine::runner;
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::model::header::{new_run_id, unix_now_s, Header, Kind};
use crate::model::report::Report;
use crate::model::sweep::{Level, SweepResult};
use crate::signals::Signals;

/// A sweep asked for: its levels (label, load) and every level's configuration but its load.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub levels: Vec<(String, Load)>,
    pub base: RunConfig,
    /// Open-loop levels (rates) rather than closed-loop ones (clients).
    pub open_loop: bool,
}

/// What the caller hears as the levels run.
pub trait Levels {
    /// Level `i` (from 0) is about to run with `cfg` against `target`.
    fn starting(&mut self, i: usize, cfg: &RunConfig, target: &Target);
    /// Level `i` measured `report`.
    fn measured(&mut self, i: usize, label: &str, report: &Report) -> Result<(), LoadgenError>;
}

/// Runs every level of `sweep` in order against `target`; a signal ends it after the level
/// it cut short, and the result says which signal.
pub async fn run_levels(
    sweep: &Sweep,
    target: &Target,
    signals: &Signals,
    heard: &mut dyn Levels,
) -> Result<SweepResult, LoadgenError> {
    let mut result = SweepResult {
        header: Header::new(Kind::Sweep, new_run_id(), unix_now_s()),
        load: if sweep.open_loop { "open" } else { "closed" }.into(),
        levels: Vec::new(),
    };
    for (i, (label, load)) in sweep.levels.iter().enumerate() {
        if signals.stop.is_set() {
            break;
        }
        let cfg = RunConfig {
            load: *load,
            ..sweep.base.clone()
        };
        heard.starting(i, &cfg, target);
        let run = runner::run(&cfg, target, &mut NoHooks, signals).await?;
        let report = Report::from_run(&run);
        heard.measured(i, label, &report)?;
        result.levels.push(Level {
            level: label.clone(),
            report,
        });
    }
    result.header.interrupt(signals.received());
    Ok(result)
}
