//! Steps whose 95 % interval straddled the objective: run again until a majority of the runs
//! there can be agrees, then counted by the search as that majority says.

use super::state::{Noisy, Searcher, Shown, StepRun};
use crate::error::LoadgenError;
use crate::model::capacity::search::{Phase, Search};
use crate::model::capacity::NoiseVerdict;

impl Searcher<'_, '_> {
    /// Counts the step just kept: a step of the search is recorded at once unless it
    /// straddles, a straddling one and its repeats once they settle; returns the step still
    /// waiting for repeats, if any. A `--repeat` run of the answer moves nothing.
    pub(super) fn count(
        &mut self,
        search: &mut Search,
        noisy: Option<Noisy>,
        run: &StepRun<'_>,
        shown: Shown,
    ) -> Result<Option<Noisy>, LoadgenError> {
        let s = &self.searched;
        let waiting = match noisy {
            Some(w) => Noisy {
                runs: w.runs + 1,
                passed: w.passed + u32::from(shown.passed),
                left: w.left - 1,
                ..w
            },
            None if run.phase != Phase::Repeat && shown.straddles => Noisy {
                at: s.steps.len() - 1,
                at_all: s.all_steps.len().saturating_sub(1),
                number: run.number,
                phase: run.phase,
                rate: run.rate,
                runs: 1,
                passed: u32::from(shown.passed),
                left: self.capacity.plan.noise_repeats,
            },
            None => {
                if run.phase != Phase::Repeat {
                    search.record(run.phase, run.rate, shown.passed);
                }
                return Ok(None);
            }
        };
        self.settle(search, waiting)
    }

    /// Notes a straddling step's verdict so far on it; once settled, the search counts it.
    fn settle(&mut self, search: &mut Search, w: Noisy) -> Result<Option<Noisy>, LoadgenError> {
        let (verdict, settled) = NoiseVerdict::of(w.runs, w.passed, w.left);
        self.searched.steps[w.at].noise = Some(verdict);
        if self.agent.is_some() {
            self.searched.all_steps[w.at_all].noise = Some(verdict);
        }
        if !settled {
            return Ok(Some(w));
        }
        if w.runs > 1 {
            (self.print)(&format!(
                "{:>16}~ step {} counted as {} ({} of {} runs passed)\n",
                "",
                w.number,
                if verdict.counted_passed {
                    "a pass"
                } else {
                    "a failure"
                },
                w.passed,
                w.runs
            ))?;
        }
        search.record(w.phase, w.rate, verdict.counted_passed);
        Ok(None)
    }
}
