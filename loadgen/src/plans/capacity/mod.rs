//! The capacity search as a plan: for each fan-out mode, open-loop steps at the rates
//! [`Search`] picks, each a run of the engine judged against the objective; a step whose 95 %
//! interval straddles the objective is run again ([`noise`]) before its verdict counts; the
//! answer's step is confirmed by running its `reproduce:` command; under a coordinator every
//! agent runs its share of each step and all judge the merged step alike.
//!
//! What a step must show is [`crate::model::capacity::slo`]; how the next rate is chosen,
//! [`crate::model::capacity::search`]; the command around it, `crate::commands::capacity`.

mod noise;
mod request;
mod state;
mod step;

use std::time::Duration;

pub use request::{Capacity, ParseRun, Print, Searched};
use state::{Noisy, Searcher, StepRun};

use crate::engine::faults::words::schedule_words;
use crate::engine::schedule::FaultSchedule;
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::model::capacity::search::{Phase, Search};
use crate::model::capacity::{answer, Step};
use crate::model::generator::machine_bound;
use crate::model::lock::LockAlgorithm;
use crate::plans::coordinator::agent::Agent;
use crate::signals::Signals;

/// Measured time and warm-up of each step.
pub const STEP_TIMING: (Duration, Duration) = (Duration::from_secs(3), Duration::from_secs(1));
/// Resources a capacity workload spreads over by default: throughput, not contention.
pub const DEFAULT_RESOURCES: u32 = 10_000;
/// Runs the search in every mode of `capacity.base` against `target`, printing each step's
/// row as it is judged; every step runs under `schedule` when there is one (a safe capacity).
/// A signal ends it after the step it cut short.
pub async fn search(
    capacity: &Capacity,
    target: &Target,
    (agent, schedule): (Option<&mut Agent>, Option<&mut FaultSchedule>),
    signals: &Signals,
    print: &mut Print<'_>,
) -> Result<Searched, LoadgenError> {
    let mut searcher = Searcher {
        capacity,
        target,
        share: agent.as_ref().map_or(1, |a| a.agents) as f64,
        agent,
        schedule,
        signals,
        print,
        printed_header: false,
        searched: Searched::default(),
    };
    if let Some(warning) = shared_machine_warning(target) {
        (searcher.print)(&format!("{warning}\n"))?;
        searcher.searched.warnings.push(warning);
    }
    for mode in capacity.base.modes() {
        searcher.mode(mode).await?;
        if signals.stop.is_set() {
            break;
        }
    }
    if let Some(warning) = busy_steps_warning(&searcher.searched.steps) {
        (searcher.print)(&format!("! {warning}\n"))?;
        searcher.searched.warnings.push(warning);
    }
    let mut searched = searcher.searched;
    searched.interrupted = signals.received();
    Ok(searched)
}

impl Searcher<'_, '_> {
    /// The search of one mode: its steps (each straddling one followed by its repeats), then
    /// the repeats of its answer, then its answer.
    async fn mode(
        &mut self,
        mode: (LockAlgorithm, redlock_core::FanOut),
    ) -> Result<(), LoadgenError> {
        let label = mode.0.mode_label(mode.1);
        let mut search = Search::new(self.capacity.plan);
        let mut repeats_left = self.capacity.plan.repeat;
        let mut noisy: Option<Noisy> = None;
        let mut number = 0;
        while let Some((phase, rate, repeat_of, turn)) = next_step(
            &noisy,
            &mut search,
            (&mut repeats_left, self.capacity.plan.repeat),
        ) {
            if self.signals.stop.is_set() {
                break;
            }
            number += 1;
            let run = StepRun {
                label,
                mode,
                phase,
                rate,
                number,
                repeat_of,
                turn,
            };
            let Some(shown) = self.step(&run).await? else {
                break; // stopped before the step measured anything
            };
            if shown.interrupted {
                break; // a partial step says nothing about the rate
            }
            noisy = self.count(&mut search, noisy, &run, shown)?;
        }
        self.answer(label, &search);
        Ok(())
    }

    /// The mode's answer from its search (its `--repeat` runs confirm it as a confirming
    /// step would), for this agent and, coordinated, for all agents.
    fn answer(&mut self, label: &str, search: &Search) {
        let (best, mut confirmed, limit) = search.answer();
        let s = &mut self.searched;
        confirmed |= s.steps.iter().any(|step| {
            step.fanout == label
                && step.phase == Phase::Repeat
                && step.repeat_of.is_none()
                && step.passed
                && Some(step.rate) == best
        });
        let (objective, plan) = (&self.capacity.objective, &self.capacity.plan);
        if self.agent.is_some() {
            let all = answer(
                label,
                &s.all_steps,
                (best, confirmed, limit),
                objective,
                plan,
            );
            s.all_answers.push(all);
        }
        let mine = (best.map(|r| r / self.share), confirmed, limit);
        let mut answer = answer(label, &s.steps, mine, objective, plan);
        if let Some(schedule) = &self.schedule {
            answer.under_faults(&schedule_words(schedule.specs()), &s.steps);
        }
        s.answers.push(answer);
    }
}

/// The next step of a mode's search: a repeat of the step waiting for its verdict, else the
/// search's next step, else a `--repeat` run of its answer (of `repeats`, `left` still to
/// run); `None` when the mode is done. With it, the turn it is of its rate
/// ([`crate::plans::turns::turn`]: turn r is seeded with seed + r, so repeats differ).
fn next_step(
    noisy: &Option<Noisy>,
    search: &mut Search,
    (left, repeats): (&mut u32, u32),
) -> Option<(Phase, f64, Option<u32>, u32)> {
    if let Some(w) = noisy {
        return Some((Phase::Repeat, w.rate, Some(w.number), w.runs));
    }
    if let Some((phase, rate)) = search.next_step() {
        return Some((phase, rate, None, 0));
    }
    match search.answer().0 {
        Some(rate) if *left > 0 => {
            *left -= 1;
            Some((Phase::Repeat, rate, None, repeats - *left))
        }
        _ => None,
    }
}

/// The steps this machine was too busy to count, in one warning (`None`: it never was).
fn busy_steps_warning(steps: &[Step]) -> Option<String> {
    let busy: Vec<String> = steps
        .iter()
        .filter(|s| s.report.modes.first().and_then(machine_bound).is_some())
        .map(|s| format!("{}/s", crate::model::capacity::grouped(s.rate)))
        .collect();
    if busy.is_empty() {
        return None;
    }
    Some(format!(
        "a busy machine: {} of {} steps ({}) had the generator wait for a core at least {:.0} % of its ready time; they count as failures, so no answer rests on them (run and compare mark the same)",
        busy.len(),
        steps.len(),
        busy.join(", "),
        100.0 * crate::model::generator::CPU_CONTENDED
    ))
}

/// The warning printed when the masters run on the generator's machine (local masters, or
/// URLs on a loopback address): they share its cores, so the answer measures this machine.
fn shared_machine_warning(target: &Target) -> Option<String> {
    let loopback = |url: &str| {
        let host = url
            .split("://")
            .nth(1)
            .unwrap_or(url)
            .rsplit('@')
            .next()
            .unwrap_or("");
        host.starts_with("127.")
            || host.starts_with("localhost")
            || host.starts_with("[::1]")
            || url.starts_with("unix:")
            || url.contains("+unix:")
    };
    let why = if target.local.is_some() {
        "the masters are local (started by this command)"
    } else if target.urls.iter().any(|u| loopback(u)) {
        "the masters are on a loopback address"
    } else {
        return None;
    };
    Some(format!(
        "warning: {why}: they share this machine's cores with the load generator, so the answer is this machine's, not that of masters on their own hosts (point --masters at them)"
    ))
}
