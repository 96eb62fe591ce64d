//! The HTML report's tables: latency summaries, counts, vote patterns, per-master round
//! trips, the generator's own limits, the fault log, a capacity search's steps and the full
//! configuration.

use std::fmt::Write as _;

use super::markup::{escape, num, pct};
use crate::hist::Hist;
use crate::model::capacity::CapacityResult;
use crate::model::figures::figures;
use crate::model::mode::ModeStats;
use crate::model::report::Report;

fn ms(us: u64) -> String {
    num(us as f64 / 1000.0, 3)
}

/// A header row.
fn head(out: &mut String, cells: &[&str]) {
    out.push_str("<table><tr>");
    for c in cells {
        let _ = write!(out, "<th>{}</th>", escape(c));
    }
    out.push_str("</tr>\n");
}

/// A body row (cells already escaped).
fn row(out: &mut String, cells: &[String]) {
    out.push_str("<tr>");
    for c in cells {
        let _ = write!(out, "<td>{c}</td>");
    }
    out.push_str("</tr>\n");
}

fn latency_cells(what: &str, mode: &str, h: &Hist) -> Vec<String> {
    vec![
        escape(&format!("{mode} {what}")),
        h.count().to_string(),
        ms(h.quantile(0.5)),
        ms(h.quantile(0.9)),
        ms(h.quantile(0.99)),
        ms(h.quantile(0.999)),
        ms(h.max()),
    ]
}

/// Latency summaries of every operation, ms.
pub fn latency(out: &mut String, modes: &[ModeStats]) {
    out.push_str("<h2>Latency summary (ms)</h2>\n");
    head(
        out,
        &["histogram", "count", "p50", "p90", "p99", "p99.9", "max"],
    );
    for m in modes {
        let l = &m.latency;
        for (what, h) in [
            ("acquire", &l.acquire),
            ("attempt", &l.attempt),
            ("release", &l.release),
            ("extend", &l.extend),
            ("start lag", &l.start_lag),
        ] {
            if h.count() > 0 {
                row(out, &latency_cells(what, m.label(), h));
            }
        }
    }
    out.push_str("</table>\n");
}

/// What the acquire calls and attempts came to.
pub fn counts(out: &mut String, modes: &[ModeStats]) {
    out.push_str("<h2>Calls and attempts</h2>\n");
    let mut cells = vec!["figure"];
    cells.extend(modes.iter().map(|m| m.label()));
    head(out, &cells);
    for figure in figures().iter().filter(|f| modes.iter().any(f.shown)) {
        let mut cells = vec![escape(figure.label)];
        cells.extend(modes.iter().map(|m| escape(&(figure.cell)(m))));
        row(out, &cells);
    }
    out.push_str("</table>\n");
}

/// How the masters split in each attempt, with a bar per share.
pub fn vote_patterns(out: &mut String, modes: &[ModeStats]) {
    out.push_str("<h2>Vote patterns</h2>\n<p>granted – denied – failed – not awaited, per attempt; the most frequent first.</p>\n");
    for m in modes.iter().filter(|m| m.lock.votes()) {
        let _ = writeln!(out, "<h3>{}</h3>", escape(m.label()));
        head(out, &["pattern", "attempts", "share"]);
        let mut sorted: Vec<_> = m.vote_patterns.iter().collect();
        sorted.sort_by(|a, b| b.1.cmp(a.1));
        let total = m.counts.attempts.max(1) as f64;
        for (p, n) in sorted.iter().take(12) {
            let share = **n as f64 / total;
            row(
                out,
                &[
                    format!("{}–{}–{}–{}", p.granted, p.denied, p.failed, p.not_awaited),
                    n.to_string(),
                    format!(
                        "<span class=\"bar\" style=\"width:{:.0}px\"></span> {}",
                        (share * 300.0).max(1.0),
                        pct(share)
                    ),
                ],
            );
        }
        out.push_str("</table>\n");
    }
}

/// Each master's round trips and answers.
pub fn masters(out: &mut String, report: &Report) {
    out.push_str("<h2>Per-master round trips (ms) and answers</h2>\n");
    head(
        out,
        &[
            "mode / master",
            "round trips",
            "p50",
            "p99",
            "p99.9",
            "max",
            "granted",
            "denied",
            "not awaited",
            "errors",
            "timeouts",
        ],
    );
    for m in &report.modes {
        for (i, s) in m.masters.iter().enumerate() {
            let url = report.masters.get(i).map_or("", |x| x.url.as_str());
            let h = &s.round_trip;
            row(
                out,
                &[
                    escape(&format!("{} #{i} {url}", m.label())),
                    h.count().to_string(),
                    ms(h.quantile(0.5)),
                    ms(h.quantile(0.99)),
                    ms(h.quantile(0.999)),
                    ms(h.max()),
                    s.granted.to_string(),
                    s.denied.to_string(),
                    s.not_awaited.to_string(),
                    s.errors.to_string(),
                    s.timeouts.to_string(),
                ],
            );
        }
    }
    out.push_str("</table>\n");
}

/// The generator's own limits: CPU, start lag, and its judgement.
pub fn generator(out: &mut String, modes: &[ModeStats]) {
    out.push_str("<h2>The load generator's own limits</h2>\n");
    head(
        out,
        &[
            "mode",
            "CPU share of the machine",
            "CPU per cycle (µs)",
            "start lag p99 (ms)",
            "late starts",
            "dropped slots",
            "verdict",
        ],
    );
    for m in modes {
        let j = &m.generator.judgement;
        let verdict = if j.generator_bound {
            "<span class=\"bad\">generator-bound</span>".to_string()
        } else if j.target_missed {
            "<span class=\"bad\">rate not reached</span>".to_string()
        } else {
            "<span class=\"ok\">measures the masters</span>".to_string()
        };
        let lag = if m.latency.start_lag.count() > 0 {
            ms(m.latency.start_lag.quantile(0.99))
        } else {
            "closed loop".into()
        };
        row(
            out,
            &[
                escape(m.label()),
                pct(m.generator.core_share),
                num(m.generator.cpu_per_cycle_us, 1),
                lag,
                m.counts.late_starts.to_string(),
                m.counts.dropped_slots.to_string(),
                verdict,
            ],
        );
    }
    out.push_str("</table>\n");
    for m in modes {
        for reason in &m.generator.judgement.reasons {
            let _ = writeln!(out, "<p>{}: {}</p>", escape(m.label()), escape(reason));
        }
    }
}

/// The faults applied, in order.
pub fn fault_log(out: &mut String, report: &Report) {
    if report.faults.is_empty() {
        return;
    }
    out.push_str("<h3>Faults applied</h3>\n");
    head(
        out,
        &["mode", "at (s into the measured window)", "fault", "action"],
    );
    for e in &report.faults {
        row(
            out,
            &[
                escape(&e.fanout),
                num(e.at_ms / 1000.0, 2),
                escape(&e.fault),
                escape(&e.action),
            ],
        );
    }
    out.push_str("</table>\n");
}

/// A capacity search's steps.
pub fn capacity_steps(out: &mut String, result: &CapacityResult) {
    out.push_str("<h2>Steps</h2>\n");
    head(
        out,
        &[
            "fan-out",
            "phase",
            "rate asked (/s)",
            "acquired (/s)",
            "acquire p99 (ms)",
            "success",
            "met the objective",
        ],
    );
    for s in &result.steps {
        let Some(m) = s.report.modes.first() else {
            continue;
        };
        let verdict = if s.passed {
            "<span class=\"ok\">yes</span>".to_string()
        } else {
            format!(
                "<span class=\"bad\">no</span>: {}",
                escape(&s.failures.join("; "))
            )
        };
        row(
            out,
            &[
                escape(&s.fanout),
                escape(s.phase.as_str()),
                num(s.rate, 0),
                num(m.acquires_per_s(), 0),
                ms(m.latency.acquire.quantile(0.99)),
                pct(m.acquire_success_rate()),
                verdict,
            ],
        );
    }
    out.push_str("</table>\n");
}

/// The full configuration, the masters and the result's provenance.
pub fn configuration(out: &mut String, report: &Report) {
    out.push_str("<h2>Configuration</h2>\n");
    let _ = writeln!(out, "<pre>{}</pre>", escape(&report.config.command_line));
    out.push_str("<div class=\"config\">");
    head(out, &["setting", "value"]);
    let config = serde_json::to_value(&report.config).unwrap_or_default();
    if let Some(fields) = config.as_object() {
        for (key, value) in fields {
            let value = match value {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => "default".into(),
                other => other.to_string(),
            };
            row(out, &[escape(key), escape(&value)]);
        }
    }
    let h = &report.header;
    for (key, value) in [
        ("run id", h.run_id.clone()),
        ("tool", format!("{} {}", h.tool.name, h.tool.version)),
        ("started (unix s)", h.started_unix_s.to_string()),
        ("interrupted", h.interrupted.to_string()),
        ("merged from", h.merged_from.join(", ")),
        (
            "interval (ms)",
            report
                .modes
                .first()
                .map_or(String::new(), |m| m.interval_ms.to_string()),
        ),
    ] {
        row(out, &[escape(key), escape(&value)]);
    }
    for (i, m) in report.masters.iter().enumerate() {
        row(
            out,
            &[
                format!("master #{i}"),
                escape(&format!("{} ({})", m.url, m.server())),
            ],
        );
    }
    out.push_str("</table></div>\n");
    for note in &h.merge_notes {
        let _ = writeln!(out, "<p>merge note: {}</p>", escape(note));
    }
}
