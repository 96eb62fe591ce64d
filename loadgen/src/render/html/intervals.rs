//! The "how sure" table of a run's HTML report: each headline figure of each mode with its
//! 95 % interval, and the concurrent ÷ sequential ratios with theirs.

use maud::{html, Markup};

use crate::model::catalog::{estimate, headlines};
use crate::model::report::Report;
use crate::render::uncertainty::{
    busy_machine_text, busy_modes, estimate_text, method_text, ratio_estimate_text,
};

/// The section, or nothing when no mode kept intervals.
pub fn section(report: &Report) -> Markup {
    let modes: Vec<_> = report
        .modes
        .iter()
        .filter_map(|m| Some((m, m.estimates.as_ref()?)))
        .collect();
    let Some(&(first, first_estimates)) = modes.first() else {
        return html! {};
    };
    let ratios = report.comparison.as_ref().map(|c| &c.intervals);
    html! {
        h2 { "How sure: 95 % intervals" }
        p {
            "95 % intervals: " (method_text(first.interval_ms, first_estimates.units, first_estimates.unit))
            ". How much a figure would move if this machine ran the same command again; it does \
            not cover another machine or another load on this one."
        }
        @let busy = busy_machine_text(&busy_modes(modes.iter().map(|(m, _)| *m)));
        @if !busy.is_empty() {
            p class="warn" { "! " (busy) }
        }
        table {
            tr {
                th { "figure" }
                @for (m, _) in &modes { th { (m.label()) " (95 %)" } }
                @if ratios.is_some() { th { "concurrent ÷ sequential" } }
            }
            @for f in headlines() {
                tr {
                    td { (f.label) }
                    @for (_, e) in &modes {
                        td { @if let Some(est) = estimate(e, f.name) { (estimate_text(f.name, &est)) } }
                    }
                    @if let Some(ratios) = ratios {
                        td {
                            @if let Some(r) = ratios.iter().find(|r| r.figure == f.name) {
                                (ratio_estimate_text(r))
                            }
                        }
                    }
                }
            }
        }
    }
}
