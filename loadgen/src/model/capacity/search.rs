//! The search for the highest rate that meets the objective, for one fan-out mode: bracket
//! (double from the start rate until a step fails, or halve until one passes), bisect until
//! the highest pass and the lowest failure are within the precision, then confirm the answer
//! by running it again; every step is a bounded run, and so is their number. The idea is
//! MLPerf LoadGen's server-scenario search; the code is our own.

use serde::{Deserialize, Serialize};

named! {
    /// What a step is for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Phase {
        Bracket = "bracket",
        Bisect = "bisect",
        Confirm = "confirm",
        /// A `--repeat` run of the answer's rate, once the search is over (it moves no answer).
        Repeat = "repeat",
    }
}

/// The search's settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub start_rate: f64,
    pub min_rate: f64,
    pub max_rate: f64,
    /// Stop bisecting when (fail − pass) ÷ pass ≤ this.
    pub precision: f64,
    /// Steps per fan-out mode, the confirmation included.
    pub max_steps: u32,
    /// Repeats a step may get when a 95 % interval of its figures straddles the objective,
    /// before its verdict counts (outside `max_steps`; the majority of the runs decides).
    #[serde(default)]
    pub noise_repeats: u32,
    /// Runs of the answer's step once the search is over (`--repeat`).
    #[serde(default)]
    pub repeat: u32,
    /// `min_rate` was raised above `--min-rate` to the lowest rate whose step holds the calls
    /// the objective's percentiles need ([`crate::model::capacity::slo::Objective::rate_floor`]).
    #[serde(default)]
    pub min_rate_from_calls: bool,
}

/// Why the answer is what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// Bracketed: the next rate up missed the objective (within the precision).
    Objective,
    /// Passed at `--max-rate`: the masters may sustain more.
    MaxRate,
    /// Even `--min-rate` missed the objective.
    NotMet,
    /// The step budget ran out before the precision was reached.
    Steps,
}

/// The search's state.
#[derive(Debug, Clone, Default)]
pub struct Search {
    plan: Plan,
    /// Rates that passed (ascending, deduplicated) and the lowest that failed.
    passed: Vec<f64>,
    failed: Option<f64>,
    steps: u32,
    confirmed: bool,
    done: Option<Limit>,
}

fn round(rate: f64) -> f64 {
    rate.round().max(1.0)
}

impl Search {
    pub fn new(plan: Plan) -> Search {
        Search {
            plan,
            ..Search::default()
        }
    }

    fn best(&self) -> Option<f64> {
        self.passed.last().copied()
    }

    /// The next step, or `None` when the search is over.
    pub fn next_step(&mut self) -> Option<(Phase, f64)> {
        if self.done.is_some() {
            return None;
        }
        let p = self.plan;
        let step = match (self.best(), self.failed) {
            (None, None) => (
                Phase::Bracket,
                round(p.start_rate.clamp(p.min_rate, p.max_rate)),
            ),
            (Some(lo), None) if lo >= p.max_rate => self.confirm_or(lo, Limit::MaxRate)?,
            (Some(lo), None) => (Phase::Bracket, round((lo * 2.0).min(p.max_rate))),
            (None, Some(hi)) if hi <= p.min_rate => {
                self.done = Some(Limit::NotMet);
                return None;
            }
            (None, Some(hi)) => (Phase::Bracket, round((hi / 2.0).max(p.min_rate))),
            (Some(lo), Some(hi)) => {
                let mid = round((lo + hi) / 2.0);
                if (hi - lo) / lo <= p.precision || mid <= lo || mid >= hi {
                    self.confirm_or(lo, Limit::Objective)?
                } else {
                    (Phase::Bisect, mid)
                }
            }
        };
        // Checked after the terminal cases above: a search whose last step confirmed its
        // answer ended because of that answer, not because of the budget.
        if self.steps >= p.max_steps {
            self.done = Some(Limit::Steps);
            return None;
        }
        Some(step)
    }

    /// Confirms `rate` if not yet done; otherwise the search ends with `limit`.
    fn confirm_or(&mut self, rate: f64, limit: Limit) -> Option<(Phase, f64)> {
        if self.confirmed {
            self.done = Some(limit);
            None
        } else {
            Some((Phase::Confirm, rate))
        }
    }

    /// Records a step's verdict.
    pub fn record(&mut self, phase: Phase, rate: f64, passed: bool) {
        if phase == Phase::Repeat {
            return;
        }
        self.steps += 1;
        match (phase, passed) {
            (Phase::Confirm, true) => self.confirmed = true,
            (Phase::Confirm, false) => {
                // The answer did not hold up: it becomes the lowest failing rate, and the
                // next-best passing rate (if any) is the new candidate.
                self.passed.retain(|&r| r < rate);
                self.failed = Some(rate);
            }
            (_, true) => {
                if !self.passed.contains(&rate) {
                    self.passed.push(rate);
                    self.passed.sort_by(f64::total_cmp);
                }
            }
            (_, false) => self.failed = Some(self.failed.map_or(rate, |f| f.min(rate))),
        }
    }

    /// The answer so far: the highest passing rate, whether a repeat confirmed it, and why
    /// the search stopped there.
    pub fn answer(&self) -> (Option<f64>, bool, Limit) {
        (
            self.best(),
            self.confirmed,
            self.done.unwrap_or(Limit::Steps),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        Plan {
            start_rate: 1000.0,
            min_rate: 10.0,
            max_rate: 1_000_000.0,
            precision: 0.05,
            max_steps: 20,
            noise_repeats: 2,
            repeat: 0,
            min_rate_from_calls: false,
        }
    }

    /// Runs the search against a system that passes every rate ≤ `capacity`.
    fn search(plan: Plan, capacity: f64, flaky_confirm: bool) -> (Vec<(Phase, f64)>, Search) {
        let mut s = Search::new(plan);
        let mut steps = Vec::new();
        let mut first_confirm = true;
        while let Some((phase, rate)) = s.next_step() {
            let mut passed = rate <= capacity;
            if phase == Phase::Confirm && flaky_confirm && first_confirm {
                passed = false;
                first_confirm = false;
            }
            s.record(phase, rate, passed);
            steps.push((phase, rate));
        }
        (steps, s)
    }

    #[test]
    fn brackets_up_then_bisects_to_the_precision_and_confirms() {
        let (steps, s) = search(plan(), 5_300.0, false);
        assert_eq!(
            &steps[..4],
            &[
                (Phase::Bracket, 1000.0),
                (Phase::Bracket, 2000.0),
                (Phase::Bracket, 4000.0),
                (Phase::Bracket, 8000.0)
            ]
        );
        assert!(steps[4..steps.len() - 1]
            .iter()
            .all(|s| s.0 == Phase::Bisect));
        let (rate, confirmed, limit) = s.answer();
        let rate = rate.unwrap();
        assert_eq!(steps.last(), Some(&(Phase::Confirm, rate)));
        assert!(confirmed && limit == Limit::Objective);
        assert!((5_300.0 / 1.05..=5_300.0).contains(&rate), "{rate}");
    }

    #[test]
    fn brackets_down_when_the_start_rate_fails() {
        let (steps, s) = search(plan(), 180.0, false);
        assert_eq!(
            &steps[..4],
            &[
                (Phase::Bracket, 1000.0),
                (Phase::Bracket, 500.0),
                (Phase::Bracket, 250.0),
                (Phase::Bracket, 125.0)
            ]
        );
        let rate = s.answer().0.unwrap();
        assert!((180.0 / 1.05..=180.0).contains(&rate), "{rate}");
    }

    #[test]
    fn a_failed_confirmation_moves_the_answer_down() {
        let (steps, s) = search(plan(), 5_300.0, true);
        let confirms: Vec<_> = steps.iter().filter(|s| s.0 == Phase::Confirm).collect();
        assert_eq!(confirms.len(), 2, "{steps:?}");
        assert!(confirms[1].1 < confirms[0].1);
        let (rate, confirmed, _) = s.answer();
        assert!(confirmed && rate.unwrap() < confirms[0].1);
    }

    #[test]
    fn the_search_is_bounded_by_max_rate_min_rate_and_steps() {
        let (_, s) = search(plan(), f64::INFINITY, false);
        assert_eq!(s.answer(), (Some(1_000_000.0), true, Limit::MaxRate));
        let (_, s) = search(plan(), 1.0, false);
        assert_eq!(s.answer(), (None, false, Limit::NotMet));
        let few = Plan {
            max_steps: 3,
            ..plan()
        };
        let (steps, s) = search(few, 5_300.0, false);
        assert_eq!(steps.len(), 3);
        assert_eq!(s.answer(), (Some(4000.0), false, Limit::Steps));
        // A budget used up exactly by the confirming step: the answer stands on its own.
        let (all, _) = search(plan(), 5_300.0, false);
        let exact = Plan {
            max_steps: all.len() as u32,
            ..plan()
        };
        let (_, s) = search(exact, 5_300.0, false);
        assert_eq!(s.answer().2, Limit::Objective);
    }
}
