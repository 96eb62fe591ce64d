//! `--html FILE`: one self-contained HTML report (inline CSS and SVG, no script, nothing
//! fetched when viewed). It opens with the answer (goodput, the fan-out ratio, the verdicts;
//! for a capacity search the rate within the objective), then the charts, the detail tables,
//! the generator's own limits and the full configuration.

use std::fmt::Write as _;

use crate::model::capacity::CapacityResult;
use crate::model::mode::ModeStats;
use crate::model::report::Report;
use crate::model::sweep::SweepResult;
use crate::render::text;

pub mod charts;
mod compare;
mod faults;
mod intervals;
mod markup;
mod scenarios;
mod tables;

pub use compare::compare_page;
pub use scenarios::scenarios_page;

use faults::{fault_windows, windows_of};
use markup::{chart, escape, num, page, pct};

/// The report of a run (also of a merge or collect of runs).
pub fn run_page(report: &Report) -> Result<String, String> {
    let mut out = String::new();
    answer(&mut out, report);
    run_sections(&mut out, report)?;
    Ok(page(
        &format!("redlock-loadgen run {}", report.header.run_id),
        &out,
    ))
}

/// The opening lines: goodput per mode, the fan-out ratio, safety and the verdicts.
fn answer(out: &mut String, report: &Report) {
    out.push_str("<div class=\"answer\">");
    for m in &report.modes {
        let _ = write!(
            out,
            "<b>{}</b>: {} locks acquired per second, acquire p99 {} ms, acquire success {}.<br>",
            escape(m.label()),
            num(m.acquires_per_s(), 1),
            num(m.latency.acquire.quantile(0.99) as f64 / 1000.0, 3),
            pct(m.acquire_success_rate())
        );
    }
    if let Some(line) = text::comparison(report) {
        let _ = write!(out, "{}<br>", escape(line.trim()));
    }
    let violations = report.violations();
    if violations == 0 {
        out.push_str("<span class=\"ok\">Mutual exclusion held: 0 violations.</span>");
    } else {
        let _ = write!(
            out,
            "<span class=\"bad\">{violations} mutual-exclusion violation(s).</span>"
        );
    }
    out.push_str("</div>\n");
    generator_warning(out, &report.modes);
}

/// A visible warning when the generator, not the masters, limited a mode.
fn generator_warning(out: &mut String, modes: &[ModeStats]) {
    for m in modes {
        let j = &m.generator.judgement;
        if j.generator_bound || j.target_missed {
            let _ = writeln!(
                out,
                "<p class=\"warn\">{}: {} — {}</p>",
                escape(m.label()),
                if j.generator_bound {
                    "GENERATOR-BOUND: these figures measure the load generator, not the masters"
                } else {
                    "the open-loop rate asked for was not reached"
                },
                escape(&j.reasons.join("; "))
            );
        }
    }
}

/// Everything below the answer of a run.
fn run_sections(out: &mut String, report: &Report) -> Result<(), String> {
    let faults = fault_windows(report);
    out.push_str("<h2>Over time</h2>\n");
    chart(out, &charts::throughput(report, &faults)?);
    for m in &report.modes {
        chart(out, &charts::latency_over_time(m, &windows_of(&faults, m))?);
    }
    for m in &report.modes {
        if let Some(svg) = charts::parts_over_time(m)? {
            chart(out, &svg);
        }
    }
    tables::fault_log(out, report);
    out.push_str("<h2>Latency by percentile</h2>\n");
    for what in ["acquire", "attempt", "release"] {
        if let Some(svg) = charts::spectrum(report, what)? {
            chart(out, &svg);
        }
    }
    tables::latency(out, &report.modes);
    tables::counts(out, &report.modes);
    out.push_str(&intervals::section(report).into_string());
    tables::vote_patterns(out, &report.modes);
    tables::masters(out, report);
    for m in &report.modes {
        if let Some(svg) = charts::round_trips_over_time(m, &windows_of(&faults, m))? {
            chart(out, &svg);
        }
    }
    tables::generator(out, &report.modes);
    tables::configuration(out, report);
    Ok(())
}

/// The report of a sweep: its curves, then each level's answer line.
pub fn sweep_page(sweep: &SweepResult) -> Result<String, String> {
    let mut out = String::new();
    out.push_str("<div class=\"answer\">");
    for l in &sweep.levels {
        let figures: Vec<String> = l
            .report
            .modes
            .iter()
            .map(|m| {
                format!(
                    "{} {} /s (p99 {} ms)",
                    escape(m.label()),
                    num(m.acquires_per_s(), 0),
                    num(m.latency.acquire.quantile(0.99) as f64 / 1000.0, 2)
                )
            })
            .collect();
        let _ = write!(
            out,
            "<b>{}</b>: {}<br>",
            escape(&l.level),
            figures.join(", ")
        );
    }
    out.push_str("</div>\n");
    for l in &sweep.levels {
        generator_warning(&mut out, &l.report.modes);
    }
    out.push_str("<h2>Curves</h2>\n");
    for svg in charts::sweep_curves(sweep)? {
        chart(&mut out, &svg);
    }
    if let Some(first) = sweep.levels.first() {
        tables::configuration(&mut out, &first.report);
    }
    Ok(page(
        &format!("redlock-loadgen sweep {}", sweep.header.run_id),
        &out,
    ))
}

/// The report of a capacity search: the answers, the steps against the objective, the steps'
/// table.
pub fn capacity_page(result: &CapacityResult) -> Result<String, String> {
    let mut out = String::new();
    out.push_str("<div class=\"answer\">");
    for a in &result.answers {
        let _ = write!(out, "{}<br>", escape(&a.statement));
    }
    out.push_str("</div>\n");
    // A planner checks an answer before planning on it: the command that repeats its step.
    for a in result.answers.iter().filter(|a| !a.reproduce.is_empty()) {
        let _ = writeln!(
            out,
            "<p>Reproduce the {} answer's step:</p>\n<pre>{}</pre>",
            escape(&a.fanout),
            escape(&a.reproduce)
        );
    }
    out.push_str("<h2>Steps against the objective</h2>\n");
    chart(&mut out, &crate::render::capacity_plot::render(result)?);
    tables::capacity_steps(&mut out, result);
    if let Some(first) = result.steps.first() {
        tables::configuration(&mut out, &first.report);
    }
    Ok(page(
        &format!("redlock-loadgen capacity {}", result.header.run_id),
        &out,
    ))
}
