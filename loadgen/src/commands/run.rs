//! `redlock-loadgen run` (also the command line without a subcommand): one workload in each
//! selected fan-out mode, faults included, and its report files.

use super::shared::{check, describe_run, say, target, warn_about_generator, Session};
use crate::cli::RunArgs;
use crate::config::{Load, RunConfig, RUN_TIMING};
use crate::error::LoadgenError;
use crate::output::Outputs;
use crate::render::{csv, hgrm, json, plot, text};
use crate::report::Report;
use crate::runner;

pub fn command(args: RunArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let load = match args.rate {
        Some(rate_per_s) => Load::Open {
            rate_per_s,
            workers: args.clients,
        },
        None => Load::Closed {
            workers: args.clients,
        },
    };
    let cfg = RunConfig::new(&args.workload, load, RUN_TIMING);
    let signals = &session.signals;
    let (result, faults) = session.rt.block_on(async {
        let mut target = target(&args.target)?;
        // Before anything connects: faults on the network path reroute the client via proxies.
        let mut schedule = crate::faults::run::prepare(&cfg, &mut target, &args.faults).await?;
        target.probe_versions().await;
        crate::probe::require_quorum(&target, cfg.quorum).await?;
        say(cfg.quiet, &describe_run(&cfg, &target));
        let result = runner::run(&cfg, &target, &mut schedule, signals).await?;
        Ok::<_, LoadgenError>((result, schedule.into_events()))
    })?;
    let mut report = Report::from_run(&result);
    report.faults = faults;
    outputs.print_report(&text::render(&report, &outputs.percentiles))?;
    warn_about_generator(&report);
    write_outputs(&report, &outputs, cfg.quiet)?;
    let no_locks_ok = args.allow_no_locks || !report.faults.is_empty();
    check(&report, no_locks_ok)
}

/// Writes `--json`, `--csv`, `--hgrm` and `--plot` of a run report.
pub fn write_outputs(report: &Report, out: &Outputs, quiet: bool) -> Result<(), LoadgenError> {
    if let Some(dest) = &out.json {
        dest.write(&json::render(report))?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    if let Some(dest) = &out.csv {
        let rows = [("run".to_string(), report)];
        dest.write(&csv::render("result", &rows, &out.percentiles))?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    if let Some(dir) = &out.hgrm {
        let files = hgrm::write_all(report, dir).map_err(|e| {
            LoadgenError::Failed(format!("writing .hgrm files into {}: {e}", dir.display()))
        })?;
        say(
            quiet,
            &format!("wrote {} .hgrm files into {}", files.len(), dir.display()),
        );
    }
    if let Some(dest) = &out.plot {
        dest.write(&plot::render(report).map_err(LoadgenError::Failed)?)?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    Ok(())
}
