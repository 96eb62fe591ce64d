//! `redlock-loadgen scenarios`: the fault matrix ([`crate::plans::faults::scenarios`]) run row by
//! row on fresh local masters, printed as one verdict table.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use redlock_core::FanOut;

use super::shared::{say, Session};
use crate::cli::ScenariosArgs;
use crate::commands::output::Outputs;
use crate::engine::history::HistoryLog;
use crate::error::LoadgenError;
use crate::model::header::{new_run_id, unix_now_s};
use crate::model::header::{Header, Kind};
use crate::model::scenarios::{Outcome, ScenariosResult};
use crate::plans::faults::scenarios::{run_scenario, select, Scenario};
use crate::render::formats::Written;
use crate::render::scenarios::{self as table, Row};

/// The selected rows, each in each selected fan-out mode.
fn rows(args: &ScenariosArgs) -> Result<Vec<(Scenario, FanOut)>, LoadgenError> {
    let scenarios = select(&args.only)?;
    let modes = args.fanout.modes();
    Ok(scenarios
        .iter()
        .flat_map(|s| {
            // The single-master baselines run once: fan-out means nothing with one master.
            let n = if s.fanout_matters() { modes.len() } else { 1 };
            modes[..n].iter().map(move |&m| (*s, m))
        })
        .collect())
}

/// A row's history file: its name in lower case, every run of other characters as one `-`,
/// then the fan-out.
pub fn history_file_name(name: &str, fanout: FanOut) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    format!("{slug}-{}.jsonl", fanout.as_str())
}

/// `--list`: each row's `redlock-loadgen run` command line.
pub fn list(args: &ScenariosArgs) -> Result<(), LoadgenError> {
    for (s, mode) in &rows(args)? {
        println!("{:<26} redlock-loadgen run {}", s.name, s.run_flags(*mode));
    }
    Ok(())
}

/// Runs the selected rows, prints the table, and fails when a row missed its expectation.
pub fn command(args: ScenariosArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::json_and_html(&args.json, &args.html)?;
    let modes = args.fanout.modes();
    let rows = rows(&args)?;
    let started_unix_s = unix_now_s();
    if let Some(dir) = &args.history {
        super::output::check_dir("--history", dir)?;
    }
    let mut outcomes = Vec::with_capacity(rows.len());
    // A signal (SIGINT, SIGTERM, SIGHUP) ends the current row early and skips the rest; the
    // masters are still stopped.
    let signals = &session.signals;
    for (i, (scenario, mode)) in rows.iter().enumerate() {
        if let Some(signal) = signals.received() {
            return Err(LoadgenError::Interrupted(signal));
        }
        let flags = scenario.run_flags(*mode);
        let (at, n, name, about) = (i + 1, rows.len(), scenario.name, scenario.about);
        let line = format!("[{at}/{n}] {name} ({about}): redlock-loadgen run {flags}");
        say(args.quiet, &line);
        let mut run = crate::cli::translate::scenario_run(&flags)?;
        if let Some(dir) = &args.history {
            let path = dir.join(history_file_name(scenario.name, *mode));
            let limit = args.history_limit.history_limit;
            run.0.history = Some(Arc::new(HistoryLog::create(&path, limit)?));
        }
        let history = run.0.history.clone();
        let mut outcome = run_scenario(&session.rt, scenario, run, args.server.as_ref(), signals)?;
        if let Some(history) = history {
            history.finish()?;
            outcome.history = Some(history.path().display().to_string());
        }
        if modes.len() > 1 && scenario.fanout_matters() {
            outcome.scenario = format!("{} [{}]", scenario.name, mode.as_str());
        }
        for e in &outcome.faults {
            let line = format!("      +{:>6.0} ms  {:<28} {}", e.at_ms, e.fault, e.action);
            say(args.quiet, &line);
        }
        outcomes.push(outcome);
    }
    let table_rows: Vec<Row> = outcomes.iter().map(Row::of).collect();
    outputs.print_report(&table::render(&table_rows))?;
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    let mut result = ScenariosResult {
        header: Header::new(Kind::Scenarios, new_run_id(), started_unix_s),
        rows: outcomes,
    };
    if let (Some(html), Some(_)) = (&args.html, &args.history) {
        draw_timelines(&mut result.rows, html, args.quiet)?;
    }
    outputs.write(Written::Scenarios(&result), args.quiet)?;
    match failed {
        0 => Ok(()),
        n => Err(LoadgenError::Failed(format!(
            "{n} scenario(s) missed their expected outcome"
        ))),
    }
}

/// Whether the own checker flags a row: an overlap, a stale write stored, tokens out of order.
fn flagged(outcome: &Outcome) -> bool {
    outcome.result.modes.iter().any(|m| {
        let f = m.fencing.clone().unwrap_or_default();
        m.counts.violations > 0 || f.stale_writes_accepted > 0 || f.token_order_violations > 0
    })
}

/// The independent checker (loadgen/history-check): $HISTORY_CHECK, else where `make
/// history-check` puts it beside this binary's target directory, else on the PATH.
fn history_checker() -> PathBuf {
    if let Some(path) = std::env::var_os("HISTORY_CHECK") {
        return PathBuf::from(path);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("tools/history-check")));
    beside
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("history-check"))
}

/// Porcupine's timeline of every flagged row's history, in `REPORT-timelines/` beside the
/// HTML report, linked from its row.
fn draw_timelines(rows: &mut [Outcome], html: &Path, quiet: bool) -> Result<(), LoadgenError> {
    let stem = html
        .file_stem()
        .map_or("scenarios".into(), |s| s.to_string_lossy());
    let folder = format!("{stem}-timelines");
    let dir = html.parent().unwrap_or(Path::new("")).join(&folder);
    let checker = history_checker();
    for row in rows.iter_mut().filter(|r| flagged(r)) {
        let Some(history) = row.history.clone() else {
            continue;
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| LoadgenError::Failed(format!("creating {}: {e}", dir.display())))?;
        let history = Path::new(&history);
        let name = history
            .file_stem()
            .map_or("row".into(), |s| s.to_string_lossy());
        let file = format!("{name}.html");
        let out = Command::new(&checker)
            .arg("-timeline")
            .arg(dir.join(&file))
            .arg(history)
            .output();
        match out {
            // 0: legal, 1: illegal; both draw the timeline.
            Ok(out) if matches!(out.status.code(), Some(0 | 1)) => {
                row.timeline = Some(format!("{folder}/{file}"));
            }
            Ok(out) => eprintln!(
                "redlock-loadgen: no timeline for {:?}: {} said {}",
                row.scenario,
                checker.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => {
                if !quiet {
                    eprintln!(
                        "redlock-loadgen: no timelines: {} ({e}); build it with `make history-check` or name it in HISTORY_CHECK",
                        checker.display()
                    );
                }
                return Ok(());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_files_are_named_after_their_row_and_fanout() {
        let name = |row| history_file_name(row, FanOut::Concurrent);
        assert_eq!(
            name("clock: shared master jumps (fenced)"),
            "clock-shared-master-jumps-fenced-concurrent.jsonl"
        );
        assert_eq!(name("2 slow (+50ms)"), "2-slow-50ms-concurrent.jsonl");
        assert_eq!(
            history_file_name("no faults", FanOut::Sequential),
            "no-faults-sequential.jsonl"
        );
    }
}
