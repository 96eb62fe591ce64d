//! `run --coordinator URL --agents N`: this process is one agent of a coordinated run.

use super::agent::Agent;
use super::Coordination;
use crate::app;
use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::error::LoadgenError;
use crate::output::Outputs;
use crate::render::{json, text};
use crate::report::Report;
use crate::signals::Signals;

/// What every coordinated command refuses: faults (they act on local masters of one agent)
/// and local masters (each agent would load its own).
pub fn check_target(target: &crate::cli::TargetArgs) -> Result<(), LoadgenError> {
    if target.masters.is_empty() {
        return Err(LoadgenError::Usage(
            "--coordinator needs --masters (or REDLOCK_LOADGEN_MASTERS): every agent must load the same masters, local ones would be each agent's own".into(),
        ));
    }
    Ok(())
}

/// Joins, runs every fan-out mode starting with the other agents, stores the result on the
/// coordinator, then reports like `run`. Any failure after joining gives the run up for
/// everybody.
pub fn run_agent(
    args: &RunArgs,
    cfg: &RunConfig,
    c: &Coordination,
    outputs: &Outputs,
) -> Result<(), LoadgenError> {
    check_target(&args.target)?;
    if !args.faults.is_empty() {
        return Err(LoadgenError::Usage(
            "--fault does not combine with --coordinator (faults act on local masters of one machine)".into(),
        ));
    }
    let report = app::runtime()?.block_on(async {
        let signals = Signals::install()?;
        let mut target = app::target(&args.target)?;
        let mut agent = Agent::join(c, "run", &signals).await?;
        let outcome = async {
            target.probe_versions().await;
            crate::probe::require_quorum(&target, cfg.quorum).await?;
            app::say(
                cfg.quiet,
                &format!(
                    "agent {} of {}: {}",
                    agent.number,
                    agent.agents,
                    app::describe_run(cfg, &target)
                ),
            );
            let mut result = crate::runner::run(cfg, &target, &mut agent, &signals).await?;
            agent.align(&mut result);
            let report = Report::from_run(&result);
            agent.finish(&json::render(&report)).await?;
            Ok::<_, LoadgenError>(report)
        }
        .await;
        if let Err(e) = &outcome {
            agent.abandon(&e.to_string()).await;
        }
        outcome
    })?;
    outputs.print_report(&text::render(&report, &outputs.percentiles))?;
    app::warn_about_generator(&report);
    app::write_outputs(&report, outputs, cfg.quiet)?;
    app::check(&report, args.allow_no_locks)
}
