//! The names telemetry reports in spans, events and request metrics (the closed vocabularies
//! of acquire outcomes and attempt results are in `vocabulary.rs`).

use crate::master::{ExtendCommand, ReleaseCommand};
use crate::vote::Outcome;

/// Which operation a round served (the cleanup after a lost attempt is its own kind: its
/// failures are reported at DEBUG, the attempt's own already said the master failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RoundKind {
    Acquire,
    /// Both rounds of a fenced acquire (scripts), reported together.
    FencedAcquire,
    Extend,
    Release,
    Cleanup,
}

impl RoundKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RoundKind::Acquire | RoundKind::FencedAcquire => "acquire",
            RoundKind::Extend => "extend",
            RoundKind::Release => "release",
            RoundKind::Cleanup => "cleanup",
        }
    }

    /// `db.operation.name` of its requests to a master whose connection uses `commands`
    /// (`None`: not connected, so the scripts the client falls back to): the command actually
    /// sent, `SET` for an acquire, `EVALSHA` for a fenced one, and for an extend or release
    /// (a cleanup is a release) the master's own `SET … IFEQ`, `DELIFEQ` or `DELEX` where it
    /// has them, else `EVALSHA`.
    pub(crate) fn operation_name(
        self,
        commands: Option<(ReleaseCommand, ExtendCommand)>,
    ) -> &'static str {
        match (self, commands) {
            (RoundKind::Acquire, _) => "SET",
            (RoundKind::Extend, Some((_, ExtendCommand::SetIfEq))) => "SET",
            (RoundKind::Release | RoundKind::Cleanup, Some((ReleaseCommand::DelIfEq, _))) => {
                "DELIFEQ"
            }
            (RoundKind::Release | RoundKind::Cleanup, Some((ReleaseCommand::DelExIfEq, _))) => {
                "DELEX"
            }
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
