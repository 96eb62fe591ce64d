//! Dispatch of the commands: checks outputs, builds the target and the runtime, makes sure a
//! quorum of masters is reachable, runs, renders, writes files, and picks the exit code.

use crate::cli::{Cli, Command, MergeArgs, RunArgs, SweepArgs, TargetArgs};
use crate::config::{Load, RunConfig, RUN_TIMING, SWEEP_TIMING};
use crate::document::Document;
use crate::error::LoadgenError;
use crate::output::Outputs;
use crate::render::{hgrm, json, plot, text};
use crate::report::Report;
use crate::runner::{self, NoHooks};
use crate::signals::Signals;
use crate::sweep::{Level, SweepResult};
use crate::target::{Target, DEFAULT_LOCAL_MASTERS};

/// Runs the parsed command line. `Ok` means exit code 0.
pub fn execute(cli: Cli) -> Result<(), LoadgenError> {
    match cli.command {
        None => run_command(cli.run),
        Some(Command::Run(args)) => run_command(args),
        Some(Command::Sweep(args)) => sweep_command(args),
        Some(Command::Capacity(args)) => crate::capacity::command(args),
        Some(Command::Merge(args)) => merge_command(args),
        Some(Command::Collect(args)) => crate::coordinator::collect::command(args),
        Some(Command::Scenarios(args)) => crate::faults::scenarios::command(args),
    }
}

pub fn runtime() -> Result<tokio::runtime::Runtime, LoadgenError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| LoadgenError::Failed(format!("starting the async runtime: {e}")))
}

pub fn target(args: &TargetArgs) -> Result<Target, LoadgenError> {
    if args.masters.is_empty() {
        Target::spawn(args.spawn.unwrap_or(DEFAULT_LOCAL_MASTERS))
    } else {
        Ok(Target::existing(args.masters.clone()))
    }
}

pub fn say(quiet: bool, message: &str) {
    if !quiet {
        eprintln!("{message}");
    }
}

pub fn describe_run(cfg: &RunConfig, target: &Target) -> String {
    let modes: Vec<&str> = cfg.fanouts.iter().map(|f| f.as_str()).collect();
    format!(
        "{} {}master(s); {}; {} fan-out: {:?} warm-up + {:?} measured each",
        target.urls.len(),
        if target.local.is_some() { "local " } else { "" },
        cfg.load,
        modes.join(" then "),
        cfg.warmup,
        cfg.duration
    )
}

/// The generator's warnings (generator-bound, missed target rate) on stderr.
pub fn warn_about_generator(report: &Report) {
    for m in &report.modes {
        let j = report.judge(m);
        let mut said = Vec::new();
        if j.target_missed {
            said.push(format!(
                "target rate missed ({:.0}/s started)",
                m.started_per_s()
            ));
        }
        if j.generator_bound {
            said.push(
                "generator-bound: these figures measure this machine, not the masters".into(),
            );
        }
        if !said.is_empty() {
            eprintln!(
                "redlock-loadgen: warning: {} fan-out: {} (why: at the end of the report)",
                m.fanout.as_str(),
                said.join("; ")
            );
        }
    }
}

fn run_command(args: RunArgs) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let load = match args.rate {
        Some(rate_per_s) => Load::Open {
            rate_per_s,
            workers: args.clients,
        },
        None => Load::Closed {
            clients: args.clients,
        },
    };
    let cfg = RunConfig::new(&args.workload, load, RUN_TIMING);
    if let Some(coordination) = args.agents.coordination() {
        return crate::coordinator::run::run_agent(&args, &cfg, &coordination, &outputs);
    }
    let (result, faults) = runtime()?.block_on(async {
        let signals = Signals::install()?;
        let mut target = target(&args.target)?;
        // Before anything connects: faults on the network path reroute the client via proxies.
        let mut schedule = crate::faults::run::prepare(&cfg, &mut target, &args.faults).await?;
        target.probe_versions().await;
        crate::probe::require_quorum(&target, cfg.quorum).await?;
        say(cfg.quiet, &describe_run(&cfg, &target));
        let result = runner::run(&cfg, &target, &mut schedule, &signals).await?;
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

/// The exit after the report: a signal → 128 + n; violations → 3; a fan-out mode that won no
/// lock at all → 1 (unless allowed).
pub fn check(report: &Report, no_locks_ok: bool) -> Result<(), LoadgenError> {
    if let n @ 1.. = report.violations() {
        return Err(LoadgenError::Violations(n));
    }
    if let Some(signal) = report.header.interrupted_by {
        return Err(LoadgenError::Interrupted(signal));
    }
    if no_locks_ok {
        return Ok(());
    }
    for m in &report.modes {
        let c = &m.counts;
        if c.acquired == 0 && m.duration > std::time::Duration::ZERO {
            return Err(LoadgenError::Failed(format!(
                "{} fan-out: no lock was won ({} acquire calls: {} not acquired, {} unavailable, {} other errors; masters {}); pass --allow-no-locks if that is expected",
                m.fanout.as_str(),
                c.acquire_calls,
                c.not_acquired,
                c.unavailable,
                c.other_errors,
                report
                    .header
                    .masters
                    .iter()
                    .map(|m| m.url.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

pub fn write_outputs(report: &Report, out: &Outputs, quiet: bool) -> Result<(), LoadgenError> {
    if let Some(dest) = &out.json {
        dest.write(&json::render(report))?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    if let Some(dest) = &out.csv {
        let rows = [("run".to_string(), report)];
        dest.write(&crate::render::csv::render(
            "result",
            &rows,
            &out.percentiles,
        ))?;
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

fn refuse_run_only_outputs(command: &str, outputs: &Outputs) -> Result<(), LoadgenError> {
    if outputs.hgrm.is_some() {
        return Err(LoadgenError::Usage(format!(
            "{command} does not write --hgrm (run does)"
        )));
    }
    Ok(())
}

fn sweep_command(args: SweepArgs) -> Result<(), LoadgenError> {
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
            .map(|&clients| (clients.to_string(), Load::Closed { clients }))
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
        run_id: runner::new_run_id(),
        started_unix_s: runner::unix_now_s(),
        interrupted_by: None,
        load: if open_loop { "open" } else { "closed" }.into(),
        merged_from: Vec::new(),
        merge_notes: Vec::new(),
        levels: Vec::new(),
    };
    let quiet = workload.quiet;
    runtime()?.block_on(async {
        let signals = Signals::install()?;
        let mut target = target(&args.target)?;
        target.probe_versions().await;
        let first = RunConfig::new(&workload, levels[0].1, SWEEP_TIMING);
        crate::probe::require_quorum(&target, first.quorum).await?;
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
            let result = runner::run(&cfg, &target, &mut NoHooks, &signals).await?;
            let report = Report::from_run(&result);
            if i == 0 {
                // The setup once (from the first level), then the table.
                let mut setup = text::header_with_load(&report, Some(&sweep_load));
                setup.push('\n');
                setup.push_str(&crate::sweep::header(open_loop, p));
                setup.push('\n');
                outputs.print_report(&setup)?;
            }
            outputs.print_report(&crate::sweep::rows(label, &report, p))?;
            warn_about_generator(&report);
            sweep.levels.push(Level {
                level: label.clone(),
                report,
            });
        }
        sweep.interrupted_by = signals.received();
        Ok::<(), LoadgenError>(())
    })?;
    outputs.print_report(&format!("\n{}\n", crate::sweep::LEGEND))?;
    write_sweep_outputs(&sweep, &outputs, quiet)?;
    let violations: u64 = sweep.levels.iter().map(|l| l.report.violations()).sum();
    if violations > 0 {
        return Err(LoadgenError::Violations(violations));
    }
    if let Some(signal) = sweep.interrupted_by {
        return Err(LoadgenError::Interrupted(signal));
    }
    for l in &sweep.levels {
        check(&l.report, args.allow_no_locks)
            .map_err(|e| LoadgenError::Failed(format!("level {}: {e}", l.level)))?;
    }
    Ok(())
}

fn write_sweep_outputs(
    sweep: &SweepResult,
    outputs: &Outputs,
    quiet: bool,
) -> Result<(), LoadgenError> {
    if let Some(dest) = &outputs.json {
        let text = serde_json::to_string_pretty(&sweep.to_json()).expect("a sweep serializes");
        dest.write(&(text + "\n"))?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    if let Some(dest) = &outputs.csv {
        let rows: Vec<_> = sweep
            .levels
            .iter()
            .map(|l| (l.level.clone(), &l.report))
            .collect();
        dest.write(&crate::render::csv::render(
            "level",
            &rows,
            &outputs.percentiles,
        ))?;
        say(quiet, &format!("wrote {}", dest.describe()));
    }
    Ok(())
}

fn merge_command(args: MergeArgs) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let mut parts = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        parts.push((path.display().to_string(), crate::document::read(path)?));
    }
    let allow = crate::merge::Allow {
        mixed: args.allow_mixed,
        disjoint: args.allow_disjoint,
    };
    let merged = crate::merge::merge(parts, allow)?;
    match print_merged(&merged, &outputs)? {
        0 => Ok(()),
        n => Err(LoadgenError::Violations(n)),
    }
}

/// Prints a merged result and writes its files; returns its mutual-exclusion violations.
pub fn print_merged(merged: &Document, outputs: &Outputs) -> Result<u64, LoadgenError> {
    let p = &outputs.percentiles;
    match merged {
        Document::Run(report) => {
            outputs.print_report(&text::render(report, p))?;
            write_outputs(report, outputs, false)?;
            Ok(report.violations())
        }
        Document::Sweep(sweep) => {
            refuse_run_only_outputs("merge of sweeps", outputs)?;
            let mut head = format!(
                "merged     {} sweep results: {}\n",
                sweep.merged_from.len(),
                sweep.merged_from.join(", ")
            );
            for note in &sweep.merge_notes {
                head.push_str(&format!("MERGE NOTE {note}\n"));
            }
            outputs.print_report(&(head + &sweep.table(p)))?;
            write_sweep_outputs(sweep, outputs, false)?;
            Ok(sweep.levels.iter().map(|l| l.report.violations()).sum())
        }
        Document::Capacity(result) => {
            refuse_run_only_outputs("merge of capacity results", outputs)?;
            let mut head = format!(
                "merged     {} capacity results: {} (rates asked are the parts' sum)\n",
                result.merged_from.len(),
                result.merged_from.join(", ")
            );
            for note in &result.merge_notes {
                head.push_str(&format!("MERGE NOTE {note}\n"));
            }
            outputs.print_report(&(head + &crate::capacity::table::render(result, p)))?;
            crate::capacity::write_outputs(result, outputs, false)?;
            Ok(result.steps.iter().map(|s| s.report.violations()).sum())
        }
    }
}
