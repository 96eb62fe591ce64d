//! `redlock-loadgen sweep`: one run per load level, printed as a throughput-vs-latency table
//! per fan-out mode ([`crate::render::sweep`]), kept as one result ([`crate::model::sweep`]).

use super::shared::{check, describe_run, say, target, warn_about_generator, Session};
use crate::cli::SweepArgs;
use crate::commands::output::Outputs;
use crate::engine::config::{Load, RunConfig, SWEEP_TIMING};
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::model::report::Report;
use crate::plans::sweep::{run_levels, Levels, Sweep};
use crate::render::formats::{Of, Written};
use crate::render::{self, text};

pub fn command(args: SweepArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    outputs.refuse_for("sweep", Of::Sweep)?;
    let sweep = sweep(&args);
    let quiet = sweep.base.quiet;
    let signals = &session.signals;
    let result = session.rt.block_on(async {
        let mut target = target(&args.target, false)?;
        target.probe_versions().await;
        crate::engine::probe::require_quorum(&target, sweep.base.quorum).await?;
        let (n, seed) = (sweep.levels.len(), sweep.base.seed);
        say(quiet, &format!("sweep over {n} levels; seed {seed}"));
        let workers = args.workers;
        let mut printer = Printer {
            outputs: &outputs,
            sweep: &sweep,
            load: match sweep.open_loop {
                true => format!("open-loop levels (acquires/s) over {workers} clients"),
                false => "closed-loop levels (clients)".into(),
            },
        };
        run_levels(&sweep, &target, signals, &mut printer).await
    })?;
    outputs.print_report(&format!("\n{}\n", render::sweep::LEGEND))?;
    outputs.write(Written::Sweep(&result), quiet)?;
    let violations: u64 = result.levels.iter().map(|l| l.report.violations()).sum();
    if violations > 0 {
        return Err(LoadgenError::Violations(violations));
    }
    if let Some(signal) = result.header.interrupted_by {
        return Err(LoadgenError::Interrupted(signal));
    }
    for l in &result.levels {
        check(&l.report, args.allow_no_locks)
            .map_err(|e| LoadgenError::Failed(format!("level {}: {e}", l.level)))?;
    }
    Ok(())
}

/// The sweep the flags ask for: open-loop rates over `--workers` clients, or closed-loop
/// client counts; one seed for every level.
fn sweep(args: &SweepArgs) -> Sweep {
    let open_loop = !args.rate.is_empty();
    let levels: Vec<(String, Load)> = if open_loop {
        let open = |rate_per_s| Load::Open {
            rate_per_s,
            workers: args.workers,
        };
        args.rate
            .iter()
            .map(|&r| (format!("{r}"), open(r)))
            .collect()
    } else {
        args.clients
            .iter()
            .map(|&workers| (workers.to_string(), Load::Closed { workers }))
            .collect()
    };
    let mut workload = args.workload.clone();
    workload.seed = Some(workload.seed.unwrap_or_else(rand::random));
    Sweep {
        base: RunConfig::new(&workload, levels[0].1, SWEEP_TIMING),
        levels,
        open_loop,
    }
}

/// Prints each level as it is measured: the setup and the table's header once (from the first
/// level), then the level's rows; the generator's warnings on stderr.
struct Printer<'a> {
    outputs: &'a Outputs,
    sweep: &'a Sweep,
    /// The load the report's header names.
    load: String,
}

impl Levels for Printer<'_> {
    fn starting(&mut self, i: usize, cfg: &RunConfig, target: &Target) {
        let n = self.sweep.levels.len();
        let described = describe_run(cfg, target);
        say(cfg.quiet, &format!("level {}/{n}: {described}", i + 1));
    }

    fn measured(&mut self, i: usize, label: &str, report: &Report) -> Result<(), LoadgenError> {
        let p = &self.outputs.percentiles;
        if i == 0 {
            let mut setup = text::header_with_load(report, Some(&self.load));
            setup.push('\n');
            setup.push_str(&render::sweep::header(self.sweep.open_loop, p));
            setup.push('\n');
            self.outputs.print_report(&setup)?;
        }
        self.outputs
            .print_report(&render::sweep::rows(label, report, p))?;
        warn_about_generator(report);
        Ok(())
    }
}
