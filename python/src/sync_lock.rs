//! `Lock`: a lock won by the blocking client.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;
use redlock_core::{blocking, Lock as CoreLock};

use crate::args;
use crate::attach::AttachPermit;
use crate::boundary::{detached, guarded, ProcessBound};
use crate::client::Info;
use crate::errors::to_py_err;
use crate::held::{exit_outcome, Held, ToRelease};
use crate::logging::OpLog;
use crate::twins::lock_methods;
use crate::vote::Vote;

/// The blocking client of one operation (or of a lock, until it is released).
pub(crate) type Client = Arc<ProcessBound<blocking::Redlock>>;

/// A lock won on a quorum of masters (blocking API).
///
/// Act as the owner only while ``is_valid()``. Release it with ``release()`` or use it as a
/// context manager (``with redlock.acquire("r") as lock:``), which releases on exit. A lock
/// garbage-collected while still held is released at once (each master bounded by the
/// per-master timeout, the GIL released meanwhile) and raises a ``ResourceWarning``, unless
/// an exception unwinding past it dropped it (Ctrl-C as ``acquire()`` returned).
#[pyclass(frozen, module = "redlock_rs", name = "Lock")]
pub(crate) struct Lock {
    client: Client,
    info: Arc<Info>,
    held: Arc<Held<blocking::AutoExtend>>,
}

impl Lock {
    pub(crate) fn new(
        client: Client,
        info: Arc<Info>,
        lock: CoreLock,
        renewal: Option<blocking::AutoExtend>,
    ) -> Self {
        Lock {
            client,
            info,
            held: Arc::new(Held::new(lock, renewal)),
        }
    }

    pub(crate) fn held(&self) -> &Arc<Held<blocking::AutoExtend>> {
        &self.held
    }

    fn log(&self, py: Python<'_>) -> Option<OpLog> {
        OpLog::start(py, &self.info.log, self.held.current().resource())
    }

    /// Leaves a `with` block: releases, then raises `LockLost` if the lock had been lost or
    /// had expired before the release, unless the block raised (its exception wins).
    pub(crate) fn finish(&self, py: Python<'_>, body_raised: bool) -> PyResult<()> {
        let client = self.client.get()?;
        let log = self.log(py);
        let released = match self.held.take_for_release()? {
            ToRelease::AlreadyReleased => return self.raise_meanwhile(py, Ok(())),
            // The core's scope rule: LockLost if the validity ran out before this release.
            ToRelease::Plain(lock) => detached(py, || client.release_scoped(&lock))?,
            ToRelease::Renewed(guard) => detached(py, || guard.release())?,
        };
        let outcome = exit_outcome(&self.held, log.as_ref(), released, body_raised);
        self.raise_meanwhile(py, outcome)
    }

    /// What the `ResourceWarning` of a lock dropped while held says happened to it.
    const DROPPED: &'static str = "it was released at once";

    /// Releases a lock nobody can release any more (its last reference is gone), before the
    /// code that dropped it goes on: with the GIL released, each master bounded by the
    /// per-master timeout, without running Python code (an exception may be set), never
    /// letting a panic out. On a runtime thread (where blocking is refused) it is released in
    /// the background instead; once the interpreter is exiting, with the GIL kept.
    fn abandon(&self) {
        let Ok(client) = self.client.get() else {
            return; // a forked child's copy
        };
        let Ok(to_release) = self.held.take_for_release() else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            match to_release {
                ToRelease::Plain(lock) => {
                    let redlock = client.as_async().clone();
                    client.handle().spawn(async move {
                        let _ = redlock.release(&lock).await;
                    });
                }
                // Its Drop stops renewing and releases in the background.
                ToRelease::Renewed(guard) => drop(guard),
                ToRelease::AlreadyReleased => {}
            }
            return;
        }
        let mut release = Some(move || {
            let _ = catch_unwind(AssertUnwindSafe(|| match to_release {
                ToRelease::Plain(lock) => client.release(&lock).map(drop),
                ToRelease::Renewed(guard) => guard.release().map(drop),
                ToRelease::AlreadyReleased => Ok(()),
            }));
        });
        if let Some(_permit) = AttachPermit::acquire() {
            let _ = Python::try_attach(|py| py.detach(|| release.take().map(|release| release())));
        }
        // Exiting (no thread may attach any more), or not attached: release right here.
        if let Some(release) = release.take() {
            release();
        }
    }

    /// An operation's outcome, unless Python code run on its behalf raised meanwhile (a
    /// logging call, Ctrl-C landing in one): then that exception, now that the work is done.
    fn raise_meanwhile<T>(&self, py: Python<'_>, outcome: redlock_core::Result<T>) -> PyResult<T> {
        match self.held.raised_meanwhile() {
            Some(err) => Err(err),
            None => outcome.map_err(|err| to_py_err(py, err)),
        }
    }
}

lock_methods!(Lock, "Lock", {
    /// Renews the lock to ``ttl`` seconds (default: its current ttl) on a quorum of masters.
    /// Raises ``LockLost`` if it is no longer held, ``Unavailable`` if too few masters
    /// answered. Not available with ``auto_extend=True`` (renewed in the background).
    #[pyo3(signature = (ttl=None))]
    fn extend(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::optional_ttl)] ttl: Option<Duration>,
    ) -> PyResult<()> {
        guarded(|| {
            let client = self.client.get()?;
            let mut lock = self.held.for_extend()?;
            let ttl = ttl.unwrap_or(lock.ttl());
            let log = self.log(py);
            let extended = detached(py, move || client.extend(&mut lock, ttl).map(|()| lock))?;
            let outcome = self.held.after_extend(log.as_ref(), extended);
            self.raise_meanwhile(py, outcome)
        })
    }

    /// Releases the lock on every master still holding it and returns how many released.
    /// Releasing twice, or an expired lock, is not an error (0). Raises ``LockLost`` if a
    /// background renewal had lost the lock.
    fn release(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(|| {
            // An explicit release reports expiry as "0 released", not as an exception.
            let client = self.client.get()?;
            let log = self.log(py);
            let released = match self.held.take_for_release()? {
                ToRelease::AlreadyReleased => return self.raise_meanwhile(py, Ok(0)),
                ToRelease::Plain(lock) => detached(py, || client.release(&lock))?,
                ToRelease::Renewed(guard) => detached(py, || guard.release())?,
            };
            let outcome = self.held.after_release(log.as_ref(), released);
            self.raise_meanwhile(py, outcome)
        })
    }

    /// The lock itself (``with redlock.acquire("r") as lock:``).
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Releases; raises ``LockLost`` if the lock was lost or expired inside the block (unless
    /// the block raised: its exception propagates).
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        guarded(|| self.finish(py, exc_type.is_some()).map(|_| false))
    }
});
