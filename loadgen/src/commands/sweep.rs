//! `redlock-loadgen sweep`: one run per load level, printed as a throughput-vs-latency table
//! per fan-out mode ([`crate::render::sweep`]), kept as one result ([`crate::model::sweep`]).

use super::shared::{
    check, describe_run, refuse_run_only_outputs, say, target, warn_about_generator, Session,
};
use crate::cli::SweepArgs;
use crate::commands::output::Outputs;
use crate::engine::config::{Load, RunConfig, SWEEP_TIMING};
use crate::engine::runner::{self, NoHooks};
use crate::error::LoadgenError;
use crate::model::document::to_text;
use crate::model::header::{Header, Kind};
use crate::model::report::Report;
use crate::model::sweep::{Level, SweepResult};
use crate::render::{self, csv, text};

pub fn command(args: SweepArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    refuse_run_only_outputs("sweep", &outputs)?;
    if outputs.plot.is_some() {
        return Err(LoadgenError::Usage(
            "sweep does not write --plot (run and capacity do)".into(),
        ));
    }
    let open_loop = !args.rate.is_empty();
    let levels: Vec<(String, Load)> = if open_loop {
        args.rate
            .iter()
            .map(|&rate_per_s| {
                (
                    format!("{rate_per_s}"),
                    Load::Open {
                        rate_per_s,
                        workers: args.workers,
                    },
                )
            })
            .collect()
    } else {
        args.clients
            .iter()
            .map(|&workers| (workers.to_string(), Load::Closed { workers }))
            .collect()
    };
    let sweep_load = if open_loop {
        format!(
            "open-loop levels (acquires/s) over {} clients",
            args.workers
        )
    } else {
        "closed-loop levels (clients)".to_string()
    };
    // One seed for the whole sweep, so levels differ only by their load.
    let mut workload = args.workload.clone();
    workload.seed = Some(workload.seed.unwrap_or_else(rand::random));
    let p = &outputs.percentiles;
    let mut sweep = SweepResult {
        header: Header::new(
            Kind::Sweep,
            crate::model::header::new_run_id(),
            crate::model::header::unix_now_s(),
        ),
        load: if open_loop { "open" } else { "closed" }.into(),
        levels: Vec::new(),
    };
    let quiet = workload.quiet;
    let signals = &session.signals;
    session.rt.block_on(async {
        let mut target = target(&args.target)?;
        target.probe_versions().await;
        let first = RunConfig::new(&workload, levels[0].1, SWEEP_TIMING);
        crate::engine::probe::require_quorum(&target, first.quorum).await?;
        say(
            quiet,
            &format!("sweep over {} levels; seed {}", levels.len(), first.seed),
        );
        for (i, (label, load)) in levels.iter().enumerate() {
            if signals.stop.is_set() {
                break;
            }
            let cfg = RunConfig::new(&workload, *load, SWEEP_TIMING);
            say(
                quiet,
                &format!(
                    "level {}/{}: {}",
                    i + 1,
                    levels.len(),
                    describe_run(&cfg, &target)
                ),
            );
            let result = runner::run(&cfg, &target, &mut NoHooks, signals).await?;
            let report = Report::from_run(&result);
            if i == 0 {
                // The setup once (from the first level), then the table.
                let mut setup = text::header_with_load(&report, Some(&sweep_load));
                setup.push('\n');
                setup.push_str(&render::sweep::header(open_loop, p));
                setup.push('\n');
                outputs.print_report(&setup)?;
            }
            outputs.print_report(&render::sweep::rows(label, &report, p))?;
            warn_about_generator(&report);
            sweep.levels.push(Level {
                level: label.clone(),
                report,
            });
        }
        sweep.header.interrupt(signals.received());
        Ok::<(), LoadgenError>(())
    })?;
    outputs.print_report(&format!("\n{}\n", render::sweep::LEGEND))?;
    write_sweep_outputs(&sweep, &outputs, quiet)?;
    let violations: u64 = sweep.levels.iter().map(|l| l.report.violations()).sum();
    if violations > 0 {
        return Err(LoadgenError::Violations(violations));
    }
    if let Some(signal) = sweep.header.interrupted_by {
        return Err(LoadgenError::Interrupted(signal));
    }
    for l in &sweep.levels {
        check(&l.report, args.allow_no_locks)
            .map_err(|e| LoadgenError::Failed(format!("level {}: {e}", l.level)))?;
    }
    Ok(())
}

/// Writes `--json`, `--csv` and `--html` of a sweep.
pub fn write_sweep_outputs(
    sweep: &SweepResult,
    outputs: &Outputs,
    quiet: bool,
) -> Result<(), LoadgenError> {
    if let Some(dest) = &outputs.json {
        dest.write(&to_text(sweep))?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    if let Some(dest) = &outputs.csv {
        let rows: Vec<_> = sweep
            .levels
            .iter()
            .map(|l| (l.level.clone(), &l.report))
            .collect();
        dest.write(&csv::render("level", &rows, &outputs.percentiles))?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    if let Some(dest) = &outputs.html {
        let page = render::html::sweep_page(sweep).map_err(LoadgenError::Failed)?;
        dest.write(&page)?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    Ok(())
}
