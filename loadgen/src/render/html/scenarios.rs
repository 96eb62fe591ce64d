//! The HTML report of `scenarios`: the verdict table, then each row's throughput over time
//! with its faults shaded and named.

use maud::html;

use super::charts;
use super::faults::fault_windows;
use super::markup::{chart, num, page, table};
use crate::model::scenarios::ScenariosResult;

/// The page.
pub fn scenarios_page(result: &ScenariosResult) -> Result<String, String> {
    let failed = result.rows.iter().filter(|o| !o.passed).count();
    let headers = [
        "scenario",
        "expected",
        "verdict",
        "locks acquired per second",
        "violations",
    ];
    let rows = result.rows.iter().map(|o| {
        let rate = o.result.modes.first().map_or(0.0, |m| m.acquires_per_s());
        html! {
            tr {
                td { (o.scenario) }
                td { (o.expected) }
                td {
                    @if o.passed { span.ok { "pass" } }
                    @else { span.bad { "FAIL" } ": " (o.reason) }
                }
                td { (num(rate, 1)) }
                td { (o.result.violations()) }
            }
        }
    });
    let mut over_time = Vec::new();
    for o in &result.rows {
        let mut report = o.result.clone();
        if report.faults.is_empty() {
            report.faults = o.faults.clone();
        }
        over_time.push(charts::throughput(&report, &fault_windows(&report))?);
    }
    let body = html! {
        div.answer {
            (result.rows.len() - failed) " scenario(s) met their expected outcome, "
            @if failed == 0 { span.ok { "none missed it" } }
            @else { span.bad { (failed) " missed it" } }
            "."
        }
        h2 { "Verdicts" }
        (table(&headers, rows))
        h2 { "Each scenario over time" }
        @for (o, svg) in result.rows.iter().zip(&over_time) {
            h3 { (o.scenario) }
            pre { (o.command) }
            @if let Some(href) = &o.timeline {
                p {
                    a href=(href) { "Porcupine's timeline of this row's history" }
                    " (the independent checker's view; fault windows on a row of their own)"
                }
            }
            (chart(svg))
        }
    };
    Ok(page(
        &format!("redlock-loadgen scenarios {}", result.header.run_id),
        body,
    ))
}
