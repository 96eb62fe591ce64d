//! The closed vocabularies of the metrics, shared by every sink (the `otel` feature's
//! instruments, [`super::ClientStats`], the bindings' sinks) and by the load generator's
//! exporter, so that the library and the load generator name the same series the same way.
//!
//! Each enum's discriminant is its position in its `ALL`: a sink keeps one counter or bound
//! instrument per value in an array and indexes it with [`AcquireOutcome::index`] or
//! [`AttemptResult::index`], never by searching for a name.

use crate::vote::Verdict;

/// Upper bounds (s) of every duration histogram's buckets, the library's and the load
/// generator's: from a loopback round trip (100 µs) to an acquire that retried for long
/// (10 s), about three per decade.
pub const DURATION_BUCKETS_S: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// Every `error.type` of a failed request to a master (`redlock.master.failures`): each
/// [`crate::FailureKind`]'s name, and `timeout`. Sinks serve each at 0 from a client's start,
/// so that a rule's `increase()` sees a master's first failure.
pub const ERROR_TYPES: [&str; 8] = [
    "connection",
    "server",
    "protocol",
    "other",
    "auth",
    "tls",
    "overloaded",
    "timeout",
];

/// How an acquire call ended: the `redlock.outcome` attribute of `redlock.acquire.duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum AcquireOutcome {
    /// Returned a lock.
    Acquired = 0,
    /// Lost to contention (`ErrorKind::NotAcquired`).
    NotAcquired = 1,
    /// Too few masters answered (`ErrorKind::Unavailable`).
    Unavailable = 2,
    /// Cancelled by the caller before it ended (a dropped future, a cancelled blocking call).
    Cancelled = 3,
    /// Any other error (an invalid argument, an internal error): none in a correct program.
    Error = 4,
}

impl AcquireOutcome {
    /// Every value, in discriminant order.
    pub const ALL: [AcquireOutcome; 5] = [
        AcquireOutcome::Acquired,
        AcquireOutcome::NotAcquired,
        AcquireOutcome::Unavailable,
        AcquireOutcome::Cancelled,
        AcquireOutcome::Error,
    ];

    /// Its `redlock.outcome` value.
    pub const fn as_str(self) -> &'static str {
        match self {
            AcquireOutcome::Acquired => "acquired",
            AcquireOutcome::NotAcquired => "not_acquired",
            AcquireOutcome::Unavailable => "unavailable",
            AcquireOutcome::Cancelled => "cancelled",
            AcquireOutcome::Error => "error",
        }
    }

    /// Its position in [`AcquireOutcome::ALL`] (an array of per-outcome figures' index).
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for AcquireOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How an acquire attempt ended: the `redlock.attempt.result` attribute of `redlock.attempts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum AttemptResult {
    /// Won the quorum with validity left.
    Won = 0,
    /// Split vote: some masters granted, fewer than a quorum, and one denied.
    Split = 1,
    /// Clean loss: no master granted, one denied.
    CleanLoss = 2,
    /// Won the quorum, but the validity ran out.
    Expired = 3,
    /// Failures and timeouts alone kept the quorum out of reach.
    Unavailable = 4,
}

impl AttemptResult {
    /// Every value, in discriminant order.
    pub const ALL: [AttemptResult; 5] = [
        AttemptResult::Won,
        AttemptResult::Split,
        AttemptResult::CleanLoss,
        AttemptResult::Expired,
        AttemptResult::Unavailable,
    ];

    /// Its `redlock.attempt.result` value.
    pub const fn as_str(self) -> &'static str {
        match self {
            AttemptResult::Won => "won",
            AttemptResult::Split => "split",
            AttemptResult::CleanLoss => "clean_loss",
            AttemptResult::Expired => "expired",
            AttemptResult::Unavailable => "unavailable",
        }
    }

    /// Its position in [`AttemptResult::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for AttemptResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The one mapping from a vote's verdict to its metric value (the vote calls a split vote
/// `split_vote` in its messages; the metric says `split`).
impl From<Verdict> for AttemptResult {
    fn from(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Won => AttemptResult::Won,
            Verdict::SplitVote => AttemptResult::Split,
            Verdict::CleanLoss => AttemptResult::CleanLoss,
            Verdict::Expired => AttemptResult::Expired,
            Verdict::Unavailable => AttemptResult::Unavailable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_sits_at_its_index_in_all() {
        for (i, o) in AcquireOutcome::ALL.iter().enumerate() {
            assert_eq!(o.index(), i, "{o}");
        }
        for (i, r) in AttemptResult::ALL.iter().enumerate() {
            assert_eq!(r.index(), i, "{r}");
        }
    }

    #[test]
    fn names_are_distinct_and_snake_case() {
        let outcomes: Vec<_> = AcquireOutcome::ALL.map(AcquireOutcome::as_str).into();
        let results: Vec<_> = AttemptResult::ALL.map(AttemptResult::as_str).into();
        for names in [outcomes, results] {
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), names.len(), "{names:?}");
            for name in names {
                assert!(
                    name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn a_split_vote_verdict_is_the_split_result() {
        assert_eq!(Verdict::SplitVote.as_str(), "split_vote");
        assert_eq!(AttemptResult::from(Verdict::SplitVote).as_str(), "split");
        assert_eq!(AttemptResult::from(Verdict::Won), AttemptResult::Won);
    }

    #[test]
    fn every_failure_kind_and_timeout_is_an_error_type() {
        use crate::vote::{FailureKind, Outcome};
        // Exhaustive: a new kind fails to compile here until it is listed.
        let every = |kind: FailureKind| match kind {
            FailureKind::Connection
            | FailureKind::Server
            | FailureKind::Protocol
            | FailureKind::Other
            | FailureKind::Auth
            | FailureKind::Tls
            | FailureKind::Overloaded => kind,
        };
        let kinds = [
            FailureKind::Connection,
            FailureKind::Server,
            FailureKind::Protocol,
            FailureKind::Other,
            FailureKind::Auth,
            FailureKind::Tls,
            FailureKind::Overloaded,
        ];
        for kind in kinds.map(every) {
            let name = super::super::names::failure_kind(Outcome::Failed(kind));
            assert!(ERROR_TYPES.contains(&name), "{name}");
        }
        let timeout = super::super::names::failure_kind(Outcome::TimedOut);
        assert!(ERROR_TYPES.contains(&timeout));
        assert_eq!(ERROR_TYPES.len(), kinds.len() + 1);
    }

    #[test]
    fn buckets_rise() {
        assert!(DURATION_BUCKETS_S.windows(2).all(|w| w[0] < w[1]));
    }
}
