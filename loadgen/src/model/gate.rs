//! The gate: what a set of judged thresholds means for the exit status. Each threshold is
//! met, not met (or missing) or unclear (its 95 % interval reaches across the bound); the
//! policy decides which of those fail the gate (exit 4), see `docs/src/uncertainty.md`.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::threshold::{JudgedThreshold, ThresholdJudgement};

named! {
    /// Which judgements fail the gate.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub enum GatePolicy {
        /// Exit 4 only on a threshold not met.
        #[default]
        Clear = "clear",
        /// Exit 4 on a threshold not met or unclear.
        Strict = "strict",
    }
}

impl GatePolicy {
    /// What fails under this policy, in words.
    pub fn rule(self) -> &'static str {
        match self {
            GatePolicy::Clear => "exit 4 only on a threshold clearly not met",
            GatePolicy::Strict => "exit 4 on a threshold not met or unclear",
        }
    }

    fn fails(self, j: ThresholdJudgement) -> bool {
        match j {
            ThresholdJudgement::Met => false,
            ThresholdJudgement::NotMet => true,
            ThresholdJudgement::Unclear => self == GatePolicy::Strict,
        }
    }
}

impl FromStr for GatePolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let policy = GatePolicy::ALL.into_iter().find(|p| p.as_str() == s);
        let policies =
            "clear (exit 4 only on a threshold clearly not met) or strict (also on an unclear one)";
        policy.ok_or_else(|| format!("'{s}' is not a gate policy: {policies}"))
    }
}

/// The gate's verdict over every judged threshold (`compare --json`: `gate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    pub policy: GatePolicy,
    pub passed: bool,
    /// The exit status the gate gives: 0 or 4.
    pub exit_code: u8,
    pub met: usize,
    pub not_met: usize,
    pub unclear: usize,
}

impl Gate {
    /// The gate over `verdicts` (`None`: no threshold was given).
    pub fn of(verdicts: &[JudgedThreshold], policy: GatePolicy) -> Option<Gate> {
        if verdicts.is_empty() {
            return None;
        }
        let judged = || verdicts.iter().map(|v| v.verdict.judged());
        let count = |j: ThresholdJudgement| judged().filter(|&k| k == j).count();
        let failed = judged().filter(|&j| policy.fails(j)).count();
        Some(Gate {
            policy,
            passed: failed == 0,
            exit_code: if failed == 0 { 0 } else { 4 },
            met: count(ThresholdJudgement::Met),
            not_met: count(ThresholdJudgement::NotMet),
            unclear: count(ThresholdJudgement::Unclear),
        })
    }

    /// Thresholds that fail the gate under its policy.
    pub fn failed(&self) -> usize {
        match self.policy {
            GatePolicy::Clear => self.not_met,
            GatePolicy::Strict => self.not_met + self.unclear,
        }
    }

    /// `gate: FAIL (exit 4) — 1 of 3 not met, 1 unclear; policy clear: exit 4 only on …`.
    pub fn headline(&self) -> String {
        let total = self.met + self.not_met + self.unclear;
        let word = if self.passed { "PASS" } else { "FAIL" };
        let exit = if self.passed { 0 } else { 4 };
        format!(
            "gate: {word} (exit {exit}) — {} of {total} met, {} not met, {} unclear; policy {}: {}",
            self.met,
            self.not_met,
            self.unclear,
            self.policy,
            self.policy.rule()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judgements_follow_the_interval_and_the_policy_picks_what_fails() {
        assert_eq!(
            ThresholdJudgement::of(true, true, false),
            ThresholdJudgement::Met
        );
        assert_eq!(
            ThresholdJudgement::of(true, false, false),
            ThresholdJudgement::NotMet
        );
        assert_eq!(
            ThresholdJudgement::of(true, false, true),
            ThresholdJudgement::Unclear
        );
        assert_eq!(
            ThresholdJudgement::of(true, true, true),
            ThresholdJudgement::Unclear
        );
        assert_eq!(
            ThresholdJudgement::of(false, false, false),
            ThresholdJudgement::NotMet
        );
        assert!(!GatePolicy::Clear.fails(ThresholdJudgement::Unclear));
        assert!(GatePolicy::Strict.fails(ThresholdJudgement::Unclear));
        assert!(GatePolicy::Clear.fails(ThresholdJudgement::NotMet));
        assert_eq!("strict".parse(), Ok(GatePolicy::Strict));
        let refused = "lenient".parse::<GatePolicy>().unwrap_err();
        assert!(refused.contains("'lenient'"), "{refused}");
    }
}
