//! `redlock-loadgen capacity`: for each fan-out mode, the highest open-loop acquire rate the
//! masters sustain within a service-level objective (see [`crate::model::capacity::search`] for how
//! it is found and [`crate::model::capacity::slo`] for what a step must show).

use std::time::Duration;

use super::shared::{check_agent_target, say, target, Session};
use crate::cli::parse_run_words;
use crate::cli::CapacityArgs;
use crate::commands::output::{Outputs, Writes};
use crate::engine::config::{Load, RunConfig};
use crate::engine::coordinator::agent::Agent;
use crate::engine::coordinator::Coordination;
use crate::engine::runner::{self, NoHooks};
use crate::error::LoadgenError;
use crate::model::capacity::reproduce::run_command;
use crate::model::capacity::search::{Phase, Plan, Search};
use crate::model::capacity::slo::Objective;
use crate::model::capacity::{answer, CapacityResult, NoiseVerdict, Step};
use crate::model::document::to_text;
use crate::model::generator::machine_bound;
use crate::model::header::{Header, Kind};
use crate::model::report::Report;
use crate::render::{capacity_plot as plot, capacity_table as table, sweep as sweep_table};

/// Measured time and warm-up of each step.
pub const STEP_TIMING: (Duration, Duration) = (Duration::from_secs(3), Duration::from_secs(1));
/// Resources a capacity workload spreads over by default: throughput, not contention.
pub const DEFAULT_RESOURCES: u32 = 10_000;

/// Runs the search in each selected fan-out mode, prints the steps and the answers.
pub fn command(args: CapacityArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    outputs.refuse_hlog("capacity")?;
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
    let plan = plan_within_floor(
        &args,
        &objective,
        workload.duration.unwrap_or(STEP_TIMING.0),
    )?;
    workload.seed = Some(workload.seed.unwrap_or_else(rand::random));
    workload.resources = Some(workload.resources.unwrap_or(DEFAULT_RESOURCES));
    let base = RunConfig::new(
        &workload,
        Load::Open {
            rate_per_s: plan.start_rate,
            workers: args.clients,
        },
        STEP_TIMING,
    );
    let p = &outputs.percentiles;
    let mut steps: Vec<Step> = Vec::new();
    let mut answers = Vec::new();
    // Coordinated: every step runs on all agents at the same share of its rate, and every
    // agent judges the merged step, so all take the same next step. Printed: all agents'
    // steps and answers together; written and stored: this agent's part.
    let mut all_steps: Vec<Step> = Vec::new();
    let mut all_answers = Vec::new();
    let mut warnings = Vec::new();
    let started_unix_s = crate::model::header::unix_now_s();
    let signals = &session.signals;
    let mut agent = match Coordination::from_args(&args.agents) {
        Some(c) => {
            check_agent_target(&args.target)?;
            Some(session.rt.block_on(Agent::join(&c, "capacity", signals))?)
        }
        None => None,
    };
    let share = agent.as_ref().map_or(1, |a| a.agents) as f64;
    let searched = session.rt.block_on(async {
        let mut target = target(&args.target)?;
        target.probe_versions().await;
        crate::engine::probe::require_quorum(&target, base.quorum).await?;
        say(
            base.quiet,
            &format!(
                "capacity search: objective {}; at most {} steps of {:?} warm-up + {:?} measured per fan-out mode, each repeated up to {} time(s) when an interval straddles the objective{}{}; seed {}",
                objective.describe(),
                plan.max_steps,
                base.warmup,
                base.duration,
                plan.noise_repeats,
                if args.repeat > 0 {
                    format!(", then {} repeat(s) of the answer's step", args.repeat)
                } else {
                    String::new()
                },
                if plan.min_rate_from_calls {
                    let (floor, why) = objective.rate_floor(base.duration);
                    format!("; no rate below {floor}/s, the lowest at which {why}")
                } else {
                    String::new()
                },
                base.seed
            ),
        );
        if let Some(warning) = shared_machine_warning(&target) {
            outputs.print_report(&format!("{warning}\n"))?;
            warnings.push(warning);
        }
        let mut printed_header = false;
        for (lock, fanout) in base.modes() {
            // The mode's name: the fan-out for Redlock, the algorithm for a baseline.
            let label = if lock.votes() {
                fanout.as_str()
            } else {
                lock.as_str()
            };
            let mut search = Search::new(plan);
            let mut n = 0;
            let mut repeats_left = args.repeat;
            // A step whose interval straddled the objective, waiting for its repeats.
            let mut noisy: Option<Noisy> = None;
            loop {
                // The search's steps (each straddling one followed by its repeats), then the
                // repeats of its answer.
                let (phase, rate, repeat_of) = match &noisy {
                    Some(w) => (Phase::Repeat, w.rate, Some(w.number)),
                    None => match search.next_step() {
                        Some((phase, rate)) => (phase, rate, None),
                        None => match search.answer().0 {
                            Some(rate) if repeats_left > 0 => {
                                repeats_left -= 1;
                                (Phase::Repeat, rate, None)
                            }
                            _ => break,
                        },
                    },
                };
                if signals.stop.is_set() {
                    break;
                }
                let reproducing = reproducer_run(phase, agent.is_some(), &steps, (label, rate))?;
                let (mut cfg, reproducer) = match reproducing {
                    Some((command, cfg)) => (cfg, Some(command)),
                    None => (step_config(&workload, rate / share, args.clients, (lock, fanout)), None),
                };
                cfg.quiet = base.quiet;
                cfg.progress_label = Some(format!(
                    "step {} ({}, {rate:.0} acquires/s)",
                    n + 1,
                    phase.as_str()
                ));
                let mut no_hooks = NoHooks;
                let hooks: &mut dyn runner::RunHooks = match agent.as_mut() {
                    Some(a) => a,
                    None => &mut no_hooks,
                };
                let mut result = runner::run(&cfg, &target, hooks, signals).await?;
                if let Some(a) = agent.as_mut() {
                    a.align(&mut result);
                }
                let report = Report::from_run(&result);
                let Some(mode) = report.modes.first() else {
                    break; // stopped before the step measured anything
                };
                if !printed_header {
                    printed_header = true;
                    let mut head = crate::render::text::header_with_load(
                        &report,
                        Some(&format!(
                            "open loop, rates searched per step, over {} clients",
                            args.clients
                        )),
                    );
                    head.push('\n');
                    head.push_str(&table::header(p));
                    head.push('\n');
                    outputs.print_report(&head)?;
                }
                // Judged on the mode every agent sees: this one's, or all agents' merged.
                let judge = |m: &crate::model::mode::ModeStats| {
                    let mut failures = objective.failures(m, m.generator.judgement.target_missed);
                    // A busy machine's pass may be a calm moment's: it never counts.
                    failures.extend(machine_bound(m).map(|why| format!("bound by this machine: {why}")));
                    let straddled = objective.straddled(m, &failures);
                    (failures, straddled)
                };
                let mut step = match &agent {
                    None => {
                        let (failures, straddled) = judge(mode);
                        let mut step = Step::new(label, phase, rate, failures, report);
                        step.straddled = straddled;
                        step
                    }
                    Some(a) => {
                        let all = a.exchange(steps.len() as u32 + 1, &report).await?;
                        let (failures, straddled) = match all.modes.first() {
                            Some(m) => judge(m),
                            None => (vec!["nothing measured".into()], Vec::new()),
                        };
                        let mut merged = Step::new(label, phase, rate, failures.clone(), all);
                        merged.straddled = straddled.clone();
                        merged.repeat_of = repeat_of;
                        outputs.print_report(&table::row(n + 1, &merged, p))?;
                        all_steps.push(merged);
                        let mut step = Step::new(label, phase, rate / share, failures, report);
                        step.straddled = straddled;
                        step
                    }
                };
                step.repeat_of = repeat_of;
                step.reproducer = reproducer;
                n += 1;
                if agent.is_none() {
                    outputs.print_report(&table::row(n, &step, p))?;
                }
                if result.interrupted.is_some() {
                    steps.push(step);
                    break; // a partial step says nothing about the rate
                }
                let (passed, straddles) = (step.passed, !step.straddled.is_empty());
                steps.push(step);
                let (at, at_all) = (steps.len() - 1, all_steps.len().saturating_sub(1));
                let mut pending = match noisy.take() {
                    Some(w) => Some(Noisy {
                        runs: w.runs + 1,
                        passed: w.passed + u32::from(passed),
                        left: w.left - 1,
                        ..w
                    }),
                    // A straddling step of the search waits for its repeats.
                    None if phase != Phase::Repeat && straddles => Some(Noisy {
                        at,
                        at_all,
                        number: n as u32,
                        phase,
                        rate,
                        runs: 1,
                        passed: u32::from(passed),
                        left: plan.noise_repeats,
                    }),
                    None if phase != Phase::Repeat => {
                        search.record(phase, rate, passed);
                        None
                    }
                    None => None, // a --repeat run of the answer moves nothing
                };
                if let Some(w) = pending.take() {
                    let (verdict, settled) = NoiseVerdict::of(w.runs, w.passed, w.left);
                    steps[w.at].noise = Some(verdict);
                    if agent.is_some() {
                        all_steps[w.at_all].noise = Some(verdict);
                    }
                    if settled {
                        if w.runs > 1 {
                            outputs.print_report(&format!(
                                "{:>16}~ step {} counted as {} ({} of {} runs passed)\n",
                                "",
                                w.number,
                                if verdict.counted_passed { "a pass" } else { "a failure" },
                                w.passed,
                                w.runs
                            ))?;
                        }
                        search.record(w.phase, w.rate, verdict.counted_passed);
                    } else {
                        noisy = Some(w);
                    }
                }
            }
            let (best, mut confirmed, limit) = search.answer();
            // A passing --repeat of the answer confirms it as a confirming step would.
            confirmed |= steps
                .iter()
                .any(|s| s.fanout == label && s.phase == Phase::Repeat && s.repeat_of.is_none() && s.passed && Some(s.rate) == best);
            if agent.is_some() {
                all_answers.push(answer(
                    label,
                    &all_steps,
                    (best, confirmed, limit),
                    &objective,
                    &plan,
                ));
            }
            answers.push(answer(
                label,
                &steps,
                (best.map(|r| r / share), confirmed, limit),
                &objective,
                &plan,
            ));
            if signals.stop.is_set() {
                break;
            }
        }
        Ok::<_, LoadgenError>(signals.received())
    });
    let interrupted = match (searched, &agent) {
        (Ok(i), _) => i,
        (Err(e), Some(a)) => {
            session.rt.block_on(a.abandon(&e.to_string()));
            return Err(e);
        }
        (Err(e), None) => return Err(e),
    };
    if let Some(warning) = busy_steps_warning(&steps) {
        outputs.print_report(&format!("! {warning}\n"))?;
        warnings.push(warning);
    }
    let mut header = Header::new(
        Kind::Capacity,
        crate::model::header::new_run_id(),
        started_unix_s,
    );
    header.interrupt(interrupted);
    let result = CapacityResult {
        header,
        objective,
        plan,
        warnings,
        answers,
        steps,
    };
    let mut shown = None;
    if let Some(a) = agent.as_mut() {
        session.rt.block_on(a.finish(&to_text(&result)))?;
        shown = Some(CapacityResult {
            steps: all_steps,
            answers: all_answers,
            ..result.clone()
        });
        outputs.print_report(&format!(
            "all {} agents together (agent {} wrote only its part: `collect` merges all parts):\n",
            a.agents, a.number
        ))?;
    }
    outputs.print_report(&format!(
        "{}\n{}\n{}\n",
        table::answers(shown.as_ref().unwrap_or(&result)),
        sweep_table::LEGEND,
        table::LEGEND
    ))?;
    write_outputs(&result, &outputs, base.quiet)?;
    finish(&result)
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

/// The run of one search step at `rate` (this agent's share of it).
fn step_config(
    workload: &crate::cli::WorkloadArgs,
    rate: f64,
    clients: u32,
    (lock, fanout): (crate::model::lock::LockAlgorithm, redlock_core::FanOut),
) -> RunConfig {
    let mut cfg = RunConfig::new(
        workload,
        Load::Open {
            rate_per_s: rate,
            workers: clients,
        },
        STEP_TIMING,
    );
    cfg.interval = step_interval(cfg.duration, cfg.interval);
    cfg.locks = vec![lock];
    cfg.fanouts = vec![fanout];
    cfg
}

/// The confirming step, run as a planner checks an answer: the answer's `reproduce:` command
/// itself, read as `run` reads it, on the search's own masters (the printed command redacts
/// passwords; a loaded machine once saw a search stopped by a signal right after fresh local
/// masters for a reproducer were dropped, so none are started here). `None` for any other
/// step, and under a coordinator (each agent runs a share).
fn reproducer_run(
    phase: Phase,
    coordinated: bool,
    steps: &[Step],
    (label, rate): (&str, f64),
) -> Result<Option<(String, RunConfig)>, LoadgenError> {
    if phase != Phase::Confirm || coordinated {
        return Ok(None);
    }
    let answered = steps
        .iter()
        .rev()
        .find(|s| s.fanout == label && s.rate == rate && s.passed);
    let Some(answered) = answered else {
        return Ok(None);
    };
    let command = run_command(&answered.report, label, rate);
    let bad = |why: String| {
        LoadgenError::Failed(format!("the answer's reproduce: command {command:?} {why}"))
    };
    let words = shlex::split(&command).ok_or_else(|| bad("does not split into words".into()))?;
    let flags = words
        .strip_prefix(&["redlock-loadgen".to_string(), "run".to_string()])
        .ok_or_else(|| bad("is not a run command".into()))?;
    let args = parse_run_words(flags).map_err(|e| bad(format!("does not parse: {e}")))?;
    let cfg = crate::commands::run::run_config(&args)?;
    Ok(Some((command, cfg)))
}

/// Intervals per step at least: enough for every step's figures to carry a 95 % interval
/// (the bootstrap needs 5), which is what tells a step too close to the objective to call.
const STEP_INTERVALS: u32 = 10;

/// The interval of a step measured for `duration`: `--interval`, shortened to a tenth of the
/// step (whole milliseconds, 100 ms at least) when that gives too few intervals.
fn step_interval(duration: Duration, asked: Duration) -> Duration {
    let tenth = (duration / STEP_INTERVALS).as_millis() as u64;
    asked.min(Duration::from_millis(tenth.max(100)))
}

/// A step of the search whose interval straddled the objective, and its runs so far.
#[derive(Debug, Clone, Copy)]
struct Noisy {
    /// Where it is in this agent's steps and in all agents' merged steps.
    at: usize,
    at_all: usize,
    /// Its number within its mode.
    number: u32,
    phase: Phase,
    rate: f64,
    runs: u32,
    passed: u32,
    /// Repeats still allowed.
    left: u32,
}

/// The warning printed when the masters run on the generator's machine (local masters, or
/// URLs on a loopback address): they share its cores, so the answer measures this machine.
fn shared_machine_warning(target: &crate::engine::target::Target) -> Option<String> {
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

/// Writes `--json`, `--csv`, `--plot` and `--html`; each is tried, and every file lost is
/// named at the end.
pub fn write_outputs(
    result: &CapacityResult,
    outputs: &Outputs,
    quiet: bool,
) -> Result<(), LoadgenError> {
    let mut writes = Writes::new(quiet);
    if let Some(dest) = &outputs.json {
        writes.write(dest, Ok(to_text(result)));
    }
    if let Some(dest) = &outputs.csv {
        let csv = crate::render::csv::capacity(result, &outputs.percentiles);
        writes.write(dest, Ok(csv));
    }
    if let Some(dest) = &outputs.plot {
        writes.write(dest, plot::render(result));
    }
    if let Some(dest) = &outputs.html {
        writes.write(dest, crate::render::html::capacity_page(result));
    }
    writes.finish()
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
