//! `sweep`: one run per load level, printed as a throughput-vs-latency table per fan-out mode.

use std::fmt::Write as _;

use crate::report::Report;
use crate::stats::ModeStats;

/// The table's header line.
pub fn header(open_loop: bool) -> String {
    format!(
        "{:>9} {:<11}{:>12}{:>10}{:>10}{:>8}{:>10}{:>10}{:>10}{:>10}{:>10}{:>11}\n{:>9} {:<11}{:>12}{:>10}{:>10}{:>8}{:>10}{:>10}{:>10}{:>10}{:>10}{:>11}",
        if open_loop { "rate/s" } else { "clients" },
        "fanout", "acquires/s", "success", "quorum", "split", "acquire", "", "", "", "attempt", "violations",
        "", "", "", "", "", "votes", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "p50 ms", ""
    )
}

fn ms(h: &crate::hist::Hist, q: f64) -> String {
    format!("{:.3}", h.quantile(q) as f64 / 1000.0)
}

/// One row per mode of a level's report.
pub fn rows(level: &str, report: &Report) -> String {
    let mut out = String::new();
    for m in &report.modes {
        let m: &ModeStats = m;
        let _ = writeln!(
            out,
            "{level:>9} {:<11}{:>12.0}{:>9.2}%{:>9.2}%{:>8}{:>10}{:>10}{:>10}{:>10}{:>10}{:>11}",
            m.fanout.as_str(),
            m.acquires_per_s(),
            100.0 * m.acquire_success_rate(),
            100.0 * m.quorum_success_rate(),
            m.counts.split_votes,
            ms(&m.acquire, 0.5),
            ms(&m.acquire, 0.9),
            ms(&m.acquire, 0.99),
            ms(&m.acquire, 0.999),
            ms(&m.attempt, 0.5),
            m.counts.violations
        );
    }
    out
}
