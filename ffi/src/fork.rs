//! Detecting a client used in a process forked from the one that created it.
//!
//! A client's I/O threads do not survive `fork()`: in the child, a call would wait forever
//! for a runtime that is not there. A `pthread_atfork` child handler (registered when the
//! first client is created) bumps a generation number, so the check on every call is one
//! atomic load — no system call on the hot path.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

use redlock_core::{Error, InvalidArgument};

static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

extern "C" fn in_forked_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The process a client belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner {
    generation: u64,
    pid: u32,
}

impl Owner {
    /// The calling process (registers the fork handler on first use).
    pub(crate) fn current() -> Self {
        REGISTER.call_once(|| {
            // SAFETY: registers a handler that only does an atomic add (async-signal-safe).
            // A failure (ENOMEM) leaves fork undetected: calls in a child then hang, nothing worse.
            let _ = unsafe { libc::pthread_atfork(None, None, Some(in_forked_child)) };
        });
        Owner {
            generation: GENERATION.load(Ordering::Relaxed),
            pid: std::process::id(),
        }
    }

    /// True when called in a process forked (directly or not) after the owner was recorded.
    pub(crate) fn is_forked(&self) -> bool {
        GENERATION.load(Ordering::Relaxed) != self.generation
    }

    /// `Ok` in the owning process; in a forked child, `InvalidArgument` saying what to do.
    pub(crate) fn check(&self) -> Result<(), Error> {
        if !self.is_forked() {
            return Ok(());
        }
        Err(Error::InvalidArgument(InvalidArgument::without_value(
            "client",
            format!(
                "was created in process {} and cannot be used in process {} after fork(): \
                 its I/O threads exist only in the parent; create a new client in this process",
                self.pid,
                std::process::id()
            ),
        )))
    }
}
