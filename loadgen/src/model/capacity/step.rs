//! One step of a capacity search: a bounded run at one rate and its verdict, and, when the
//! verdict was too close to call, how the repeats of that rate decided it.

use serde::{Deserialize, Serialize};

use super::search::Phase;
use crate::model::mode::ModeStats;
use crate::model::report::Report;

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
    /// The objective's terms whose 95 % interval contained their bound, in words (empty: the
    /// verdict did not hinge on noise).
    #[serde(default)]
    pub straddled: Vec<String>,
    /// A repeat run because an earlier step's interval straddled the objective: that step's
    /// number within its mode (null: a search step, or a `--repeat` run of the answer).
    pub repeat_of: Option<u32>,
    /// Set on a step whose interval straddled the objective: the runs at its rate (it and its
    /// repeats) and the verdict the search counted.
    pub noise: Option<NoiseVerdict>,
    /// A confirming step: the answer's `reproduce:` command it ran, as a planner would (absent:
    /// a step of the search's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
    #[serde(rename = "result")]
    pub report: Report,
}

/// How the runs of a straddling step decided its verdict: the majority of the runs; a tie
/// fails (a capacity is not claimed on a coin flip).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoiseVerdict {
    pub runs: u32,
    pub passed: u32,
    /// The verdict the search counted.
    pub counted_passed: bool,
}

impl NoiseVerdict {
    /// The verdict of `passed` out of `runs`, and whether it is settled: a further run could
    /// not change the majority (`budget_left`: how many more runs there may be).
    pub fn of(runs: u32, passed: u32, budget_left: u32) -> (NoiseVerdict, bool) {
        let failed = runs - passed;
        let total = runs + budget_left;
        // Settled once either side holds more than half of every run there can be, or no
        // run is left.
        let settled = budget_left == 0 || 2 * passed > total || 2 * failed >= total;
        (
            NoiseVerdict {
                runs,
                passed,
                counted_passed: 2 * passed > runs,
            },
            settled,
        )
    }
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
            straddled: Vec::new(),
            repeat_of: None,
            noise: None,
            reproducer: None,
            report,
        }
    }

    /// The mode it measured.
    pub fn mode(&self) -> Option<&ModeStats> {
        self.report.modes.first()
    }

    /// The verdict the search counted for this step (`None`: a repeat, which the search does
    /// not count on its own).
    pub fn counted(&self) -> Option<bool> {
        if self.phase == Phase::Repeat {
            return None;
        }
        Some(self.noise.map_or(self.passed, |n| n.counted_passed))
    }
}

#[cfg(test)]
mod tests {
    use super::NoiseVerdict;

    #[test]
    fn the_majority_decides_and_a_tie_fails() {
        // 1 of 1 with 2 more allowed: not settled; 2 of 2: settled, passed.
        assert!(!NoiseVerdict::of(1, 1, 2).1);
        assert_eq!(
            NoiseVerdict::of(2, 2, 1),
            (
                NoiseVerdict {
                    runs: 2,
                    passed: 2,
                    counted_passed: true
                },
                true
            )
        );
        // 1 of 2 with one left: the third run decides.
        assert!(!NoiseVerdict::of(2, 1, 1).1);
        assert!(NoiseVerdict::of(3, 2, 0).0.counted_passed);
        assert!(!NoiseVerdict::of(3, 1, 0).0.counted_passed);
        // An even budget can tie: a tie fails, and it is settled as soon as a pass is out of reach.
        assert!(!NoiseVerdict::of(2, 1, 0).0.counted_passed);
        assert!(NoiseVerdict::of(1, 0, 1).1);
    }
}
