//! The names telemetry reports in spans, events and request metrics (the closed vocabularies
//! of acquire outcomes and attempt results are in `vocabulary.rs`).

use crate::vote::Outcome;

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
