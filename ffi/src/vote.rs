//! `redlock_vote`: what each master answered, in memory the caller owns.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr};
use std::time::Duration;

use redlock_core::{Error, FailureKind, Outcome, Verdict, Vote};

use crate::boundary;
use crate::lock::redlock_lock;
use crate::status::redlock_status;

/// The most masters a C client may have; a `redlock_vote` has room for all of them.
pub const REDLOCK_MAX_MASTERS: usize = 32;

/// What one master answered.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum redlock_outcome {
    /// Acquire: the key was set. Extend: the TTL was renewed. Release: the key was deleted.
    REDLOCK_OUTCOME_GRANTED = 0,
    /// The key is held by another token (extend/release: it is not ours any more).
    REDLOCK_OUTCOME_DENIED = 1,
    /// An error; `failure` says which kind.
    REDLOCK_OUTCOME_FAILED = 2,
    /// No answer within the per-master timeout.
    REDLOCK_OUTCOME_TIMED_OUT = 3,
    /// Concurrent fan-out decided the operation before this master answered.
    REDLOCK_OUTCOME_NOT_AWAITED = 4,
}

/// Why a master's answer counted as failed.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum redlock_failure {
    /// The outcome is not `REDLOCK_OUTCOME_FAILED`.
    REDLOCK_FAILURE_NONE = 0,
    /// Could not connect, or the connection dropped.
    REDLOCK_FAILURE_CONNECTION = 1,
    /// The server answered with an error (`OOM`, `READONLY`, `NOAUTH`, ...).
    REDLOCK_FAILURE_SERVER = 2,
    /// The reply did not have the expected shape.
    REDLOCK_FAILURE_PROTOCOL = 3,
    /// Anything else.
    REDLOCK_FAILURE_OTHER = 4,
    /// The master refused authentication (`WRONGPASS`, `NOAUTH`, ...).
    REDLOCK_FAILURE_AUTH = 5,
    /// The TLS handshake failed (e.g. a certificate the client does not trust).
    REDLOCK_FAILURE_TLS = 6,
    /// Too many requests were already queued in this client for that master.
    REDLOCK_FAILURE_OVERLOADED = 7,
}

/// Bytes of `redlock_master_vote.error`, including its terminating NUL.
pub const REDLOCK_MASTER_ERROR_LEN: usize = 128;

/// How an acquire attempt ended (the suite's metric definitions).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum redlock_verdict {
    /// granted >= quorum and validity > 0.
    REDLOCK_VERDICT_WON = 0,
    /// granted >= quorum but the validity ran out before the vote was complete.
    REDLOCK_VERDICT_EXPIRED = 1,
    /// 0 < granted < quorum with at least one denial: the masters were split between
    /// contenders.
    REDLOCK_VERDICT_SPLIT_VOTE = 2,
    /// granted == 0 with at least one denial: another holder has the lock.
    REDLOCK_VERDICT_CLEAN_LOSS = 3,
    /// Quorum not reached and no master denied: failures and timeouts alone kept it out of
    /// reach. An outage, never contention.
    REDLOCK_VERDICT_UNAVAILABLE = 4,
}

/// One master's part of a vote.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct redlock_master_vote {
    /// What it answered.
    pub outcome: redlock_outcome,
    /// The kind of failure when `outcome` is `REDLOCK_OUTCOME_FAILED`, else `REDLOCK_FAILURE_NONE`.
    pub failure: redlock_failure,
    /// Round trip of its request in microseconds; -1 when it timed out or was not awaited.
    pub round_trip_us: i64,
    /// Why it failed or timed out, NUL-terminated, in the words of whoever said so (the
    /// server's error reply, the TLS or socket error), cut to fit; empty when it answered.
    /// Never holds a password.
    pub error: [c_char; REDLOCK_MASTER_ERROR_LEN],
}

/// The vote of one operation (an acquire attempt, an extend or a release) across all masters.
///
/// A plain struct the caller owns (it holds no pointers: declare it on the stack, copy it,
/// keep it as long as you like). Fill it with `redlock_lock_vote()` or `redlock_last_vote()`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct redlock_vote {
    /// Masters of the client; `masters[0 .. n_masters]` are filled, in configured order.
    pub n_masters: usize,
    /// Votes needed to win.
    pub quorum: usize,
    /// Masters that granted (release: that deleted the key).
    pub granted: usize,
    /// Masters that answered no.
    pub denied: usize,
    /// Masters that failed, by an error or a timeout. Each master counts once:
    /// `granted + denied + failed + not_awaited == n_masters`.
    pub failed: usize,
    /// How many of the `failed` masters timed out (a part of `failed`, not counted apart).
    pub timed_out: usize,
    /// Masters whose answer concurrent fan-out did not wait for.
    pub not_awaited: usize,
    /// How the operation ended, in acquire terms (for a release, `WON` means a quorum released).
    pub verdict: redlock_verdict,
    /// Wall time of the operation on the monotonic clock, in microseconds.
    pub elapsed_us: u64,
    /// Validity left when the vote completed, in microseconds (an acquire or extend that won);
    /// -1 otherwise.
    pub validity_us: i64,
    /// Per-master answers; entries at `n_masters` and beyond are unspecified.
    pub masters: [redlock_master_vote; REDLOCK_MAX_MASTERS],
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// `text` as a NUL-terminated C string cut to `REDLOCK_MASTER_ERROR_LEN - 1` bytes (on a
/// character boundary).
fn error_field(text: Option<&str>) -> [c_char; REDLOCK_MASTER_ERROR_LEN] {
    let mut field = [0 as c_char; REDLOCK_MASTER_ERROR_LEN];
    let text = text.unwrap_or_default();
    let mut end = text.len().min(REDLOCK_MASTER_ERROR_LEN - 1);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    for (slot, byte) in field.iter_mut().zip(text[..end].bytes()) {
        // A NUL inside the text would cut it short in C; show it as '?'.
        *slot = if byte == 0 { b'?' } else { byte } as c_char;
    }
    field
}

fn master_vote(
    outcome: Outcome,
    round_trip: Option<Duration>,
    error: Option<&str>,
) -> redlock_master_vote {
    use redlock_failure::*;
    use redlock_outcome::*;
    let (outcome, failure) = match outcome {
        Outcome::Granted => (REDLOCK_OUTCOME_GRANTED, REDLOCK_FAILURE_NONE),
        Outcome::Denied => (REDLOCK_OUTCOME_DENIED, REDLOCK_FAILURE_NONE),
        Outcome::TimedOut => (REDLOCK_OUTCOME_TIMED_OUT, REDLOCK_FAILURE_NONE),
        Outcome::NotAwaited => (REDLOCK_OUTCOME_NOT_AWAITED, REDLOCK_FAILURE_NONE),
        Outcome::Failed(kind) => (
            REDLOCK_OUTCOME_FAILED,
            match kind {
                FailureKind::Connection => REDLOCK_FAILURE_CONNECTION,
                FailureKind::Server => REDLOCK_FAILURE_SERVER,
                FailureKind::Protocol => REDLOCK_FAILURE_PROTOCOL,
                FailureKind::Auth => REDLOCK_FAILURE_AUTH,
                FailureKind::Tls => REDLOCK_FAILURE_TLS,
                FailureKind::Overloaded => REDLOCK_FAILURE_OVERLOADED,
                _ => REDLOCK_FAILURE_OTHER,
            },
        ),
        // `Outcome` is non-exhaustive: an outcome added later counts as a failure.
        _ => (REDLOCK_OUTCOME_FAILED, REDLOCK_FAILURE_OTHER),
    };
    redlock_master_vote {
        outcome,
        failure,
        round_trip_us: round_trip.map_or(-1, micros),
        error: error_field(error),
    }
}

impl From<&Vote> for redlock_vote {
    fn from(vote: &Vote) -> Self {
        let mut masters = [master_vote(Outcome::NotAwaited, None, None); REDLOCK_MAX_MASTERS];
        // The client refuses more than REDLOCK_MAX_MASTERS masters, so nothing is cut here.
        for (slot, m) in masters.iter_mut().zip(vote.masters()) {
            *slot = master_vote(m.outcome, m.round_trip, m.error.as_deref());
        }
        let verdict = match vote.verdict() {
            Verdict::Won => redlock_verdict::REDLOCK_VERDICT_WON,
            Verdict::Expired => redlock_verdict::REDLOCK_VERDICT_EXPIRED,
            Verdict::SplitVote => redlock_verdict::REDLOCK_VERDICT_SPLIT_VOTE,
            Verdict::CleanLoss => redlock_verdict::REDLOCK_VERDICT_CLEAN_LOSS,
            // `Verdict` is non-exhaustive: a verdict added later is no loss to contention
            // until it is mapped.
            _ => redlock_verdict::REDLOCK_VERDICT_UNAVAILABLE,
        };
        redlock_vote {
            n_masters: vote.masters().len().min(REDLOCK_MAX_MASTERS),
            quorum: vote.quorum(),
            granted: vote.granted(),
            denied: vote.denied(),
            failed: vote.failed(),
            timed_out: vote.timed_out(),
            not_awaited: vote.not_awaited(),
            verdict,
            elapsed_us: u64::try_from(vote.elapsed().as_micros()).unwrap_or(u64::MAX),
            validity_us: vote.validity().map_or(-1, micros),
            masters,
        }
    }
}

thread_local! {
    /// The vote of the last operation on this thread (None: it produced none).
    static LAST_VOTE: RefCell<Option<redlock_vote>> = const { RefCell::new(None) };
}

/// Records the vote of the operation that just ran on this thread (None: it had none).
pub(crate) fn record_last(vote: Option<&Vote>) {
    // try_with: never panics during thread teardown.
    let _ = LAST_VOTE.try_with(|last| *last.borrow_mut() = vote.map(redlock_vote::from));
}

/// Like [`boundary::call`] for the operations that produce a vote (acquire, extend, release): the
/// thread's last vote is cleared first, then set from the error when the operation fails
/// (on success the body records it).
pub(crate) fn operation(
    function: &str,
    body: impl FnOnce() -> Result<(), Error>,
) -> redlock_status {
    boundary::call(function, || {
        record_last(None);
        body().inspect_err(|error| record_last(error.vote()))
    })
}

/// Fills `*out` with the vote of the last operation (`redlock_acquire`, `redlock_try_acquire`,
/// `redlock_acquire_within`, `redlock_extend`, `redlock_release`) called on this thread,
/// whether it succeeded or not: for a failed acquire, its last attempt's vote (e.g.
/// `granted == 0` under contention, `failed >= 3` of 5 when Redis is down); for a release,
/// `granted` is the number of masters that deleted the key.
///
/// Returns `REDLOCK_NO_VOTE` (and leaves `*out` alone) when that operation asked no master
/// (e.g. it failed with `REDLOCK_INVALID_ARGUMENT`) or none ran yet on this thread. Leaves
/// `redlock_last_error_message()` alone unless `out` is NULL.
///
/// # Safety
/// `out` must be NULL or point to a writable `redlock_vote`.
#[no_mangle]
pub unsafe extern "C" fn redlock_last_vote(out: *mut redlock_vote) -> redlock_status {
    let mut found = true;
    let status = boundary::query("redlock_last_vote", || {
        boundary::non_null(out, "out")?;
        match LAST_VOTE.with_borrow(|last| *last) {
            // SAFETY: non-NULL, writable by the caller's contract.
            Some(vote) => unsafe { boundary::write_out(out, vote) },
            None => found = false,
        }
        Ok(())
    });
    if status == redlock_status::REDLOCK_OK && !found {
        return redlock_status::REDLOCK_NO_VOTE;
    }
    status
}

/// Fills `*out` with the vote that won `lock`: its acquire, or its last successful extend.
///
/// # Safety
/// `lock` must be NULL or a live lock handle; `out` NULL or a writable `redlock_vote`.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_vote(
    lock: *const redlock_lock,
    out: *mut redlock_vote,
) -> redlock_status {
    boundary::query("redlock_lock_vote", || {
        boundary::non_null(lock, "lock")?;
        boundary::non_null(out, "out")?;
        // SAFETY: non-NULL live handle and writable out, by the caller's contract.
        unsafe { boundary::write_out(out, redlock_vote::from((*lock).lock.vote())) };
        Ok(())
    })
}

/// Finds the entry of `number` in `names` (`(value, name)` pairs), or `unknown`.
fn name_of(
    number: c_int,
    names: &[(c_int, &'static CStr)],
    unknown: &'static CStr,
) -> *const c_char {
    crate::unwind::infallible(unknown.as_ptr(), || {
        names
            .iter()
            .find(|(value, _)| *value == number)
            .map_or(unknown, |(_, name)| name)
            .as_ptr()
    })
}

/// A `redlock_outcome` as C passes it: the header declares the parameter with the enum type
/// (so `-Wsign-conversion` and C++ see the right type), while Rust receives the plain int, so
/// any number C passes stays defined behaviour. (cbindgen renames it to `redlock_outcome` in
/// the header and does not emit it.)
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct redlock_outcome_value(pub c_int);

/// A `redlock_verdict` as C passes it (see `redlock_outcome_value`).
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct redlock_verdict_value(pub c_int);

/// Short stable name of a `redlock_outcome` (`"granted"`, `"denied"`, `"failed"`,
/// `"timed_out"`, `"not_awaited"`), or `"unknown"`. Static: never free it.
#[no_mangle]
pub extern "C" fn redlock_outcome_str(outcome: redlock_outcome_value) -> *const c_char {
    use redlock_outcome::*;
    let names = [
        (REDLOCK_OUTCOME_GRANTED as c_int, c"granted"),
        (REDLOCK_OUTCOME_DENIED as c_int, c"denied"),
        (REDLOCK_OUTCOME_FAILED as c_int, c"failed"),
        (REDLOCK_OUTCOME_TIMED_OUT as c_int, c"timed_out"),
        (REDLOCK_OUTCOME_NOT_AWAITED as c_int, c"not_awaited"),
    ];
    name_of(outcome.0, &names, c"unknown")
}

/// Short stable name of a `redlock_verdict` (`"won"`, `"expired"`, `"split_vote"`,
/// `"clean_loss"`, `"unavailable"`), or `"unknown"`. Static: never free it.
#[no_mangle]
pub extern "C" fn redlock_verdict_str(verdict: redlock_verdict_value) -> *const c_char {
    use redlock_verdict::*;
    let names = [
        (REDLOCK_VERDICT_WON as c_int, c"won"),
        (REDLOCK_VERDICT_EXPIRED as c_int, c"expired"),
        (REDLOCK_VERDICT_SPLIT_VOTE as c_int, c"split_vote"),
        (REDLOCK_VERDICT_CLEAN_LOSS as c_int, c"clean_loss"),
        (REDLOCK_VERDICT_UNAVAILABLE as c_int, c"unavailable"),
    ];
    name_of(verdict.0, &names, c"unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(ptr: *const c_char) -> &'static str {
        // SAFETY: the functions return static NUL-terminated strings.
        unsafe { CStr::from_ptr(ptr) }.to_str().unwrap()
    }

    #[test]
    fn names_match_the_core() {
        use redlock_core::Outcome;
        let outcomes = [
            (redlock_outcome::REDLOCK_OUTCOME_GRANTED, Outcome::Granted),
            (redlock_outcome::REDLOCK_OUTCOME_DENIED, Outcome::Denied),
            (
                redlock_outcome::REDLOCK_OUTCOME_TIMED_OUT,
                Outcome::TimedOut,
            ),
            (
                redlock_outcome::REDLOCK_OUTCOME_NOT_AWAITED,
                Outcome::NotAwaited,
            ),
        ];
        for (c, core) in outcomes {
            assert_eq!(
                text(redlock_outcome_str(redlock_outcome_value(c as c_int))),
                core.as_str()
            );
            assert_eq!(master_vote(core, None, None).outcome, c);
        }
        let failed = master_vote(
            Outcome::Failed(redlock_core::FailureKind::Auth),
            None,
            Some(&"WRONGPASS é".repeat(40)),
        );
        assert_eq!(failed.failure, redlock_failure::REDLOCK_FAILURE_AUTH);
        // SAFETY: `error_field` always NUL-terminates within the array.
        let error = unsafe { CStr::from_ptr(failed.error.as_ptr()) }
            .to_str()
            .unwrap();
        assert!(error.starts_with("WRONGPASS é") && error.len() < REDLOCK_MASTER_ERROR_LEN);
        assert_eq!(
            text(redlock_outcome_str(redlock_outcome_value(2))),
            "failed"
        );
        assert_eq!(
            text(redlock_outcome_str(redlock_outcome_value(99))),
            "unknown"
        );
        for (c, core) in [
            (redlock_verdict::REDLOCK_VERDICT_WON, Verdict::Won),
            (redlock_verdict::REDLOCK_VERDICT_EXPIRED, Verdict::Expired),
            (
                redlock_verdict::REDLOCK_VERDICT_SPLIT_VOTE,
                Verdict::SplitVote,
            ),
            (
                redlock_verdict::REDLOCK_VERDICT_CLEAN_LOSS,
                Verdict::CleanLoss,
            ),
            (
                redlock_verdict::REDLOCK_VERDICT_UNAVAILABLE,
                Verdict::Unavailable,
            ),
        ] {
            assert_eq!(
                text(redlock_verdict_str(redlock_verdict_value(c as c_int))),
                core.as_str()
            );
        }
        assert_eq!(
            text(redlock_verdict_str(redlock_verdict_value(4))),
            "unavailable"
        );
        assert_eq!(
            text(redlock_verdict_str(redlock_verdict_value(-3))),
            "unknown"
        );
    }
}
