//! A held lock: what the holder needs to use, extend and release it.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// The vote of the last acquire attempt or extension.
    pub fn vote(&self) -> &Vote {
        &self.vote
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
            .finish()
    }
}
