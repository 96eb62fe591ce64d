//! The HTML report of `scenarios`: the verdict table, then each row's throughput over time
//! with its faults shaded and named.

use std::fmt::Write as _;

use super::charts;
use super::faults::fault_windows;
use super::markup::{chart, escape, num, page};
use crate::model::scenarios::ScenariosResult;

/// The page.
pub fn scenarios_page(result: &ScenariosResult) -> Result<String, String> {
    let mut out = String::new();
    let failed = result.rows.iter().filter(|o| !o.passed).count();
    let _ = writeln!(
        out,
        "<div class=\"answer\">{} scenario(s) met their expected outcome, {}.</div>",
        result.rows.len() - failed,
        if failed == 0 {
            "<span class=\"ok\">none missed it</span>".to_string()
        } else {
            format!("<span class=\"bad\">{failed} missed it</span>")
        }
    );
    out.push_str("<h2>Verdicts</h2>\n<table><tr>");
    for h in [
        "scenario",
        "expected",
        "verdict",
        "locks acquired per second",
        "violations",
    ] {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr>\n");
    for o in &result.rows {
        let m = o.result.modes.first();
        let verdict = if o.passed {
            "<span class=\"ok\">pass</span>".to_string()
        } else {
            format!("<span class=\"bad\">FAIL</span>: {}", escape(&o.reason))
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{verdict}</td><td>{}</td><td>{}</td></tr>",
            escape(&o.scenario),
            escape(&o.expected),
            num(m.map_or(0.0, |m| m.acquires_per_s()), 1),
            o.result.violations()
        );
    }
    out.push_str("</table>\n<h2>Each scenario over time</h2>\n");
    for o in &result.rows {
        let _ = writeln!(
            out,
            "<h3>{}</h3>\n<pre>{}</pre>",
            escape(&o.scenario),
            escape(&o.command)
        );
        out.push_str(&timeline_link(o));
        let mut report = o.result.clone();
        if report.faults.is_empty() {
            report.faults = o.faults.clone();
        }
        chart(
            &mut out,
            &charts::throughput(&report, &fault_windows(&report))?,
        );
    }
    Ok(page(
        &format!("redlock-loadgen scenarios {}", result.header.run_id),
        &out,
    ))
}

/// The link to Porcupine's timeline of a row's history, when one was drawn.
fn timeline_link(o: &crate::model::scenarios::Outcome) -> String {
    o.timeline.as_ref().map_or_else(String::new, |href| {
        format!(
            "<p><a href=\"{}\">Porcupine's timeline of this row's history</a> (the independent checker's view; fault windows on a row of their own)</p>\n",
            escape(href)
        )
    })
}
