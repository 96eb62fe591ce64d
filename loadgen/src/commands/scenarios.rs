//! `redlock-loadgen scenarios`: the fault matrix ([`crate::engine::faults::scenarios`]) run row by
//! row on fresh local masters, printed as one verdict table.

use std::sync::Arc;

use redlock_core::FanOut;

use super::shared::Session;
use crate::cli::ScenariosArgs;
use crate::engine::faults::scenarios::{run_scenario, select, Scenario};
use crate::engine::history::HistoryLog;
use crate::error::LoadgenError;
use crate::model::document::to_text;
use crate::model::header::{new_run_id, unix_now_s};
use crate::model::header::{Header, Kind};
use crate::model::scenarios::ScenariosResult;
use crate::render::scenarios::{self as table, Row};

/// The selected rows, each in each selected fan-out mode.
fn rows(args: &ScenariosArgs) -> Result<Vec<(Scenario, FanOut)>, LoadgenError> {
    let scenarios = select(&args.only)?;
    let modes = args.fanout.modes();
    Ok(scenarios
        .iter()
        .flat_map(|s| {
            // The single-master baselines run once: fan-out means nothing with one master.
            let modes = if s.fanout_matters() {
                &modes[..]
            } else {
                &modes[..1]
            };
            modes.iter().map(move |&m| (*s, m))
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
    let modes = args.fanout.modes();
    let rows = rows(&args)?;
    let started_unix_s = unix_now_s();
    if let Some(dir) = &args.history {
        std::fs::create_dir_all(dir).map_err(|e| {
            LoadgenError::Usage(format!(
                "--history {}: cannot create it: {e}",
                dir.display()
            ))
        })?;
    }
    let mut outcomes = Vec::with_capacity(rows.len());
    // A signal (SIGINT, SIGTERM, SIGHUP) ends the current row early and skips the rest; the
    // masters are still stopped.
    let signals = &session.signals;
    for (i, (scenario, mode)) in rows.iter().enumerate() {
        if let Some(signal) = signals.received() {
            return Err(LoadgenError::Interrupted(signal));
        }
        if !args.quiet {
            eprintln!(
                "[{}/{}] {} ({}): redlock-loadgen run {}",
                i + 1,
                rows.len(),
                scenario.name,
                scenario.about,
                scenario.run_flags(*mode)
            );
        }
        let mut run = crate::cli::translate::scenario_run(&scenario.run_flags(*mode))?;
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
            outcome.row.cells[0] = outcome.scenario.clone();
        }
        if !args.quiet {
            for e in &outcome.faults {
                eprintln!("      +{:>6.0} ms  {:<28} {}", e.at_ms, e.fault, e.action);
            }
        }
        outcomes.push(outcome);
    }
    let table_rows: Vec<Row> = outcomes.iter().map(|o| o.row.clone()).collect();
    print!("{}", table::render(&table_rows));
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    let result = ScenariosResult {
        header: Header::new(Kind::Scenarios, new_run_id(), started_unix_s),
        rows: outcomes,
    };
    let write = |path: &std::path::Path, text: &str| {
        std::fs::write(path, text)
            .map_err(|e| LoadgenError::Failed(format!("writing {}: {e}", path.display())))
    };
    if let Some(path) = &args.json {
        write(path, &to_text(&result))?;
    }
    if let Some(path) = &args.html {
        let page = crate::render::html::scenarios_page(&result).map_err(LoadgenError::Failed)?;
        write(path, &page)?;
    }
    match failed {
        0 => Ok(()),
        n => Err(LoadgenError::Failed(format!(
            "{n} scenario(s) missed their expected outcome"
        ))),
    }
}
