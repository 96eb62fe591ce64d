//! Figures with their 95 % intervals, in words: `2.72× (95 % 2.41–3.05)`, "no clear
//! difference", "too short to say". The text report, `compare` and the HTML pages share them.

use std::fmt::Write as _;

use crate::model::catalog::{self, FigureUnit};
use crate::model::estimates::{ModeEstimates, RatioEstimate};
use crate::model::gate::Gate;
use crate::model::generator;
use crate::model::mode::ModeStats;
use crate::model::threshold::{verdict_word, JudgedThreshold};
use crate::model::uncertainty::{Estimate, Order, Unit, MIN_REPEATS, MIN_UNITS};

/// A value of headline figure `name` in its reading unit (shares in %, latencies in ms).
pub fn value_text(name: &str, x: f64) -> String {
    if name.ends_with(".ratio") {
        return ratio_text(x);
    }
    match catalog::figure(name).map(|f| f.unit) {
        Some(FigureUnit::PerSecond) => crate::model::figures::per_s(x),
        Some(FigureUnit::Share) => crate::model::figures::pct(x),
        Some(FigureUnit::Micros) => format!("{:.3} ms", x / 1000.0),
        Some(FigureUnit::Index) => format!("{x:.3}"),
        Some(FigureUnit::Count) | None => format!("{x}"),
    }
}

/// A ratio as `0.44×`; below 0.1 with two significant digits (`0.00086×`), since a p99 ratio
/// can be a thousandth and must not read as `0.00×`.
pub fn ratio_text(r: f64) -> String {
    if r > 0.0 && r < 0.1 {
        let decimals = (-r.log10()).ceil() as usize + 1;
        format!("{r:.decimals$}×")
    } else {
        format!("{r:.2}×")
    }
}

/// `812 (95 % 790–830)`, or `812 (too short to say)` without an interval.
pub fn estimate_text(name: &str, e: &Estimate) -> String {
    match e.interval() {
        Some((low, high)) => format!(
            "{} (95 % {}–{})",
            value_text(name, e.value),
            bare(name, low),
            bare(name, high)
        ),
        None if catalog::headlines().any(|f| f.name == name) => {
            format!(
                "{} ({})",
                value_text(name, e.value),
                no_interval_words(name)
            )
        }
        // A count (violations, stale writes) is exact: it has no interval to give.
        None => value_text(name, e.value),
    }
}

/// A bound of an interval: the value without its unit (the value before it carries it).
fn bare(name: &str, x: f64) -> String {
    let text = value_text(name, x);
    text.strip_suffix(" ms")
        .or_else(|| text.strip_suffix('×'))
        .unwrap_or(&text)
        .to_string()
}

/// Why headline figure `name` has no interval: too few units, or — fairness, whose run keeps
/// no per-interval count of each client's locks — one run where its interval needs repeats.
fn no_interval_words(name: &str) -> &'static str {
    if name.starts_with("fairness.") {
        "no interval from one run: --repeat gives one"
    } else {
        "too short to say"
    }
}

/// `2.72× (95 % 2.41–3.05)`, with "no clear difference" when the interval holds 1.
pub fn ratio_estimate_text(r: &RatioEstimate) -> String {
    let value = ratio_text(r.ratio.value);
    match (r.order, r.ratio.interval()) {
        (Order::TooShort, _) | (_, None) => {
            format!("{value} ({})", no_interval_words(&r.figure))
        }
        (Order::NoClearDifference, Some((low, high))) => {
            format!("no clear difference ({value}, 95 % {:.2}–{:.2})", low, high)
        }
        (_, Some((low, high))) => format!("{value} (95 % {low:.2}–{high:.2})"),
    }
}

/// How the intervals were taken, over how many units, and whether that was too few.
pub fn method_text(interval_ms: u64, units: usize, unit: Unit) -> String {
    let mut text = match unit {
        Unit::Interval => format!(
            "moving-block bootstrap over each mode's {units} intervals of {interval_ms} ms: the noise within this run on this machine"
        ),
        Unit::Repeat => format!(
            "Student's t over each mode's {units} repeats: the noise between repeats of this command on this machine"
        ),
    };
    if unit.too_few(units) {
        let (least, what) = match unit {
            Unit::Interval => (MIN_UNITS, "intervals"),
            Unit::Repeat => (MIN_REPEATS, "repeats"),
        };
        let _ = write!(text, "; fewer than {least} {what}: too short to say");
    }
    text
}

/// The headline figures of every mode with their intervals, one line per figure.
pub fn modes_block(modes: &[&ModeStats]) -> String {
    let with: Vec<(&ModeStats, &ModeEstimates)> = modes
        .iter()
        .filter_map(|m| Some((*m, m.estimates.as_ref()?)))
        .collect();
    let Some(&(first, _)) = with.first() else {
        return String::new();
    };
    let mut out = String::new();
    let units = with.iter().map(|(_, e)| e.units).min().unwrap_or(0);
    let _ = writeln!(
        out,
        "\n95 % intervals ({})",
        method_text(first.interval_ms, units, with[0].1.unit)
    );
    let busy = busy_machine_text(&busy_modes(with.iter().map(|(m, _)| *m)));
    if !busy.is_empty() {
        let _ = writeln!(out, "  ! {busy}");
    }
    for f in catalog::headlines() {
        let _ = write!(out, "  {:<24}", f.label);
        for (m, e) in &with {
            if let Some(est) = catalog::estimate(e, f.name) {
                let _ = write!(out, "  {}: {:<30}", m.label(), estimate_text(f.name, &est));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out
}

/// Why runs on a busy machine are read with care, once for all of them: each of `busy`
/// ("concurrent", "B.json sequential") with the share of its ready time its generator waited
/// for a core. Empty when none was busy.
pub fn busy_machine_text(busy: &[(String, f64)]) -> String {
    if busy.is_empty() {
        return String::new();
    }
    let each: Vec<String> = busy
        .iter()
        .map(|(what, share)| format!("{what} {:.0} %", 100.0 * share))
        .collect();
    format!(
        "measured on a busy machine: the generator waited for a core {} of the time it was \
         ready to run (other work on this machine, or more busy threads than cores). Figures \
         move with that work, which the intervals of one run do not cover as it comes and goes \
         between runs: a difference from another run may be the machine's, unless the two \
         took turns (compare --run 'FLAGS A' --run 'FLAGS B' takes each difference within a \
         turn). Otherwise compare runs from a quiet machine.",
        each.join(", ")
    )
}

/// The modes of `modes` measured on a busy machine, with their generator's wait share.
pub fn busy_modes<'a>(modes: impl Iterator<Item = &'a ModeStats>) -> Vec<(String, f64)> {
    let contended = modes.map(|m| Some((m.label().to_string(), generator::contended(m)?)));
    contended.flatten().collect()
}

/// One line per threshold verdict: `pass  acquire.p99<10ms  concurrent 4.100 ms (95 % …)`.
pub fn thresholds_block(verdicts: &[JudgedThreshold], gate: Option<&Gate>) -> String {
    if verdicts.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nthresholds\n");
    if let Some(gate) = gate {
        let _ = writeln!(out, "  {}", gate.headline());
    }
    for JudgedThreshold { mode, verdict: v } in verdicts {
        let measured = match &v.measured {
            Some(e) => estimate_text(&v.threshold.figure, e),
            None => "not measured".into(),
        };
        let _ = writeln!(
            out,
            "  {:<17} {:<28} {mode}: {measured}",
            verdict_word(v),
            v.threshold.expr
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_read_as_the_issue_shows_them() {
        let r = RatioEstimate {
            figure: "goodput".into(),
            ratio: Estimate {
                value: 2.72,
                low: Some(2.41),
                high: Some(3.05),
            },
            order: Order::Higher,
        };
        assert_eq!(ratio_estimate_text(&r), "2.72× (95 % 2.41–3.05)");
        let same = RatioEstimate {
            ratio: Estimate {
                value: 1.02,
                low: Some(0.95),
                high: Some(1.1),
            },
            order: Order::NoClearDifference,
            ..r.clone()
        };
        assert_eq!(
            ratio_estimate_text(&same),
            "no clear difference (1.02×, 95 % 0.95–1.10)"
        );
        let p99 = Estimate {
            value: 4100.0,
            low: Some(3800.0),
            high: Some(4600.0),
        };
        assert_eq!(
            estimate_text("acquire.p99", &p99),
            "4.100 ms (95 % 3.800–4.600)"
        );
        assert_eq!(
            estimate_text("goodput", &Estimate::bare(812.0)),
            "812 (too short to say)"
        );
        // One run keeps no count of each client's locks per interval: fairness says why.
        assert_eq!(
            estimate_text("fairness.jain", &Estimate::bare(0.9461)),
            "0.946 (no interval from one run: --repeat gives one)"
        );
        assert_eq!(ratio_text(0.00086), "0.00086×");
    }
}
