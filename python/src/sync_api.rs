//! The blocking API: `Redlock`, `Lock`, `LockContext`, over `redlock_core::blocking`.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;
use redlock_core::{blocking, Error, Lock as CoreLock, LostReason, Retry};

use crate::args::{self, ClientArgs, Zero};
use crate::boundary::{guarded, signal_raised, without_gil, ProcessBound};
use crate::errors::{to_py_err, LockLost, RedlockError};
use crate::held::{Held, ToRelease};
use crate::vote::Vote;

type Client = Arc<ProcessBound<blocking::Redlock>>;

/// A Redlock client over N independent Redis masters (blocking API).
///
/// Safe to share between threads: calls release the GIL and share multiplexed connections.
#[pyclass(frozen, module = "redlock_rs", name = "Redlock")]
pub(crate) struct Redlock {
    client: Client,
}

#[pymethods]
impl Redlock {
    #[new]
    #[pyo3(signature = (masters, *, retry_count=3, retry_delay=0.2, drift_factor=0.01,
                        instance_timeout=0.05, fanout="concurrent", quorum=None,
                        max_extensions=1000))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        masters: Vec<String>,
        retry_count: i64,
        retry_delay: f64,
        drift_factor: f64,
        instance_timeout: f64,
        fanout: &str,
        quorum: Option<i64>,
        max_extensions: i64,
    ) -> PyResult<Self> {
        guarded(|| {
            let builder = ClientArgs {
                masters,
                retry_count,
                retry_delay,
                drift_factor,
                instance_timeout,
                fanout,
                quorum,
                max_extensions,
            }
            .builder(py)?;
            let client = builder.build_blocking().map_err(|e| to_py_err(py, e))?;
            Ok(Redlock {
                client: Arc::new(ProcessBound::new(client)),
            })
        })
    }

    /// Acquires `resource` for `ttl` seconds: up to `1 + retry_count` attempts, or, with a
    /// `timeout`, attempts until `timeout` seconds have passed. Ctrl-C interrupts it.
    #[pyo3(signature = (resource, ttl=10.0, *, timeout=None))]
    fn acquire(
        &self,
        py: Python<'_>,
        resource: String,
        ttl: f64,
        timeout: Option<f64>,
    ) -> PyResult<Lock> {
        guarded(|| {
            let ttl = args::seconds("ttl", ttl, Zero::Refused)?;
            let timeout = args::timeout(timeout)?;
            let lock = acquire_interruptible(py, &self.client, &resource, ttl, timeout, false)?;
            Ok(Lock::new(self.client.clone(), lock, None))
        })
    }

    /// One attempt, no retry.
    #[pyo3(signature = (resource, ttl=10.0))]
    fn try_acquire(&self, py: Python<'_>, resource: String, ttl: f64) -> PyResult<Lock> {
        guarded(|| {
            let ttl = args::seconds("ttl", ttl, Zero::Refused)?;
            let lock = acquire_interruptible(py, &self.client, &resource, ttl, None, true)?;
            Ok(Lock::new(self.client.clone(), lock, None))
        })
    }

    /// A context manager that acquires on entry and releases on exit; with
    /// `auto_extend=True` the lock is renewed in the background while the block runs.
    #[pyo3(signature = (resource, ttl=10.0, *, timeout=None, auto_extend=false))]
    fn lock(
        &self,
        resource: String,
        ttl: f64,
        timeout: Option<f64>,
        auto_extend: bool,
    ) -> PyResult<LockContext> {
        guarded(|| {
            Ok(LockContext {
                client: self.client.clone(),
                resource,
                ttl: args::seconds("ttl", ttl, Zero::Refused)?,
                timeout: args::timeout(timeout)?,
                auto_extend,
                entered: std::sync::Mutex::new(None),
            })
        })
    }

    /// Master URLs in configured order, passwords redacted.
    #[getter]
    fn masters(&self) -> PyResult<Vec<String>> {
        Ok(self.client.get()?.as_async().masters())
    }
    /// "concurrent" or "sequential".
    #[getter]
    fn fanout(&self) -> PyResult<&'static str> {
        Ok(self.client.get()?.as_async().settings().fanout.as_str())
    }
    /// Votes needed to win.
    #[getter]
    fn quorum(&self) -> PyResult<usize> {
        Ok(self.client.get()?.as_async().settings().quorum)
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            "Redlock({})",
            args::describe(self.client.get()?.as_async())
        ))
    }
}

/// Acquire with Ctrl-C support: the wait is cancelled when a signal handler raises, after the
/// in-flight attempt was undone on every master, and the handler's exception is raised.
fn acquire_interruptible(
    py: Python<'_>,
    client: &Client,
    resource: &str,
    ttl: Duration,
    timeout: Option<Duration>,
    once: bool,
) -> PyResult<CoreLock> {
    let client = client.get()?;
    let retry = if once {
        Retry::Once
    } else {
        args::retry_until(timeout)
    };
    let mut raised: Option<PyErr> = None;
    let outcome = without_gil(py, || {
        client.acquire_cancellable(
            resource,
            ttl,
            retry,
            &mut |_| {},
            signal_raised(&mut raised),
        )
    })?;
    match (outcome, raised) {
        (Some(lock), _) => Ok(lock),
        (None, Some(err)) => Err(err),
        (None, None) => Err(RedlockError::new_err("acquire was cancelled")),
    }
}

/// A lock won on a quorum of masters. Use it as a context manager, or call `release()`.
#[pyclass(frozen, module = "redlock_rs", name = "Lock")]
pub(crate) struct Lock {
    client: Client,
    held: Arc<Held<blocking::AutoExtend>>,
}

impl Lock {
    fn new(client: Client, lock: CoreLock, renewal: Option<blocking::AutoExtend>) -> Self {
        Lock {
            client,
            held: Arc::new(Held::new(lock, renewal)),
        }
    }

    /// Leaves a `with` block: releases, then raises `LockLost` if the lock had been lost or
    /// had expired before the release, unless the block raised (its exception wins).
    fn finish(&self, py: Python<'_>, body_raised: bool) -> PyResult<()> {
        let client = self.client.get()?;
        match self.held.take_for_release()? {
            ToRelease::AlreadyReleased => Ok(()),
            ToRelease::Plain(lock) => {
                let expired = !lock.is_valid();
                without_gil(py, || client.release(&lock))?;
                if expired && !body_raised {
                    return Err(to_py_err(
                        py,
                        Error::LockLost {
                            resource: lock.resource().to_string(),
                            reason: LostReason::Expired,
                            vote: None,
                        },
                    ));
                }
                Ok(())
            }
            ToRelease::Renewed(guard) => match without_gil(py, || guard.release()) {
                Err(err) if !body_raised || !err.is_instance_of::<LockLost>(py) => Err(err),
                _ => Ok(()),
            },
        }
    }
}

#[pymethods]
impl Lock {
    /// The locked resource (the Redis key).
    #[getter]
    fn resource(&self) -> String {
        self.held.current().resource().to_string()
    }
    /// The random token that proves ownership.
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
        self.held.current().vote().clone().into()
    }
    /// True when renewed in the background (`lock(..., auto_extend=True)`).
    #[getter]
    fn auto_extend(&self) -> bool {
        self.held.auto_extends()
    }
    /// Seconds of validity left now (0.0 once expired).
    fn remaining(&self) -> f64 {
        self.held.current().remaining().as_secs_f64()
    }
    /// True while this holder may act as the owner: not released, not lost, validity left.
    fn is_valid(&self) -> bool {
        self.held.is_valid()
    }

    /// Renews the lock to `ttl` seconds (default: its current ttl) on a quorum of masters.
    /// Raises `LockLost` if it is no longer held, `Unavailable` if too few masters answered.
    #[pyo3(signature = (ttl=None))]
    fn extend(&self, py: Python<'_>, ttl: Option<f64>) -> PyResult<()> {
        guarded(|| {
            let client = self.client.get()?;
            let mut lock = self.held.for_extend()?;
            let ttl = match ttl {
                Some(ttl) => args::seconds("ttl", ttl, Zero::Refused)?,
                None => lock.ttl(),
            };
            let lock = without_gil(py, move || client.extend(&mut lock, ttl).map(|()| lock))?;
            self.held.store_extended(lock);
            Ok(())
        })
    }

    /// Releases the lock on every master still holding it; returns how many released.
    /// Releasing twice, or an expired lock, is not an error (0). Raises `LockLost` if a
    /// background renewal had lost the lock.
    fn release(&self, py: Python<'_>) -> PyResult<usize> {
        guarded(|| self.finish_release(py))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Releases; raises `LockLost` if the lock was lost or expired inside the block (unless
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

impl Lock {
    fn finish_release(&self, py: Python<'_>) -> PyResult<usize> {
        // An explicit release reports expiry as "0 released", not as an exception.
        let client = self.client.get()?;
        let vote = match self.held.take_for_release()? {
            ToRelease::AlreadyReleased => return Ok(0),
            ToRelease::Plain(lock) => without_gil(py, || client.release(&lock))?,
            ToRelease::Renewed(guard) => without_gil(py, || guard.release())?,
        };
        Ok(vote.granted())
    }
}

/// Returned by `Redlock.lock()`: acquires on `__enter__` (returning the `Lock`), releases on
/// `__exit__`.
#[pyclass(frozen, module = "redlock_rs", name = "LockContext")]
pub(crate) struct LockContext {
    client: Client,
    resource: String,
    ttl: Duration,
    timeout: Option<Duration>,
    auto_extend: bool,
    entered: std::sync::Mutex<Option<Py<Lock>>>,
}

#[pymethods]
impl LockContext {
    fn __enter__(&self, py: Python<'_>) -> PyResult<Py<Lock>> {
        guarded(|| {
            if self.slot().is_some() {
                return Err(RedlockError::new_err(
                    "this lock context is already entered; call Redlock.lock() again for another lock",
                ));
            }
            let lock = acquire_interruptible(
                py,
                &self.client,
                &self.resource,
                self.ttl,
                self.timeout,
                false,
            )?;
            let renewal = if self.auto_extend {
                Some(self.client.get()?.auto_extend(lock.clone()))
            } else {
                None
            };
            let lock = Py::new(py, Lock::new(self.client.clone(), lock, renewal))?;
            *self.slot() = Some(lock.clone_ref(py));
            Ok(lock)
        })
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        guarded(|| {
            let Some(lock) = self.slot().take() else {
                return Ok(false);
            };
            lock.get().finish(py, exc_type.is_some()).map(|_| false)
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "LockContext(resource={:?}, ttl={}, auto_extend={})",
            self.resource,
            self.ttl.as_secs_f64(),
            if self.auto_extend { "True" } else { "False" }
        )
    }
}

impl LockContext {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Py<Lock>>> {
        self.entered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
