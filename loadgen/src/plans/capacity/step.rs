//! One step of the search: its run (or its reproducer's), its judgement, its row.

use super::state::{Searcher, Shown, StepRun};
use crate::engine::config::RunConfig;
use crate::engine::hooks::NoHooks;
use crate::error::LoadgenError;
use crate::model::capacity::reproduce::run_command;
use crate::model::capacity::search::Phase;
use crate::model::capacity::slo::Objective;
use crate::model::capacity::Step;
use crate::model::generator::machine_bound;
use crate::model::mode::ModeStats;
use crate::model::report::Report;
use crate::plans::turns::turn;
use crate::render::{capacity_table as table, text};

impl Searcher<'_, '_> {
    /// Runs one step, judges it, prints its row and keeps it (`None`: stopped before it
    /// measured anything).
    pub(super) async fn step(&mut self, run: &StepRun<'_>) -> Result<Option<Shown>, LoadgenError> {
        let (mut cfg, reproducer) = self.step_config(run)?;
        cfg.quiet = self.capacity.base.quiet;
        cfg.progress_label = Some(format!(
            "step {} ({}, {:.0} acquires/s)",
            run.number,
            run.phase.as_str(),
            run.rate
        ));
        let (target, signals) = (self.target, self.signals);
        let result = match (self.agent.as_deref_mut(), self.schedule.as_deref_mut()) {
            (Some(agent), _) => {
                let mut result = turn(&cfg, run.turn, target, agent, signals).await?;
                agent.align(&mut result);
                result
            }
            (None, Some(schedule)) => turn(&cfg, run.turn, target, schedule, signals).await?,
            (None, None) => turn(&cfg, run.turn, target, &mut NoHooks, signals).await?,
        };
        let mut report = Report::from_run(&result);
        if let Some(schedule) = self.schedule.as_deref_mut() {
            report.faults = schedule.take_events();
            report.config.faults = schedule.specs().iter().map(ToString::to_string).collect();
        }
        if report.modes.is_empty() {
            return Ok(None);
        }
        self.print_header(&report)?;
        let mut step = match self.agent.is_some() {
            true => self.exchanged(run, report).await?,
            false => {
                let step = judged(&self.capacity.objective, run, run.rate, report);
                (self.print)(&table::row(
                    run.number as usize,
                    &step,
                    &self.capacity.percentiles,
                ))?;
                step
            }
        };
        step.repeat_of = run.repeat_of;
        step.reproducer = reproducer;
        let shown = Shown {
            passed: step.passed,
            straddles: !step.straddled.is_empty(),
            interrupted: result.interrupted.is_some(),
        };
        self.searched.steps.push(step);
        Ok(Some(shown))
    }

    /// The step's run: the answer's `reproduce:` command for a confirming step (see
    /// [`Self::reproducer`]), else the search's configuration at this agent's share of the rate.
    fn step_config(&self, run: &StepRun<'_>) -> Result<(RunConfig, Option<String>), LoadgenError> {
        match self.reproducer(run)? {
            Some((command, cfg)) => Ok((cfg, Some(command))),
            None => Ok((
                self.capacity.step_config(run.rate / self.share, run.mode),
                None,
            )),
        }
    }

    /// The confirming step, run as a planner checks an answer: the answer's `reproduce:`
    /// command itself, read as `run` reads it, on the search's own masters (the printed
    /// command redacts passwords; a loaded machine once saw a search stopped by a signal right
    /// after fresh local masters for a reproducer were dropped, so none are started here).
    /// `None` for any other step, and under a coordinator (each agent runs a share).
    fn reproducer(&self, run: &StepRun<'_>) -> Result<Option<(String, RunConfig)>, LoadgenError> {
        if run.phase != Phase::Confirm || self.agent.is_some() {
            return Ok(None);
        }
        let answered = self
            .searched
            .steps
            .iter()
            .rev()
            .find(|s| s.fanout == run.label && s.rate == run.rate && s.passed);
        let Some(answered) = answered else {
            return Ok(None);
        };
        let command = run_command(&answered.report, run.label, run.rate);
        let cfg = (self.capacity.parse_run)(&command).map_err(|e| {
            LoadgenError::Failed(format!("the answer's reproduce: command {command:?} {e}"))
        })?;
        Ok(Some((command, cfg)))
    }

    /// The report's header and the steps table's, before the first step's row.
    fn print_header(&mut self, report: &Report) -> Result<(), LoadgenError> {
        if std::mem::replace(&mut self.printed_header, true) {
            return Ok(());
        }
        let load = format!(
            "open loop, rates searched per step, over {} clients",
            self.capacity.base.load.workers()
        );
        let mut head = text::header_with_load(report, Some(&load));
        head.push('\n');
        head.push_str(&table::header(&self.capacity.percentiles));
        head.push('\n');
        (self.print)(&head)
    }

    /// Coordinated: this agent's step, judged on every agent's step merged (so all take the
    /// same next step); the merged step is printed and kept with all agents' steps.
    async fn exchanged(&mut self, run: &StepRun<'_>, report: Report) -> Result<Step, LoadgenError> {
        let Some(agent) = self.agent.as_deref() else {
            return Err(LoadgenError::Failed(
                "a coordinated step without its agent".into(),
            ));
        };
        let all = agent
            .exchange(self.searched.steps.len() as u32 + 1, &report)
            .await?;
        let objective = &self.capacity.objective;
        let merged = judged(objective, run, run.rate, all);
        (self.print)(&table::row(
            run.number as usize,
            &merged,
            &self.capacity.percentiles,
        ))?;
        let mut mine = Step::new(
            run.label,
            run.phase,
            run.rate / self.share,
            merged.failures.clone(),
            report,
        );
        mine.straddled = merged.straddled.clone();
        self.searched.all_steps.push(merged);
        Ok(mine)
    }
}

/// A step at `rate` judged on its report's first mode (a report with none never passes).
fn judged(objective: &Objective, run: &StepRun<'_>, rate: f64, report: Report) -> Step {
    let (failures, straddled) = match report.modes.first() {
        Some(m) => judge(objective, m),
        None => (vec!["nothing measured".into()], Vec::new()),
    };
    let mut step = Step::new(run.label, run.phase, rate, failures, report);
    step.straddled = straddled;
    step.repeat_of = run.repeat_of;
    step
}

/// The objective's failures of `m` (a busy machine's pass may be a calm moment's: it never
/// counts) and those of them whose interval straddles the bound.
fn judge(objective: &Objective, m: &ModeStats) -> (Vec<String>, Vec<String>) {
    let mut failures = objective.failures(m, m.generator.judgement.target_missed);
    failures.extend(machine_bound(m).map(|why| format!("bound by this machine: {why}")));
    let straddled = objective.straddled(m, &failures);
    (failures, straddled)
}
