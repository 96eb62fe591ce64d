//! A capacity search's result: every step (a full run result each) and the answer per fan-out
//! mode. JSON `kind: "capacity"`.

use serde::{Deserialize, Serialize};

use super::result::{self as json, ResultJson, SCHEMA_VERSION};
use crate::capacity::search::{Limit, Phase, Plan};
use crate::capacity::slo::Objective;
use crate::report::{Report, ToolInfo};
use crate::signals::Signal;

/// One bounded run of the search.
#[derive(Debug, Clone)]
pub struct Step {
    pub fanout: String,
    pub phase: Phase,
    /// Open-loop rate asked for.
    pub rate: f64,
    /// Why it missed the objective (empty: it passed).
    pub failures: Vec<String>,
    pub report: Report,
}

impl Step {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
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
#[derive(Debug, Clone)]
pub struct CapacityResult {
    pub run_id: String,
    pub started_unix_s: u64,
    pub interrupted_by: Option<Signal>,
    pub objective: Objective,
    pub plan: Plan,
    pub merged_from: Vec<String>,
    pub merge_notes: Vec<String>,
    pub steps: Vec<Step>,
    pub answers: Vec<Answer>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityJson {
    pub schema_version: u32,
    /// Always "capacity".
    pub kind: String,
    pub tool: ToolInfo,
    pub run_id: String,
    pub started_unix_s: u64,
    pub interrupted: bool,
    pub interrupted_by: Option<Signal>,
    pub objective: Objective,
    pub search: Plan,
    pub merged_from: Vec<String>,
    pub merge_notes: Vec<String>,
    pub answers: Vec<Answer>,
    pub steps: Vec<StepJson>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepJson {
    pub fanout: String,
    pub phase: Phase,
    pub rate_asked_per_s: f64,
    pub passed: bool,
    pub failures: Vec<String>,
    pub result: ResultJson,
}

impl CapacityResult {
    pub fn to_json(&self) -> CapacityJson {
        CapacityJson {
            schema_version: SCHEMA_VERSION,
            kind: "capacity".into(),
            tool: ToolInfo::current(),
            run_id: self.run_id.clone(),
            started_unix_s: self.started_unix_s,
            interrupted: self.interrupted_by.is_some(),
            interrupted_by: self.interrupted_by,
            objective: self.objective.clone(),
            search: self.plan,
            merged_from: self.merged_from.clone(),
            merge_notes: self.merge_notes.clone(),
            answers: self.answers.clone(),
            steps: self
                .steps
                .iter()
                .map(|s| StepJson {
                    fanout: s.fanout.clone(),
                    phase: s.phase,
                    rate_asked_per_s: s.rate,
                    passed: s.passed(),
                    failures: s.failures.clone(),
                    result: json::to_json(&s.report),
                })
                .collect(),
        }
    }

    pub fn from_json(j: CapacityJson) -> Result<CapacityResult, String> {
        let mut steps = Vec::with_capacity(j.steps.len());
        for (i, s) in j.steps.into_iter().enumerate() {
            steps.push(Step {
                fanout: s.fanout,
                phase: s.phase,
                rate: s.rate_asked_per_s,
                failures: s.failures,
                report: json::from_result(s.result).map_err(|e| format!("step {i}: {e}"))?,
            });
        }
        Ok(CapacityResult {
            run_id: j.run_id,
            started_unix_s: j.started_unix_s,
            interrupted_by: j.interrupted_by,
            objective: j.objective,
            plan: j.search,
            merged_from: j.merged_from,
            merge_notes: j.merge_notes,
            steps,
            answers: j.answers,
        })
    }
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
        .filter(|s| !s.passed() && rate.is_none_or(|r| s.rate > r))
        .min_by(|a, b| a.rate.total_cmp(&b.rate));
    let generator_limited = above.is_some_and(|s| {
        s.report
            .modes
            .first()
            .is_some_and(|m| s.report.judge(m).generator_bound)
    });
    let at = rate.and_then(|r| {
        mine.iter()
            .rev()
            .find(|s| s.rate == r && s.passed())
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
                m.acquire.quantile(0.5) as f64 / 1000.0,
                m.acquire.quantile(0.99) as f64 / 1000.0,
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
