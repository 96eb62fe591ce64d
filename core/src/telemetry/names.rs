//! The names telemetry reports (DESIGN §9), shared by spans, events and metrics.

use crate::vote::{Outcome, Verdict};

/// Which operation a round served (the cleanup after a lost attempt is its own kind: its
/// failures are reported at DEBUG, the attempt's own already said the master failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoundKind {
    Acquire,
    Extend,
    Release,
    Cleanup,
}

impl RoundKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RoundKind::Acquire => "acquire",
            RoundKind::Extend => "extend",
            RoundKind::Release => "release",
            RoundKind::Cleanup => "cleanup",
        }
    }

    /// `db.operation.name` of its requests: an acquire's `SET`, else a script's `EVALSHA`.
    pub(crate) fn operation_name(self) -> &'static str {
        match self {
            RoundKind::Acquire => "SET",
            _ => "EVALSHA",
        }
    }
}

/// The `error.type` of a failed master: the failure kind, or `timeout`.
pub(crate) fn failure_kind(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Failed(kind) => kind.as_str(),
        Outcome::TimedOut => "timeout",
        _ => "",
    }
}

/// `redlock.attempt.result` of a verdict (DESIGN §9).
pub(crate) fn attempt_result(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Won => "won",
        Verdict::SplitVote => "split",
        Verdict::CleanLoss => "clean_loss",
        Verdict::Expired => "expired",
        _ => "unavailable",
    }
}
