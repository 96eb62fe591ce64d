//! A held lock: what the holder needs to use, extend and release it.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, LostReason, Result};
use crate::vote::Vote;

/// A lock won on a quorum of masters. Release it with [`crate::Redlock::release`]; dropping it
/// only forgets it (the keys expire at their TTL).
#[derive(Clone)]
pub struct Lock {
    pub(crate) resource: Arc<str>,
    pub(crate) token: Arc<str>,
    pub(crate) ttl: Duration,
    pub(crate) validity: Duration,
    pub(crate) computed_at: Instant,
    pub(crate) extensions: u32,
    pub(crate) vote: Vote,
    pub(crate) fencing_token: Option<u64>,
    /// Its place in `redlock.locks.held` (shared by its copies; `None` without metrics).
    pub(crate) held: Option<Arc<Held>>,
}

impl Lock {
    /// The locked resource (the Redis key).
    pub fn resource(&self) -> &str {
        &self.resource
    }
    /// The random token that proves ownership (40 hex characters).
    pub fn token(&self) -> &str {
        &self.token
    }
    /// The TTL the keys were last set or renewed with.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }
    /// Validity when last acquired or extended: `ttl − elapsed − drift`.
    pub fn validity(&self) -> Duration {
        self.validity
    }
    /// The monotonic instant at which [`validity`](Self::validity) was computed.
    pub fn computed_at(&self) -> Instant {
        self.computed_at
    }
    /// The monotonic instant until which this holder may act as the owner.
    pub fn valid_until(&self) -> Instant {
        self.computed_at + self.validity
    }
    /// Validity left now (zero once expired).
    pub fn remaining(&self) -> Duration {
        self.valid_until().saturating_duration_since(Instant::now())
    }
    /// True while inside the validity window.
    pub fn is_valid(&self) -> bool {
        !self.remaining().is_zero()
    }
    /// Successful extensions so far.
    pub fn extensions(&self) -> u32 {
        self.extensions
    }
    /// The fencing token (a client built with [`fencing(true)`](crate::RedlockBuilder::fencing)):
    /// above the token of every lock of this resource returned before this lock's acquire
    /// began, and never the token of another lock of it, as long as the masters keep their
    /// counters. Pass it with every write to the protected resource, which refuses a token
    /// below the highest it has seen. `None` from a client without fencing. Extending keeps
    /// it.
    pub fn fencing_token(&self) -> Option<u64> {
        self.fencing_token
    }
    /// The vote of the last acquire attempt or extension.
    pub fn vote(&self) -> &Vote {
        &self.vote
    }

    /// The rule of a scope that acts as the owner until its end (Python's `with` block, the
    /// C++ `Guard`): checked just before the release that ends the scope, `LockLost` (reason
    /// [`LostReason::ExpiredBeforeRelease`]) when the validity had run out, since the holder may have acted
    /// while someone else could hold the lock. Combine it with the release's outcome through
    /// [`Lock::end_of_scope`]; [`crate::Redlock::release_scoped`] does both.
    pub fn check_still_valid(&self) -> Result<()> {
        if self.is_valid() {
            return Ok(());
        }
        Err(Error::LockLost {
            resource: self.resource.to_string(),
            reason: LostReason::ExpiredBeforeRelease,
            vote: None,
        })
    }

    /// What ending a scope reports, given the check made before its release and the release's
    /// outcome: a release failure other than a lost lock first (e.g. `Unavailable`), then a
    /// lost lock (e.g. reported by a background renewal), then the expiry (carrying the
    /// release's vote: how many masters released), else the release's vote.
    pub fn end_of_scope(checked: Result<()>, released: Result<Vote>) -> Result<Vote> {
        match (checked, released) {
            (_, Err(err)) => Err(err),
            (Ok(()), Ok(vote)) => Ok(vote),
            (
                Err(Error::LockLost {
                    resource,
                    reason,
                    vote: None,
                }),
                Ok(vote),
            ) => Err(Error::LockLost {
                resource,
                reason,
                vote: Some(Box::new(vote)),
            }),
            (Err(expired), Ok(_)) => Err(expired),
        }
    }
}

/// Where a lock's place in `redlock.locks.held` is given back: the client's telemetry, built
/// once per client and shared by every lock's [`Held`] (so a won lock costs one allocation).
pub(crate) trait HeldGauge: Send + Sync {
    /// The lock stopped being held.
    fn ended(&self);
}

/// A lock's place in `redlock.locks.held`, shared by its copies (`Lock` is `Clone`; the copies
/// are one lock): its gauge hears of its end exactly once, when the lock stops being
/// held by the program, whichever comes first: its release, the client finding it lost (an
/// extend that finds it gone or expired, an `AutoExtend` whose validity ran out, a scoped
/// release after its validity), or the drop of its last copy (an unreleased lock's keys then
/// expire on the masters at their TTL; no copy is left to release or extend it).
///
/// Expiry itself is noticed when the program next touches the lock or drops it, never by a
/// timer: a lock kept past its validity and never used again counts until it is dropped. A
/// timer or a sweep of every lock's deadline would cost each acquire more than an atomic swap.
pub(crate) struct Held {
    ended: AtomicBool,
    gauge: Arc<dyn HeldGauge>,
}

impl Held {
    /// A lock counted as held (by the caller) until [`Held::end`] or its drop tells `gauge`,
    /// once.
    pub(crate) fn new(gauge: Arc<dyn HeldGauge>) -> Arc<Held> {
        Arc::new(Held {
            ended: AtomicBool::new(false),
            gauge,
        })
    }

    /// The lock is no longer held (released, lost or forgotten).
    pub(crate) fn end(&self) {
        if !self.ended.swap(true, Ordering::AcqRel) {
            self.gauge.ended();
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.end();
    }
}

impl Lock {
    /// Released or found lost: no longer counted in `redlock.locks.held`.
    pub(crate) fn stopped_holding(&self) {
        if let Some(held) = &self.held {
            held.end();
        }
    }
}

impl fmt::Debug for Lock {
    // The full token is a credential of sorts: show only a prefix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lock")
            .field("resource", &self.resource)
            .field(
                "token",
                &format_args!("{}…", &self.token[..8.min(self.token.len())]),
            )
            .field("ttl", &self.ttl)
            .field("validity", &self.validity)
            .field("extensions", &self.extensions)
            .field("fencing_token", &self.fencing_token)
            .finish()
    }
}
