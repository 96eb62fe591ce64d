//! Dispatch of the commands: builds the target and the runtime, runs, renders, writes files.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::cli::{Cli, Command, MergeArgs, OutputArgs, RunArgs, SweepArgs, TargetArgs};
use crate::config::{Load, RunConfig, RUN_TIMING, SWEEP_TIMING};
use crate::error::LoadgenError;
use crate::render::{hgrm, json, plot, text};
use crate::report::Report;
use crate::runner::{self, NoHooks, RunResult};
use crate::target::{Target, DEFAULT_LOCAL_MASTERS};

/// Runs the parsed command line. `Ok` means exit code 0.
pub fn execute(cli: Cli) -> Result<(), LoadgenError> {
    match cli.command {
        None => run_command(cli.run),
        Some(Command::Run(args)) => run_command(args),
        Some(Command::Sweep(args)) => sweep_command(args),
        Some(Command::Merge(args)) => merge_command(args),
        Some(Command::Scenarios(args)) => crate::faults::scenarios::command(args),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, LoadgenError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| LoadgenError::Failed(format!("starting the async runtime: {e}")))
}

fn target(args: &TargetArgs) -> Result<Target, LoadgenError> {
    if args.masters.is_empty() {
        Target::spawn(args.spawn.unwrap_or(DEFAULT_LOCAL_MASTERS))
    } else {
        Ok(Target::existing(args.masters.clone()))
    }
}

/// A flag set by the first Ctrl-C: workers stop starting operations and the report shows what
/// was measured.
fn stop_on_ctrl_c() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::Relaxed);
        }
    });
    stop
}

fn say(quiet: bool, message: &str) {
    if !quiet {
        eprintln!("{message}");
    }
}

fn describe_run(cfg: &RunConfig, target: &Target) -> String {
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

fn run_command(args: RunArgs) -> Result<(), LoadgenError> {
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
    let (result, faults) = runtime()?.block_on(async {
        let mut target = target(&args.target)?;
        // Before anything connects: faults on the network path reroute the client via proxies.
        let mut schedule = crate::faults::run::prepare(&cfg, &mut target, &args.faults).await?;
        target.probe_versions().await;
        say(cfg.quiet, &describe_run(&cfg, &target));
        let result = runner::run(&cfg, &target, &mut schedule, stop_on_ctrl_c()).await?;
        Ok::<_, LoadgenError>((result, schedule.into_events()))
    })?;
    let mut report = Report::from_run(&result);
    report.faults = faults;
    print(&text::render(&report))?;
    write_outputs(&report, &args.output, cfg.quiet)?;
    check(&result, !report.faults.is_empty())
}

/// After the report: violations exit 3; without injected faults, a mode in which the masters
/// were never reachable (no lock, only `Unavailable`) is a failed run (exit 1), not a measurement.
fn check(result: &RunResult, faults_injected: bool) -> Result<(), LoadgenError> {
    if let n @ 1.. = result.violations() {
        return Err(LoadgenError::Violations(n));
    }
    for m in result.modes.iter().filter(|_| !faults_injected) {
        let c = &m.counts;
        if c.acquired == 0 && c.unavailable > 0 && c.unavailable == c.acquire_calls {
            return Err(LoadgenError::Failed(format!(
                "{} fan-out: all {} acquire calls found fewer than a quorum of masters reachable; are the masters up ({})?",
                m.fanout,
                c.acquire_calls,
                result.masters.join(", ")
            )));
        }
    }
    Ok(())
}

fn print(text: &str) -> Result<(), LoadgenError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| LoadgenError::Failed(format!("writing the report: {e}")))
}

fn write_file(path: &Path, contents: &str) -> Result<(), LoadgenError> {
    std::fs::write(path, contents)
        .map_err(|e| LoadgenError::Failed(format!("writing {}: {e}", path.display())))
}

fn write_outputs(report: &Report, out: &OutputArgs, quiet: bool) -> Result<(), LoadgenError> {
    if let Some(path) = &out.json {
        write_file(path, &json::render(report))?;
        say(quiet, &format!("wrote {}", path.display()));
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
    if let Some(path) = &out.plot {
        write_file(path, &plot::render(report).map_err(LoadgenError::Failed)?)?;
        say(quiet, &format!("wrote {}", path.display()));
    }
    Ok(())
}

fn sweep_command(args: SweepArgs) -> Result<(), LoadgenError> {
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
            "open-loop levels (acquires/s) over {} workers",
            args.workers
        )
    } else {
        "closed-loop levels (clients)".to_string()
    };
    // One seed for the whole sweep, so levels differ only by their load.
    let mut workload = args.workload.clone();
    workload.seed = Some(workload.seed.unwrap_or_else(rand::random));
    let rt = runtime()?;
    let mut results = Vec::new();
    rt.block_on(async {
        let mut target = target(&args.target)?;
        target.probe_versions().await;
        let stop = stop_on_ctrl_c();
        let first = RunConfig::new(&workload, levels[0].1, SWEEP_TIMING);
        say(
            first.quiet,
            &format!("sweep over {} levels; seed {}", levels.len(), first.seed),
        );
        for (i, (label, load)) in levels.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let cfg = RunConfig::new(&workload, *load, SWEEP_TIMING);
            say(
                cfg.quiet,
                &format!(
                    "level {}/{}: {}",
                    i + 1,
                    levels.len(),
                    describe_run(&cfg, &target)
                ),
            );
            let result = runner::run(&cfg, &target, &mut NoHooks, Arc::clone(&stop)).await?;
            let report = Report::from_run(&result);
            if i == 0 {
                // The setup once (from the first level), then the table.
                let mut setup = text::header_with_load(&report, Some(&sweep_load));
                setup.push('\n');
                setup.push_str(&crate::sweep::header(open_loop));
                setup.push('\n');
                print(&setup)?;
            }
            print(&crate::sweep::rows(label, &report))?;
            results.push((result, report));
        }
        Ok::<(), LoadgenError>(())
    })?;
    if let Some(path) = &args.json {
        let all: Vec<_> = results.iter().map(|(_, r)| json::to_json(r)).collect();
        let text = serde_json::to_string_pretty(&all).expect("results serialize") + "\n";
        write_file(path, &text)?;
        say(args.workload.quiet, &format!("wrote {}", path.display()));
    }
    let violations: u64 = results.iter().map(|(r, _)| r.violations()).sum();
    match violations {
        0 => Ok(()),
        n => Err(LoadgenError::Violations(n)),
    }
}

fn merge_command(args: MergeArgs) -> Result<(), LoadgenError> {
    let mut parts = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        parts.push((path.display().to_string(), crate::merge::read(path)?));
    }
    let report = crate::merge::merge(parts)?;
    print(&text::render(&report))?;
    write_outputs(&report, &args.output, false)?;
    match report.violations() {
        0 => Ok(()),
        n => Err(LoadgenError::Violations(n)),
    }
}
