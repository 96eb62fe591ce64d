//! `redlock-loadgen capacity`: for each fan-out mode, the highest open-loop acquire rate the
//! masters sustain within a service-level objective (see [`crate::model::capacity::search`] for how
//! it is found and [`crate::model::capacity::slo`] for what a step must show).

use std::time::Duration;

use super::shared::{check_agent_target, refuse_faults_with_coordinator, say, target, Session};
use crate::cli::{parse_run_words, CapacityArgs};
use crate::commands::output::Outputs;
use crate::engine::config::{Load, RunConfig};
use crate::engine::faults::master::FaultSpec;
use crate::engine::faults::words::schedule_words;
use crate::engine::schedule::FaultSchedule;
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::model::capacity::search::Plan;
use crate::model::capacity::slo::Objective;
use crate::model::capacity::{Baseline, CapacityResult};
use crate::model::document::to_text;
use crate::model::header::{new_run_id, Header, Kind};
use crate::plans::capacity::{search, Capacity, DEFAULT_RESOURCES, STEP_TIMING};
use crate::plans::capacity::{Print, Searched};
use crate::plans::coordinator::agent::Agent;
use crate::plans::coordinator::Coordination;
use crate::plans::faults::run::lock_keys;
use crate::render::formats::{Of, Written};
use crate::render::{capacity_table as table, sweep as sweep_table};
use crate::signals::Signals;

/// Runs the search in each selected fan-out mode, prints the steps and the answers.
pub fn command(args: CapacityArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    outputs.refuse_for("capacity", Of::Capacity)?;
    let capacity = capacity(&args, &outputs)?;
    refuse_clashes(&args)?;
    let signals = &session.signals;
    let mut agent = match Coordination::from_args(&args.agents) {
        Some(c) => {
            check_agent_target(&args.target)?;
            Some(session.rt.block_on(Agent::join(&c, "capacity", signals))?)
        }
        None => None,
    };
    let started_unix_s = crate::model::header::unix_now_s();
    let mut print = |text: &str| outputs.print_report(text);
    let searched = session.rt.block_on(measure(
        &capacity,
        &args,
        agent.as_mut(),
        signals,
        &mut print,
    ));
    if let (Err(e), Some(a)) = (&searched, &agent) {
        session.rt.block_on(a.abandon(&e.to_string()));
    }
    let (searched, baseline) = searched?;
    let mut header = Header::new(Kind::Capacity, new_run_id(), started_unix_s);
    header.interrupt(searched.interrupted);
    let result = CapacityResult {
        header,
        objective: capacity.objective,
        plan: capacity.plan,
        warnings: searched.warnings,
        answers: searched.answers,
        steps: searched.steps,
        faults: args.faults.iter().map(ToString::to_string).collect(),
        faults_words: match args.faults.is_empty() {
            true => String::new(),
            false => schedule_words(&args.faults),
        },
        baseline: baseline.map(|b| {
            Box::new(Baseline {
                answers: b.answers,
                steps: b.steps,
            })
        }),
    };
    let shown = match agent.as_mut() {
        None => None,
        Some(a) => {
            session.rt.block_on(a.finish(&to_text(&result)))?;
            outputs.print_report(&format!(
                "all {} agents together (agent {} wrote only its part: `collect` merges all parts):\n",
                a.agents, a.number
            ))?;
            Some(CapacityResult {
                steps: searched.all_steps,
                answers: searched.all_answers,
                ..result.clone()
            })
        }
    };
    outputs.print_report(&format!(
        "{}\n{}\n{}\n",
        table::answers(shown.as_ref().unwrap_or(&result)),
        sweep_table::LEGEND,
        table::LEGEND
    ))?;
    outputs.write(Written::Capacity(&result), capacity.base.quiet)?;
    finish(&result)
}

/// The masters, then the search (under faults: [`under_faults`]); returns it and, with
/// `--baseline`, the search without the faults.
async fn measure(
    capacity: &Capacity,
    args: &CapacityArgs,
    agent: Option<&mut Agent>,
    signals: &Signals,
    print: &mut Print<'_>,
) -> Result<(Searched, Option<Searched>), LoadgenError> {
    let jumps = args.faults.iter().any(FaultSpec::jumps_clocks);
    let mut target = target(&args.target, jumps)?;
    target.attach_storage(&capacity.base)?;
    target.probe_versions().await;
    crate::engine::probe::require_quorum(&target, capacity.base.quorum).await?;
    say(capacity.base.quiet, &capacity.describe());
    if args.faults.is_empty() {
        let searched = search(capacity, &target, (agent, None), signals, print).await?;
        return Ok((searched, None));
    }
    under_faults(capacity, &mut target, args, signals, print).await
}

/// The search for a safe capacity: with `--baseline`, the search without the faults first;
/// then every step under the fault schedule (its specs checked before anything runs, the
/// fault proxies placed only once the baseline is done, so it measured the masters bare).
async fn under_faults(
    capacity: &Capacity,
    target: &mut Target,
    args: &CapacityArgs,
    signals: &Signals,
    print: &mut Print<'_>,
) -> Result<(Searched, Option<Searched>), LoadgenError> {
    let base = &capacity.base;
    let mut schedule = FaultSchedule::new(&args.faults, target, base.ttl, lock_keys(base))?;
    let words = schedule_words(&args.faults);
    let baseline = match args.baseline {
        true => {
            print("baseline: the same search without faults\n")?;
            let searched = search(capacity, target, (None, None), signals, print).await?;
            if signals.stop.is_set() {
                return Ok((
                    Searched {
                        interrupted: signals.received(),
                        ..Searched::default()
                    },
                    Some(searched),
                ));
            }
            Some(searched)
        }
        false => None,
    };
    schedule.route_through_proxies(target).await?;
    print(&format!("safe capacity: every step under {words}\n"))?;
    let searched = search(
        capacity,
        target,
        (None, Some(&mut schedule)),
        signals,
        print,
    )
    .await?;
    Ok((searched, baseline))
}

/// The search the flags ask for: the objective, the search's settings within the rate floor
/// the objective's percentiles set, and every step's configuration.
fn capacity(args: &CapacityArgs, outputs: &Outputs) -> Result<Capacity, LoadgenError> {
    if args.min_rate > args.max_rate || args.start_rate > args.max_rate {
        return Err(LoadgenError::Usage(format!(
            "--min-rate {} and --start-rate {} must not exceed --max-rate {}",
            args.min_rate, args.start_rate, args.max_rate
        )));
    }
    let objective = Objective {
        slo: args.slo.clone(),
        min_success: args.min_success,
        min_calls: args.min_calls,
    };
    let mut workload = args.workload.clone();
    let plan = plan_within_floor(args, &objective, workload.duration.unwrap_or(STEP_TIMING.0))?;
    workload.seed = Some(workload.seed.unwrap_or_else(rand::random));
    workload.resources = Some(workload.resources.unwrap_or(DEFAULT_RESOURCES));
    let load = Load::Open {
        rate_per_s: plan.start_rate,
        workers: args.clients,
    };
    let mut base = RunConfig::new(&workload, load, STEP_TIMING);
    base.fencing = args.fencing;
    Ok(Capacity {
        objective,
        plan,
        base,
        parse_run: reproducer_config,
        percentiles: outputs.percentiles.clone(),
    })
}

/// The search's settings, its lowest rate raised to the one whose step holds the calls the
/// objective's percentiles need; an error when even `--max-rate` is below it.
fn plan_within_floor(
    args: &CapacityArgs,
    objective: &Objective,
    measured: Duration,
) -> Result<Plan, LoadgenError> {
    let (floor, why) = objective.rate_floor(measured);
    if floor > args.max_rate {
        return Err(LoadgenError::Usage(format!(
            "--max-rate {} is below {floor}/s, the lowest rate at which {why}: raise --max-rate or --duration",
            args.max_rate
        )));
    }
    Ok(Plan {
        start_rate: args.start_rate.max(floor),
        min_rate: args.min_rate.max(floor),
        max_rate: args.max_rate,
        precision: args.precision.max(0.001),
        max_steps: args.max_steps,
        noise_repeats: args.noise_repeats,
        repeat: args.repeat,
        min_rate_from_calls: floor > args.min_rate,
    })
}

/// `--fault` acts on the masters this command starts, on one machine: refused up front with
/// `--masters` and under a coordinator; `--fencing` checks the token order within one
/// generator: refused under a coordinator.
fn refuse_clashes(args: &CapacityArgs) -> Result<(), LoadgenError> {
    let coordinated = args.agents.coordinator.is_some();
    refuse_faults_with_coordinator(coordinated && !args.faults.is_empty())?;
    if !args.faults.is_empty() && !args.target.masters.is_empty() {
        return Err(LoadgenError::Usage(
            "--fault needs the local masters the load generator starts (drop --masters)".into(),
        ));
    }
    if args.fencing && coordinated {
        return Err(LoadgenError::Usage(
            "--fencing does not combine with --coordinator (the token order is checked within one generator)".into(),
        ));
    }
    Ok(())
}

/// The configuration of a confirming step: its answer's `reproduce:` command, read as `run`
/// reads it (the error says why it could not be).
fn reproducer_config(command: &str) -> Result<RunConfig, LoadgenError> {
    let words = shlex::split(command)
        .ok_or_else(|| LoadgenError::Failed("does not split into words".into()))?;
    let flags = words
        .strip_prefix(&["redlock-loadgen".to_string(), "run".to_string()])
        .ok_or_else(|| LoadgenError::Failed("is not a run command".into()))?;
    let args =
        parse_run_words(flags).map_err(|e| LoadgenError::Failed(format!("does not parse: {e}")))?;
    crate::commands::run::run_config(&args)
}

/// The exit: interrupted → 128 + signal; violations → 3; no fan-out found a rate → 1.
pub fn finish(result: &CapacityResult) -> Result<(), LoadgenError> {
    if let Some(signal) = result.header.interrupted_by {
        return Err(LoadgenError::Interrupted(signal));
    }
    let violations: u64 = result.steps.iter().map(|s| s.report.violations()).sum();
    if violations > 0 {
        return Err(LoadgenError::Violations(violations));
    }
    if result.answers.iter().all(|a| a.rate_per_s.is_none()) {
        let abstained: Vec<&str> = result
            .answers
            .iter()
            .filter(|a| a.status == crate::model::capacity::Status::NoAnswer)
            .map(|a| a.fanout.as_str())
            .collect();
        return Err(LoadgenError::Failed(match abstained.as_slice() {
            [] => "no rate met the objective in any fan-out mode".into(),
            modes => format!(
                "no answer on this machine ({}): it decided the steps, not the masters",
                modes.join(", ")
            ),
        }));
    }
    Ok(())
}
