//! `Vote` and `MasterVote`: what every master answered in one operation.
//!
//! Plain values copied out of the core's vote (the core computes every count and the
//! verdict), so they compare equal field by field and pickle: an exception carrying its vote
//! crosses process boundaries (`ProcessPoolExecutor`, `multiprocessing`).

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use redlock_core::{MasterVote as CoreMasterVote, Outcome, Vote as CoreVote};

/// What every master answered in one acquire attempt, extend or release.
///
/// Each master is counted once: `granted + denied + failed + not_awaited` is the number of
/// masters; `timed_out` tells how many of the failed ones timed out. Compares equal field by
/// field and pickles.
#[pyclass(frozen, eq, module = "redlock_rs", name = "Vote")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Vote {
    /// Masters that granted (acquire: set the key; extend: renewed it; release: deleted it).
    #[pyo3(get)]
    granted: usize,
    /// Masters that said no (held by someone else; for extend/release: not ours any more).
    #[pyo3(get)]
    denied: usize,
    /// Masters that failed, by an error or a timeout (timed-out ones included).
    #[pyo3(get)]
    failed: usize,
    /// How many of the failed masters timed out (a part of failed, not counted apart).
    #[pyo3(get)]
    timed_out: usize,
    /// Masters whose answer concurrent fan-out did not wait for.
    #[pyo3(get)]
    not_awaited: usize,
    /// Votes needed to win.
    #[pyo3(get)]
    quorum: usize,
    /// Seconds the operation took.
    #[pyo3(get)]
    elapsed: f64,
    /// Seconds of validity left when a winning acquire/extend completed, else None.
    #[pyo3(get)]
    validity: Option<f64>,
    /// True when granted >= quorum with validity left.
    #[pyo3(get)]
    won: bool,
    /// "won", "expired", "split_vote", "clean_loss" or "unavailable" (the suite's metric
    /// definitions: split_vote and clean_loss need a master that denied, i.e. another holder;
    /// a failed attempt without a denial is "unavailable", an outage).
    #[pyo3(get)]
    verdict: String,
    /// Per-master answers, in configured master order.
    #[pyo3(get)]
    masters: Vec<MasterVote>,
}

impl From<&CoreVote> for Vote {
    fn from(vote: &CoreVote) -> Self {
        Vote {
            granted: vote.granted(),
            denied: vote.denied(),
            failed: vote.failed(),
            timed_out: vote.timed_out(),
            not_awaited: vote.not_awaited(),
            quorum: vote.quorum(),
            elapsed: vote.elapsed().as_secs_f64(),
            validity: vote.validity().map(|v| v.as_secs_f64()),
            won: vote.won(),
            verdict: vote.verdict().as_str().to_string(),
            masters: vote.masters().iter().map(MasterVote::from).collect(),
        }
    }
}

impl From<CoreVote> for Vote {
    fn from(vote: CoreVote) -> Self {
        Vote::from(&vote)
    }
}

/// The fields of a `Vote` in pickle order (`__reduce__` and `_rebuild_vote`).
type VoteState = (
    usize,
    usize,
    usize,
    usize,
    usize,
    usize,
    f64,
    Option<f64>,
    bool,
    String,
    Vec<MasterVote>,
);

#[pymethods]
impl Vote {
    fn __repr__(&self) -> String {
        let validity = self
            .validity
            .map_or("None".to_string(), |v| format!("{v:.6}"));
        format!(
            "Vote(verdict='{}', granted={}, denied={}, failed={} (timed_out={}), not_awaited={}, \
             quorum={}, elapsed={:.6}, validity={validity})",
            self.verdict,
            self.granted,
            self.denied,
            self.failed,
            self.timed_out,
            self.not_awaited,
            self.quorum,
            self.elapsed,
        )
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let rebuild = py
            .import("redlock_rs._redlock_rs")?
            .getattr("_rebuild_vote")?;
        let state: VoteState = (
            self.granted,
            self.denied,
            self.failed,
            self.timed_out,
            self.not_awaited,
            self.quorum,
            self.elapsed,
            self.validity,
            self.won,
            self.verdict.clone(),
            self.masters.clone(),
        );
        Ok((rebuild, PyTuple::new(py, [state.into_pyobject(py)?])?))
    }
}

/// Unpickles a `Vote` (the target of `Vote.__reduce__`).
#[pyfunction]
pub(crate) fn _rebuild_vote(state: VoteState) -> Vote {
    let (
        granted,
        denied,
        failed,
        timed_out,
        not_awaited,
        quorum,
        elapsed,
        validity,
        won,
        verdict,
        masters,
    ) = state;
    Vote {
        granted,
        denied,
        failed,
        timed_out,
        not_awaited,
        quorum,
        elapsed,
        validity,
        won,
        verdict,
        masters,
    }
}

/// One master's part of a vote. Compares equal field by field and pickles.
#[pyclass(frozen, eq, from_py_object, module = "redlock_rs", name = "MasterVote")]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MasterVote {
    /// Index of the master in the configured order.
    #[pyo3(get)]
    master: usize,
    /// "granted", "denied", "failed", "timed_out" or "not_awaited".
    #[pyo3(get)]
    outcome: String,
    /// For a failed master: "connection", "server", "protocol", "auth", "tls", "overloaded"
    /// or "other"; else None.
    #[pyo3(get)]
    failure: Option<String>,
    /// Seconds of its round trip; None when it timed out or was not awaited.
    #[pyo3(get)]
    round_trip: Option<f64>,
    /// Why it failed or timed out, in the words of whoever said so (the server's error
    /// reply, the TLS or socket error); None when it answered.
    #[pyo3(get)]
    error: Option<String>,
}

impl From<&CoreMasterVote> for MasterVote {
    fn from(vote: &CoreMasterVote) -> Self {
        MasterVote {
            master: vote.master,
            outcome: vote.outcome.as_str().to_string(),
            failure: match vote.outcome {
                Outcome::Failed(kind) => Some(kind.as_str().to_string()),
                _ => None,
            },
            round_trip: vote.round_trip.map(|rt| rt.as_secs_f64()),
            error: vote.error.as_deref().map(str::to_string),
        }
    }
}

type MasterVoteState = (usize, String, Option<String>, Option<f64>, Option<String>);

#[pymethods]
impl MasterVote {
    fn __repr__(&self) -> String {
        let round_trip = self
            .round_trip
            .map_or("None".to_string(), |rt| format!("{rt:.6}"));
        let failure = self
            .failure
            .as_ref()
            .map_or("None".to_string(), |f| format!("'{f}'"));
        let error = self
            .error
            .as_deref()
            .map_or("None".to_string(), |e| format!("{e:?}"));
        format!(
            "MasterVote(master={}, outcome='{}', failure={failure}, round_trip={round_trip}, \
             error={error})",
            self.master, self.outcome
        )
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let rebuild = py
            .import("redlock_rs._redlock_rs")?
            .getattr("_rebuild_master_vote")?;
        let state: MasterVoteState = (
            self.master,
            self.outcome.clone(),
            self.failure.clone(),
            self.round_trip,
            self.error.clone(),
        );
        Ok((rebuild, PyTuple::new(py, [state.into_pyobject(py)?])?))
    }
}

/// Unpickles a `MasterVote` (the target of `MasterVote.__reduce__`).
#[pyfunction]
pub(crate) fn _rebuild_master_vote(state: MasterVoteState) -> MasterVote {
    let (master, outcome, failure, round_trip, error) = state;
    MasterVote {
        master,
        outcome,
        failure,
        round_trip,
        error,
    }
}
