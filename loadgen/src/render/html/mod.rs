//! `--html FILE`: one self-contained HTML report (inline CSS and SVG, no script, nothing
//! fetched when viewed). It opens with the answer (goodput, the fan-out ratio, the verdicts;
//! for a capacity search the rate within the objective), then the charts, the detail tables,
//! the generator's own limits and the full configuration.

use maud::{html, Markup};

use crate::hist::Hist;
use crate::model::capacity::CapacityResult;
use crate::model::mode::ModeStats;
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::model::sweep::SweepResult;
use crate::render::text;
use crate::render::written::Written;

mod capacity;
pub mod charts;
mod compare;
mod faults;
mod intervals;
mod markup;
mod scenarios;
mod tables;

pub use compare::compare_page;
pub use scenarios::scenarios_page;

use faults::fault_windows;
use markup::{chart, num, page, pct};

/// `--html` of any result.
pub fn write(written: &Written<'_>, _: &Percentiles) -> Result<String, String> {
    match written {
        Written::Run(report) => run_page(report),
        Written::Sweep(sweep) => sweep_page(sweep),
        Written::Capacity(result) => capacity_page(result),
        Written::Compare(result, sides) => compare_page(result, sides),
        Written::Scenarios(result) => scenarios_page(result),
    }
}

/// The report of a run (also of a merge or collect of runs).
pub fn run_page(report: &Report) -> Result<String, String> {
    let body = html! { (answer(report)) (run_sections(report)?) };
    Ok(page(
        &format!("redlock-loadgen run {}", report.header.run_id),
        body,
    ))
}

/// The opening lines: goodput per mode, the fan-out ratio, safety and the verdicts.
fn answer(report: &Report) -> Markup {
    let violations = report.violations();
    html! {
        div.answer {
            @for m in &report.modes {
                b { (m.label()) } ": " (crate::model::values::grouped(m.acquires_per_s()))
                " locks acquired per second, acquire p99 "
                (num(m.latency.acquire.quantile(0.99) as f64 / 1000.0, 3))
                " ms, acquire success " (pct(m.acquire_success_rate())) "." br;
            }
            @if let Some(line) = text::comparison(report) { (line.trim()) br; }
            @if violations == 0 {
                span.ok { "Mutual exclusion held: 0 violations." }
            } @else {
                span.bad { (violations) " mutual-exclusion violation(s)." }
            }
        }
        (generator_warning(&report.modes))
    }
}

/// A visible warning when the generator, not the masters, limited a mode.
fn generator_warning(modes: &[ModeStats]) -> Markup {
    html! {
        @for m in modes {
            @let j = &m.generator.judgement;
            @if j.generator_bound || j.target_missed {
                p.warn {
                    (m.label()) ": "
                    @if j.generator_bound {
                        "GENERATOR-BOUND: these figures measure the load generator, not the masters"
                    } @else {
                        "the open-loop rate asked for was not reached"
                    }
                    " — " (j.reasons.join("; "))
                }
            }
        }
    }
}

/// Everything below the answer of a run.
fn run_sections(report: &Report) -> Result<Markup, String> {
    let faults = fault_windows(report);
    let mut over_time = vec![charts::throughput(report, &faults)?];
    let (mut parts, mut spectra, mut round_trips) = (Vec::new(), Vec::new(), Vec::new());
    for m in &report.modes {
        over_time.push(charts::latency_over_time(m, &faults)?);
        parts.extend(charts::parts_over_time(m)?);
        round_trips.extend(charts::round_trips_over_time(m, &faults)?);
    }
    over_time.extend(parts);
    type Pick = fn(&ModeStats) -> &Hist;
    let picks: [(&str, Pick); 3] = [
        ("acquire", |m| &m.latency.acquire),
        ("attempt", |m| &m.latency.attempt),
        ("release", |m| &m.latency.release),
    ];
    for (what, pick) in picks {
        let hists = report
            .modes
            .iter()
            .map(|m| (m.label().to_string(), pick(m)));
        if hists.clone().any(|(_, h)| h.count() > 0) {
            let title = format!("{what} latency by percentile");
            spectra.push(charts::spectrum(&title, hists)?);
        }
    }
    Ok(html! {
        h2 { "Over time" }
        @for svg in &over_time { (chart(svg)) }
        (tables::fault_log(report))
        h2 { "Latency by percentile" }
        @for svg in &spectra { (chart(svg)) }
        (tables::latency(&report.modes))
        (tables::counts(&report.modes))
        (intervals::section(report))
        (tables::vote_patterns(&report.modes))
        (tables::masters(report))
        @for svg in &round_trips { (chart(svg)) }
        (tables::generator(&report.modes))
        (tables::configuration(report))
    })
}

/// The report of a sweep: its curves, then each level's answer line.
pub fn sweep_page(sweep: &SweepResult) -> Result<String, String> {
    let curves = charts::sweep_curves(sweep)?;
    let body = html! {
        div.answer {
            @for l in &sweep.levels {
                b { (l.level) } ": "
                @for (i, m) in l.report.modes.iter().enumerate() {
                    @if i > 0 { ", " }
                    (m.label()) " " (num(m.acquires_per_s(), 0)) " /s (p99 "
                    (num(m.latency.acquire.quantile(0.99) as f64 / 1000.0, 2)) " ms)"
                }
                br;
            }
        }
        @for l in &sweep.levels { (generator_warning(&l.report.modes)) }
        h2 { "Curves" }
        @for svg in &curves { (chart(svg)) }
        @if let Some(first) = sweep.levels.first() { (tables::configuration(&first.report)) }
    };
    Ok(page(
        &format!("redlock-loadgen sweep {}", sweep.header.run_id),
        body,
    ))
}

/// The report of a capacity search: the answers, the steps against the objective, the steps'
/// table with their marks, and the search's configuration.
pub fn capacity_page(result: &CapacityResult) -> Result<String, String> {
    let plot = crate::render::capacity_plot::render(result)?;
    let body = html! {
        (capacity::answers(result))
        h2 { "Steps against the objective" }
        (chart(&plot))
        (capacity::steps(&result.steps))
        // The baseline's steps, shown with the same table as the search's own.
        @if let Some(baseline) = &result.baseline {
            h2 { "Steps without faults (--baseline)" }
            (capacity::steps(&baseline.steps))
        }
        (capacity::step_charts(result)?)
        (capacity::configuration(result))
    };
    Ok(page(
        &format!("redlock-loadgen capacity {}", result.header.run_id),
        body,
    ))
}
