//! `--csv FILE`: the summary rows (one per mode of each run, sweep level or capacity step),
//! for spreadsheets. Latencies in ms at the `--percentiles` chosen.

use std::fmt::Write as _;

use super::percentiles::Percentiles;
use crate::model::report::Report;

/// One line per mode of each `(label, report)`; `level` names the label column.
pub fn render(level: &str, rows: &[(String, &Report)], p: &Percentiles) -> String {
    let mut out = String::new();
    let mut head = vec![
        level.to_string(),
        "fanout".into(),
        "load".into(),
        "rate_asked_per_s".into(),
        "clients".into(),
        "resources".into(),
        "duration_s".into(),
        "started_per_s".into(),
        "acquires_per_s".into(),
        "acquire_calls".into(),
        "acquire_success_rate".into(),
        "quorum_success_rate".into(),
        "split_votes".into(),
    ];
    head.extend(p.labels().iter().map(|l| format!("acquire_{l}_ms")));
    head.extend(
        [
            "attempt_p50_ms",
            "attempt_p99_ms",
            "start_lag_p99_ms",
            "pacing_lag_p99_ms",
            "late_starts",
            "dropped_slots",
            "generator_cpu_per_cycle_us",
            "generator_core_share",
            "generator_bound",
            "violations",
        ]
        .map(String::from),
    );
    let _ = writeln!(out, "{}", head.join(","));
    for (label, report) in rows {
        let c = &report.config;
        for m in &report.modes {
            let ms =
                |h: &crate::hist::Hist, q: f64| format!("{:.3}", h.quantile(q) as f64 / 1000.0);
            let mut cells = vec![
                quote(label),
                m.label().to_string(),
                c.load.clone(),
                c.rate_per_s.map(|r| r.to_string()).unwrap_or_default(),
                c.clients.to_string(),
                c.resources.to_string(),
                format!("{:.3}", m.duration.as_secs_f64()),
                format!("{:.1}", m.started_per_s()),
                format!("{:.1}", m.acquires_per_s()),
                m.counts.acquire_calls.to_string(),
                format!("{:.6}", m.acquire_success_rate()),
                format!("{:.6}", m.quorum_success_rate()),
                m.counts.split_votes.to_string(),
            ];
            cells.extend(p.cells_ms(&m.latency.acquire));
            cells.extend([
                ms(&m.latency.attempt, 0.5),
                ms(&m.latency.attempt, 0.99),
                ms(&m.latency.start_lag, 0.99),
                ms(&m.latency.pacing_lag, 0.99),
                m.counts.late_starts.to_string(),
                m.counts.dropped_slots.to_string(),
                format!("{:.1}", m.cpu_per_cycle_us()),
                format!("{:.4}", m.generator.cpu.core_share()),
                m.generator.judgement.generator_bound.to_string(),
                m.counts.violations.to_string(),
            ]);
            let _ = writeln!(out, "{}", cells.join(","));
        }
    }
    out
}

/// A CSV field, quoted when it needs to be.
fn quote(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
