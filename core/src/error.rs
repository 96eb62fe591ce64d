//! The one error type of the core. Bindings map [`ErrorKind`] once to their own surface.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use crate::argument::{shown_text, ArgValue, DurationUnit, InvalidArgument, Surface};
use crate::vote::{Verdict, Vote};

/// Result alias of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The category of an [`Error`], the same on every surface (Rust, C, Python).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The vote was lost to contention: someone else holds the resource.
    NotAcquired,
    /// Fewer than a quorum of masters answered: Redis is down or unreachable.
    Unavailable,
    /// The lock could not be extended (expired, taken over, or its extension bound reached).
    LockLost,
    /// A bad argument or configuration value.
    InvalidArgument,
    /// A bug or an environment failure (e.g. the OS random source).
    Internal,
}

/// Why a lock is reported lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LostReason {
    /// Fewer than a quorum of masters still hold our token (expired, deleted or taken over).
    NotHeld,
    /// The quorum was renewed but the new validity was already used up by the round trip.
    Expired,
    /// The configured maximum number of extensions was reached.
    ExtensionLimit,
    /// A scope that acted as the owner (a `with` block, a C++ `Guard`) ended after the
    /// validity had run out: see [`crate::Lock::check_still_valid`].
    ExpiredBeforeRelease,
}

impl fmt::Display for LostReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LostReason::NotHeld => "fewer than a quorum of masters still hold its token",
            LostReason::Expired => "its validity ran out before a quorum renewed it",
            LostReason::ExtensionLimit => "the maximum number of extensions was reached",
            LostReason::ExpiredBeforeRelease => "its validity ran out before it was released",
        })
    }
}

/// Errors of every operation.
///
/// Its `Display` writes durations humanised (`40.12ms`); a surface shows the same message in
/// its own unit with [`Error::display_in`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Lost the vote: another holder has the resource (or had it on enough masters), or a
    /// quorum was won too slowly to leave any validity.
    NotAcquired {
        /// The resource asked for.
        resource: String,
        /// Attempts made.
        attempts: u32,
        /// The whole call's time, every attempt and retry delay included.
        elapsed: Duration,
        /// The last attempt's vote.
        vote: Box<Vote>,
    },
    /// Failures alone made the quorum unreachable: Redis is down, unreachable or refusing us.
    /// The message names each failed master's cause.
    Unavailable {
        /// The resource asked for.
        resource: String,
        /// Attempts made (1 for an extend).
        attempts: u32,
        /// The whole call's time, every attempt and retry delay included.
        elapsed: Duration,
        /// The last vote.
        vote: Box<Vote>,
    },
    /// Extend failed or the lock expired.
    LockLost {
        /// The lock's resource.
        resource: String,
        /// Why.
        reason: LostReason,
        /// The vote of the failed extend, if one was made.
        vote: Option<Box<Vote>>,
    },
    /// A release that some masters refused to run (the command renamed, or denied by an ACL,
    /// on both the native and the script path): the lock's key stays on those masters until
    /// it expires. Kind [`ErrorKind::Unavailable`]: those masters refuse us.
    ReleaseRefused {
        /// The lock's resource.
        resource: String,
        /// Each refusing master: `master #2 (redis://127.0.0.1:7002): NOPERM ...; release
        /// needs +delifeq or +evalsha on this master`.
        refusals: Vec<String>,
        /// The release's vote: `granted()` masters did release.
        vote: Box<Vote>,
    },
    /// Bad argument or configuration: the parameter, its value (never a password) and why.
    InvalidArgument(InvalidArgument),
    /// A bug or an environment failure.
    Internal(String),
}

impl std::error::Error for Error {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f, None)
    }
}

/// An [`Error`] with its durations in one unit (see [`Error::display_in`]).
struct InUnit<'a>(&'a Error, DurationUnit);

impl fmt::Display for InUnit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.render(f, Some(self.1))
    }
}

/// `"1 attempt"`, `"3 attempts"`.
fn attempts_text(attempts: u32) -> String {
    match attempts {
        1 => "1 attempt".to_string(),
        n => format!("{n} attempts"),
    }
}

/// Why a lost vote was lost, from the last attempt's verdict (`docs/src/design.md#metrics`).
fn why_not_acquired(vote: &Vote) -> String {
    match vote.verdict() {
        Verdict::CleanLoss => "another holder has it".to_string(),
        Verdict::SplitVote => format!(
            "another holder has it on {} of {} masters (a split vote between contenders)",
            vote.denied(),
            vote.masters().len()
        ),
        Verdict::Expired => {
            "a quorum granted it, but the vote took longer than the lock's validity".to_string()
        }
        _ => "the quorum was not reached".to_string(),
    }
}

/// `"; 1 of 5 masters could not be reached (...)"`, or nothing when no master failed.
fn failures_suffix(vote: &Vote) -> String {
    let summary = vote.failure_summary();
    if summary.is_empty() {
        summary
    } else {
        format!("; {summary}")
    }
}

impl Error {
    /// The message with its durations in `unit`: how a surface shows it (milliseconds in C,
    /// seconds in Python). `Display` is the same with durations humanised.
    pub fn display_in(&self, unit: DurationUnit) -> impl fmt::Display + '_ {
        InUnit(self, unit)
    }

    /// Writes the message; `unit` None: humanised durations, and an `InvalidArgument` in the
    /// unit it carries (see [`Error::for_surface`]).
    fn render(&self, f: &mut fmt::Formatter<'_>, unit: Option<DurationUnit>) -> fmt::Result {
        let show = |d: Duration| unit.unwrap_or_default().show(d);
        match self {
            Error::NotAcquired {
                resource,
                attempts,
                elapsed,
                vote,
            } => write!(
                f,
                "lock on {} not acquired after {} in {}: {}; last attempt: {}{}",
                shown_text(resource),
                attempts_text(*attempts),
                show(*elapsed),
                why_not_acquired(vote),
                vote.counts(),
                failures_suffix(vote)
            ),
            Error::Unavailable {
                resource,
                attempts,
                elapsed,
                vote,
            } => write!(
                f,
                "lock on {} unavailable after {} in {}: {}; last attempt: {}",
                shown_text(resource),
                attempts_text(*attempts),
                show(*elapsed),
                vote.failure_summary(),
                vote.counts()
            ),
            Error::LockLost {
                resource,
                reason,
                vote,
            } => write!(
                f,
                "lock on {} lost: {reason}{}",
                shown_text(resource),
                vote.as_deref().map(failures_suffix).unwrap_or_default()
            ),
            Error::ReleaseRefused {
                resource,
                refusals,
                vote,
            } => write!(
                f,
                "release of lock on {} refused by {} of {} masters (the key stays there until \
                 it expires; released on {}): {}",
                shown_text(resource),
                refusals.len(),
                vote.masters().len(),
                vote.granted(),
                refusals.join("; ")
            ),
            Error::InvalidArgument(invalid) => match unit {
                Some(unit) => write!(f, "invalid argument: {}", invalid.clone().in_unit(unit)),
                None => write!(f, "invalid argument: {invalid}"),
            },
            Error::Internal(what) => write!(f, "internal error: {what}"),
        }
    }

    /// The category, for mapping to other surfaces.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotAcquired { .. } => ErrorKind::NotAcquired,
            Error::Unavailable { .. } | Error::ReleaseRefused { .. } => ErrorKind::Unavailable,
            Error::LockLost { .. } => ErrorKind::LockLost,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }
    /// Someone else holds the resource.
    pub fn is_not_acquired(&self) -> bool {
        self.kind() == ErrorKind::NotAcquired
    }
    /// Fewer than a quorum of masters answered.
    pub fn is_unavailable(&self) -> bool {
        self.kind() == ErrorKind::Unavailable
    }
    /// The lock was lost.
    pub fn is_lock_lost(&self) -> bool {
        self.kind() == ErrorKind::LockLost
    }
    /// A bad argument or configuration value.
    pub fn is_invalid_argument(&self) -> bool {
        self.kind() == ErrorKind::InvalidArgument
    }
    /// The vote behind the error, when there was one.
    pub fn vote(&self) -> Option<&Vote> {
        match self {
            Error::NotAcquired { vote, .. }
            | Error::Unavailable { vote, .. }
            | Error::ReleaseRefused { vote, .. } => Some(vote),
            Error::LockLost { vote, .. } => vote.as_deref(),
            _ => None,
        }
    }

    /// The error in a surface's words: an `InvalidArgument` gets the surface's parameter name
    /// and duration unit; every other error is returned as is.
    pub fn for_surface(self, surface: &Surface) -> Self {
        match self {
            Error::InvalidArgument(invalid) => Error::InvalidArgument(invalid.in_words_of(surface)),
            other => other,
        }
    }

    /// An `InvalidArgument` error (see [`InvalidArgument::new`]).
    pub fn invalid_argument(
        parameter: impl Into<Cow<'static, str>>,
        value: ArgValue,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidArgument(InvalidArgument::new(parameter, value, reason))
    }

    /// The bad argument behind an `InvalidArgument` error.
    pub fn invalid(&self) -> Option<&InvalidArgument> {
        match self {
            Error::InvalidArgument(invalid) => Some(invalid),
            _ => None,
        }
    }
}
