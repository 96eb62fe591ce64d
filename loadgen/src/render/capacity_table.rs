//! The capacity search's text: one row per step as it runs, then the answers.

use std::fmt::Write as _;

use crate::model::capacity::{CapacityResult, Step};
use crate::model::percentiles::Percentiles;
use crate::render::text::{generator_cpu, late_dropped, right};

/// The steps table's header.
pub fn header(p: &Percentiles) -> String {
    let mut out = format!(
        "{:<11}{:>5} {:<8}{:>10}{:>11}{:>11}",
        "fanout", "step", "phase", "asked/s", "started/s", "acquires/s"
    );
    right(&mut out, 10, p.labels().iter().map(|l| format!("{l} ms")));
    let _ = write!(
        out,
        "{:>9}{:>15}{:>15}{:>9}  verdict",
        "success", "lost/retries", "late/dropped", "gen CPU"
    );
    out
}

/// What the steps table's columns and marks mean (printed under the answers).
pub const LEGEND: &str = "lost/retries: attempts that did not win / attempts after the first of \
their call (each waits a retry delay, up to --retry-delay: the p99 cliff once collisions start). \
`!` marks a generator-bound step, by one rule for every step: more than 1% of the slots started over 1 ms late although a client was \
free, or slots were late or dropped while the generator used 80% of the cores or more, or every \
client was busy when the rate needs more of them than --clients (rate × time per cycle). Late \
starts with every client busy and enough clients mean the masters did not keep up: no mark. A \
marked step's reasons are printed under its row. `~` marks a step whose 95 % interval of an \
objective's figure contained the bound: its rate runs again (phase repeat, up to \
--noise-repeats times) and the majority of the runs is the verdict the search counts (a tie \
fails). A step whose generator, using at least 5% of the cores, waited for a core at least half \
of its ready time ran on a busy machine: it fails (\"bound by this machine\"), whatever its \
figures, and an answer above it is a floor or no answer. Each objective percentile needs 10 \
calls at or beyond it (p99: 1,000): fewer fail the step.";

/// One step's row (`n`: its number within its fan-out mode).
pub fn row(n: usize, step: &Step, p: &Percentiles) -> String {
    let mut out = String::new();
    let Some(m) = step.report.modes.first() else {
        let _ = writeln!(
            out,
            "{:<11}{n:>5} {:<8}{:>10.0}  nothing measured",
            step.fanout,
            step.phase.as_str(),
            step.rate
        );
        return out;
    };
    let _ = write!(
        out,
        "{:<11}{n:>5} {:<8}{:>10.0}{:>11.0}{:>11.0}",
        step.fanout,
        step.phase.as_str(),
        step.rate,
        m.started_per_s(),
        m.acquires_per_s()
    );
    right(&mut out, 10, p.cells_ms(&m.latency.acquire));
    let mut verdict = if step.passed {
        "pass".to_string()
    } else {
        format!("FAIL: {}", step.failures.join("; "))
    };
    if let Some(k) = step.repeat_of {
        let _ = write!(verdict, " (repeat of step {k})");
    }
    let c = &m.counts;
    let lost = c.attempts.saturating_sub(c.attempts_won);
    let retries = c.attempts.saturating_sub(c.acquire_calls);
    let _ = writeln!(
        out,
        "{:>8.3}%{:>15}{:>15}{:>9}  {verdict}",
        100.0 * m.acquire_success_rate(),
        format!("{lost}/{retries}"),
        late_dropped(m),
        generator_cpu(m),
    );
    for mark in marks(step) {
        let _ = writeln!(out, "{:>16}{mark}", "");
    }
    out
}

/// What is printed under a step's row, in words, for the text and the HTML table alike: each
/// reason it was generator-bound (`! …`), each objective figure whose interval held its bound,
/// and the majority its noise repeats counted (`~ …`).
pub fn marks(step: &Step) -> Vec<String> {
    let mut marks = Vec::new();
    if let Some(m) = step.report.modes.first() {
        let j = &m.generator.judgement;
        if j.generator_bound {
            marks.extend(j.reasons.iter().map(|r| format!("! {r}")));
        }
    }
    marks.extend(step.straddled.iter().map(|r| format!("~ {r}")));
    if let Some(v) = step.noise.filter(|v| v.runs > 1) {
        let counted = if v.counted_passed {
            "a pass"
        } else {
            "a failure"
        };
        marks.push(format!(
            "~ counted as {counted} ({} of {} runs passed)",
            v.passed, v.runs
        ));
    }
    marks
}

/// Each step with its number within its fan-out mode (1, 2, … per mode, as the tables show).
pub fn numbered(steps: &[Step]) -> impl Iterator<Item = (usize, &Step)> {
    steps.iter().enumerate().map(|(i, step)| {
        let n = steps[..=i]
            .iter()
            .filter(|s| s.fanout == step.fanout)
            .count();
        (n, step)
    })
}

/// The whole table and the answers (what `merge` prints).
pub fn render(result: &CapacityResult, p: &Percentiles) -> String {
    let mut out = header(p);
    out.push('\n');
    for (n, step) in numbered(&result.steps) {
        out.push_str(&row(n, step, p));
    }
    out.push_str(&answers(result));
    out
}

/// The answer lines.
pub fn answers(result: &CapacityResult) -> String {
    let mut out = String::new();
    if let Some(baseline) = &result.baseline {
        out.push_str("\ncapacity without faults (--baseline):\n");
        answer_lines(&mut out, &baseline.answers);
    }
    match result.faults.is_empty() {
        true => {
            out.push_str("\ncapacity (highest open-loop acquire rate meeting the objective):\n")
        }
        false => {
            let _ = writeln!(
                out,
                "\nsafe capacity under {} (highest open-loop acquire rate meeting the objective with no safety violation):",
                result.faults_words
            );
        }
    }
    answer_lines(&mut out, &result.answers);
    out
}

/// Each answer's block, its statement first.
fn answer_lines(out: &mut String, answers: &[crate::model::capacity::Answer]) {
    for a in answers {
        for (i, line) in a.lines().iter().enumerate() {
            let indent = if i == 0 { "  " } else { "    " };
            let _ = writeln!(out, "{indent}{line}");
        }
    }
}
