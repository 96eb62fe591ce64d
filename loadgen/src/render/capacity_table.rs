//! The capacity search's text: one row per step as it runs, then the answers.

use std::fmt::Write as _;

use super::percentiles::Percentiles;
use crate::model::capacity::{CapacityResult, Step};

/// The steps table's header.
pub fn header(p: &Percentiles) -> String {
    let mut out = format!(
        "{:<11}{:>5} {:<8}{:>10}{:>11}{:>11}",
        "fanout", "step", "phase", "asked/s", "started/s", "acquires/s"
    );
    for label in p.labels() {
        let _ = write!(out, "{:>10}", format!("{label} ms"));
    }
    let _ = write!(
        out,
        "{:>9}{:>15}{:>9}  verdict",
        "success", "late/dropped", "gen CPU"
    );
    out
}

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
    for cell in p.cells_ms(&m.latency.acquire) {
        let _ = write!(out, "{cell:>10}");
    }
    let verdict = if step.passed {
        "pass".to_string()
    } else {
        format!("FAIL: {}", step.failures.join("; "))
    };
    let _ = writeln!(
        out,
        "{:>8.3}%{:>15}{:>9}  {verdict}",
        100.0 * m.acquire_success_rate(),
        format!("{}/{}", m.counts.late_starts, m.counts.dropped_slots),
        format!(
            "{:.0}%{}",
            100.0 * m.generator.cpu.core_share(),
            if m.generator.judgement.generator_bound {
                "!"
            } else {
                ""
            }
        ),
    );
    out
}

/// The whole table and the answers (what `merge` prints).
pub fn render(result: &CapacityResult, p: &Percentiles) -> String {
    let mut out = header(p);
    out.push('\n');
    let mut per_fanout: Vec<(&str, usize)> = Vec::new();
    for step in &result.steps {
        let n = match per_fanout.iter_mut().find(|(f, _)| *f == step.fanout) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                per_fanout.push((&step.fanout, 1));
                1
            }
        };
        out.push_str(&row(n, step, p));
    }
    out.push_str(&answers(result));
    out
}

/// The answer lines.
pub fn answers(result: &CapacityResult) -> String {
    let mut out =
        String::from("\ncapacity (highest open-loop acquire rate meeting the objective):\n");
    for a in &result.answers {
        let _ = writeln!(out, "  {}", a.statement);
    }
    out
}
