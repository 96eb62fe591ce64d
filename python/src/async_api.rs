//! The asyncio client `AsyncRedlock` and `AsyncLockContext`, over the async core on this
//! module's tokio runtime. Every awaitable is a [`Coroutine`]: nothing runs until awaited
//! (the lock itself is in `async_lock.rs`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;
use redlock_core::{Retry, Vote as CoreVote};

use crate::args::{self, ClientArgs};
use crate::async_lock::{finish, AsyncClient, AsyncLock, FreshLock, Shared};
use crate::boundary::guarded;
use crate::carried::{closed_while_running, stop_signal, Carried, Closing};
use crate::client::{ClientSlot, Info};
use crate::coroutine::{
    coroutine, coroutine_raising, coroutine_shielded, ready, Coroutine, Deliver, Failed,
};
use crate::errors::{to_py_err, RedlockError};
use crate::held::{watch_renewals, AsyncRenewal, Held};
use crate::logging::OpLog;
use crate::pending::Pending;
use crate::runtime;
use crate::twins::client_methods;

/// A Redlock client over N independent Redis masters (asyncio API).
///
/// masters: the master URLs, ``redis://[user:password@]host:port[/db]`` (``rediss://`` for
///     TLS): N independent Redis servers, N odd (3 or 5) in most deployments.
/// retry_count: attempts after the first one in ``acquire()`` (without ``timeout``).
/// retry_delay: seconds; the pause before a retry is drawn uniformly from
///     [retry_delay/2, retry_delay].
/// drift_factor: clock drift allowance as a fraction of the ttl (plus 2 ms), in [0, 1).
/// instance_timeout: seconds each master gets to answer one request.
/// fanout: "concurrent" or "sequential".
/// quorum: votes needed to win, in [N/2+1, N]; None for the majority N/2+1.
/// max_extensions: how many times one lock may be extended.
/// local_handoff: True (default): tasks of this client waiting for the same resource take
///     turns, and a release wakes the next one at once instead of after its retry delay.
/// fencing: True: every lock carries a fencing token (``Lock.fencing_token``), at the cost
///     of one more round trip per acquire (see the fencing page of the book).
/// trace_resource_names: True: the ``redlock_rs`` logger's records name resources (they may
///     carry user data); False (default): they show ``<resource>``.
/// meter_provider: an OpenTelemetry ``MeterProvider`` to record metrics into (meter
///     ``redlock_rs``); None: the global one, if one was set before this client was created.
///     Needs ``pip install 'redlock-rs[otel]'``; without it nothing is recorded.
///
/// Every operation is a coroutine (``await`` it, or
/// hand it to ``asyncio.create_task``, a ``TaskGroup`` or ``asyncio.wait_for``): nothing
/// reaches Redis until it runs (operations begun in one iteration of the event loop are sent
/// together when it ends), and cancelling it undoes an in-flight attempt on every master.
/// Safe to share between tasks and event loops. ``async with AsyncRedlock(...) as redlock:``
/// closes it at the end of the block.
#[pyclass(frozen, module = "redlock_rs", name = "AsyncRedlock")]
pub(crate) struct AsyncRedlock {
    slot: ClientSlot<AsyncClient>,
    /// Its releases in the background, kept past `close()` (which waits for them).
    pending: Arc<Pending>,
}

client_methods!(AsyncRedlock, "AsyncRedlock", {
    /// Coroutine: acquires ``resource`` for ``ttl`` seconds and returns the ``AsyncLock``.
    ///
    /// Makes up to ``1 + retry_count`` attempts or, with ``timeout`` (seconds), attempts until
    /// that much time has passed. Raises ``NotAcquired`` when someone else holds it,
    /// ``Unavailable`` when too few masters answered. Cancelling it undoes the in-flight
    /// attempt on every master.
    #[pyo3(signature = (resource, ttl = redlock_core::DEFAULT_TTL, *, timeout = Retry::Configured),
           text_signature = "($self, resource, ttl=10.0, *, timeout=None)")]
    fn acquire(
        slf: &Bound<'_, Self>,
        #[pyo3(from_py_with = args::resource)] resource: String,
        #[pyo3(from_py_with = args::ttl)] ttl: Duration,
        #[pyo3(from_py_with = args::timeout)] timeout: Retry,
    ) -> Coroutine {
        Self::acquire_lock(slf, "AsyncRedlock.acquire", resource, ttl, timeout)
    }

    /// Coroutine: like ``acquire()`` with exactly one attempt (no retry, no delay).
    #[pyo3(signature = (resource, ttl = redlock_core::DEFAULT_TTL),
           text_signature = "($self, resource, ttl=10.0)")]
    fn try_acquire(
        slf: &Bound<'_, Self>,
        #[pyo3(from_py_with = args::resource)] resource: String,
        #[pyo3(from_py_with = args::ttl)] ttl: Duration,
    ) -> Coroutine {
        Self::acquire_lock(slf, "AsyncRedlock.try_acquire", resource, ttl, Retry::Once)
    }

    /// An async context manager: ``async with redlock.lock("orders:42", ttl=10.0) as lock:``
    /// acquires on entry (as ``acquire()``) and releases on exit.
    ///
    /// With ``auto_extend=True`` the lock is renewed in the background while the block runs.
    /// Leaving the block raises ``LockLost`` if the lock expired or was lost before the end,
    /// unless the block raised: its exception propagates.
    #[pyo3(signature = (resource, ttl = redlock_core::DEFAULT_TTL, *,
                        timeout = Retry::Configured, auto_extend = false),
           text_signature = "($self, resource, ttl=10.0, *, timeout=None, auto_extend=False)")]
    fn lock(
        slf: &Bound<'_, Self>,
        #[pyo3(from_py_with = args::resource)] resource: String,
        #[pyo3(from_py_with = args::ttl)] ttl: Duration,
        #[pyo3(from_py_with = args::timeout)] timeout: Retry,
        #[pyo3(from_py_with = args::auto_extend)] auto_extend: bool,
    ) -> AsyncLockContext {
        AsyncLockContext {
            client: slf.clone().unbind(),
            resource,
            ttl,
            retry: timeout,
            auto_extend,
            slot: Arc::new(Mutex::new(Slot::Idle)),
        }
    }

    /// Coroutine: waits until every master is connected or known to be down, at most
    /// ``timeout`` seconds, and returns how many are connected.
    #[pyo3(signature = (timeout))]
    fn wait_connected(
        slf: &Bound<'_, Self>,
        #[pyo3(from_py_with = args::wait_timeout)] timeout: Duration,
    ) -> Coroutine {
        let client = slf.clone().unbind();
        coroutine("AsyncRedlock.wait_connected", move |_py| {
            let client = client.get().slot.get()?.get()?.clone();
            Ok((client.handle.clone(), async move {
                Ok(client.redlock.wait_connected(timeout).await)
            }))
        })
    }

    /// ``async with AsyncRedlock(...) as redlock:`` gives the client and closes it at the end.
    fn __aenter__(slf: &Bound<'_, Self>) -> Coroutine {
        let client = slf.clone().unbind();
        ready("AsyncRedlock.__aenter__", move |_py| Ok(client.into_any()))
    }

    /// Closes the client at once (new calls raise ``RedlockError``; an acquire still running
    /// stops promptly, undoes its attempt in flight on every master and raises
    /// ``RedlockError``, "client closed"; locks it acquired can still be extended and
    /// released, and keep the connections open until then) and returns an awaitable:
    /// ``await client.close()`` also waits until the releases this client runs in the
    /// background are done (a cancelled release or ``async with`` exit, a lock
    /// garbage-collected while held or won by a cancelled acquire; each bounded by the
    /// per-master timeout). Not awaiting it is fine. Closing twice is fine.
    fn close(slf: &Bound<'_, Self>) -> Coroutine {
        let this = slf.get();
        this.slot.close();
        this.drained("AsyncRedlock.close", ()).optional()
    }

    /// Coroutine: closes the client, then waits for its releases in the background (see
    /// ``close()``).
    fn __aexit__(
        slf: &Bound<'_, Self>,
        _exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> Coroutine {
        let this = slf.get();
        this.slot.close();
        this.drained("AsyncRedlock.__aexit__", false)
    }
});

impl AsyncRedlock {
    fn build(py: Python<'_>, args: ClientArgs) -> PyResult<Self> {
        let resource_names = args.trace_resource_names;
        let builder = args.builder(py)?;
        let handle = runtime::handle()?;
        let redlock = {
            let _entered = handle.enter();
            builder.build().map_err(|e| to_py_err(py, e))?
        };
        let info = Info::of(&redlock, resource_names);
        let pending = Arc::new(Pending::default());
        Ok(AsyncRedlock {
            slot: ClientSlot::new(
                AsyncClient {
                    redlock,
                    handle,
                    pending: pending.clone(),
                },
                info,
            ),
            pending,
        })
    }

    /// A coroutine that gives `value` once this client runs no release in the background.
    fn drained<T: Deliver + Sync>(&self, name: &'static str, value: T) -> Coroutine {
        let pending = self.pending.clone();
        coroutine(name, move |_py| {
            Ok((runtime::handle()?, async move {
                pending.idle().await;
                Ok(value)
            }))
        })
    }

    /// The coroutine of `acquire()` and `try_acquire()`.
    fn acquire_lock(
        slf: &Bound<'_, Self>,
        name: &'static str,
        resource: String,
        ttl: Duration,
        retry: Retry,
    ) -> Coroutine {
        let client = slf.clone().unbind();
        coroutine_raising(name, move |py| {
            let acquiring = Acquiring::new(py, &client.get().slot, resource, ttl, retry, false)?;
            Ok((acquiring.client.handle.clone(), acquiring.run()))
        })
    }
}

/// One acquire, ready to run on the runtime.
struct Acquiring {
    client: AsyncClient,
    shared: Shared,
    info: Arc<Info>,
    resource: String,
    ttl: Duration,
    retry: Retry,
    auto_extend: bool,
    log: Option<OpLog>,
    closing: Arc<Closing>,
}

impl Acquiring {
    fn new(
        py: Python<'_>,
        slot: &ClientSlot<AsyncClient>,
        resource: String,
        ttl: Duration,
        retry: Retry,
        auto_extend: bool,
    ) -> PyResult<Self> {
        let shared = slot.get()?;
        let log = OpLog::start(py, &slot.info.log, &resource);
        if let Some(err) = crate::logging::take_raised() {
            return Err(err);
        }
        Ok(Acquiring {
            client: shared.get()?.clone(),
            shared,
            info: slot.info.clone(),
            log,
            closing: slot.closing.clone(),
            resource,
            ttl,
            retry,
            auto_extend,
        })
    }

    /// The acquire, stopped early by an exception of its logging calls or by `close()` (see
    /// `carried.rs`); a lock won as a logging call raised is released before raising.
    async fn run(self) -> Result<FreshLock, Failed> {
        let log = self.log;
        let carried = Carried::default();
        let mut attempts = 0u32;
        let mut observe = |vote: &CoreVote| {
            attempts += 1;
            if let Some(log) = &log {
                log.attempt(attempts, vote);
            }
            carried.collect();
        };
        // Ctrl-C is the event loop's to handle: it cancels the awaiting task.
        let stop = stop_signal(std::future::pending(), &carried, &self.closing);
        let acquired = self
            .client
            .redlock
            .acquire_cancellable(&self.resource, self.ttl, self.retry, &mut observe, stop)
            .await;
        let lock = match acquired {
            Ok(Some(lock)) => {
                if let Some(log) = &log {
                    log.acquired(&lock);
                }
                carried.collect();
                match carried.take() {
                    None => lock,
                    Some(err) => {
                        // Spawned: a cancel arriving meanwhile must not stop it half-way.
                        let redlock = self.client.redlock.clone();
                        let ticket = self.client.pending.ticket();
                        let released = self.client.handle.spawn(async move {
                            let _ = redlock.release(&lock).await;
                            drop(ticket);
                        });
                        let _ = released.await;
                        return Err(Failed::Raised(err));
                    }
                }
            }
            Ok(None) => {
                let err = carried
                    .take()
                    .unwrap_or_else(|| closed_while_running("acquire", &self.resource));
                return Err(Failed::Raised(err));
            }
            Err(err) => {
                if let Some(log) = &log {
                    log.acquire_failed(&err);
                }
                carried.collect();
                return Err(carried.take().map_or(Failed::Core(err), Failed::Raised));
            }
        };
        let renewal = self.auto_extend.then(|| {
            AsyncRenewal::start(
                &self.client.redlock,
                lock.clone(),
                self.client.handle.clone(),
            )
        });
        let held = Arc::new(Held::new(lock, renewal));
        if let (true, Some(log)) = (self.auto_extend, log) {
            self.client
                .handle
                .spawn(watch_renewals(Arc::downgrade(&held), log));
        }
        Ok(FreshLock::new(AsyncLock::new(self.shared, self.info, held)))
    }
}

enum Slot {
    Idle,
    Acquiring,
    Entered(Py<AsyncLock>),
}

fn lock_slot(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Puts the context back to idle if entering did not complete (failed or cancelled).
struct EnterGuard {
    slot: Arc<Mutex<Slot>>,
    done: bool,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        if !self.done {
            *lock_slot(&self.slot) = Slot::Idle;
        }
    }
}

/// The lock `__aenter__` won: delivered, it becomes the context's (released by
/// `__aexit__`); dropped undelivered, it is released and the context is idle again.
struct Entered {
    lock: FreshLock,
    guard: EnterGuard,
}

impl Deliver for Entered {
    fn deliver(mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let lock = self.lock.into_py(py)?;
        *lock_slot(&self.guard.slot) = Slot::Entered(lock.clone_ref(py));
        self.guard.done = true;
        Ok(lock.into_any())
    }
}

/// Returned by ``AsyncRedlock.lock()``: acquires on ``__aenter__`` (giving the
/// ``AsyncLock``), releases on ``__aexit__``. Enter it once.
#[pyclass(frozen, module = "redlock_rs", name = "AsyncLockContext")]
pub(crate) struct AsyncLockContext {
    client: Py<AsyncRedlock>,
    resource: String,
    ttl: Duration,
    retry: Retry,
    auto_extend: bool,
    slot: Arc<Mutex<Slot>>,
}

#[pymethods]
impl AsyncLockContext {
    /// Coroutine: acquires the lock (see ``AsyncRedlock.acquire()``) and returns it.
    fn __aenter__(&self, py: Python<'_>) -> Coroutine {
        let client = self.client.clone_ref(py);
        let slot = self.slot.clone();
        let (resource, ttl, retry, auto_extend) = (
            self.resource.clone(),
            self.ttl,
            self.retry,
            self.auto_extend,
        );
        coroutine_raising("AsyncLockContext.__aenter__", move |py| {
            {
                let mut state = lock_slot(&slot);
                if !matches!(*state, Slot::Idle) {
                    return Err(RedlockError::new_err(
                        "this lock context is already entered; call AsyncRedlock.lock() again for another lock",
                    ));
                }
                *state = Slot::Acquiring;
            }
            let guard = EnterGuard { slot, done: false };
            let acquiring =
                Acquiring::new(py, &client.get().slot, resource, ttl, retry, auto_extend)?;
            let handle = acquiring.client.handle.clone();
            Ok((handle, async move {
                let lock = acquiring.run().await?;
                Ok(Entered { lock, guard })
            }))
        })
    }

    /// Coroutine: releases the lock; raises ``LockLost`` if it was lost or expired inside the
    /// block (unless the block raised: its exception propagates). Cancelled, it still
    /// completes the release before ``CancelledError`` is raised.
    fn __aexit__(
        &self,
        exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> Coroutine {
        let slot = self.slot.clone();
        let body_raised = exc_type.is_some();
        coroutine_shielded("AsyncLockContext.__aexit__", move |py| {
            let entered = std::mem::replace(&mut *lock_slot(&slot), Slot::Idle);
            let (handle, releasing) = match entered {
                Slot::Entered(lock) => {
                    let (handle, releasing) = lock.get().releasing(py)?;
                    (handle, Some(releasing))
                }
                _ => (runtime::handle()?, None),
            };
            Ok((handle, finish(releasing, body_raised)))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "AsyncLockContext(resource={}, ttl={}, auto_extend={})",
            redlock_core::shown_text(&self.resource),
            self.ttl.as_secs_f64(),
            if self.auto_extend { "True" } else { "False" }
        )
    }
}
