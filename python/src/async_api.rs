//! The asyncio API: `AsyncRedlock`, `AsyncLock`, `AsyncLockContext`, over the async core
//! running on this module's tokio runtime (see `runtime.rs`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;
use redlock_core::{Error, Lock as CoreLock, LostReason, Redlock as CoreRedlock};
use tokio::runtime::Handle;

use crate::args::{self, ClientArgs, Zero};
use crate::boundary::{guarded, ProcessBound};
use crate::errors::{to_py_err, to_py_err_attached, RedlockError};
use crate::held::{AsyncRenewal, Held, ToRelease};
use crate::runtime::{self, awaitable};
use crate::vote::Vote;

/// The async core client and the runtime it was built in.
#[derive(Clone)]
struct AsyncClient {
    redlock: CoreRedlock,
    handle: Handle,
}

type Shared = Arc<ProcessBound<AsyncClient>>;
type AsyncHeld = Arc<Held<AsyncRenewal>>;

/// A Redlock client over N independent Redis masters (asyncio API: every operation is
/// awaitable). Safe to share between tasks and event loops.
#[pyclass(frozen, module = "redlock_rs", name = "AsyncRedlock")]
pub(crate) struct AsyncRedlock {
    client: Shared,
}

#[pymethods]
impl AsyncRedlock {
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
            let handle = runtime::handle()?;
            let redlock = {
                let _entered = handle.enter();
                builder.build().map_err(|e| to_py_err(py, e))?
            };
            Ok(AsyncRedlock {
                client: Arc::new(ProcessBound::new(AsyncClient { redlock, handle })),
            })
        })
    }

    /// Acquires `resource` for `ttl` seconds: up to `1 + retry_count` attempts, or, with a
    /// `timeout`, attempts until `timeout` seconds have passed. Cancelling the awaiting task
    /// undoes the in-flight attempt.
    #[pyo3(signature = (resource, ttl=10.0, *, timeout=None))]
    fn acquire<'py>(
        &self,
        py: Python<'py>,
        resource: String,
        ttl: f64,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let ttl = args::seconds("ttl", ttl, Zero::Refused)?;
            let timeout = args::timeout(timeout)?;
            let acquiring = self.acquiring(resource, ttl, timeout, false, false)?;
            awaitable(py, async move {
                let (shared, held) = acquiring.run().await?;
                Ok(AsyncLock {
                    client: shared,
                    held,
                })
            })
        })
    }

    /// One attempt, no retry.
    #[pyo3(signature = (resource, ttl=10.0))]
    fn try_acquire<'py>(
        &self,
        py: Python<'py>,
        resource: String,
        ttl: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let ttl = args::seconds("ttl", ttl, Zero::Refused)?;
            let acquiring = self.acquiring(resource, ttl, None, true, false)?;
            awaitable(py, async move {
                let (shared, held) = acquiring.run().await?;
                Ok(AsyncLock {
                    client: shared,
                    held,
                })
            })
        })
    }

    /// An async context manager that acquires on entry and releases on exit; with
    /// `auto_extend=True` the lock is renewed in the background while the block runs.
    #[pyo3(signature = (resource, ttl=10.0, *, timeout=None, auto_extend=false))]
    fn lock(
        &self,
        resource: String,
        ttl: f64,
        timeout: Option<f64>,
        auto_extend: bool,
    ) -> PyResult<AsyncLockContext> {
        guarded(|| {
            Ok(AsyncLockContext {
                client: self.client.clone(),
                resource,
                ttl: args::seconds("ttl", ttl, Zero::Refused)?,
                timeout: args::timeout(timeout)?,
                auto_extend,
                slot: Arc::new(Mutex::new(Slot::Idle)),
            })
        })
    }

    /// Master URLs in configured order, passwords redacted.
    #[getter]
    fn masters(&self) -> PyResult<Vec<String>> {
        Ok(self.client.get()?.redlock.masters())
    }
    /// "concurrent" or "sequential".
    #[getter]
    fn fanout(&self) -> PyResult<&'static str> {
        Ok(self.client.get()?.redlock.settings().fanout.as_str())
    }
    /// Votes needed to win.
    #[getter]
    fn quorum(&self) -> PyResult<usize> {
        Ok(self.client.get()?.redlock.settings().quorum)
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            "AsyncRedlock({})",
            args::describe(&self.client.get()?.redlock)
        ))
    }
}

impl AsyncRedlock {
    fn acquiring(
        &self,
        resource: String,
        ttl: Duration,
        timeout: Option<Duration>,
        once: bool,
        auto_extend: bool,
    ) -> PyResult<Acquiring> {
        Ok(Acquiring {
            client: self.client.get()?.clone(),
            shared: self.client.clone(),
            resource,
            ttl,
            retry: if once {
                redlock_core::Retry::Once
            } else {
                args::retry_until(timeout)
            },
            auto_extend,
        })
    }
}

/// One acquire, ready to run on the runtime.
struct Acquiring {
    client: AsyncClient,
    shared: Shared,
    resource: String,
    ttl: Duration,
    retry: redlock_core::Retry,
    auto_extend: bool,
}

impl Acquiring {
    async fn run(self) -> PyResult<(Shared, AsyncHeld)> {
        let lock: CoreLock = self
            .client
            .redlock
            .acquire_observed(&self.resource, self.ttl, self.retry, &mut |_| {})
            .await
            .map_err(to_py_err_attached)?;
        let renewal = self.auto_extend.then(|| {
            AsyncRenewal::start(
                &self.client.redlock,
                lock.clone(),
                self.client.handle.clone(),
            )
        });
        Ok((self.shared, Arc::new(Held::new(lock, renewal))))
    }
}

/// Leaves an `async with` block (see `finish` in the sync API: same rules).
async fn finish(
    client: AsyncClient,
    to_release: ToRelease<AsyncRenewal>,
    body_raised: bool,
) -> PyResult<bool> {
    let outcome = match to_release {
        ToRelease::AlreadyReleased => Ok(()),
        ToRelease::Plain(lock) => {
            let expired = !lock.is_valid();
            match client.redlock.release(&lock).await {
                Ok(_) if expired && !body_raised => Err(Error::LockLost {
                    resource: lock.resource().to_string(),
                    reason: LostReason::Expired,
                    vote: None,
                }),
                other => other.map(drop),
            }
        }
        ToRelease::Renewed(renewal) => match renewal.into_guard() {
            Some(guard) => match guard.release().await {
                Err(err) if body_raised && err.is_lock_lost() => Ok(()),
                other => other.map(drop),
            },
            None => Ok(()),
        },
    };
    outcome.map(|()| false).map_err(to_py_err_attached)
}

/// A lock won on a quorum of masters (asyncio API). Use `async with`, or await `release()`.
#[pyclass(frozen, module = "redlock_rs", name = "AsyncLock")]
pub(crate) struct AsyncLock {
    client: Shared,
    held: AsyncHeld,
}

#[pymethods]
impl AsyncLock {
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
    #[pyo3(signature = (ttl=None))]
    fn extend<'py>(&self, py: Python<'py>, ttl: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let client = self.client.get()?.clone();
            let mut lock = self.held.for_extend()?;
            let ttl = match ttl {
                Some(ttl) => args::seconds("ttl", ttl, Zero::Refused)?,
                None => lock.ttl(),
            };
            let held = self.held.clone();
            awaitable(py, async move {
                client
                    .redlock
                    .extend(&mut lock, ttl)
                    .await
                    .map_err(to_py_err_attached)?;
                held.store_extended(lock);
                Ok(())
            })
        })
    }

    /// Releases the lock on every master still holding it; resolves to how many released.
    fn release<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let client = self.client.get()?.clone();
            let to_release = self.held.take_for_release()?;
            awaitable(py, async move {
                let vote = match to_release {
                    ToRelease::AlreadyReleased => return Ok(0),
                    ToRelease::Plain(lock) => client.redlock.release(&lock).await,
                    ToRelease::Renewed(renewal) => match renewal.into_guard() {
                        Some(guard) => guard.release().await,
                        None => return Ok(0),
                    },
                };
                vote.map(|vote| vote.granted()).map_err(to_py_err_attached)
            })
        })
    }

    fn __aenter__<'py>(slf: Py<Self>, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| awaitable(py, async move { Ok(slf) }))
    }

    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        exc_type: Option<&Bound<'py, PyType>>,
        _exc: Option<&Bound<'py, PyAny>>,
        _traceback: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let client = self.client.get()?.clone();
            let to_release = self.held.take_for_release()?;
            awaitable(py, finish(client, to_release, exc_type.is_some()))
        })
    }

    fn __repr__(&self) -> String {
        self.held.describe("AsyncLock")
    }
}

enum Slot {
    Idle,
    Acquiring,
    Entered(AsyncHeld),
}

/// Returned by `AsyncRedlock.lock()`: acquires on `__aenter__` (resolving to the
/// `AsyncLock`), releases on `__aexit__`.
#[pyclass(frozen, module = "redlock_rs", name = "AsyncLockContext")]
pub(crate) struct AsyncLockContext {
    client: Shared,
    resource: String,
    ttl: Duration,
    timeout: Option<Duration>,
    auto_extend: bool,
    slot: Arc<Mutex<Slot>>,
}

fn lock_slot(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Puts the context back to idle if entering did not complete (failed or cancelled).
struct EnterGuard {
    slot: Arc<Mutex<Slot>>,
    done: bool,
}

impl EnterGuard {
    fn entered(mut self, held: AsyncHeld) {
        *lock_slot(&self.slot) = Slot::Entered(held);
        self.done = true;
    }
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        if !self.done {
            *lock_slot(&self.slot) = Slot::Idle;
        }
    }
}

#[pymethods]
impl AsyncLockContext {
    fn __aenter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            {
                let mut slot = lock_slot(&self.slot);
                if !matches!(*slot, Slot::Idle) {
                    return Err(RedlockError::new_err(
                        "this lock context is already entered; call AsyncRedlock.lock() again for another lock",
                    ));
                }
                *slot = Slot::Acquiring;
            }
            let guard = EnterGuard {
                slot: self.slot.clone(),
                done: false,
            };
            let acquiring = Acquiring {
                client: self.client.get()?.clone(),
                shared: self.client.clone(),
                resource: self.resource.clone(),
                ttl: self.ttl,
                retry: args::retry_until(self.timeout),
                auto_extend: self.auto_extend,
            };
            awaitable(py, async move {
                let (shared, held) = acquiring.run().await?;
                guard.entered(held.clone());
                Ok(AsyncLock {
                    client: shared,
                    held,
                })
            })
        })
    }

    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        exc_type: Option<&Bound<'py, PyType>>,
        _exc: Option<&Bound<'py, PyAny>>,
        _traceback: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guarded(|| {
            let entered = std::mem::replace(&mut *lock_slot(&self.slot), Slot::Idle);
            let client = self.client.get()?.clone();
            let to_release = match entered {
                Slot::Entered(held) => held.take_for_release()?,
                _ => ToRelease::AlreadyReleased,
            };
            awaitable(py, finish(client, to_release, exc_type.is_some()))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "AsyncLockContext(resource={:?}, ttl={}, auto_extend={})",
            self.resource,
            self.ttl.as_secs_f64(),
            if self.auto_extend { "True" } else { "False" }
        )
    }
}
