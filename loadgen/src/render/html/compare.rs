//! `compare --html`: the configuration diff, the verdict table, and two overlays (acquire
//! latency by percentile, throughput over time) of every compared result, mode by mode.

use maud::html;

use super::markup::{chart, page};
use crate::model::comparison::{CompareResult, Verdict};
use crate::model::report::Report;
use crate::model::threshold::ThresholdJudgement;
use crate::render::chart::{Plot, XAxis, YAxis, PAGE_SIZE};
use crate::render::compare::{difference_text, in_turns_text, mode_text, side_label};
use crate::render::uncertainty::{busy_machine_text, estimate_text};

/// The page. `reports` are the compared results, A first, with their names.
pub fn compare_page(result: &CompareResult, reports: &[(&str, &Report)]) -> Result<String, String> {
    let acquire = series(reports).map(|(name, m)| (name, &m.latency.acquire));
    let overlays = [
        super::charts::spectrum("acquire latency by percentile", acquire)?,
        throughput(reports)?,
    ];
    let body = html! {
        div class="answer" {
            @if let Some(gate) = &result.gate {
                p class=(if gate.passed { "ok" } else { "bad" }) { b { (gate.headline()) } }
            }
            @for (i, name) in result.results.iter().enumerate() {
                b { (side_label(i, result.results.len())) } ": " (name) br;
            }
            @let turns = in_turns_text(result);
            @if !turns.is_empty() {
                p { (turns) }
            }
            (crate::render::compare::tally_text(result)) "."
            @let paired = crate::render::compare::paired_modes_text(result);
            @if !paired.is_empty() {
                p { (paired) }
            }
            @let busy = busy_machine_text(&crate::render::compare::busy_runs(result));
            @if !busy.is_empty() {
                p class="warn" { "! " (busy) }
            }
            @if !result.single_runs.is_empty() {
                p {
                    "measured once: " (result.single_runs.join(", ")) ". "
                    (crate::render::compare::SINGLE_RUN_WHY) " Measure both with "
                    code { (crate::render::compare::IN_TURNS_HINT) } ": "
                    (crate::render::compare::IN_TURNS_WHY)
                }
            }
        }
        (thresholds_table(result))
        h2 { "Configuration" }
        @if result.config_diff.is_empty() {
            p { "The configurations are the same." }
        } @else {
            table class="config" {
                tr { th { "key" } @for i in 0..result.results.len() { th { (side_label(i, result.results.len())) } } th { "shape" } }
                @for d in &result.config_diff {
                    tr {
                        td { (d.key) }
                        @for v in &d.values { td { (v) } }
                        td { (if d.shape { "workload shape" } else { "not the shape" }) }
                    }
                }
            }
        }
        h2 { "Figures (95 % intervals)" }
        table {
            tr { th { "result" } th { "mode" } th { "figure" } th { "A" } th { "B" } th { "B − A" } th { "verdict" } }
            @for f in &result.figures {
                tr {
                    td { (f.side) } td { (mode_text(f)) } td { (f.figure) }
                    td { (estimate_text(&f.figure, &f.a)) }
                    td { (estimate_text(&f.figure, &f.b)) }
                    td { (difference_text(&f.figure, &f.difference)) }
                    td class=(match f.verdict { Verdict::Better => "ok", Verdict::Worse => "bad", _ => "" }) {
                        (f.verdict.as_str())
                    }
                }
            }
        }
        h2 { "Overlays" }
        @for svg in &overlays { (chart(svg)) }
    };
    Ok(page("redlock-loadgen compare", body))
}

/// The thresholds, one row each under the gate's headline (nothing when none was given).
fn thresholds_table(result: &CompareResult) -> maud::Markup {
    html! {
    @if !result.thresholds.is_empty() {
        h2 { "Thresholds" }
        table {
            tr { th { "verdict" } th { "threshold" } th { "side and mode" } th { "measured (95 % interval)" } }
            @for t in &result.thresholds {
                @let judged = t.verdict.judged();
                tr {
                    td class=(judgement_class(judged)) { (judged.as_str()) }
                    td { (t.verdict.threshold.expr) } td { (t.mode) }
                    td { (t.verdict.measured.as_ref().map_or("not measured".into(), |e| estimate_text(&t.verdict.threshold.figure, e))) }
                }
            }
        }
    }
    }
}

/// The table cell's class of a threshold's judgement.
fn judgement_class(j: ThresholdJudgement) -> &'static str {
    match j {
        ThresholdJudgement::Met => "ok",
        ThresholdJudgement::NotMet => "bad",
        ThresholdJudgement::Unclear => "",
    }
}

/// Every (result, mode) as a series name and its mode.
fn series<'a>(
    reports: &'a [(&str, &'a Report)],
) -> impl Iterator<Item = (String, &'a crate::model::mode::ModeStats)> + 'a {
    reports.iter().enumerate().flat_map(|(i, (_, r))| {
        let tag = side_label(i, reports.len());
        r.modes
            .iter()
            .map(move |m| (format!("{tag} {}", m.label()), m))
    })
}

/// Locks acquired per second in each interval of every result and mode, overlaid.
fn throughput(reports: &[(&str, &Report)]) -> Result<String, String> {
    let mut lines = Vec::new();
    let mut x_max = 1.0f64;
    let mut repeated = None;
    for (name, m) in series(reports) {
        let step = m.interval().as_secs_f64();
        // Each interval's own length: the last of a run (or of each repeat) may be shorter.
        let points = m
            .intervals
            .iter()
            .zip(crate::model::repeats::interval_seconds(m))
            .map(|(i, length)| {
                let rate = i.acquired as f64 / length.max(step / 10.0);
                ((i.index as f64 + 0.5) * step, rate)
            });
        if m.repeats.len() > 1 {
            repeated = Some(m);
        }
        x_max = x_max.max(m.intervals.len() as f64 * step);
        lines.push((name, vec![points.collect()]));
    }
    Plot {
        size: PAGE_SIZE,
        title: "Throughput over time",
        x: super::charts::time_axis(repeated),
        y: "locks acquired per second",
        x_axis: XAxis::Time(x_max),
        y_axis: YAxis::Zero(1.0),
        series: lines,
        ..Plot::default()
    }
    .render()
}
