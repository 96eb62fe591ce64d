//! The vote of one operation: what each master answered and how long it took.
//!
//! Every acquire attempt, extend and release produces one. It is the only record the load
//! generator and the bindings read; nothing else re-derives the algorithm's bookkeeping.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a master's answer counted as failed. The words of the failure (the server's error
/// reply, the TLS or socket error) are on [`MasterVote::error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureKind {
    /// Could not connect (refused, unreachable, name not resolved), or the connection dropped.
    Connection,
    /// The server answered with an error (e.g. `OOM`, `READONLY`, `LOADING`, `BUSY`).
    Server,
    /// The reply did not have the expected type or shape, was oversized, or was not this
    /// request's (a stray reply): the connection is replaced.
    Protocol,
    /// Anything else.
    Other,
    /// The master refused authentication (`WRONGPASS`, `NOAUTH`, a password it does not expect).
    Auth,
    /// The TLS handshake failed (e.g. a certificate the client does not trust).
    Tls,
    /// The request never left the client: too many requests were already waiting for this
    /// master (bounded queue).
    Overloaded,
}

impl FailureKind {
    /// Short stable name (`"connection"`, `"server"`, `"protocol"`, `"other"`, `"auth"`,
    /// `"tls"`, `"overloaded"`).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Connection => "connection",
            FailureKind::Server => "server",
            FailureKind::Protocol => "protocol",
            FailureKind::Other => "other",
            FailureKind::Auth => "auth",
            FailureKind::Tls => "tls",
            FailureKind::Overloaded => "overloaded",
        }
    }

    /// What masters that failed this way did, in plain words ("refused authentication").
    pub fn describe(self) -> &'static str {
        match self {
            FailureKind::Connection => "could not be reached",
            FailureKind::Server => "answered with an error",
            FailureKind::Protocol => "sent a reply that was not this request's",
            FailureKind::Other => "failed",
            FailureKind::Auth => "refused authentication",
            FailureKind::Tls => "failed the TLS handshake",
            FailureKind::Overloaded => "had too many requests queued in this client",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one master answered in one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// Acquire: the key was set. Extend: the TTL was renewed. Release: the key was deleted.
    Granted,
    /// The key is held by another token (or, for extend/release, is not ours any more).
    Denied,
    /// An error, classified.
    Failed(FailureKind),
    /// No answer within the per-master timeout.
    TimedOut,
    /// Concurrent fan-out decided the operation before this master answered.
    NotAwaited,
}

impl Outcome {
    /// Short stable name (`"granted"`, `"denied"`, `"failed"`, `"timed_out"`, `"not_awaited"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Granted => "granted",
            Outcome::Denied => "denied",
            Outcome::Failed(_) => "failed",
            Outcome::TimedOut => "timed_out",
            Outcome::NotAwaited => "not_awaited",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Failed(kind) => write!(f, "failed ({kind})"),
            other => f.write_str(other.as_str()),
        }
    }
}

/// One master's part of a vote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MasterVote {
    /// Index of the master in the configured order.
    pub master: usize,
    /// What it answered.
    pub outcome: Outcome,
    /// Round trip of its request; `None` when it timed out or was not awaited.
    pub round_trip: Option<Duration>,
    /// Why it failed, in the words of whoever said so: the server's error reply
    /// (`WRONGPASS invalid username-password pair ...`), the TLS or socket error, or what was
    /// wrong with the reply. `Some` for every failed or timed-out master, `None` otherwise.
    /// Never holds a password.
    pub error: Option<Arc<str>>,
}

/// How an acquire attempt ended, in the terms of the suite's metrics
/// (`docs/src/design.md#metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verdict {
    /// granted ≥ quorum and validity > 0.
    Won,
    /// granted ≥ quorum but the validity ran out before the vote was complete.
    Expired,
    /// 0 < granted < quorum with at least one denial: the masters were split between
    /// contenders.
    SplitVote,
    /// granted = 0 with at least one denial: another holder has the lock.
    CleanLoss,
    /// Quorum not reached and no master denied: failures and timeouts alone kept the quorum
    /// out of reach. An outage, never contention.
    Unavailable,
}

impl Verdict {
    /// Short stable name (`"won"`, `"expired"`, `"split_vote"`, `"clean_loss"`,
    /// `"unavailable"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Won => "won",
            Verdict::Expired => "expired",
            Verdict::SplitVote => "split_vote",
            Verdict::CleanLoss => "clean_loss",
            Verdict::Unavailable => "unavailable",
        }
    }
}

/// The outcome of one operation across all masters.
#[derive(Clone, PartialEq, Eq)]
pub struct Vote {
    pub(crate) masters: Vec<MasterVote>,
    pub(crate) quorum: usize,
    pub(crate) started: Instant,
    pub(crate) elapsed: Duration,
    pub(crate) validity: Option<Duration>,
}

impl Vote {
    pub(crate) fn new(n_masters: usize, quorum: usize) -> Self {
        Vote {
            masters: (0..n_masters)
                .map(|master| MasterVote {
                    master,
                    outcome: Outcome::NotAwaited,
                    round_trip: None,
                    error: None,
                })
                .collect(),
            quorum,
            started: Instant::now(),
            elapsed: Duration::ZERO,
            validity: None,
        }
    }

    fn count(&self, pred: impl Fn(Outcome) -> bool) -> usize {
        self.masters.iter().filter(|m| pred(m.outcome)).count()
    }

    /// Per-master answers, in configured master order.
    pub fn masters(&self) -> &[MasterVote] {
        &self.masters
    }
    /// Masters that granted (acquire: set the key; extend: renewed; release: deleted).
    pub fn granted(&self) -> usize {
        self.count(|o| o == Outcome::Granted)
    }
    /// Masters that answered no: the key belongs to someone else (or, for extend/release, is gone).
    pub fn denied(&self) -> usize {
        self.count(|o| o == Outcome::Denied)
    }
    /// Masters that failed, by an error or a timeout (each master counts once:
    /// `granted + denied + failed + not_awaited` is the number of masters;
    /// [`timed_out`](Self::timed_out) tells how many of the failed ones timed out).
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_) | Outcome::TimedOut))
    }
    /// Masters that timed out: a part of [`failed`](Self::failed), not counted apart.
    pub fn timed_out(&self) -> usize {
        self.count(|o| o == Outcome::TimedOut)
    }
    /// Masters whose answer concurrent fan-out did not wait for.
    pub fn not_awaited(&self) -> usize {
        self.count(|o| o == Outcome::NotAwaited)
    }
    /// Masters that gave an answer (granted or denied).
    pub fn answered(&self) -> usize {
        self.granted() + self.denied()
    }
    /// Votes needed to win.
    pub fn quorum(&self) -> usize {
        self.quorum
    }
    /// Monotonic instant the operation started (before the first request was sent).
    pub fn started(&self) -> Instant {
        self.started
    }
    /// Monotonic instant the vote was complete: `started + elapsed`. A won lock's validity
    /// counts from here.
    pub fn completed(&self) -> Instant {
        self.started + self.elapsed
    }
    /// Wall time of the operation on the monotonic clock.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
    /// Validity left when the vote completed (acquire/extend that won), else `None`.
    pub fn validity(&self) -> Option<Duration> {
        self.validity
    }
    /// True when granted ≥ quorum and validity > 0.
    pub fn won(&self) -> bool {
        self.quorum_reached() && self.validity.is_some()
    }
    /// The failed masters' causes in plain words, grouped by cause: `"3 of 3 masters refused
    /// authentication (WRONGPASS invalid username-password pair or user is disabled.)"`.
    /// Empty when no master failed.
    pub fn failure_summary(&self) -> String {
        let n = self.masters.len();
        let mut groups: Vec<(&'static str, Option<&str>, usize)> = Vec::new();
        for m in &self.masters {
            let what = match m.outcome {
                Outcome::Failed(kind) => kind.describe(),
                Outcome::TimedOut => "timed out",
                _ => continue,
            };
            let cause = m.error.as_deref();
            match groups.iter_mut().find(|g| g.0 == what && g.1 == cause) {
                Some(group) => group.2 += 1,
                None => groups.push((what, cause, 1)),
            }
        }
        let parts: Vec<String> = groups
            .into_iter()
            .map(|(what, cause, count)| match cause {
                Some(cause) => format!("{count} of {n} masters {what} ({cause})"),
                None => format!("{count} of {n} masters {what}"),
            })
            .collect();
        parts.join("; ")
    }
    /// Every master counted once, with the quorum: `"2 granted, 0 denied, 3 failed (3 timed
    /// out), 0 not awaited of 5 masters; quorum 3"`.
    pub fn counts(&self) -> impl fmt::Display + '_ {
        Counts(self)
    }
    fn quorum_reached(&self) -> bool {
        crate::quorum::Quorum::new(self.masters.len(), self.quorum).reached(self.granted())
    }

    /// Classification of an acquire attempt by the suite's metric definitions.
    pub fn verdict(&self) -> Verdict {
        let granted = self.granted();
        if self.quorum_reached() {
            if self.validity.is_some() {
                Verdict::Won
            } else {
                Verdict::Expired
            }
        } else if self.denied() == 0 {
            Verdict::Unavailable
        } else if granted == 0 {
            Verdict::CleanLoss
        } else {
            Verdict::SplitVote
        }
    }
}

impl fmt::Debug for Vote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vote")
            .field("granted", &self.granted())
            .field("denied", &self.denied())
            .field("failed", &self.failed())
            .field("quorum", &self.quorum)
            .field("elapsed", &self.elapsed)
            .field("validity", &self.validity)
            .field("masters", &self.masters)
            .finish()
    }
}

/// See [`Vote::counts`].
struct Counts<'a>(&'a Vote);

impl fmt::Display for Counts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vote = self.0;
        write!(
            f,
            "{} granted, {} denied, {} failed",
            vote.granted(),
            vote.denied(),
            vote.failed()
        )?;
        let timed_out = vote.timed_out();
        if timed_out > 0 {
            write!(f, " ({timed_out} timed out)")?;
        }
        write!(
            f,
            ", {} not awaited of {} masters; quorum {}",
            vote.not_awaited(),
            vote.masters.len(),
            vote.quorum
        )
    }
}

/// `"2 granted, 0 denied, 3 failed (3 timed out), 0 not awaited of 5 masters; quorum 3 in
/// 101.2ms"`.
impl fmt::Display for Vote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} in {}",
            self.counts(),
            crate::argument::DurationUnit::Readable.show(self.elapsed)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(outcomes: &[Outcome], validity: Option<Duration>) -> Vote {
        let mut v = Vote::new(outcomes.len(), outcomes.len() / 2 + 1);
        for (m, o) in v.masters.iter_mut().zip(outcomes) {
            m.outcome = *o;
        }
        v.validity = validity;
        v
    }

    #[test]
    fn verdicts_follow_metric_definitions() {
        use Outcome::*;
        let ms = Some(Duration::from_millis(1));
        assert_eq!(
            vote(&[Granted, Granted, Granted, Denied, Denied], ms).verdict(),
            Verdict::Won
        );
        assert_eq!(
            vote(&[Granted, Granted, Granted, Denied, Denied], None).verdict(),
            Verdict::Expired
        );
        assert_eq!(
            vote(&[Granted, Granted, Denied, Denied, TimedOut], None).verdict(),
            Verdict::SplitVote
        );
        assert_eq!(
            vote(&[Denied, Denied, Denied, NotAwaited, NotAwaited], None).verdict(),
            Verdict::CleanLoss
        );
        // An outage is never contention: without a denial there is no other holder.
        assert_eq!(
            vote(
                &[
                    Granted,
                    Granted,
                    TimedOut,
                    Failed(FailureKind::Connection),
                    TimedOut
                ],
                None
            )
            .verdict(),
            Verdict::Unavailable
        );
        assert_eq!(
            vote(&[TimedOut, TimedOut, TimedOut, TimedOut, TimedOut], None).verdict(),
            Verdict::Unavailable
        );
        assert_eq!(
            vote(
                &[
                    Failed(FailureKind::Connection),
                    Failed(FailureKind::Connection),
                    Failed(FailureKind::Connection),
                    Denied,
                    NotAwaited
                ],
                None
            )
            .verdict(),
            Verdict::CleanLoss
        );
        let v = vote(
            &[
                Granted,
                Failed(FailureKind::Server),
                TimedOut,
                NotAwaited,
                Denied,
            ],
            None,
        );
        assert_eq!(
            (
                v.granted(),
                v.denied(),
                v.failed(),
                v.timed_out(),
                v.not_awaited()
            ),
            (1, 1, 2, 1, 1)
        );
        // Each master once: 1 granted + 1 denied + 2 failed (1 of them timed out) + 1 not
        // awaited = 5.
        assert_eq!(
            v.counts().to_string(),
            "1 granted, 1 denied, 2 failed (1 timed out), 1 not awaited of 5 masters; quorum 3"
        );
    }
}
