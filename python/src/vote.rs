//! `Vote` and `MasterVote`: what every master answered in one operation.

use pyo3::prelude::*;
use redlock_core::{MasterVote as CoreMasterVote, Outcome, Vote as CoreVote};

/// The vote of one acquire attempt, extend or release.
#[pyclass(frozen, module = "redlock_rs", name = "Vote")]
#[derive(Debug, Clone)]
pub(crate) struct Vote(CoreVote);

impl From<CoreVote> for Vote {
    fn from(vote: CoreVote) -> Self {
        Vote(vote)
    }
}

#[pymethods]
impl Vote {
    /// Masters that granted (acquire: set the key; extend: renewed it; release: deleted it).
    #[getter]
    fn granted(&self) -> usize {
        self.0.granted()
    }
    /// Masters that said no (held by someone else; for extend/release: not ours any more).
    #[getter]
    fn denied(&self) -> usize {
        self.0.denied()
    }
    /// Masters that failed (error or timeout).
    #[getter]
    fn failed(&self) -> usize {
        self.0.failed()
    }
    /// Masters that timed out (counted in `failed` too).
    #[getter]
    fn timed_out(&self) -> usize {
        self.0.timed_out()
    }
    /// Masters whose answer concurrent fan-out did not wait for.
    #[getter]
    fn not_awaited(&self) -> usize {
        self.0.not_awaited()
    }
    /// Votes needed to win.
    #[getter]
    fn quorum(&self) -> usize {
        self.0.quorum()
    }
    /// Seconds the operation took.
    #[getter]
    fn elapsed(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
    /// Seconds of validity left when a winning acquire/extend completed, else None.
    #[getter]
    fn validity(&self) -> Option<f64> {
        self.0.validity().map(|v| v.as_secs_f64())
    }
    /// True when granted >= quorum with validity left.
    #[getter]
    fn won(&self) -> bool {
        self.0.won()
    }
    /// "won", "expired", "split_vote" or "clean_loss" (the suite's metric definitions).
    #[getter]
    fn verdict(&self) -> &'static str {
        self.0.verdict().as_str()
    }
    /// Per-master answers, in configured master order.
    #[getter]
    fn masters(&self) -> Vec<MasterVote> {
        self.0.masters().iter().cloned().map(MasterVote).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Vote(verdict='{}', granted={}, denied={}, failed={}, quorum={}, elapsed={:.6})",
            self.0.verdict().as_str(),
            self.0.granted(),
            self.0.denied(),
            self.0.failed(),
            self.0.quorum(),
            self.0.elapsed().as_secs_f64()
        )
    }
}

/// One master's part of a vote.
#[pyclass(frozen, module = "redlock_rs", name = "MasterVote")]
#[derive(Debug, Clone)]
pub(crate) struct MasterVote(CoreMasterVote);

#[pymethods]
impl MasterVote {
    /// Index of the master in the configured order.
    #[getter]
    fn master(&self) -> usize {
        self.0.master
    }
    /// "granted", "denied", "failed", "timed_out" or "not_awaited".
    #[getter]
    fn outcome(&self) -> &'static str {
        self.0.outcome.as_str()
    }
    /// For a failed master: "connection", "server", "protocol", "auth", "tls", "overloaded"
    /// or "other"; else None.
    #[getter]
    fn failure(&self) -> Option<&'static str> {
        match self.0.outcome {
            Outcome::Failed(kind) => Some(kind.as_str()),
            _ => None,
        }
    }
    /// Why it failed or timed out, in the words of whoever said so (the server's error
    /// reply, the TLS or socket error); None when it answered.
    #[getter]
    fn error(&self) -> Option<&str> {
        self.0.error.as_deref()
    }
    /// Seconds of its round trip; None when it timed out or was not awaited.
    #[getter]
    fn round_trip(&self) -> Option<f64> {
        self.0.round_trip.map(|rt| rt.as_secs_f64())
    }

    fn __repr__(&self) -> String {
        let round_trip = self
            .0
            .round_trip
            .map_or("None".to_string(), |rt| format!("{:.6}", rt.as_secs_f64()));
        let error = self
            .0
            .error
            .as_deref()
            .map_or("None".to_string(), |e| format!("{e:?}"));
        format!(
            "MasterVote(master={}, outcome='{}', round_trip={round_trip}, error={error})",
            self.0.master, self.0.outcome
        )
    }
}
