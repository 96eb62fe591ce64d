//! `--csv FILE`: the summary rows (one per mode of each run, sweep level or capacity step),
//! for spreadsheets. Latencies in ms at the `--percentiles` chosen.

use std::fmt::Write as _;

use crate::model::capacity::{Answer, CapacityResult};
use crate::model::catalog::{self, FigureUnit};
use crate::model::figures::figures as model_figures;
use crate::model::mode::ModeStats;
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::render::written::{not_taken, Written};

/// One line per mode of each `(label, report)`; `level` names the label column.
pub fn render(level: &str, rows: &[(String, &Report)], p: &Percentiles) -> String {
    let mut out = String::new();
    let mut head = vec![level.to_string()];
    head.extend(figure_names(p));
    let _ = writeln!(out, "{}", head.join(","));
    for (label, report) in rows {
        for m in &report.modes {
            let mut cells = vec![quote(label)];
            cells.extend(figures(report, m, p));
            let _ = writeln!(out, "{}", cells.join(","));
        }
    }
    out
}

/// A capacity search: one row per step (`row` = `step`), then one per answer (`row` =
/// `answer`, with the figures of the answer's step); `phase`, the rate asked for and the
/// `verdict` (`pass`/`fail` for a step; for an answer its status: `confirmed`, `unconfirmed`,
/// `machine-floor`, `max-rate-floor` or `not-met`) in columns of their own, `note` saying why a
/// step failed, or an answer's status reason and the bracket it knows.
pub fn capacity(result: &CapacityResult, p: &Percentiles) -> String {
    let mut out = String::new();
    let mut head: Vec<String> = ["row", "step", "phase", "rate", "verdict", "note"]
        .map(String::from)
        .to_vec();
    head.extend(figure_names(p));
    let _ = writeln!(out, "{}", head.join(","));
    let answer_steps = step_rows(result, p, &mut out);
    for a in &result.answers {
        let cells = answer_row(result, a, &answer_steps, p);
        let _ = writeln!(out, "{}", cells.join(","));
    }
    out
}

/// Writes the steps' rows (each numbered within its fan-out) to `out`; returns the number of
/// each fan-out's answer step, the last passing step at the answer's rate.
fn step_rows<'a>(
    result: &'a CapacityResult,
    p: &Percentiles,
    out: &mut String,
) -> Vec<(&'a str, usize)> {
    let mut numbers: Vec<(&str, usize)> = Vec::new();
    let mut answer_steps: Vec<(&str, usize)> = Vec::new();
    for step in &result.steps {
        let n = match numbers.iter_mut().find(|(f, _)| *f == step.fanout) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                numbers.push((&step.fanout, 1));
                1
            }
        };
        let answered = result
            .answers
            .iter()
            .any(|a| a.fanout == step.fanout && a.rate_per_s == Some(step.rate) && step.passed);
        if answered {
            answer_steps.retain(|(f, _)| *f != step.fanout);
            answer_steps.push((&step.fanout, n));
        }
        let Some(m) = step.report.modes.first() else {
            continue;
        };
        let mut cells = vec![
            "step".to_string(),
            n.to_string(),
            step.phase.as_str().to_string(),
            step.rate.to_string(),
            if step.passed { "pass" } else { "fail" }.to_string(),
            quote(&step.failures.join("; ")),
        ];
        cells.extend(figures(&step.report, m, p));
        let _ = writeln!(out, "{}", cells.join(","));
    }
    answer_steps
}

/// The cells of an answer's row: its status, why, and the figures of its step (only the
/// fan-out when no step answered).
fn answer_row(
    result: &CapacityResult,
    a: &Answer,
    answer_steps: &[(&str, usize)],
    p: &Percentiles,
) -> Vec<String> {
    let verdict = a.status.key();
    let bracket = match (a.highest_passed_per_s, a.lowest_failed_per_s) {
        (Some(lo), Some(hi)) => format!("between {lo} (passed) and {hi} (failed)"),
        (Some(lo), None) => format!("{lo} passed; no higher rate failed"),
        _ => String::new(),
    };
    let note = [a.status_reason.as_str(), bracket.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let step_number = answer_steps
        .iter()
        .find(|(f, _)| *f == a.fanout)
        .map(|s| s.1);
    let mut cells = vec![
        "answer".to_string(),
        step_number.map(|n| n.to_string()).unwrap_or_default(),
        String::new(),
        a.rate_per_s.map(|r| r.to_string()).unwrap_or_default(),
        verdict.to_string(),
        quote(&note),
    ];
    let answer_step = a.rate_per_s.and_then(|r| {
        result
            .steps
            .iter()
            .rev()
            .find(|s| s.fanout == a.fanout && s.rate == r && s.passed)
    });
    match answer_step.and_then(|s| s.report.modes.first().map(|m| (s, m))) {
        Some((s, m)) => cells.extend(figures(&s.report, m, p)),
        None => {
            cells.push(a.fanout.clone());
            cells.extend(std::iter::repeat_n(
                String::new(),
                figure_names(p).len() - 1,
            ));
        }
    }
    cells
}

/// The names of the figure columns, in the order [`figures`] writes them.
fn figure_names(p: &Percentiles) -> Vec<String> {
    let mut head: Vec<String> = [
        "fanout",
        "load",
        "rate_asked_per_s",
        "clients",
        "resources",
        "duration_s",
    ]
    .map(String::from)
    .to_vec();
    head.extend(p.labels().iter().map(|l| format!("acquire_{l}_ms")));
    let latency = [
        "attempt_p50_ms",
        "attempt_p99_ms",
        "start_lag_p99_ms",
        "pacing_lag_p99_ms",
    ];
    head.extend(latency.map(String::from));
    head.extend(
        model_figures()
            .iter()
            .flat_map(|f| f.columns.iter().map(|c| c.0.to_string())),
    );
    for (column, _) in catalog::headlines().map(interval_column) {
        head.push(format!("{column}_low"));
        head.push(format!("{column}_high"));
    }
    head
}

/// The column name of a headline figure's 95 % interval, and the divisor to its unit
/// (latencies in ms, as the other latency columns).
fn interval_column(figure: &catalog::Figure) -> (String, f64) {
    let name = figure.name.replace('.', "_");
    match figure.unit {
        FigureUnit::Micros => (format!("{name}_ms"), 1000.0),
        _ => (name, 1.0),
    }
}

/// The figures of mode `m` of `report`: its load, its latency, then every figure's columns.
fn figures(report: &Report, m: &ModeStats, p: &Percentiles) -> Vec<String> {
    let c = &report.config;
    let ms = |h: &crate::hist::Hist, q: f64| format!("{:.3}", h.quantile(q) as f64 / 1000.0);
    let mut cells = vec![
        m.label().to_string(),
        c.load.clone(),
        c.rate_per_s.map(|r| r.to_string()).unwrap_or_default(),
        c.clients.to_string(),
        c.resources.to_string(),
        format!("{:.3}", m.duration.as_secs_f64()),
    ];
    cells.extend(p.cells_ms(&m.latency.acquire));
    cells.extend([
        ms(&m.latency.attempt, 0.5),
        ms(&m.latency.attempt, 0.99),
        ms(&m.latency.start_lag, 0.99),
        ms(&m.latency.pacing_lag, 0.99),
    ]);
    cells.extend(
        model_figures()
            .iter()
            .flat_map(|f| f.columns.iter().map(|c| (c.1)(m))),
    );
    // The 95 % intervals the JSON's `estimates` carry (empty: the run was too short to say).
    for f in catalog::headlines() {
        let (_, unit) = interval_column(f);
        let interval = m
            .estimates
            .as_ref()
            .and_then(|e| catalog::estimate(e, f.name))
            .and_then(|e| e.interval());
        match interval {
            Some((low, high)) => {
                cells.push(format!("{}", low / unit));
                cells.push(format!("{}", high / unit));
            }
            None => cells.extend([String::new(), String::new()]),
        }
    }
    cells
}

/// A CSV field, quoted when it needs to be.
fn quote(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// `--csv` of any result: a run's modes, a sweep's levels, a search's steps.
pub fn write(written: &Written<'_>, p: &Percentiles) -> Result<String, String> {
    Ok(match written {
        Written::Run(report) => render("result", &[("run".to_string(), report)], p),
        Written::Sweep(sweep) => {
            let levels = sweep.levels.iter();
            let rows: Vec<_> = levels.map(|l| (l.level.clone(), &l.report)).collect();
            render("level", &rows, p)
        }
        Written::Capacity(result) => capacity(result, p),
        Written::Compare(..) | Written::Scenarios(_) => return Err(not_taken("--csv", written)),
    })
}
