//! A search as asked for ([`Capacity`]) and as measured ([`Searched`]).

use std::time::Duration;

use crate::engine::config::{Load, RunConfig};
use crate::error::LoadgenError;
use crate::model::capacity::answer::Answer;
use crate::model::capacity::search::Plan;
use crate::model::capacity::slo::Objective;
use crate::model::capacity::Step;
use crate::model::lock::LockAlgorithm;
use crate::model::percentiles::Percentiles;
use crate::signals::Signal;

/// Intervals per step at least: enough for every step's figures to carry a 95 % interval
/// (the bootstrap needs 5), which is what tells a step too close to the objective to call.
const STEP_INTERVALS: u32 = 10;

/// Reads a `redlock-loadgen run …` command line as `run` reads it (the commands' parser:
/// this layer knows no flags).
pub type ParseRun = fn(&str) -> Result<RunConfig, LoadgenError>;

/// Where the search's report lines go as they are made (the command's report output).
pub type Print<'a> = dyn FnMut(&str) -> Result<(), LoadgenError> + 'a;

/// A search asked for: what a step must show, the search's settings and each step's run.
#[derive(Debug, Clone)]
pub struct Capacity {
    pub objective: Objective,
    pub plan: Plan,
    /// Every step's configuration but its rate and mode: an open loop over its clients
    /// (`--repeat`, runs of each answer's step, is `plan.repeat`).
    pub base: RunConfig,
    pub parse_run: ParseRun,
    /// The latency percentiles each step's row shows.
    pub percentiles: Percentiles,
}

/// What the search measured and answered.
#[derive(Debug, Default)]
pub struct Searched {
    /// This agent's steps (all of them without a coordinator) and its answers.
    pub steps: Vec<Step>,
    pub answers: Vec<Answer>,
    /// Under a coordinator: every agent's steps merged, and the answers from them.
    pub all_steps: Vec<Step>,
    pub all_answers: Vec<Answer>,
    pub warnings: Vec<String>,
    pub interrupted: Option<Signal>,
}

impl Capacity {
    /// The run of one search step at `rate` (this agent's share of it) in one mode.
    pub(super) fn step_config(
        &self,
        rate: f64,
        (lock, fanout): (LockAlgorithm, redlock_core::FanOut),
    ) -> RunConfig {
        let mut cfg = self.base.clone();
        cfg.load = Load::Open {
            rate_per_s: rate,
            workers: self.base.load.workers(),
        };
        cfg.interval = step_interval(cfg.duration, cfg.interval);
        cfg.locks = vec![lock];
        cfg.fanouts = vec![fanout];
        cfg
    }

    /// The line that opens a search on stderr.
    pub fn describe(&self) -> String {
        let (plan, base) = (&self.plan, &self.base);
        let repeats = match self.plan.repeat {
            0 => String::new(),
            n => format!(", then {n} repeat(s) of the answer's step"),
        };
        let floor = match plan.min_rate_from_calls {
            true => {
                let (floor, why) = self.objective.rate_floor(base.duration);
                format!("; no rate below {floor}/s, the lowest at which {why}")
            }
            false => String::new(),
        };
        format!(
            "capacity search: objective {}; at most {} steps of {:?} warm-up + {:?} measured per fan-out mode, each repeated up to {} time(s) when an interval straddles the objective{repeats}{floor}; seed {}",
            self.objective.describe(),
            plan.max_steps,
            base.warmup,
            base.duration,
            plan.noise_repeats,
            base.seed
        )
    }
}

/// The interval of a step measured for `duration`: `--interval`, shortened to a tenth of the
/// step (whole milliseconds, 100 ms at least) when that gives too few intervals.
fn step_interval(duration: Duration, asked: Duration) -> Duration {
    let tenth = (duration / STEP_INTERVALS).as_millis() as u64;
    asked.min(Duration::from_millis(tenth.max(100)))
}
