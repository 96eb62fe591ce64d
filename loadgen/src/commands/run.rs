//! `redlock-loadgen run` (also the command line without a subcommand): one workload in each
//! selected fan-out mode, faults included, and its report files.

use std::sync::Arc;

use super::shared::{
    check, check_agent_target, describe_run, refuse_faults_with_coordinator, refuse_ratio, say,
    target, warn_about_generator, Session,
};
use crate::cli::RunArgs;
use crate::commands::output::Outputs;
use crate::engine::config::{Load, RunConfig, RUN_TIMING};
use crate::engine::faults::master::FaultSpec;
use crate::engine::history::HistoryLog;
use crate::engine::runner::RunResult;
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::exporter::server::Exporter;
use crate::exporter::LiveFigures;
use crate::model::gate::Gate;
use crate::model::report::Report;
use crate::plans::coordinator::agent::{self, Agent, AgentHooks};
use crate::plans::coordinator::Coordination;
use crate::plans::faults::run::repeated_with_faults;
use crate::render::formats::Written;
use crate::render::text;

pub fn command(args: RunArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    refuse_ratio(&args.thresholds)?;
    check_repeat(&args)?;
    let mut cfg = run_config(&args)?;
    if let Some(path) = &args.history {
        let limit = args.history_limit.history_limit;
        cfg.history = Some(Arc::new(HistoryLog::create(path, limit)?));
    }
    // Bound before anything starts, so an address that cannot be used fails the command at once.
    let exporter = start_exporter(&args, &mut cfg)?;
    let report = match Coordination::from_args(&args.agents) {
        // Each agent judges its own part; `collect --threshold` judges the whole run.
        Some(coordination) => run_as_agent(&args, &cfg, &coordination, session)?,
        None => run_here(&args, &cfg, session)?,
    };
    outputs.print_report(&text::render(&report, &outputs.percentiles))?;
    warn_about_generator(&report);
    outputs.write(Written::Run(&report), cfg.quiet)?;
    linger(exporter, &args, &cfg, session)?;
    let no_locks_ok = args.allow_no_locks || !report.faults.is_empty();
    check(&report, no_locks_ok)?;
    check_thresholds(report.gate.as_ref())
}

/// The run on this machine alone: its faults applied, its history finished; the report.
fn run_here(args: &RunArgs, cfg: &RunConfig, session: &Session) -> Result<Report, LoadgenError> {
    let (result, faults) = session.rt.block_on(async {
        let mut target = run_target(args, cfg)?;
        let announce = |target: &Target| say(cfg.quiet, &describe_run(cfg, target));
        repeated_with_faults(cfg, &mut target, &args.faults, &session.signals, &announce).await
    })?;
    if let Some(history) = &cfg.history {
        let events = history.finish()?;
        say(
            cfg.quiet,
            &format!("history: {events} events in {}", history.path().display()),
        );
    }
    let mut report = Report::from_run(&result);
    report.faults = faults;
    report.config.faults = args.faults.iter().map(ToString::to_string).collect();
    report.judge_thresholds(&args.thresholds, args.gate);
    Ok(report)
}

/// The masters of `args` (under libfaketime for clock faults), named to the live figures, and
/// the protected resource when `cfg` writes one.
fn run_target(args: &RunArgs, cfg: &RunConfig) -> Result<Target, LoadgenError> {
    let jumps = args.faults.iter().any(FaultSpec::jumps_clocks);
    let mut target = target(&args.target, jumps)?;
    if let Some(live) = &cfg.live {
        live.set_masters(&target.display_urls());
    }
    target.attach_storage(cfg)?;
    Ok(target)
}

/// What `args` asks to run: the workload, its load (closed loop, or open with --rate) and
/// `run`'s own flags.
pub fn run_config(args: &RunArgs) -> Result<RunConfig, LoadgenError> {
    let load = match args.rate {
        Some(rate_per_s) => Load::Open {
            rate_per_s,
            workers: args.clients,
        },
        None => Load::Closed {
            workers: args.clients,
        },
    };
    RunConfig::new(&args.workload, load, RUN_TIMING).with_run_flags(args)
}

/// `--repeat N` (N > 1) lays whole runs end to end: refused where a run's own timeline or
/// schedule matters (faults, a history, agents started together).
fn check_repeat(args: &RunArgs) -> Result<(), LoadgenError> {
    match repeat_clash(args).filter(|_| args.repeat > 1) {
        Some(what) => Err(LoadgenError::Usage(format!(
            "--repeat {} does not combine with {what}; run the command several times and `compare` the results instead",
            args.repeat
        ))),
        None => Ok(()),
    }
}

/// The flag of `args` that ties it to one run's timeline, which repeats cannot share.
pub fn repeat_clash(args: &RunArgs) -> Option<&'static str> {
    if !args.faults.is_empty() {
        Some("--fault (a fault schedule belongs to one run)")
    } else if !args.client_faults.is_empty() {
        Some("--client-fault (a fault schedule belongs to one run)")
    } else if args.history.is_some() {
        Some("--history (a history holds one run's timeline)")
    } else if args.agents.coordinator.is_some() {
        Some("--coordinator (the agents start each mode together once)")
    } else {
        None
    }
}

/// Exit 4 when the gate failed under its policy (after the report that lists its thresholds).
pub fn check_thresholds(gate: Option<&Gate>) -> Result<(), LoadgenError> {
    match gate {
        Some(gate) if !gate.passed => Err(LoadgenError::ThresholdsFailed(gate.failed())),
        _ => Ok(()),
    }
}

/// `--prometheus ADDR`: binds ADDR and serves the figures `cfg`'s run will add to.
fn start_exporter(args: &RunArgs, cfg: &mut RunConfig) -> Result<Option<Exporter>, LoadgenError> {
    let Some(address) = args.prometheus else {
        return Ok(None);
    };
    let figures = Arc::new(LiveFigures::default());
    let exporter = Exporter::start(address, Arc::clone(&figures))?;
    let address = exporter.address();
    let serving = format!("serving the running figures at http://{address}/metrics");
    say(cfg.quiet, &serving);
    cfg.live = Some(figures);
    Ok(Some(exporter))
}

/// The run is over: with `--prometheus-linger`, its final figures stay served until a scrape
/// has collected them (or the linger ran out, or a signal came); then the server stops.
fn linger(
    exporter: Option<Exporter>,
    args: &RunArgs,
    cfg: &RunConfig,
    session: &Session,
) -> Result<(), LoadgenError> {
    let Some(exporter) = exporter else {
        return Ok(());
    };
    let figures = exporter.figures();
    figures.finish();
    let linger = args.prometheus_linger;
    if linger.is_zero() || session.signals.stop.is_set() {
        return Ok(());
    }
    let (address, most) = (exporter.address(), humantime::format_duration(linger));
    let serving = format!(
        "serving the final figures at http://{address}/metrics until a scrape collects them (at most {most})"
    );
    say(cfg.quiet, &serving);
    let collected = figures.wait_for_final_scrape(linger, || session.signals.stop.is_set());
    if !collected && !session.signals.stop.is_set() {
        say(
            cfg.quiet,
            "no scrape collected the final figures within --prometheus-linger",
        );
    }
    Ok(())
}

/// `run --coordinator URL --agents N`: joins, runs every fan-out mode starting together with
/// the other agents, stores the result on the coordinator, and returns it to be reported like
/// `run`'s. Any failure after joining gives the run up for everybody.
fn run_as_agent(
    args: &RunArgs,
    cfg: &RunConfig,
    c: &Coordination,
    session: &Session,
) -> Result<Report, LoadgenError> {
    check_agent_target(&args.target)?;
    refuse_faults_with_coordinator(!args.faults.is_empty())?;
    if cfg.writes_storage() {
        return Err(LoadgenError::Usage(
            "--fencing, --storage and --client-fault pause do not combine with --coordinator (the token order is checked within one generator)".into(),
        ));
    }
    session.rt.block_on(async {
        let mut target = run_target(args, cfg)?;
        let announce = |agent: &Agent, target: &Target| {
            let (n, of, what) = (agent.number, agent.agents, describe_run(cfg, target));
            say(cfg.quiet, &format!("agent {n} of {of}: {what}"));
        };
        let report_of = |result: &RunResult| {
            let mut report = Report::from_run(result);
            report.judge_thresholds(&args.thresholds, args.gate);
            report
        };
        let hooks: AgentHooks = (&announce, &report_of);
        agent::run_as_agent(cfg, &mut target, c, &session.signals, hooks).await
    })
}
