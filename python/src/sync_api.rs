//! The blocking client `Redlock` and `LockContext`, over `redlock_core::blocking` (the lock
//! itself is in `sync_lock.rs`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;
use redlock_core::{blocking, Lock as CoreLock, Retry, Vote as CoreVote};

use crate::args::{self, ClientArgs};
use crate::boundary::{detached, guarded, signal_raised, without_gil};
use crate::carried::{closed_while_running, stop_signal, Carried, Closing};
use crate::client::{ClientSlot, Info};
use crate::errors::{to_py_err, RedlockError};
use crate::held::watch_renewals;
use crate::logging::OpLog;
use crate::sync_lock::{Client, Lock};
use crate::twins::client_methods;

/// A Redlock client over N independent Redis masters (blocking API).
///
/// masters: the master URLs, ``redis://[user:password@]host:port[/db]`` (``rediss://`` for
///     TLS): N independent Redis servers, N odd (3 or 5) in most deployments.
/// retry_count: attempts after the first one in ``acquire()`` (without ``timeout``).
/// retry_delay: seconds; the pause before a retry is drawn uniformly from
///     [retry_delay/2, retry_delay].
/// drift_factor: clock drift allowance as a fraction of the ttl (plus 2 ms), in [0, 1).
/// instance_timeout: seconds each master gets to answer one request (small compared to the
///     ttl).
/// fanout: "concurrent" (all masters at once; decided as soon as the outcome is known) or
///     "sequential" (one after another, in order).
/// quorum: votes needed to win, in [N/2+1, N]; None for the majority N/2+1.
/// max_extensions: how many times one lock may be extended (by hand or in the background).
/// local_handoff: True (default): threads of this client waiting for the same resource take
///     turns, and a release wakes the next one at once instead of after its retry delay.
/// fencing: True: every lock carries a fencing token (``Lock.fencing_token``), at the cost
///     of one more round trip per acquire (see the fencing page of the book).
/// trace_resource_names: True: the ``redlock_rs`` logger's records name resources (they may
///     carry user data); False (default): they show ``<resource>``.
/// meter_provider: an OpenTelemetry ``MeterProvider`` to record metrics into (meter
///     ``redlock_rs``); None: the global one, if one was set before this client was created.
///     Needs ``pip install 'redlock-rs[otel]'``; without it nothing is recorded.
///
/// Creating a client does no I/O: connections open in the background (see
/// ``wait_connected()``). One client is safe to share between threads: every call releases
/// the GIL while it waits. ``with Redlock(...) as redlock:`` closes it at the end of the block.
/// Bad arguments raise ``ValueError``/``TypeError`` naming the argument.
#[pyclass(frozen, module = "redlock_rs", name = "Redlock")]
pub(crate) struct Redlock {
    slot: ClientSlot<blocking::Redlock>,
}

client_methods!(Redlock, "Redlock", {
    /// Acquires ``resource`` for ``ttl`` seconds and returns the ``Lock``.
    ///
    /// Makes up to ``1 + retry_count`` attempts or, with ``timeout`` (seconds), attempts until
    /// that much time has passed. Raises ``NotAcquired`` when someone else holds it,
    /// ``Unavailable`` when too few masters answered. Ctrl-C interrupts it (the in-flight
    /// attempt is undone on every master first).
    #[pyo3(signature = (resource, ttl = redlock_core::DEFAULT_TTL, *, timeout = Retry::Configured),
           text_signature = "($self, resource, ttl=10.0, *, timeout=None)")]
    fn acquire(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::resource)] resource: String,
        #[pyo3(from_py_with = args::ttl)] ttl: Duration,
        #[pyo3(from_py_with = args::timeout)] timeout: Retry,
    ) -> PyResult<Lock> {
        guarded(|| self.acquire_lock(py, &resource, ttl, timeout))
    }

    /// Like ``acquire()`` with exactly one attempt (no retry, no delay).
    #[pyo3(signature = (resource, ttl = redlock_core::DEFAULT_TTL),
           text_signature = "($self, resource, ttl=10.0)")]
    fn try_acquire(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::resource)] resource: String,
        #[pyo3(from_py_with = args::ttl)] ttl: Duration,
    ) -> PyResult<Lock> {
        guarded(|| self.acquire_lock(py, &resource, ttl, Retry::Once))
    }

    /// A context manager: ``with redlock.lock("orders:42", ttl=10.0) as lock: ...`` acquires
    /// on entry (as ``acquire()``) and releases on exit.
    ///
    /// With ``auto_extend=True`` the lock is renewed in the background (at a third of its
    /// validity left, each time on a quorum, up to ``max_extensions``) while the block runs.
    /// Leaving the block raises ``LockLost`` if the lock expired or was lost before the end,
    /// unless the block raised: its exception propagates.
    #[pyo3(signature = (resource, ttl = redlock_core::DEFAULT_TTL, *,
                        timeout = Retry::Configured, auto_extend = false),
           text_signature = "($self, resource, ttl=10.0, *, timeout=None, auto_extend=False)")]
    fn lock(
        &self,
        #[pyo3(from_py_with = args::resource)] resource: String,
        #[pyo3(from_py_with = args::ttl)] ttl: Duration,
        #[pyo3(from_py_with = args::timeout)] timeout: Retry,
        #[pyo3(from_py_with = args::auto_extend)] auto_extend: bool,
    ) -> PyResult<LockContext> {
        guarded(|| {
            Ok(LockContext {
                client: self.slot.get()?,
                info: self.slot.info.clone(),
                closing: self.slot.closing.clone(),
                resource,
                ttl,
                retry: timeout,
                auto_extend,
                entered: Mutex::new(None),
            })
        })
    }

    /// Waits until every master is connected or known to be down, at most ``timeout``
    /// seconds, and returns how many are connected. Optional: connections open in the
    /// background anyway; this starts a program with warm connections.
    #[pyo3(signature = (timeout))]
    fn wait_connected(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::wait_timeout)] timeout: Duration,
    ) -> PyResult<usize> {
        guarded(|| {
            let client = self.slot.get()?;
            let client = client.get()?;
            without_gil(py, || client.wait_connected(timeout))
        })
    }

    /// Closes the client at once: new calls raise ``RedlockError``. An acquire still running
    /// (in any thread) stops promptly, undoes its attempt in flight on every master and
    /// raises ``RedlockError`` ("client closed"); an extend or release in flight finishes
    /// (each is bounded by the per-master timeout). Locks it acquired can still be extended
    /// and released, and keep the connections open until then; one garbage-collected while
    /// held is still released. Closing twice is fine.
    fn close(&self) {
        self.slot.close();
    }

    /// ``with Redlock(...) as redlock:`` gives the client and closes it when the block ends.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the client.
    fn __exit__(
        &self,
        _exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> bool {
        self.slot.close();
        false
    }
});

impl Redlock {
    fn build(py: Python<'_>, args: ClientArgs) -> PyResult<Self> {
        let resource_names = args.trace_resource_names;
        let client = args
            .builder(py)?
            .build_blocking()
            .map_err(|e| to_py_err(py, e))?;
        let info = Info::of(client.as_async(), resource_names);
        Ok(Redlock {
            slot: ClientSlot::new(client, info),
        })
    }

    /// The body of `acquire()` and `try_acquire()`.
    fn acquire_lock(
        &self,
        py: Python<'_>,
        resource: &str,
        ttl: Duration,
        retry: Retry,
    ) -> PyResult<Lock> {
        let client = self.slot.get()?;
        let lock = acquire_interruptible(
            py,
            &client,
            &self.slot.info,
            &self.slot.closing,
            resource,
            ttl,
            retry,
        )?;
        Ok(Lock::new(client, self.slot.info.clone(), lock, None))
    }
}

/// Acquire with Ctrl-C support: the wait is cancelled when a signal handler raises, when a
/// logging call made for it raises, or when the client is closed, after the in-flight attempt
/// was undone on every master; the exception is then raised ("client closed" for a close). A
/// lock won as a logging call or a signal handler raised, or as a signal is pending, is
/// released first. Every attempt is logged at DEBUG; a call in which masters failed at
/// WARNING, once.
fn acquire_interruptible(
    py: Python<'_>,
    client: &Client,
    info: &Info,
    closing: &Closing,
    resource: &str,
    ttl: Duration,
    retry: Retry,
) -> PyResult<CoreLock> {
    let client = client.get()?;
    let log = OpLog::start(py, &info.log, resource);
    let carried = Carried::default();
    carried.collect();
    let mut attempts = 0u32;
    let mut observe = |vote: &CoreVote| {
        attempts += 1;
        if let Some(log) = &log {
            log.attempt(attempts, vote);
        }
        carried.collect();
    };
    let mut raised: Option<PyErr> = None;
    let stop = stop_signal(signal_raised(py, &mut raised), &carried, closing);
    let outcome = detached(py, || {
        client.acquire_cancellable(resource, ttl, retry, &mut observe, stop)
    })?;
    match outcome {
        Ok(Some(lock)) => {
            if let Some(log) = &log {
                log.acquired(&lock);
            }
            carried.collect();
            // A signal handler that raised as the lock was won (its exception is in `raised`
            // when the poll caught it in the same instant) is handled like a logging call's.
            match carried.take().or(raised) {
                // Ctrl-C pressed as the lock was won: its handler would raise as this call
                // returns, dropping the lock on the way. Raise it here, after releasing.
                None => match py.check_signals() {
                    Ok(()) => Ok(lock),
                    Err(err) => {
                        let _ = detached(py, || client.release(&lock))?;
                        Err(err)
                    }
                },
                Some(err) => {
                    // Won while a logging call or a signal handler raised: nobody will hold
                    // it, undo it first.
                    let _ = detached(py, || client.release(&lock))?;
                    Err(err)
                }
            }
        }
        Ok(None) => Err(match (carried.take(), raised) {
            (Some(err), _) | (None, Some(err)) => err,
            (None, None) if closing.is_closed() => closed_while_running("acquire", resource),
            (None, None) => RedlockError::new_err("acquire was cancelled"),
        }),
        Err(err) => {
            if let Some(log) = &log {
                log.acquire_failed(&err);
            }
            carried.collect();
            Err(carried.take().unwrap_or_else(|| to_py_err(py, err)))
        }
    }
}

/// Returned by ``Redlock.lock()``: acquires on ``__enter__`` (giving the ``Lock``), releases
/// on ``__exit__``. Enter it once.
#[pyclass(frozen, module = "redlock_rs", name = "LockContext")]
pub(crate) struct LockContext {
    client: Client,
    info: Arc<Info>,
    closing: Arc<Closing>,
    resource: String,
    ttl: Duration,
    retry: Retry,
    auto_extend: bool,
    entered: Mutex<Option<Py<Lock>>>,
}

#[pymethods]
impl LockContext {
    /// Acquires the lock (see ``Redlock.acquire()``) and returns it.
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
                &self.info,
                &self.closing,
                &self.resource,
                self.ttl,
                self.retry,
            )?;
            let client = self.client.get()?;
            let renewal = self.auto_extend.then(|| client.auto_extend(lock.clone()));
            let lock = Lock::new(self.client.clone(), self.info.clone(), lock, renewal);
            if self.auto_extend {
                if let Some(log) = OpLog::start(py, &self.info.log, &self.resource) {
                    client
                        .handle()
                        .spawn(watch_renewals(Arc::downgrade(lock.held()), log));
                }
                if let Some(err) = crate::logging::take_raised() {
                    // Nobody will hold it: release it before raising.
                    let _ = lock.finish(py, true);
                    return Err(err);
                }
            }
            let lock = Py::new(py, lock)?;
            *self.slot() = Some(lock.clone_ref(py));
            Ok(lock)
        })
    }

    /// Releases the lock; raises ``LockLost`` if it was lost or expired inside the block
    /// (unless the block raised: its exception propagates).
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
            "LockContext(resource={}, ttl={}, auto_extend={})",
            redlock_core::shown_text(&self.resource),
            self.ttl.as_secs_f64(),
            if self.auto_extend { "True" } else { "False" }
        )
    }
}

impl LockContext {
    fn slot(&self) -> MutexGuard<'_, Option<Py<Lock>>> {
        self.entered.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
