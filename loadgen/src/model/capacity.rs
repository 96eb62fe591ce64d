//! A capacity search's result: every step (a full run result each) and the answer per fan-out
//! mode. JSON `kind: "capacity"`. Its parts: [`search`] picks each step's rate, [`slo`] says
//! whether a step met the objective, [`reproduce`] writes the command line of an answer.

pub mod reproduce;
pub mod search;
pub mod slo;

use serde::{Deserialize, Serialize};

use super::header::Header;
use super::report::Report;
use search::{Limit, Phase, Plan};
use slo::Objective;

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
    /// What the search knows: the highest rate that passed (the answer) and the lowest above
    /// it that failed (null: none did); the capacity lies between them.
    #[serde(default)]
    pub highest_passed_per_s: Option<f64>,
    #[serde(default)]
    pub lowest_failed_per_s: Option<f64>,
    /// Flags to add to the same `capacity` command to narrow an unconfirmed or budget-limited
    /// answer (empty: nothing to narrow).
    #[serde(default)]
    pub narrow_with: String,
    /// The `redlock-loadgen run` command that reproduces the answer's step (with no answer:
    /// the lowest step tried).
    #[serde(default)]
    pub reproduce: String,
    /// The spread across every step run at the answer's rate (its confirmation and the
    /// `--repeat` runs included; null: it ran once).
    #[serde(default)]
    pub spread: Option<Spread>,
}

/// Minimum, median and maximum of a figure across runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Range {
    fn of(mut values: Vec<f64>) -> Option<Range> {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => values[n / 2],
            _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        };
        Some(Range {
            min: values[0],
            median,
            max: values[n - 1],
        })
    }
}

/// How much the answer's step moved from run to run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Steps run at the answer's rate, and how many of them met the objective.
    pub runs: u32,
    pub passed: u32,
    pub acquire_p99_ms: Range,
    /// Acquire success rate (acquired ÷ acquire calls).
    pub success_rate: Range,
}

/// The spread of `steps` (one rate's runs), when there are at least two.
fn spread(steps: &[&Step]) -> Option<Spread> {
    let modes: Vec<&super::mode::ModeStats> = steps
        .iter()
        .filter_map(|s| s.report.modes.first())
        .collect();
    if modes.len() < 2 {
        return None;
    }
    let round = |x: f64, unit: f64| (x / unit).round() * unit;
    Some(Spread {
        runs: modes.len() as u32,
        passed: steps.iter().filter(|s| s.passed).count() as u32,
        acquire_p99_ms: Range::of(
            modes
                .iter()
                .map(|m| round(m.latency.acquire.quantile(0.99) as f64 / 1000.0, 0.001))
                .collect(),
        )?,
        success_rate: Range::of(
            modes
                .iter()
                .map(|m| round(m.acquire_success_rate(), 1e-6))
                .collect(),
        )?,
    })
}

/// Flags that narrow the bracket `lo..hi` to `precision`: start at the passing rate, cap at
/// the failing one, and enough steps to bisect between them and confirm.
fn narrowing_flags(lo: f64, hi: f64, precision: f64) -> String {
    let halvings = (((hi - lo) / lo) / precision.max(0.001))
        .log2()
        .ceil()
        .max(0.0) as u32;
    // lo, hi, the bisection, the confirmation.
    let steps = (halvings + 3).min(50);
    format!("--start-rate {lo:.0} --max-rate {hi:.0} --max-steps {steps}")
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
    plan: &Plan,
) -> Answer {
    let mine: Vec<&Step> = steps.iter().filter(|s| s.fanout == fanout).collect();
    // The lowest failing step above the answer: was it only the generator?
    let above = mine
        .iter()
        .filter(|s| !s.passed && rate.is_none_or(|r| s.rate > r))
        .min_by(|a, b| a.rate.total_cmp(&b.rate));
    let lowest_failed = above.map(|s| s.rate);
    let generator_limited = above.is_some_and(|s| {
        s.report
            .modes
            .first()
            .is_some_and(|m| m.generator.judgement.generator_bound)
    });
    let answer_step = rate.and_then(|r| mine.iter().rev().find(|s| s.rate == r && s.passed));
    let at = answer_step.and_then(|s| s.report.modes.first());
    let reproduced = answer_step.copied().or_else(|| {
        mine.iter()
            .copied()
            .min_by(|a, b| a.rate.total_cmp(&b.rate))
    });
    let same_rate: Vec<&Step> = rate.map_or_else(Vec::new, |r| {
        mine.iter().copied().filter(|s| s.rate == r).collect()
    });
    let spread = spread(&same_rate);
    let narrow_with = match (rate, lowest_failed) {
        (Some(lo), Some(hi)) if !confirmed || limit == Limit::Steps => {
            // Only this mode: without it, the narrower search would run every mode again.
            let mode = if matches!(fanout, "sequential" | "concurrent") {
                "--fanout"
            } else {
                "--lock"
            };
            format!(
                "{} {mode} {fanout}",
                narrowing_flags(lo, hi, plan.precision)
            )
        }
        _ => String::new(),
    };
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
            if let Some(hi) = lowest_failed {
                if !narrow_with.is_empty() {
                    text.push_str(&format!(
                        "; known: {r:.0}/s passed, {hi:.0}/s failed, so the capacity lies between them: add {narrow_with} to narrow it"
                    ));
                }
            }
            if generator_limited {
                text.push_str("; the next rate up was generator-bound: this is a lower bound set by this machine");
            }
            if let Some(s) = &spread {
                text.push_str(&format!(
                    "; {} runs at that rate ({} passed): p99 {:.3}/{:.3}/{:.3} ms, success {:.3}/{:.3}/{:.3}% (min/median/max)",
                    s.runs,
                    s.passed,
                    s.acquire_p99_ms.min,
                    s.acquire_p99_ms.median,
                    s.acquire_p99_ms.max,
                    100.0 * s.success_rate.min,
                    100.0 * s.success_rate.median,
                    100.0 * s.success_rate.max,
                ));
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
        highest_passed_per_s: rate,
        lowest_failed_per_s: lowest_failed,
        narrow_with,
        reproduce: reproduced
            .map(|s| reproduce::run_command(&s.report, &s.fanout, s.rate))
            .unwrap_or_default(),
        spread,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_narrowing_flags_budget_the_bisection_and_the_confirmation() {
        // 8000..12000 is 50% apart: 4 halvings reach 5%, plus the two ends and a repeat.
        assert_eq!(
            narrowing_flags(8000.0, 12000.0, 0.05),
            "--start-rate 8000 --max-rate 12000 --max-steps 7"
        );
    }

    #[test]
    fn a_range_has_the_median_of_an_even_count() {
        let r = Range::of(vec![3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((r.min, r.median, r.max), (1.0, 2.5, 10.0));
        assert!(Range::of(Vec::new()).is_none());
    }
}
