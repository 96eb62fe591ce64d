//! The HTML report's tables: latency summaries, counts, vote patterns, per-master round
//! trips, the generator's own limits, the fault log and the full configuration.

use std::iter::once;

use maud::{html, Markup};

use super::markup::{num, pct, row, table};
use crate::hist::Hist;
use crate::model::figures::figures;
use crate::model::header::Header;
use crate::model::mode::ModeStats;
use crate::model::report::{ConfigInfo, MasterInfo, Report};

fn ms(us: u64) -> String {
    num(us as f64 / 1000.0, 3)
}

/// Latency summaries of every operation, ms.
pub fn latency(modes: &[ModeStats]) -> Markup {
    let mut rows = Vec::new();
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
                let name = format!("{} {what}", m.label());
                rows.push(row(once(name).chain(summary(h, [0.5, 0.9, 0.99, 0.999]))));
            }
        }
    }
    let headers = ["histogram", "count", "p50", "p90", "p99", "p99.9", "max"];
    html! { h2 { "Latency summary (ms)" } (table(&headers, rows)) }
}

/// The count of `h`, its values at `quantiles` and its largest, ms.
fn summary<const N: usize>(h: &Hist, quantiles: [f64; N]) -> impl Iterator<Item = String> {
    let values = quantiles.map(|q| ms(h.quantile(q)));
    once(h.count().to_string())
        .chain(values)
        .chain([ms(h.max())])
}

/// What the acquire calls and attempts came to.
pub fn counts(modes: &[ModeStats]) -> Markup {
    let mut headers = vec!["figure"];
    headers.extend(modes.iter().map(|m| m.label()));
    let rows = figures()
        .into_iter()
        .filter(|f| modes.iter().any(f.shown))
        .map(|f| html! { tr { td { (f.label) } @for m in modes { td { ((f.cell)(m)) } } } });
    html! { h2 { "Calls and attempts" } (table(&headers, rows)) }
}

/// How the masters split in each attempt, with a bar per share.
pub fn vote_patterns(modes: &[ModeStats]) -> Markup {
    html! {
        h2 { "Vote patterns" }
        p { "granted – denied – failed – not awaited, per attempt; the most frequent first." }
        @for m in modes.iter().filter(|m| m.lock.votes()) {
            h3 { (m.label()) }
            (table(&["pattern", "attempts", "share"], pattern_rows(m)))
        }
    }
}

/// The twelve most frequent vote patterns of `m`.
fn pattern_rows(m: &ModeStats) -> Vec<Markup> {
    let mut sorted: Vec<_> = m.vote_patterns.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1));
    let total = m.counts.attempts.max(1) as f64;
    let rows = sorted.into_iter().take(12).map(|(p, n)| {
        let share = *n as f64 / total;
        let bar = format!("width:{:.0}px", (share * 300.0).max(1.0));
        html! {
            tr {
                td { (p.granted) "–" (p.denied) "–" (p.failed) "–" (p.not_awaited) }
                td { (n) }
                td { span.bar style=(bar) {} " " (pct(share)) }
            }
        }
    });
    rows.collect()
}

/// Each master's round trips and answers.
pub fn masters(report: &Report) -> Markup {
    let headers = [
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
    ];
    let mut rows = Vec::new();
    for m in &report.modes {
        for (i, s) in m.masters.iter().enumerate() {
            let url = report.masters.get(i).map_or("", |x| x.url.as_str());
            let answers = [s.granted, s.denied, s.not_awaited, s.errors, s.timeouts];
            let name = format!("{} #{i} {url}", m.label());
            let round_trips = summary(&s.round_trip, [0.5, 0.99, 0.999]);
            let cells = once(name)
                .chain(round_trips)
                .chain(answers.map(|n| n.to_string()));
            rows.push(row(cells));
        }
    }
    html! { h2 { "Per-master round trips (ms) and answers" } (table(&headers, rows)) }
}

/// The generator's own limits: CPU, start lag, and its judgement.
pub fn generator(modes: &[ModeStats]) -> Markup {
    let headers = [
        "mode",
        "CPU share of the machine",
        "CPU per cycle (µs)",
        "start lag p99 (ms)",
        "late starts",
        "dropped slots",
        "verdict",
    ];
    let rows = modes.iter().map(|m| {
        let j = &m.generator.judgement;
        let lag = if m.latency.start_lag.count() > 0 {
            ms(m.latency.start_lag.quantile(0.99))
        } else {
            "closed loop".into()
        };
        html! {
            tr {
                td { (m.label()) }
                td { (pct(m.generator.core_share)) }
                td { (num(m.generator.cpu_per_cycle_us, 1)) }
                td { (lag) }
                td { (m.counts.late_starts) }
                td { (m.counts.dropped_slots) }
                td {
                    @if j.generator_bound { span.bad { "generator-bound" } }
                    @else if j.target_missed { span.bad { "rate not reached" } }
                    @else { span.ok { "measures the masters" } }
                }
            }
        }
    });
    html! {
        h2 { "The load generator's own limits" }
        (table(&headers, rows))
        @for m in modes {
            @for reason in &m.generator.judgement.reasons { p { (m.label()) ": " (reason) } }
        }
    }
}

/// The faults applied, in order (nothing when none was).
pub fn fault_log(report: &Report) -> Markup {
    let headers = ["mode", "at (s into the measured window)", "fault", "action"];
    let rows = report.faults.iter().map(|e| {
        let at = num(e.at_ms / 1000.0, 2);
        row([e.fanout.as_str(), &at, &e.fault, &e.action])
    });
    html! { @if !report.faults.is_empty() { h3 { "Faults applied" } (table(&headers, rows)) } }
}

/// The full configuration, the masters and the result's provenance.
pub fn configuration(report: &Report) -> Markup {
    let h = &report.header;
    let mut settings = config_settings(&report.config, &[]);
    settings.extend(provenance(h));
    let interval = report.modes.first().map(|m| m.interval_ms.to_string());
    let network = report.network.as_ref();
    for (key, value) in [
        ("merged from", h.merged_from.join(", ")),
        ("interval (ms)", interval.unwrap_or_default()),
        (
            "network",
            network.map_or_else(|| "nothing added".into(), |n| n.describe()),
        ),
    ] {
        settings.push((key.into(), value));
    }
    settings.extend(masters_settings(&report.masters));
    html! {
        (config_section(Some(&report.config.command_line), &settings))
        @for note in &h.merge_notes { p { "merge note: " (note) } }
    }
}

/// The settings of a result's `config`, by their JSON names (but `skip`).
pub fn config_settings(config: &ConfigInfo, skip: &[&str]) -> Vec<(String, String)> {
    let config = serde_json::to_value(config).unwrap_or_default();
    let entries = config.as_object().into_iter().flatten();
    let kept = entries.filter(|(key, _)| !skip.contains(&key.as_str()));
    kept.map(|(key, value)| {
        let value = match value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "default".into(),
            other => other.to_string(),
        };
        (key.clone(), value)
    })
    .collect()
}

/// Each master's URL and server.
pub fn masters_settings(masters: &[MasterInfo]) -> impl Iterator<Item = (String, String)> + '_ {
    let each = masters.iter().enumerate();
    each.map(|(i, m)| {
        (
            format!("master #{i}"),
            format!("{} ({})", m.url, m.server()),
        )
    })
}

/// Where a result comes from: its run id, the tool, when it started, whether interrupted.
pub fn provenance(h: &Header) -> [(String, String); 4] {
    [
        ("run id".into(), h.run_id.clone()),
        ("tool".into(), format!("{} {}", h.tool.name, h.tool.version)),
        ("started (unix s)".into(), h.started_unix_s.to_string()),
        ("interrupted".into(), h.interrupted.to_string()),
    ]
}

/// The configuration section: the command line, then a table of `settings`.
pub fn config_section(command_line: Option<&str>, settings: &[(String, String)]) -> Markup {
    let rows = settings.iter().map(|(k, v)| row([k, v]));
    html! {
        h2 { "Configuration" }
        @if let Some(line) = command_line { pre { (line) } }
        div.config { (table(&["setting", "value"], rows)) }
    }
}
