//! A capacity search's result: every step (a full run result each) and the answer per fan-out
//! mode. JSON `kind: "capacity"`.

use serde::{Deserialize, Serialize};

use super::header::Header;
use super::report::Report;
use crate::capacity::search::{Limit, Phase, Plan};
use crate::capacity::slo::Objective;

/// One bounded run of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub fanout: String,
    pub phase: Phase,
    /// Open-loop rate asked for.
    #[serde(rename = "rate_asked_per_s")]
    pub rate: f64,
    /// It met the objective (derived: `failures` is empty).
    pub passed: bool,
    /// Why it missed the objective (empty: it passed).
    pub failures: Vec<String>,
    #[serde(rename = "result")]
    pub report: Report,
}

impl Step {
    pub fn new(
        fanout: &str,
        phase: Phase,
        rate: f64,
        failures: Vec<String>,
        report: Report,
    ) -> Step {
        Step {
            fanout: fanout.to_string(),
            phase,
            rate,
            passed: failures.is_empty(),
            failures,
            report,
        }
    }
}

/// The answer for one fan-out mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub fanout: String,
    /// The highest rate asked for that met the objective (null: none did).
    pub rate_per_s: Option<f64>,
    /// A repeat of that rate met it too.
    pub confirmed: bool,
    pub limit: Limit,
    /// The step above the answer missed the objective only because the generator was the
    /// bottleneck: the masters may sustain more than the answer.
    pub generator_limited: bool,
    /// The answer in words.
    pub statement: String,
}

/// The whole search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    #[serde(flatten)]
    pub header: Header,
    pub objective: Objective,
    #[serde(rename = "search")]
    pub plan: Plan,
    pub answers: Vec<Answer>,
    pub steps: Vec<Step>,
}

/// The answer for `fanout` from its steps and the search's outcome.
pub fn answer(
    fanout: &str,
    steps: &[Step],
    (rate, confirmed, limit): (Option<f64>, bool, Limit),
    objective: &Objective,
) -> Answer {
    let mine: Vec<&Step> = steps.iter().filter(|s| s.fanout == fanout).collect();
    // The lowest failing step above the answer: was it only the generator?
    let above = mine
        .iter()
        .filter(|s| !s.passed && rate.is_none_or(|r| s.rate > r))
        .min_by(|a, b| a.rate.total_cmp(&b.rate));
    let generator_limited = above.is_some_and(|s| {
        s.report
            .modes
            .first()
            .is_some_and(|m| m.generator.judgement.generator_bound)
    });
    let at = rate.and_then(|r| {
        mine.iter()
            .rev()
            .find(|s| s.rate == r && s.passed)
            .and_then(|s| s.report.modes.first())
    });
    let statement = match (rate, at) {
        (Some(r), Some(m)) => {
            let mut text = format!(
                "{fanout}: {r:.0} acquires/s within {} and success ≥ {:.3}% ({}; at that rate: {:.0} acquires/s, acquire p50 {:.3} ms, p99 {:.3} ms)",
                objective.slo,
                100.0 * objective.min_success,
                if confirmed { "confirmed by a repeat" } else { "NOT confirmed" },
                m.acquires_per_s(),
                m.latency.acquire.quantile(0.5) as f64 / 1000.0,
                m.latency.acquire.quantile(0.99) as f64 / 1000.0,
            );
            match limit {
                Limit::MaxRate => {
                    text.push_str("; reached --max-rate: the masters may sustain more")
                }
                Limit::Steps => {
                    text.push_str("; the step budget ran out before the precision was reached")
                }
                _ => {}
            }
            if generator_limited {
                text.push_str("; the next rate up was generator-bound: this is a lower bound set by this machine");
            }
            text
        }
        _ => format!(
            "{fanout}: no rate met {} and success ≥ {:.3}%{}",
            objective.slo,
            100.0 * objective.min_success,
            if generator_limited {
                " (the generator was the bottleneck)"
            } else {
                ""
            }
        ),
    };
    Answer {
        fanout: fanout.to_string(),
        rate_per_s: rate,
        confirmed,
        limit,
        generator_limited,
        statement,
    }
}
