//! `--html FILE`: one self-contained HTML report (inline CSS and SVG, no script, nothing
//! fetched when viewed). It opens with the answer (goodput, the fan-out ratio, the verdicts;
//! for a capacity search the rate within the objective), then the charts, the detail tables,
//! the generator's own limits and the full configuration.

use std::fmt::Write as _;

use crate::faults::master::schedule::FaultEvent;
use crate::model::capacity::CapacityResult;
use crate::model::mode::ModeStats;
use crate::model::report::Report;
use crate::model::sweep::SweepResult;
use crate::render::text;

pub mod charts;
mod scenarios;
mod tables;

pub use scenarios::scenarios_page;

use charts::FaultWindow;

const STYLE: &str = "body{font-family:sans-serif;max-width:1180px;margin:1em auto;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}\
.answer{font-size:1.15em;background:#f4f8ff;border:1px solid #b8cff0;padding:.6em 1em}\
.warn{background:#fff0e0;border:1px solid #e0a060;padding:.6em 1em;font-weight:bold}\
.ok{color:#1a7f37}.bad{color:#b42318;font-weight:bold}\
.chart svg{width:100%;height:auto;border:1px solid #eee}\
.config td{text-align:left}.bar{display:inline-block;height:.8em;background:#1f77b4;vertical-align:middle}\
pre{white-space:pre-wrap;background:#f7f7f7;padding:.6em}";

/// Text with `<`, `>`, `&` and quotes escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A finished page around `body`.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>\n<h1>{}</h1>\n{body}</body></html>\n",
        escape(title),
        escape(title)
    )
}

/// A chart in its figure (an SVG drawn by [`charts`]).
fn chart(out: &mut String, svg: &str) {
    let svg = svg.trim_start();
    // The SVG backend writes no XML declaration; strip one if it ever does.
    let svg = match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(rest, |(_, s)| s),
        None => svg,
    };
    let _ = writeln!(out, "<div class=\"chart\">{svg}</div>");
}

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

/// The fault windows of mode `m`.
fn windows_of(faults: &[(String, Vec<FaultWindow>)], m: &ModeStats) -> Vec<FaultWindow> {
    faults
        .iter()
        .find(|(label, _)| label == m.label())
        .map(|(_, w)| w.clone())
        .unwrap_or_default()
}

/// The fault log's name for the clean-up that ends every fault when a mode ends.
const END_OF_MODE: &str = "end of mode";

/// The fault windows of each mode, seconds into its measured window: each fault spec from its
/// first action to its last (or to the mode's clean-up, or the window's end).
pub fn fault_windows(report: &Report) -> Vec<(String, Vec<FaultWindow>)> {
    let mut out: Vec<(String, Vec<FaultWindow>)> = Vec::new();
    for m in &report.modes {
        // A merged result's parts started at different times: fault times, counted from
        // each part's own start, have no single place on its timeline.
        if m.windows_unix_ms.len() > 1 {
            out.push((m.label().to_string(), Vec::new()));
            continue;
        }
        let end = m.duration.as_secs_f64();
        let events: Vec<&FaultEvent> = report
            .faults
            .iter()
            .filter(|e| e.fanout == m.label())
            .collect();
        let heal = events
            .iter()
            .find(|e| e.fault == END_OF_MODE)
            .map(|e| at_s(e));
        let mut windows = Vec::new();
        let mut specs: Vec<&str> = Vec::new();
        for e in &events {
            if e.fault != END_OF_MODE && !specs.contains(&e.fault.as_str()) {
                specs.push(&e.fault);
            }
        }
        for spec in specs {
            let times: Vec<f64> = events
                .iter()
                .filter(|e| e.fault == spec)
                .map(|e| at_s(e))
                .collect();
            let from = times.first().copied().unwrap_or(0.0).clamp(0.0, end);
            let last = times.last().copied().unwrap_or(from);
            let to = if times.len() > 1 {
                last
            } else {
                heal.unwrap_or(end)
            };
            let to = to.clamp(from, end);
            // A window too thin to see is drawn as a thin band.
            let to = if to - from < end / 200.0 {
                (from + end / 200.0).min(end)
            } else {
                to
            };
            windows.push((from, to, spec.to_string()));
        }
        out.push((m.label().to_string(), windows));
    }
    out
}

/// When fault event `e` was applied, seconds into its mode's measured window.
fn at_s(e: &FaultEvent) -> f64 {
    e.at_ms / 1000.0
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

/// `x` with `digits` decimals ("–" when not a finite number).
pub fn num(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "–".into()
    }
}

/// A share as a percentage.
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}%", 100.0 * x)
    } else {
        "–".into()
    }
}
