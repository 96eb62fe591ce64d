//! What the commands share: the runtime and signal listener of a command (started once, by the
//! dispatcher), the target, progress lines on stderr, the generator's warnings and the exit
//! verdict of a report.

use crate::cli::TargetArgs;
use crate::engine::config::RunConfig;
use crate::engine::target::{Target, DEFAULT_LOCAL_MASTERS};
use crate::error::LoadgenError;
use crate::model::report::Report;
use crate::model::threshold::Threshold;
use crate::signals::Signals;

/// The async runtime of one command and its listener for SIGINT, SIGTERM and SIGHUP: a signal
/// stops the run in flight, which then reports what it measured and exits 128 + n.
#[derive(Debug)]
pub struct Session {
    pub rt: tokio::runtime::Runtime,
    pub signals: Signals,
}

impl Session {
    pub fn start() -> Result<Session, LoadgenError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| LoadgenError::Failed(format!("starting the async runtime: {e}")))?;
        let signals = rt
            .block_on(async { Signals::install() })
            .map_err(LoadgenError::Failed)?;
        Ok(Session { rt, signals })
    }
}

/// The masters `args` name, or local ones started now (under libfaketime when `fake_clock`:
/// clock faults). With `--rtt`, the client reaches them through the network profile's proxy.
pub fn target(args: &TargetArgs, fake_clock: bool) -> Result<Target, LoadgenError> {
    let mut target = if args.masters.is_empty() {
        Target::spawn_masters(
            args.spawn.unwrap_or(DEFAULT_LOCAL_MASTERS),
            args.server.as_ref(),
            fake_clock,
        )?
    } else {
        Target::existing(args.masters.clone())
    };
    if let Some(profile) = &args.rtt {
        target.add_network(profile)?;
    }
    Ok(target)
}

/// What every coordinated command refuses: local masters (each agent would load its own).
pub fn check_agent_target(target: &TargetArgs) -> Result<(), LoadgenError> {
    if target.masters.is_empty() {
        return Err(LoadgenError::Usage(
            "--coordinator needs --masters (or REDLOCK_LOADGEN_MASTERS): every agent must load the same masters, local ones would be each agent's own".into(),
        ));
    }
    Ok(())
}

/// `--fault` (when `faults`) under a coordinator: refused, the faults act on one machine.
pub fn refuse_faults_with_coordinator(faults: bool) -> Result<(), LoadgenError> {
    match faults {
        true => Err(LoadgenError::Usage(
            "--fault does not combine with --coordinator (faults act on local masters of one machine)".into(),
        )),
        false => Ok(()),
    }
}

/// A `.ratio` threshold where no second result is set against the first: refused.
pub fn refuse_ratio(thresholds: &[Threshold]) -> Result<(), LoadgenError> {
    match thresholds.iter().find(|t| t.is_ratio()) {
        Some(t) => Err(LoadgenError::Usage(format!(
            "--threshold '{t}': a .ratio figure compares two results; use it with `compare`"
        ))),
        None => Ok(()),
    }
}

pub fn say(quiet: bool, message: &str) {
    if !quiet {
        eprintln!("{message}");
    }
}

pub fn describe_run(cfg: &RunConfig, target: &Target) -> String {
    let modes: Vec<String> = cfg
        .modes()
        .iter()
        .map(|(lock, fanout)| match lock.votes() {
            true => format!("{} fan-out", fanout.as_str()),
            false => format!("{lock} (first master)"),
        })
        .collect();
    let repeats = match cfg.repeat {
        n @ 2.. => format!(", {n} times (the order reversed every second time)"),
        _ => String::new(),
    };
    format!(
        "{} {}master(s); {}; {}: {:?} warm-up + {:?} measured each{repeats}",
        target.urls.len(),
        if target.local.is_some() { "local " } else { "" },
        cfg.load,
        modes.join(" then "),
        cfg.warmup,
        cfg.duration,
    )
}

/// The generator's warnings (generator-bound, missed target rate) on stderr.
pub fn warn_about_generator(report: &Report) {
    for m in &report.modes {
        let j = &m.generator.judgement;
        let mut said = Vec::new();
        if j.target_missed {
            let started = m.started_per_s();
            said.push(format!("target rate missed ({started:.0}/s started)"));
        }
        if j.generator_bound {
            said.push(
                "generator-bound: these figures measure this machine, not the masters".into(),
            );
        }
        if !said.is_empty() {
            eprintln!(
                "redlock-loadgen: warning: {} fan-out: {} (why: at the end of the report)",
                m.label(),
                said.join("; ")
            );
        }
    }
}

/// The exit after the report: violations → 3; a protected resource that took no write → 1; a
/// signal → 128 + n; a fan-out mode that won no lock at all → 1 (unless allowed).
pub fn check(report: &Report, no_locks_ok: bool) -> Result<(), LoadgenError> {
    if let n @ 1.. = report.violations() {
        return Err(LoadgenError::Violations(n));
    }
    for m in &report.modes {
        if let Some(f) = m.fencing.as_ref().filter(|f| f.storage_took_no_write()) {
            return Err(LoadgenError::Failed(format!(
                "{} fan-out: the protected resource (--storage) took none of the {} writes sent ({} errors): no stale-write figure is known; check its URL, password and that it listens",
                m.label(),
                f.storage_writes,
                f.storage_errors
            )));
        }
    }
    if let Some(signal) = report.header.interrupted_by {
        return Err(LoadgenError::Interrupted(signal));
    }
    if no_locks_ok {
        return Ok(());
    }
    let masters: Vec<&str> = report.masters.iter().map(|m| m.url.as_str()).collect();
    for m in &report.modes {
        let c = &m.counts;
        if c.acquired == 0 && m.duration > std::time::Duration::ZERO {
            return Err(LoadgenError::Failed(format!(
                "{} fan-out: no lock was won ({} acquire calls: {} not acquired, {} unavailable, {} other errors; masters {}); pass --allow-no-locks if that is expected",
                m.label(),
                c.acquire_calls,
                c.not_acquired,
                c.unavailable,
                c.other_errors,
                masters.join(", ")
            )));
        }
    }
    Ok(())
}
