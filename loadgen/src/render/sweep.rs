//! The sweep table: one row per level and fan-out mode, throughput against latency.

use std::fmt::Write as _;

use crate::hist::Hist;
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::model::sweep::SweepResult;
use crate::render::text::{generator_cpu, late_dropped, right};

/// The whole table: the header line, then every level's rows.
pub fn table(sweep: &SweepResult, p: &Percentiles) -> String {
    let mut out = header(sweep.load == "open", p);
    out.push('\n');
    for l in &sweep.levels {
        out.push_str(&rows(&l.level, &l.report, p));
    }
    out
}

/// The table's header line.
pub fn header(open_loop: bool, p: &Percentiles) -> String {
    let mut out = format!(
        "{:>9} {:<11}{:>11}{:>11}{:>9}{:>9}{:>7}",
        if open_loop { "rate/s" } else { "clients" },
        "fanout",
        "started/s",
        "acquires/s",
        "success",
        "quorum",
        "split"
    );
    right(&mut out, 10, p.labels().iter().map(|l| format!("{l} ms")));
    let _ = write!(
        out,
        "{:>11}{:>11}{:>15}{:>10}{:>6}",
        "att p50 ms", "att p99 ms", "late/dropped", "gen CPU", "viol"
    );
    out
}

/// One row per mode of a level's report (a `!` after the CPU: generator-bound).
pub fn rows(level: &str, report: &Report, p: &Percentiles) -> String {
    let mut out = String::new();
    for m in &report.modes {
        let ms = |h: &Hist, q: f64| format!("{:.3}", h.quantile(q) as f64 / 1000.0);
        // Quorum and split votes: Redlock only (a single master casts no vote).
        let (quorum, split) = if m.lock.votes() {
            (
                format!("{:.2}%", 100.0 * m.quorum_success_rate()),
                m.counts.split_votes.to_string(),
            )
        } else {
            ("n/a".to_string(), "n/a".to_string())
        };
        let _ = write!(
            out,
            "{level:>9} {:<11}{:>11.0}{:>11.0}{:>8.2}%{:>9}{:>7}",
            m.label(),
            m.started_per_s(),
            m.acquires_per_s(),
            100.0 * m.acquire_success_rate(),
            quorum,
            split,
        );
        right(&mut out, 10, p.cells_ms(&m.latency.acquire));
        let _ = writeln!(
            out,
            "{:>11}{:>11}{:>15}{:>10}{:>6}",
            ms(&m.latency.attempt, 0.5),
            ms(&m.latency.attempt, 0.99),
            late_dropped(m),
            generator_cpu(m),
            m.counts.violations
        );
    }
    out
}

/// The legend under a table.
pub const LEGEND: &str = "started/s: acquire calls started per second; late/dropped: open-loop \
slots started > 1 ms late / never started; gen CPU: the generator's share of the machine's \
cores (! = generator-bound: that row measures this machine, not the masters)";
