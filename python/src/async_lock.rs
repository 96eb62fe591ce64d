//! `AsyncLock`: a lock won by the asyncio client.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;
use redlock_core::Redlock as CoreRedlock;
use tokio::runtime::Handle;

use crate::args;
use crate::boundary::ProcessBound;
use crate::client::Info;
use crate::coroutine::{coroutine_raising, coroutine_shielded, ready, Coroutine, Deliver, Failed};
use crate::held::{exit_outcome, AsyncRenewal, Held, ToRelease};
use crate::logging::OpLog;
use crate::pending::{Pending, Ticket};
use crate::twins::lock_methods;
use crate::vote::Vote;

type AsyncHeld = Arc<Held<AsyncRenewal>>;

/// The async core client, the runtime it was built in, and the releases it runs that nobody
/// awaits (what `await close()` waits for).
#[derive(Clone)]
pub(crate) struct AsyncClient {
    pub redlock: CoreRedlock,
    pub handle: Handle,
    pub pending: Arc<Pending>,
}

impl crate::client::CoreClient for AsyncClient {
    fn core(&self) -> &CoreRedlock {
        &self.redlock
    }
}

/// The client of one operation (or of a lock, until it is released).
pub(crate) type Shared = Arc<ProcessBound<AsyncClient>>;

/// A lock won on a quorum of masters (asyncio API).
///
/// Act as the owner only while ``is_valid()``. ``extend()`` and ``release()`` are
/// coroutines; ``async with await redlock.acquire("r") as lock:`` releases on exit. A
/// cancelled release still completes on every master. A lock garbage-collected while still
/// held is released in the background (``await client.close()`` waits for it) and raises a
/// ``ResourceWarning``.
#[pyclass(frozen, module = "redlock_rs", name = "AsyncLock")]
pub(crate) struct AsyncLock {
    client: Shared,
    info: Arc<Info>,
    held: AsyncHeld,
}

impl AsyncLock {
    pub(crate) fn new(client: Shared, info: Arc<Info>, held: AsyncHeld) -> Self {
        AsyncLock { client, info, held }
    }

    fn log(&self, py: Python<'_>) -> Option<OpLog> {
        OpLog::start(py, &self.info.log, self.held.current().resource())
    }

    /// Starts leaving a block (`__aexit__` of the lock or of its context): marks it released
    /// and returns the release for [`finish`] and the runtime to run it on.
    pub(crate) fn releasing(&self, py: Python<'_>) -> PyResult<(Handle, Releasing)> {
        let client = self.client.get()?.clone();
        let log = self.log(py);
        let releasing = Releasing {
            log,
            early: crate::logging::take_raised(),
            held: self.held.clone(),
            to_release: self.held.take_for_release()?,
            _ticket: client.pending.ticket(),
            client: client.clone(),
        };
        Ok((client.handle, releasing))
    }

    /// What the `ResourceWarning` of a lock dropped while held says happens to it.
    const DROPPED: &'static str = "it is released in the background";

    /// Releases in the background a lock nobody will see or release any more (its acquire
    /// was cancelled after it won, or it was garbage-collected while held), counted by the
    /// client until done. Never calls into Python.
    pub(crate) fn abandon(&self) {
        let Ok(client) = self.client.get() else {
            return; // a forked child's copy
        };
        let ticket = client.pending.ticket();
        match self.held.take_for_release() {
            Ok(ToRelease::Plain(lock)) => {
                let redlock = client.redlock.clone();
                client.handle.spawn(async move {
                    let _ = redlock.release(&lock).await;
                    drop(ticket);
                });
            }
            Ok(ToRelease::Renewed(renewal)) => {
                if let Some(guard) = renewal.into_guard() {
                    client.handle.spawn(async move {
                        let _ = guard.release().await;
                        drop(ticket);
                    });
                }
            }
            _ => {}
        }
    }
}

/// A release about to run when leaving a block.
pub(crate) struct Releasing {
    client: AsyncClient,
    held: AsyncHeld,
    to_release: ToRelease<AsyncRenewal>,
    log: Option<OpLog>,
    /// Raised by Python code run while it started (see `carried.rs`): raised once it is done.
    early: Option<PyErr>,
    /// Counts it until done, for `await client.close()` (it may run on after a cancel).
    _ticket: Ticket,
}

/// Leaves an `async with` block (the rules of `exit_outcome`); resolves to False (the block's
/// exception, if any, propagates).
pub(crate) async fn finish(
    releasing: Option<Releasing>,
    body_raised: bool,
) -> Result<bool, Failed> {
    let Some(releasing) = releasing else {
        return Ok(false);
    };
    let held = &releasing.held;
    let released = match releasing.to_release {
        ToRelease::AlreadyReleased => return held.outcome(releasing.early, Ok(false)),
        // The core's scope rule: LockLost if the validity ran out before this release.
        ToRelease::Plain(lock) => releasing.client.redlock.release_scoped(&lock).await,
        ToRelease::Renewed(renewal) => match renewal.into_guard() {
            Some(guard) => guard.release().await,
            None => return held.outcome(releasing.early, Ok(false)),
        },
    };
    let outcome = exit_outcome(held, releasing.log.as_ref(), released, body_raised);
    held.outcome(releasing.early, outcome.map(|()| false))
}

/// A lock an acquire just won, on its way to Python. Dropped undelivered, it releases the
/// lock in the background instead of leaving it to expire.
pub(crate) struct FreshLock(Option<AsyncLock>);

impl FreshLock {
    pub(crate) fn new(lock: AsyncLock) -> Self {
        FreshLock(Some(lock))
    }

    pub(crate) fn into_py(mut self, py: Python<'_>) -> PyResult<Py<AsyncLock>> {
        let lock = self.0.take().expect("a fresh lock is delivered once");
        Py::new(py, lock)
    }
}

impl Deliver for FreshLock {
    fn deliver(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.into_py(py).map(Py::into_any)
    }
}

impl Drop for FreshLock {
    fn drop(&mut self) {
        if let Some(lock) = self.0.take() {
            lock.abandon();
        }
    }
}

lock_methods!(AsyncLock, "AsyncLock", {
    /// Coroutine: renews the lock to ``ttl`` seconds (default: its current ttl) on a quorum
    /// of masters. Raises ``LockLost`` if it is no longer held, ``Unavailable`` if too few
    /// masters answered.
    #[pyo3(signature = (ttl=None))]
    fn extend(
        slf: &Bound<'_, Self>,
        #[pyo3(from_py_with = args::optional_ttl)] ttl: Option<Duration>,
    ) -> Coroutine {
        let this = slf.clone().unbind();
        coroutine_raising("AsyncLock.extend", move |py| {
            let this = this.get();
            let client = this.client.get()?.clone();
            let mut lock = this.held.for_extend()?;
            let ttl = ttl.unwrap_or(lock.ttl());
            let (held, log) = (this.held.clone(), this.log(py));
            let early = crate::logging::take_raised();
            Ok((client.handle.clone(), async move {
                let extended = client.redlock.extend(&mut lock, ttl).await.map(|()| lock);
                let outcome = held.after_extend(log.as_ref(), extended);
                held.outcome(early, outcome)
            }))
        })
    }

    /// Coroutine: releases the lock on every master still holding it and returns how many
    /// released. Releasing twice, or an expired lock, is not an error (0). Raises
    /// ``LockLost`` if a background renewal had lost the lock. Cancelled, it still completes
    /// on every master before ``CancelledError`` is raised.
    fn release(slf: &Bound<'_, Self>) -> Coroutine {
        let this = slf.clone().unbind();
        coroutine_shielded("AsyncLock.release", move |py| {
            let this = this.get();
            let client = this.client.get()?.clone();
            let (held, log) = (this.held.clone(), this.log(py));
            let early = crate::logging::take_raised();
            let to_release = this.held.take_for_release()?;
            let ticket = client.pending.ticket();
            Ok((client.handle.clone(), async move {
                let _counted = ticket;
                let released = match to_release {
                    ToRelease::AlreadyReleased => return held.outcome(early, Ok(0)),
                    ToRelease::Plain(lock) => client.redlock.release(&lock).await,
                    ToRelease::Renewed(renewal) => match renewal.into_guard() {
                        Some(guard) => guard.release().await,
                        None => return held.outcome(early, Ok(0)),
                    },
                };
                let outcome = held.after_release(log.as_ref(), released);
                held.outcome(early, outcome)
            }))
        })
    }

    /// ``async with lock:`` gives the lock itself.
    fn __aenter__(slf: &Bound<'_, Self>) -> Coroutine {
        let this = slf.clone().unbind();
        ready("AsyncLock.__aenter__", move |_py| Ok(this.into_any()))
    }

    /// Coroutine: releases; raises ``LockLost`` if the lock was lost or expired inside the
    /// block (unless the block raised: its exception propagates). Cancelled, it still
    /// completes the release before ``CancelledError`` is raised.
    fn __aexit__(
        slf: &Bound<'_, Self>,
        exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> Coroutine {
        let this = slf.clone().unbind();
        let body_raised = exc_type.is_some();
        coroutine_shielded("AsyncLock.__aexit__", move |py| {
            let (handle, releasing) = this.get().releasing(py)?;
            Ok((handle, finish(Some(releasing), body_raised)))
        })
    }
});
