//! The capacity search's page parts: each answer as a block (status first, the objective, the
//! noise, the narrowing advice, the `reproduce:` command), the search's own configuration, and
//! the steps with the marks the text shows under its rows (`!` generator-bound, `~` noise).

use crate::render::capacity_table::{marks, numbered};
use maud::{html, Markup};

use super::charts;
use super::faults::fault_windows;
use super::markup::{chart, num, pct, table};
use super::tables::{config_section, config_settings, masters_settings, provenance};
use crate::model::capacity::{grouped, Answer, CapacityResult, Status, Step};

/// The answers (a safe capacity under its faults, beside the baseline without them when
/// measured), one block each, then the warnings the search printed before its first step.
pub fn answers(result: &CapacityResult) -> Markup {
    html! {
        @if let Some(baseline) = &result.baseline {
            p { b { "Without faults (--baseline):" } }
            (answer_blocks(&baseline.answers))
            p { b { "Under " (result.faults_words) ":" } " a step passes only with no safety violation while the faults act." }
        }
        (answer_blocks(&result.answers))
        @for warning in &result.warnings { p.warn { (warning) } }
    }
}

/// Each answer's block: its statement, its lines, and the command that repeats its step.
fn answer_blocks(answers: &[Answer]) -> Markup {
    html! {
        div.answer {
            @for a in answers {
                @let lines = a.lines();
                p {
                    @if a.status == Status::Confirmed { b.ok { (lines[0]) } }
                    @else { b { (lines[0]) } }
                    @for line in lines[1..].iter().filter(|l| !l.starts_with("reproduce: ")) {
                        br; (line)
                    }
                }
                // A planner checks an answer before planning on it: the command that repeats
                // its step.
                @if !a.reproduce.is_empty() {
                    "reproduce:" pre { (a.reproduce) }
                }
            }
        }
    }
}

/// A search under faults: each step's throughput and acquire latency over its measured
/// window, the faults' windows shaded (nothing for a search without faults).
pub fn step_charts(result: &CapacityResult) -> Result<Markup, String> {
    if result.faults.is_empty() {
        return Ok(html! {});
    }
    let mut steps = Vec::new();
    for (number, step) in numbered(&result.steps) {
        let faults = fault_windows(&step.report);
        let mut svgs = vec![charts::throughput(&step.report, &faults)?];
        for m in &step.report.modes {
            svgs.push(charts::latency_over_time(m, &faults)?);
        }
        let verdict = match step.passed {
            true => "pass".to_string(),
            false => format!("FAIL: {}", step.failures.join("; ")),
        };
        let title = format!(
            "{} step {} ({}) at {}/s: {verdict}",
            step.fanout,
            number,
            step.phase.as_str(),
            grouped(step.rate)
        );
        steps.push((title, svgs));
    }
    Ok(html! {
        h2 { "Each step under the faults" }
        p { "Shaded: where " (result.faults_words) " acted, on each step's measured-window clock." }
        @for (title, svgs) in &steps {
            details open {
                summary { (title) }
                @for svg in svgs { (chart(svg)) }
            }
        }
    })
}

/// The search's own configuration: its objective and settings, the modes searched, the
/// masters and the workload every step shares (each step's rate is in the steps' table).
pub fn configuration(result: &CapacityResult) -> Markup {
    let plan = &result.plan;
    let modes: Vec<&str> = result.answers.iter().map(|a| a.fanout.as_str()).collect();
    let mut settings: Vec<(String, String)> = vec![
        ("objective".into(), result.objective.describe()),
        ("start rate (/s)".into(), num(plan.start_rate, 0)),
        ("min rate (/s)".into(), num(plan.min_rate, 0)),
        ("max rate (/s)".into(), num(plan.max_rate, 0)),
        ("precision".into(), pct(plan.precision)),
        ("max steps (per mode)".into(), plan.max_steps.to_string()),
        (
            "noise repeats (per straddling step)".into(),
            plan.noise_repeats.to_string(),
        ),
        ("repeats of the answer".into(), plan.repeat.to_string()),
        ("fan-out modes".into(), modes.join(", ")),
    ];
    let first = result.steps.first().map(|s| &s.report);
    if let Some(report) = first {
        let local = if report.local_masters {
            " local (started by this command)"
        } else {
            ""
        };
        let masters = format!("{}{local}", report.masters.len());
        settings.push(("masters".into(), masters));
        settings.extend(masters_settings(&report.masters));
        // The workload every step shares: the step's own rate and mode are left out.
        let own = ["rate_per_s", "fanouts", "locks", "command_line", "load"];
        settings.extend(config_settings(&report.config, &own));
    }
    settings.extend(provenance(&result.header));
    config_section(first.map(|r| r.config.command_line.as_str()), &settings)
}

const STEP_HEADERS: [&str; 12] = [
    "fan-out",
    "step",
    "phase",
    "rate asked (/s)",
    "started (/s)",
    "acquired (/s)",
    "acquire p99 (ms, 95 % interval)",
    "success",
    "late / dropped",
    "generator CPU",
    "met the objective",
    "repeat of",
];

/// The steps, each followed by its `!` (generator-bound) and `~` (noise) marks in words.
pub fn steps(steps: &[Step]) -> Markup {
    let rows = numbered(steps).filter_map(|(n, s)| {
        let m = s.report.modes.first()?;
        let j = &m.generator.judgement;
        let p99 = m.latency.acquire.quantile(0.99) as f64 / 1000.0;
        let interval = m
            .estimates
            .as_ref()
            .and_then(|e| crate::model::catalog::estimate(e, "acquire.p99")?.interval())
            .map(|(lo, hi)| format!(" ({}–{})", num(lo / 1000.0, 3), num(hi / 1000.0, 3)));
        let marks = marks(s);
        Some(html! {
            tr {
                td { (s.fanout) }
                td { (n) }
                td { (s.phase.as_str()) }
                td { (num(s.rate, 0)) }
                td { (num(m.started_per_s(), 0)) }
                td { (num(m.acquires_per_s(), 0)) }
                td { (num(p99, 3)) (interval.unwrap_or_default()) }
                td { (pct(m.acquire_success_rate())) }
                td { (m.counts.late_starts) " / " (m.counts.dropped_slots) }
                td {
                    (num(100.0 * m.generator.cpu.core_share(), 0)) "%"
                    @if j.generator_bound { span.bad title="generator-bound" { "!" } }
                }
                td {
                    @if s.passed { span.ok { "yes" } }
                    @else { span.bad { "no" } ": " (s.failures.join("; ")) }
                }
                td { @if let Some(k) = s.repeat_of { (k) } }
            }
            @if !marks.is_empty() {
                tr {
                    td colspan=(STEP_HEADERS.len()) style="text-align:left" {
                        @for (i, mark) in marks.iter().enumerate() {
                            @if i > 0 { br; }
                            @match mark.strip_prefix('!') {
                                Some(rest) => { span.bad { "!" } (rest) }
                                None => (mark),
                            }
                        }
                    }
                }
            }
        })
    });
    html! {
        h2 { "Steps" }
        (table(&STEP_HEADERS, rows))
        p {
            "late / dropped: slots started over 1 ms after their time / slots never started. "
            "! marks a generator-bound step (the load generator, not the masters, limited it), "
            "~ a step whose 95 % interval of an objective's figure contained the bound: its rate "
            "ran again (phase repeat) and the majority of the runs is the verdict the search counted."
        }
    }
}
