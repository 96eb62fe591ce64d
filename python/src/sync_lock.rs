//! `Lock`: a lock won by the blocking client.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyType;
use redlock_core::{blocking, Error, Lock as CoreLock};

use crate::args;
use crate::boundary::{detached, guarded, ProcessBound};
use crate::client::Info;
use crate::errors::to_py_err;
use crate::held::{exit_outcome, Held, ToRelease};
use crate::logging::OpLog;
use crate::vote::Vote;

/// The blocking client of one operation (or of a lock, until it is released).
pub(crate) type Client = Arc<ProcessBound<blocking::Redlock>>;

/// A lock won on a quorum of masters (blocking API).
///
/// Act as the owner only while ``is_valid()``. Release it with ``release()`` or use it as a
/// context manager (``with redlock.acquire("r") as lock:``), which releases on exit. A lock
/// garbage-collected while still held raises a ``ResourceWarning`` (its keys stay on the
/// masters until they expire).
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
        OpLog::start(py, &self.info.masters, self.held.current().resource())
    }

    /// Leaves a `with` block: releases, then raises `LockLost` if the lock had been lost or
    /// had expired before the release, unless the block raised (its exception wins).
    pub(crate) fn finish(&self, py: Python<'_>, body_raised: bool) -> PyResult<()> {
        let client = self.client.get()?;
        let log = self.log(py);
        let (expired, released) = match self.held.take_for_release()? {
            ToRelease::AlreadyReleased => return Ok(()),
            ToRelease::Plain(lock) => {
                // Expired before the release is what counts, not after it.
                let expired = !lock.is_valid();
                let released = detached(py, || client.release(&lock))?;
                (expired.then_some(lock), released)
            }
            ToRelease::Renewed(guard) => (None, detached(py, || guard.release())?),
        };
        exit_outcome(
            &self.held,
            log.as_ref(),
            expired.as_ref(),
            released,
            body_raised,
        )
        .map_err(|err| to_py_err(py, err))
    }
}

#[pymethods]
impl Lock {
    /// The locked resource (the Redis key).
    #[getter]
    fn resource(&self) -> String {
        self.held.current().resource().to_string()
    }
    /// The random token that proves ownership (40 hex characters). Keep it secret: it is
    /// what releases the lock.
    #[getter]
    fn token(&self) -> String {
        self.held.current().token().to_string()
    }
    /// Seconds the keys were last set or renewed for.
    #[getter]
    fn ttl(&self) -> f64 {
        self.held.current().ttl().as_secs_f64()
    }
    /// Seconds of validity when last acquired, extended or renewed (ttl − elapsed − drift).
    #[getter]
    fn validity(&self) -> f64 {
        self.held.current().validity().as_secs_f64()
    }
    /// Successful extensions so far.
    #[getter]
    fn extensions(&self) -> u32 {
        self.held.current().extensions()
    }
    /// The vote of the last acquire attempt, extension or renewal.
    #[getter]
    fn vote(&self) -> Vote {
        Vote::from(self.held.current().vote())
    }
    /// True when renewed in the background (``lock(..., auto_extend=True)``).
    #[getter]
    fn auto_extend(&self) -> bool {
        self.held.auto_extends()
    }
    /// Seconds of validity left now: 0.0 once expired, lost or released.
    fn remaining(&self) -> f64 {
        self.held.remaining()
    }
    /// True while this holder may act as the owner: not released, not lost, validity left.
    fn is_valid(&self) -> bool {
        self.held.is_valid()
    }

    /// Renews the lock to ``ttl`` seconds (default: its current ttl) on a quorum of masters.
    /// Raises ``LockLost`` if it is no longer held, ``Unavailable`` if too few masters
    /// answered. Not available with ``auto_extend=True`` (renewed in the background).
    #[pyo3(signature = (ttl=None))]
    fn extend(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::optional_ttl)] ttl: Option<f64>,
    ) -> PyResult<()> {
        guarded(|| {
            let client = self.client.get()?;
            let mut lock = self.held.for_extend()?;
            let ttl = match ttl {
                Some(ttl) => args::duration("ttl", ttl)?,
                None => lock.ttl(),
            };
            let log = self.log(py);
            let extended = detached(py, move || client.extend(&mut lock, ttl).map(|()| lock))?;
            match extended {
                Ok(lock) => {
                    if let Some(log) = &log {
                        log.extended(&lock);
                    }
                    self.held.store_extended(lock);
                    Ok(())
                }
                Err(err) => {
                    if let Some(log) = &log {
                        if !err.is_lock_lost() || self.held.first_loss_report() {
                            log.failed("extend", &err);
                        }
                    }
                    Err(to_py_err(py, err))
                }
            }
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
                ToRelease::AlreadyReleased => return Ok(0),
                ToRelease::Plain(lock) => detached(py, || client.release(&lock))?,
                ToRelease::Renewed(guard) => detached(py, || guard.release())?,
            };
            if let Some(log) = &log {
                log.release_result(&released);
            }
            if let (Some(log), Err(Error::LockLost { reason, .. })) = (&log, &released) {
                if self.held.first_loss_report() {
                    log.lost(&format!("background renewal: {reason}"));
                }
            }
            released
                .map(|vote| vote.granted())
                .map_err(|err| to_py_err(py, err))
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

    fn __repr__(&self) -> String {
        self.held.describe("Lock")
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.held.warn_if_dropped_while_held("Lock");
    }
}
