//! The human report (stdout): configuration, then the modes side by side, then latency tables.

use std::fmt::Write as _;

use crate::hist::Hist;
use crate::model::estimates::RatioEstimate;
use crate::model::figures::{figures, Figure};
use crate::model::mode::{ModeStats, VotePattern};
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::model::uncertainty::Order;
use crate::render::uncertainty::{modes_block, ratio_estimate_text, ratio_text, thresholds_block};

const LABEL: usize = 34;
const COL: usize = 16;

fn ms(us: u64) -> String {
    format!("{:.3}", us as f64 / 1000.0)
}

/// Writes each of `cells` right-aligned in `width` columns.
pub fn right<T: std::fmt::Display>(
    out: &mut String,
    width: usize,
    cells: impl IntoIterator<Item = T>,
) {
    for cell in cells {
        let _ = write!(out, "{cell:>width$}");
    }
}

/// A mode's `late/dropped` cell: slots started late / never started.
pub fn late_dropped(m: &ModeStats) -> String {
    format!("{}/{}", m.counts.late_starts, m.counts.dropped_slots)
}

/// A mode's `gen CPU` cell: the generator's share of the cores, `!` when generator-bound.
pub fn generator_cpu(m: &ModeStats) -> String {
    let bound = if m.generator.judgement.generator_bound {
        "!"
    } else {
        ""
    };
    format!("{:.0}%{bound}", 100.0 * m.generator.cpu.core_share())
}

/// A ratio, or `n/a`.
fn ratio_or_na(x: Option<f64>) -> String {
    x.map(ratio_text).unwrap_or_else(|| "n/a".into())
}

/// A row of figures, one per mode, with the concurrent ÷ sequential ratio when both exist.
/// A headline figure whose interval leaves the order unclear says so instead of a bare ratio.
fn row(out: &mut String, modes: &[&ModeStats], line: &Figure, intervals: &[RatioEstimate]) {
    let _ = write!(out, "{:<LABEL$}", line.label);
    right(out, COL, modes.iter().map(|m| (line.cell)(m)));
    if let (Some(value), Some([seq, conc])) = (line.ratio, fanout_pair(modes)) {
        let (s, c) = (value(seq), value(conc));
        let unclear = line.headline.is_some_and(|name| {
            intervals
                .iter()
                .any(|r| r.figure == name && r.order == Order::NoClearDifference)
        });
        if unclear {
            let _ = write!(out, "{:>16}", "no clear diff.");
        } else if s > 0.0 {
            let _ = write!(out, "{:>12}", ratio_text(c / s));
        }
    }
    out.push('\n');
}

/// Redlock's sequential and concurrent modes, when they are the only two modes.
fn fanout_pair<'a>(modes: &[&'a ModeStats]) -> Option<[&'a ModeStats; 2]> {
    match modes {
        [s, c] if s.label() == "sequential" && c.label() == "concurrent" => Some([s, c]),
        _ => None,
    }
}

/// The configuration lines (tool, command, masters, workload, client, timing), with `load`
/// describing the load instead of the report's own (sweep levels).
pub fn header_with_load(report: &Report, load: Option<&str>) -> String {
    let mut text = String::new();
    header_origin(&mut text, report);
    header_workload(&mut text, report, load);
    header_timing(&mut text, report);
    text
}

/// The tool, the files merged, the command and the masters.
fn header_origin(out: &mut String, h: &Report) {
    let c = &h.config;
    let _ = writeln!(
        out,
        "redlock-loadgen {} (redlock-core {})",
        h.header.tool.version, h.header.tool.core_version
    );
    if !h.header.merged_from.is_empty() {
        let _ = writeln!(
            out,
            "merged     {} result files: {}",
            h.header.merged_from.len(),
            h.header.merged_from.join(", ")
        );
    }
    let _ = writeln!(out, "command    {}", c.command_line);
    let mut versions: Vec<String> = h.masters.iter().map(|m| m.server()).collect();
    versions.dedup();
    let _ = writeln!(
        out,
        "masters    {} {}({}): {}",
        h.masters.len(),
        if h.local_masters { "local " } else { "" },
        versions.join(", "),
        h.masters
            .iter()
            .map(|m| m.url.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let _ = writeln!(out, "network    {}", network_line(h));
}

/// Where the masters are, network-wise: `--rtt`'s profile and its proxy's cost, or, for local
/// masters reached directly, a pointer to `--rtt` (loopback flatters sequential fan-out).
fn network_line(h: &Report) -> String {
    match (&h.network, h.local_masters) {
        (Some(n), _) => n.describe(),
        (None, true) => "loopback (about 50 µs round trips); for masters at a real network distance add --rtt same-zone, --rtt cross-zone or --rtt 1ms±0.2ms".into(),
        (None, false) => "as far as the masters given (nothing added)".into(),
    }
}

/// The workload (`load`, or the report's own) and the client's settings.
fn header_workload(out: &mut String, h: &Report, load: Option<&str>) {
    let c = &h.config;
    let load = match (load, c.rate_per_s) {
        (Some(load), _) => load.to_string(),
        (None, Some(rate)) => format!("open loop at {rate} acquires/s over {} workers", c.clients),
        (None, None) => format!("closed loop, {} clients", c.clients),
    };
    let hold = if c.hold_min_us == c.hold_max_us {
        format!("{} ms", ms(c.hold_min_us))
    } else {
        format!("{}..{} ms", ms(c.hold_min_us), ms(c.hold_max_us))
    };
    let _ = writeln!(
        out,
        "workload   {load}; {} resource(s), {} keys; hold {hold}; {} extend(s) per hold; ttl {} ms",
        c.resources, c.key_dist, c.extends_per_hold, c.ttl_ms
    );
    let quorum = c.quorum.map(|q| q.to_string()).unwrap_or_else(|| {
        let majority = redlock_core::quorum::majority(h.masters.len());
        format!("{majority} (majority)")
    });
    let _ = writeln!(
        out,
        "client     retry count {}, retry delay ≤ {} ms, per-master timeout {} ms, quorum {quorum} of {}",
        c.retry_count, c.retry_delay_ms, c.instance_timeout_ms, h.masters.len()
    );
}

/// Warm-up, measured time, repeats, seed and interruption; then the merge notes.
fn header_timing(out: &mut String, h: &Report) {
    let c = &h.config;
    let (repeats, seeds) = if c.repeat > 1 {
        (
            format!(" and repeat, {} repeats laid end to end", c.repeat),
            " (repeat r: seed + r)",
        )
    } else {
        (String::new(), "")
    };
    let interrupted = match (h.header.interrupted, h.header.interrupted_by) {
        (true, Some(signal)) => format!("; INTERRUPTED ({signal}): partial figures"),
        (true, None) => "; INTERRUPTED: partial figures".to_string(),
        (false, _) => String::new(),
    };
    let _ = writeln!(
        out,
        "timing     warm-up {} s (not counted), {} s measured per mode{repeats}; seed {}{seeds}{interrupted}",
        c.warmup_s, c.duration_s, c.seed,
    );
    for note in &h.header.merge_notes {
        let _ = writeln!(out, "MERGE NOTE {note}");
    }
}

fn counts(out: &mut String, modes: &[&ModeStats], intervals: &[RatioEstimate]) {
    let _ = write!(out, "\n{:<LABEL$}", "");
    right(out, COL, modes.iter().map(|m| m.label()));
    if fanout_pair(modes).is_some() {
        let _ = write!(out, "{:>12}", "conc/seq");
    }
    out.push('\n');
    for line in figures() {
        if modes.iter().any(|m| (line.shown)(m)) {
            row(out, modes, &line, intervals);
        }
    }
}

fn latency_row(out: &mut String, what: &str, mode: &str, h: &Hist, p: &Percentiles) {
    let _ = write!(out, "{what:<18}{mode:<12}");
    right(out, 10, p.cells_ms(h));
    let _ = writeln!(out, "{:>10}{:>10}", ms(h.max()), h.count());
}

fn latency(out: &mut String, modes: &[&ModeStats], p: &Percentiles) {
    let _ = write!(out, "\n{:<30}", "latency (ms)");
    right(out, 10, p.labels());
    let _ = writeln!(out, "{:>10}{:>10}", "max", "count");
    type Pick = fn(&ModeStats) -> &Hist;
    let mut tables: Vec<(&str, Pick)> = vec![
        ("acquire (whole)", |m| &m.latency.acquire),
        ("attempt", |m| &m.latency.attempt),
        ("release", |m| &m.latency.release),
    ];
    if modes.iter().any(|m| m.latency.extend.count() > 0) {
        tables.push(("extend", |m| &m.latency.extend));
    }
    if modes.iter().any(|m| m.latency.start_lag.count() > 0) {
        tables.push(("start lag", |m| &m.latency.start_lag));
        tables.push(("  client waited", |m| &m.latency.pacing_lag));
    }
    for (what, pick) in tables {
        for (i, m) in modes.iter().enumerate() {
            latency_row(out, if i == 0 { what } else { "" }, m.label(), pick(m), p);
        }
    }
    let n_masters = modes.iter().map(|m| m.masters.len()).max().unwrap_or(0);
    let _ = writeln!(out, "round trip per master (answered acquire requests)");
    for i in 0..n_masters {
        for (j, m) in modes.iter().enumerate() {
            if let Some(s) = m.masters.get(i) {
                let what = if j == 0 {
                    format!("  master {i}")
                } else {
                    String::new()
                };
                latency_row(out, &what, m.label(), &s.round_trip, p);
            }
        }
    }
    // The useful end of the validity margin is the low one: how little was left.
    let _ = write!(out, "\n{:<30}", "validity margin (ms)");
    right(out, 10, ["min", "p0.1", "p1", "p10", "p50", "max"]);
    for m in modes {
        let h = &m.latency.validity_margin;
        let _ = write!(out, "\n{:<18}{:<12}", "", m.label());
        let q = |q| h.quantile(q);
        right(
            out,
            10,
            [h.min(), q(0.001), q(0.01), q(0.1), q(0.5), h.max()].map(ms),
        );
    }
    out.push('\n');
}

/// The generator's judgement of each mode, in words (nothing when all is well).
pub fn judgements(report: &Report) -> String {
    let mut out = String::new();
    for m in &report.modes {
        let j = &m.generator.judgement;
        if j.reasons.is_empty() {
            continue;
        }
        let bound = if j.generator_bound {
            ": GENERATOR-BOUND"
        } else {
            ""
        };
        let _ = writeln!(out, "\n{} fan-out{bound}:", m.label());
        for reason in &j.reasons {
            let _ = writeln!(out, "  {reason}");
        }
    }
    out
}

/// One line per outage: where no lock was acquired while masters were missing (times from the
/// measured window's start, the clock of the fault specs).
pub fn outages(out: &mut String, modes: &[&ModeStats]) {
    for m in modes {
        for o in &m.outages {
            let until = if o.until_end {
                format!("the end (+{:.1} s)", o.to_s)
            } else {
                format!("+{:.1} s", o.to_s)
            };
            let _ = writeln!(
                out,
                "outage     {}: no lock acquired from +{:.1} s to {until} ({} attempts unavailable)",
                m.label(),
                o.from_s,
                o.unavailable_attempts
            );
        }
    }
}

fn masters(out: &mut String, modes: &[&ModeStats]) {
    let _ = writeln!(out, "\nper master (acquire attempts: granted / denied / not awaited; any op: errors / timeouts)");
    for m in modes {
        let _ = write!(out, "  {:<12}", m.label());
        for (i, s) in m.masters.iter().enumerate() {
            let _ = write!(
                out,
                " #{i} {}/{}/{} {}/{} ",
                s.granted, s.denied, s.not_awaited, s.errors, s.timeouts
            );
        }
        out.push('\n');
    }
}

fn patterns(out: &mut String, modes: &[&ModeStats]) {
    let _ = writeln!(
        out,
        "\nvote patterns (granted-denied-failed-not awaited: share of attempts)"
    );
    for m in modes {
        if !m.lock.votes() {
            let _ = writeln!(out, "  {:<12} n/a (one master, no vote)", m.label());
            continue;
        }
        let mut sorted: Vec<(&VotePattern, &u64)> = m.vote_patterns.iter().collect();
        sorted.sort_by(|a, b| b.1.cmp(a.1));
        let total = m.counts.attempts.max(1) as f64;
        let shown: Vec<String> = sorted
            .iter()
            .take(8)
            .map(|(p, n)| {
                format!(
                    "{}-{}-{}-{} {:.2}%",
                    p.granted,
                    p.denied,
                    p.failed,
                    p.not_awaited,
                    100.0 * **n as f64 / total
                )
            })
            .collect();
        let more = match sorted.len().saturating_sub(8) {
            0 => String::new(),
            more => format!("  (+{more} rarer)"),
        };
        let _ = writeln!(out, "  {:<12} {}{more}", m.label(), shown.join("  "));
    }
}

/// How open-loop slots are counted, for the report's readers.
const SLOT_ATTRIBUTION: &str = "open loop: every slot belongs to the phase of its intended start; \
a free client takes the next slot; latency counts from the intended start; warm-up slots not \
started when the measurement began are skipped, measured slots not started by the end are dropped";

/// The whole text report, latency columns at `percentiles`.
pub fn render(report: &Report, percentiles: &Percentiles) -> String {
    let mut out = header_with_load(report, None);
    out.push_str(&super::scenarios::fault_log(&report.faults));
    let modes: Vec<&ModeStats> = report.modes.iter().collect();
    if modes.is_empty() {
        out.push_str("\nno mode was measured\n");
        return out;
    }
    let intervals = report
        .comparison
        .as_ref()
        .map_or(&[][..], |c| &c.intervals[..]);
    counts(&mut out, &modes, intervals);
    out.push_str(&modes_block(&modes));
    outages(&mut out, &modes);
    latency(&mut out, &modes, percentiles);
    masters(&mut out, &modes);
    patterns(&mut out, &modes);
    if let Some(block) = comparison(report) {
        out.push_str(&block);
    }
    out.push_str(&against_redlock(report));
    if report.config.rate_per_s.is_some() {
        let _ = writeln!(out, "\n({SLOT_ATTRIBUTION})");
    }
    out.push_str(&judgements(report));
    out.push_str(&thresholds_block(&report.thresholds, report.gate.as_ref()));
    out
}

/// The concurrent ÷ sequential block (latency and rates), when both modes were measured:
/// the headline figures with their 95 % intervals, then the attempt latencies and the split
/// votes as bare ratios.
pub fn comparison(report: &Report) -> Option<String> {
    let c = report.comparison.as_ref()?;
    let with_interval = |figure: &str, bare: Option<f64>| {
        c.intervals
            .iter()
            .find(|r| r.figure == figure)
            .map(ratio_estimate_text)
            .unwrap_or_else(|| ratio_or_na(bare))
    };
    Some(format!(
        "\nconcurrent ÷ sequential: goodput {}, acquire p50 {}, acquire p99 {}, quorum success {}, split-vote share {}; attempt p50 {}, attempt p99 {}, split votes {}\n",
        with_interval("goodput", c.acquires_per_s_ratio),
        with_interval("acquire.p50", c.acquire_p50_ratio),
        with_interval("acquire.p99", c.acquire_p99_ratio),
        with_interval("quorum.success", c.quorum_success_rate_ratio),
        with_interval("split_votes.share", None),
        ratio_or_na(c.attempt_p50_ratio),
        ratio_or_na(c.attempt_p99_ratio),
        ratio_or_na(c.split_votes_ratio),
    ))
}

/// Each single-master baseline ÷ Redlock (goodput, acquire latency, commands per cycle).
pub fn against_redlock(report: &Report) -> String {
    let rows = &report.against_redlock;
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let _ = write!(out, "\n{:<LABEL$}", "÷ redlock (same fan-out)");
    right(&mut out, COL, rows.iter().map(|r| &r.lock));
    out.push('\n');
    type Pick = fn(&crate::model::report::AgainstRedlock) -> Option<f64>;
    let lines: [(&str, Pick); 4] = [
        ("goodput", |r| r.acquires_per_s_ratio),
        ("acquire p50", |r| r.acquire_p50_ratio),
        ("acquire p99", |r| r.acquire_p99_ratio),
        ("redis commands per cycle", |r| {
            r.redis_commands_per_cycle_ratio
        }),
    ];
    for (label, pick) in lines {
        let _ = write!(out, "{label:<LABEL$}");
        right(&mut out, COL, rows.iter().map(|r| ratio_or_na(pick(r))));
        out.push('\n');
    }
    out
}
