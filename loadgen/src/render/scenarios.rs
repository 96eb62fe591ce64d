//! The `scenarios` table: one row per scenario, aligned Markdown (pastes into a README as is),
//! then the `N passed, N failed` line CI tooling reads.

use std::fmt::Write as _;

use crate::model::mode::ModeStats;
use crate::model::report::FaultEvent;
use crate::model::scenarios::Outcome;

/// One row of the table, formatted from a scenario's outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub cells: Vec<String>,
    pub passed: bool,
    /// Why it failed.
    pub reason: Option<String>,
}

const HEADERS: [&str; 10] = [
    "scenario",
    "acquisitions",
    "acquire ok",
    "quorum ok",
    "split votes",
    "acquire p99",
    "errors",
    "violations",
    "expected",
    "verdict",
];

impl Row {
    /// The row of an outcome (a row that measured nothing reads as its failure).
    pub fn of(outcome: &Outcome) -> Row {
        let verdict = match outcome.passed {
            true => Ok(()),
            false => Err(outcome.reason.clone()),
        };
        match outcome.result.modes.first() {
            Some(m) => Row::new(&outcome.scenario, m, &outcome.expected, verdict),
            None => Row {
                cells: vec![outcome.scenario.clone()],
                passed: false,
                reason: Some("measured nothing".into()),
            },
        }
    }

    /// The row of scenario `name` from its mode's measurements.
    pub fn new(name: &str, m: &ModeStats, expected: &str, verdict: Result<(), String>) -> Row {
        let c = &m.counts;
        let pct = |x: f64| format!("{:.1}%", 100.0 * x);
        let mut errors = vec![
            (c.unavailable, "Unavailable"),
            (c.not_acquired, "NotAcquired"),
            (c.other_errors, "other"),
            // What breaks the single-master baselines, said where it happened.
            (c.crashed_clients, "crashed holding it"),
            (c.foreign_releases, "DEL of another's lock"),
        ];
        // What fencing is for: late writes of a paused holder, and tokens out of order.
        if let Some(f) = &m.fencing {
            errors.extend([
                (f.stale_writes_accepted, "stale writes stored"),
                (f.stale_writes_rejected, "stale writes refused"),
                (f.token_order_violations, "tokens out of order"),
            ]);
        }
        let errors: Vec<String> = errors
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        let vote_only = |figure: String| if m.lock.votes() { figure } else { "n/a".into() };
        Row {
            cells: vec![
                name.to_string(),
                format!("{} ({:.0}/s)", c.acquired, m.acquires_per_s()),
                pct(m.acquire_success_rate()),
                vote_only(pct(m.quorum_success_rate())),
                vote_only(c.split_votes.to_string()),
                format!("{:.1} ms", m.latency.acquire.quantile(0.99) as f64 / 1000.0),
                if errors.is_empty() {
                    "0".into()
                } else {
                    errors.join(", ")
                },
                c.violations.to_string(),
                expected.to_string(),
                (if verdict.is_ok() { "pass" } else { "FAIL" }).into(),
            ],
            passed: verdict.is_ok(),
            reason: verdict.err(),
        }
    }
}

/// The table, the reasons of failed rows, and the final `N passed, N failed` line.
pub fn render(rows: &[Row]) -> String {
    let mut widths: Vec<usize> = HEADERS.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(&row.cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = String>| {
        out.push('|');
        for (cell, w) in cells.zip(&widths) {
            let pad = w - cell.chars().count();
            let _ = write!(out, " {cell}{} |", " ".repeat(pad));
        }
        out.push('\n');
    };
    line(&mut out, &mut HEADERS.iter().map(|h| h.to_string()));
    line(&mut out, &mut widths.iter().map(|w| "-".repeat(*w)));
    for row in rows {
        line(&mut out, &mut row.cells.iter().cloned());
    }
    out.push('\n');
    for row in rows.iter().filter(|r| !r.passed) {
        let reason = row.reason.as_deref().unwrap_or("failed");
        let _ = writeln!(out, "FAIL {}: {reason}", row.cells[0]);
    }
    let passed = rows.iter().filter(|r| r.passed).count();
    let _ = writeln!(out, "{passed} passed, {} failed", rows.len() - passed);
    out
}

/// The "faults" block of the text report: what was applied, when (empty when nothing was).
pub fn fault_log(events: &[FaultEvent]) -> String {
    let mut out = String::new();
    if events.is_empty() {
        return out;
    }
    out.push_str("\nfaults applied (time from the start of each mode's measured window, after its warm-up)\n");
    for e in events {
        let _ = writeln!(
            out,
            "  {:<11} +{:>8.1} ms  {:<28} {}",
            e.fanout, e.at_ms, e.fault, e.action
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use redlock_core::FanOut;

    #[test]
    fn the_table_ends_with_the_count_line_and_names_failures() {
        let mode = ModeStats::new(FanOut::Concurrent, 5, std::time::Duration::from_secs(1));
        let rows = [
            Row::new("no faults", &mode, "0 violations", Ok(())),
            Row::new(
                "3 killed",
                &mode,
                "0 locks",
                Err("2 lock(s) acquired".into()),
            ),
        ];
        let text = render(&rows);
        assert_eq!(text.lines().last(), Some("1 passed, 1 failed"));
        assert!(text.contains("FAIL 3 killed: 2 lock(s) acquired"));
        let widths: Vec<usize> = text.lines().take(4).map(|l| l.chars().count()).collect();
        assert!(
            widths.windows(2).all(|w| w[0] == w[1]),
            "columns align: {widths:?}"
        );
    }
}
