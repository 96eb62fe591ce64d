//! `--csv FILE`: the summary rows (one per mode of each run, sweep level or capacity step),
//! for spreadsheets. Latencies in ms at the `--percentiles` chosen.

use crate::hist::Hist;
use crate::model::capacity::{Answer, CapacityResult};
use crate::model::catalog::{self, FigureUnit};
use crate::model::figures::figures as model_figures;
use crate::model::mode::ModeStats;
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::render::capacity_table::numbered;
use crate::render::written::{not_taken, Written};

/// One line per mode of each `(label, report)`; `level` names the label column.
pub fn render(level: &str, rows: &[(String, &Report)], p: &Percentiles) -> String {
    let columns = columns(p);
    let mut lines = vec![head(&[level], &columns)];
    for (label, report) in rows {
        for m in &report.modes {
            lines.push(cells([quote(label)], &columns, report, m));
        }
    }
    lines.concat()
}

/// A capacity search: one row per step (`row` = `step`), then one per answer (`row` =
/// `answer`, with the figures of the answer's step); `phase`, the rate asked for and the
/// `verdict` (`pass`/`fail` for a step; for an answer its status: `confirmed`, `unconfirmed`,
/// `machine-floor`, `max-rate-floor` or `not-met`) in columns of their own, `note` saying why a
/// step failed, or an answer's status reason and the bracket it knows.
pub fn capacity(result: &CapacityResult, p: &Percentiles) -> String {
    let columns = columns(p);
    let names = ["row", "step", "phase", "rate", "verdict", "note"];
    let mut lines = vec![head(&names, &columns)];
    for (n, step) in numbered(&result.steps) {
        let Some(m) = step.report.modes.first() else {
            continue;
        };
        let verdict = if step.passed { "pass" } else { "fail" };
        let own = [
            "step".to_string(),
            n.to_string(),
            step.phase.as_str().to_string(),
            step.rate.to_string(),
            verdict.to_string(),
            quote(&step.failures.join("; ")),
        ];
        lines.push(cells(own, &columns, &step.report, m));
    }
    for a in &result.answers {
        lines.push(answer_row(result, a, &columns));
    }
    lines.concat()
}

/// An answer's row: its status, why, and the figures of its step, the last that passed at
/// the answer's rate (only the fan-out when no step answered).
fn answer_row(result: &CapacityResult, a: &Answer, columns: &[Column]) -> String {
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
    let step = numbered(&result.steps)
        .filter(|(_, s)| s.fanout == a.fanout && a.rate_per_s == Some(s.rate) && s.passed)
        .last();
    let own = [
        "answer".to_string(),
        step.map(|(n, _)| n.to_string()).unwrap_or_default(),
        String::new(),
        a.rate_per_s.map(|r| r.to_string()).unwrap_or_default(),
        a.status.key().to_string(),
        quote(&note),
    ];
    match step.and_then(|(_, s)| Some((&s.report, s.report.modes.first()?))) {
        Some((report, m)) => cells(own, columns, report, m),
        None => {
            let blank = std::iter::once(a.fanout.clone()).chain(std::iter::repeat(String::new()));
            line(own.into_iter().chain(blank.take(columns.len())))
        }
    }
}

/// A figure column: its name and its cell of a mode of a report.
type Column = (String, Box<dyn Fn(&Report, &ModeStats) -> String>);

/// The header line: `first`, then the figure columns.
fn head(first: &[&str], columns: &[Column]) -> String {
    let names = first.iter().map(|s| s.to_string());
    line(names.chain(columns.iter().map(|c| c.0.clone())))
}

/// A line: `own` cells, then the figures of mode `m` of `report`.
fn cells<const N: usize>(
    own: [String; N],
    columns: &[Column],
    report: &Report,
    m: &ModeStats,
) -> String {
    line(
        own.into_iter()
            .chain(columns.iter().map(|(_, cell)| cell(report, m))),
    )
}

/// `cells` joined, as one line.
fn line(cells: impl Iterator<Item = String>) -> String {
    cells.collect::<Vec<_>>().join(",") + "\n"
}

/// The figure columns: the load, the latency at `p` and the attempts', every figure's
/// columns, then each headline figure's 95 % interval (empty: the run was too short to say;
/// latencies in ms, as the other latency columns).
fn columns(p: &Percentiles) -> Vec<Column> {
    fn column(
        name: impl Into<String>,
        cell: impl Fn(&Report, &ModeStats) -> String + 'static,
    ) -> Column {
        (name.into(), Box::new(cell))
    }
    let ms = |h: &Hist, q: f64| format!("{:.3}", h.quantile(q) as f64 / 1000.0);
    let mut columns = vec![
        column("fanout", |_, m| m.label().to_string()),
        column("load", |r, _| r.config.load.clone()),
        column("rate_asked_per_s", |r, _| {
            r.config
                .rate_per_s
                .map(|r| r.to_string())
                .unwrap_or_default()
        }),
        column("clients", |r, _| r.config.clients.to_string()),
        column("resources", |r, _| r.config.resources.to_string()),
        column("duration_s", |_, m| {
            format!("{:.3}", m.duration.as_secs_f64())
        }),
    ];
    for (label, q) in p.labels().into_iter().zip(p.iter()) {
        columns.push(column(format!("acquire_{label}_ms"), move |_, m| {
            ms(&m.latency.acquire, q / 100.0)
        }));
    }
    columns.extend([
        column("attempt_p50_ms", move |_, m| ms(&m.latency.attempt, 0.5)),
        column("attempt_p99_ms", move |_, m| ms(&m.latency.attempt, 0.99)),
        column("start_lag_p99_ms", move |_, m| {
            ms(&m.latency.start_lag, 0.99)
        }),
        column("pacing_lag_p99_ms", move |_, m| {
            ms(&m.latency.pacing_lag, 0.99)
        }),
    ]);
    for figure in model_figures() {
        for (name, cell) in figure.columns {
            columns.push(column(name, move |_, m| cell(m)));
        }
    }
    for f in catalog::headlines() {
        let name = f.name.replace('.', "_");
        let (name, unit) = match f.unit {
            FigureUnit::Micros => (format!("{name}_ms"), 1000.0),
            _ => (name, 1.0),
        };
        for (end, pick) in [("low", 0), ("high", 1)] {
            columns.push(column(format!("{name}_{end}"), move |_, m| {
                let estimate = m
                    .estimates
                    .as_ref()
                    .and_then(|e| catalog::estimate(e, f.name));
                let interval = estimate.and_then(|e| e.interval());
                interval.map_or(String::new(), |i| format!("{}", [i.0, i.1][pick] / unit))
            }));
        }
    }
    columns
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
