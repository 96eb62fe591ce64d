//! `Coroutine`: what every asyncio method of redlock_rs returns.
//!
//! A coroutine in the Python sense (`send`, `throw`, `close`, `__await__`), so
//! `asyncio.create_task`, `TaskGroup.create_task`, `asyncio.wait_for` and `asyncio.run` take
//! it, and so nothing happens until it runs:
//!
//! - created: holds the operation, unstarted. Dropped unawaited, it warns like a Python
//!   coroutine (`RuntimeWarning: coroutine ... was never awaited`) and never touches Redis.
//! - first `send(None)` (the event loop running it): checks the arguments, then hands the
//!   Rust operation to this module's tokio runtime (spawned with the rest of the loop
//!   iteration's operations, see `outbox.rs`) and yields an asyncio future the operation
//!   completes when it is done (through the loop's mailbox, see `loop_wakeup.rs`).
//! - next `send`: the result, converted to Python on the event loop's thread.
//! - `throw` (task cancelled, `wait_for` timeout) or `close`: aborts the operation. The core's
//!   futures are cancel-safe, so an in-flight attempt is undone on every master in the
//!   background; a result that was ready but not yet delivered is dropped, and a lock in it
//!   released in the background (see `Deliver`).
//! - shielded operations (releases) are never aborted: `throw` waits for the operation to end
//!   and then raises (a cancelled release still reaches every master before `CancelledError`
//!   goes on); `close`, a loop that cannot wait any more, or the garbage collector hand it to
//!   the runtime, where it runs to its end (counted by its client, see `pending.rs`).
//!
//! Only the wake-up touches Python from a runtime thread; results and errors are converted
//! where the coroutine is awaited.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::{AbortHandle, Abortable};
use futures_util::FutureExt;
use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use pyo3::{intern, PyTypeInfo};
use pyo3::{PyTraverseError, PyVisit};
use tokio::runtime::Handle;

use crate::boundary::{guarded, warn_unraisable};
use crate::errors::{panic_to_py_err, to_py_err};
use crate::loop_wakeup::{self, Waiter};
use crate::outbox::Outbox;

/// A value an operation hands to Python, converted on the event loop's thread. Dropping it
/// undelivered (the coroutine was cancelled after the operation completed) must leave nothing
/// behind: a lock releases itself then.
pub(crate) trait Deliver: Send + 'static {
    fn deliver(self, py: Python<'_>) -> PyResult<Py<PyAny>>;
}

impl Deliver for usize {
    fn deliver(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.into_pyobject(py)?.into_any().unbind())
    }
}

impl Deliver for () {
    fn deliver(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(py.None())
    }
}

impl Deliver for bool {
    fn deliver(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(pyo3::types::PyBool::new(py, self)
            .to_owned()
            .into_any()
            .unbind())
    }
}

/// The result of a finished operation, ready to convert with the GIL.
type Finish = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;
type Operation = Pin<Box<dyn Future<Output = Finish> + Send>>;

/// What starting a coroutine gives: a result at once, or an operation to run.
enum Begun {
    Ready(PyResult<Py<PyAny>>),
    Spawn(Handle, Operation),
}

type Start = Box<dyn FnOnce(Python<'_>) -> PyResult<Begun> + Send + Sync>;

/// Where the runtime task leaves the result for the coroutine.
type Slot = Arc<Mutex<Option<Finish>>>;

struct Running {
    /// Stops the operation, spawned or still waiting in the loop's outbox.
    task: AbortHandle,
    slot: Slot,
    /// The asyncio future the task completes when the result is in `slot`.
    waiter: Py<PyAny>,
    /// What the task completes: `waiter`, or the one that replaced it when a shielded
    /// operation went on waiting after its first waiter was cancelled.
    target: Arc<Mutex<Option<Waiter>>>,
    /// Where the operation may still wait to be spawned (flushed when handed off).
    outbox: Option<Arc<Outbox>>,
    /// The exception a shielded operation raises once done (thrown while it ran).
    deferred: Option<PyErr>,
}

impl Running {
    /// Stops the operation and drops an undelivered result (see [`Deliver`]).
    fn abandon(self, py: Python<'_>) {
        let waiter = self.abort();
        // Nobody waits for it any more; cancelling it spares the loop a pending future.
        let _ = waiter.call_method0(py, intern!(py, "cancel"));
    }

    /// Like [`abandon`](Self::abandon), without calling into Python: for the garbage
    /// collector, which only needs the reference to the waiter dropped.
    fn abort(self) -> Py<PyAny> {
        self.task.abort();
        let undelivered = self
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(undelivered);
        self.waiter
    }

    /// Lets a shielded operation run to its end without anyone awaiting it: spawned now if it
    /// still waited in the loop's outbox (the loop may never get there), never aborted.
    fn hand_off(self) {
        if let Some(outbox) = &self.outbox {
            outbox.flush();
        }
    }
}

enum State {
    Created(Start),
    Running(Running),
    Finished,
}

/// A coroutine running one redlock_rs operation on the event loop that awaits it.
#[pyclass(module = "redlock_rs", name = "Coroutine")]
pub(crate) struct Coroutine {
    qualname: &'static str,
    pid: u32,
    state: State,
    /// Runs to its end whatever happens to the awaiting task (see the module's comment).
    shielded: bool,
    /// Awaiting it is optional (its effect happened at the call): no warning if it never runs.
    optional: bool,
}

/// A coroutine whose operation is `start` (run with the GIL on the first `send`: argument
/// checks and state changes) and then the future it returns, run on the runtime of the
/// handle it returns (the client's).
pub(crate) fn coroutine<S, F, T>(qualname: &'static str, start: S) -> Coroutine
where
    S: FnOnce(Python<'_>) -> PyResult<(Handle, F)> + Send + Sync + 'static,
    F: Future<Output = Result<T, redlock_core::Error>> + Send + 'static,
    T: Deliver,
{
    coroutine_raising(qualname, move |py| {
        let (handle, operation) = start(py)?;
        Ok((handle, operation.map(|result| result.map_err(Failed::Core))))
    })
}

/// Why an operation failed: a core error (mapped on the event loop's thread), or an exception
/// raised by Python code run on the operation's behalf (see `carried.rs`).
pub(crate) enum Failed {
    Core(redlock_core::Error),
    Raised(PyErr),
}

impl From<redlock_core::Error> for Failed {
    fn from(err: redlock_core::Error) -> Self {
        Failed::Core(err)
    }
}

/// Like [`coroutine`], for an operation that may end with an exception of Python code run on
/// its behalf.
pub(crate) fn coroutine_raising<S, F, T>(qualname: &'static str, start: S) -> Coroutine
where
    S: FnOnce(Python<'_>) -> PyResult<(Handle, F)> + Send + Sync + 'static,
    F: Future<Output = Result<T, Failed>> + Send + 'static,
    T: Deliver,
{
    Coroutine::new(qualname, spawning(start))
}

/// Like [`coroutine_raising`], for an operation that must not stop half-way (a release): it is
/// never aborted, and an exception thrown in is raised once it is done (see the module's
/// comment).
pub(crate) fn coroutine_shielded<S, F, T>(qualname: &'static str, start: S) -> Coroutine
where
    S: FnOnce(Python<'_>) -> PyResult<(Handle, F)> + Send + Sync + 'static,
    F: Future<Output = Result<T, Failed>> + Send + 'static,
    T: Deliver,
{
    let mut coroutine = Coroutine::new(qualname, spawning(start));
    coroutine.shielded = true;
    coroutine
}

/// The start of an operation that runs `start`'s future, its outcome converted for Python.
fn spawning<S, F, T>(start: S) -> Start
where
    S: FnOnce(Python<'_>) -> PyResult<(Handle, F)> + Send + Sync + 'static,
    F: Future<Output = Result<T, Failed>> + Send + 'static,
    T: Deliver,
{
    Box::new(move |py| {
        let (handle, operation) = start(py)?;
        Ok(Begun::Spawn(
            handle,
            Box::pin(async move {
                let finish: Finish = match AssertUnwindSafe(operation).catch_unwind().await {
                    Ok(Ok(value)) => Box::new(move |py| value.deliver(py)),
                    Ok(Err(Failed::Core(err))) => Box::new(move |py| Err(to_py_err(py, err))),
                    Ok(Err(Failed::Raised(err))) => Box::new(move |_| Err(err)),
                    Err(payload) => Box::new(move |_| Err(panic_to_py_err(payload))),
                };
                finish
            }),
        ))
    })
}

/// A coroutine whose result `start` computes at once (no I/O), when it runs.
pub(crate) fn ready<S>(qualname: &'static str, start: S) -> Coroutine
where
    S: FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send + Sync + 'static,
{
    Coroutine::new(qualname, Box::new(move |py| Ok(Begun::Ready(start(py)))))
}

impl Coroutine {
    fn new(qualname: &'static str, start: Start) -> Self {
        Coroutine {
            qualname,
            pid: crate::process::process_id(),
            state: State::Created(start),
            shielded: false,
            optional: false,
        }
    }

    /// The same coroutine, for a call whose effect happened already and which may be awaited
    /// for more (`AsyncRedlock.close()`): dropped without running, it does not warn.
    pub(crate) fn optional(mut self) -> Self {
        self.optional = true;
        self
    }

    fn begin(&mut self, py: Python<'_>, start: Start) -> PyResult<Py<PyAny>> {
        // The loop first: nothing may start that could not be awaited.
        let event_loop = asyncio_get_running_loop(py)?;
        match guarded(|| start(py))? {
            Begun::Ready(result) => Err(stop_iteration(result?)),
            Begun::Spawn(handle, operation) => {
                let waiter = event_loop.call_method0(intern!(py, "create_future"))?;
                let slot: Slot = Arc::new(Mutex::new(None));
                let (starter, wakeup) = loop_wakeup::for_loop(&event_loop);
                let (task, registration) = AbortHandle::new_pair();
                let target = Arc::new(Mutex::new(Some(Waiter::new(&waiter)?)));
                let run = Abortable::new(
                    {
                        let (slot, target) = (slot.clone(), target.clone());
                        async move {
                            let finish = operation.await;
                            // The result first, then the waiter: see `shield`.
                            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(finish);
                            let waiter =
                                target.lock().unwrap_or_else(PoisonError::into_inner).take();
                            if let Some(waiter) = waiter {
                                wakeup.wake(waiter);
                            }
                        }
                    },
                    registration,
                );
                let outbox = starter.outbox();
                starter.start(&event_loop, handle, Box::pin(run.map(drop)));
                self.state = State::Running(Running {
                    task,
                    slot,
                    waiter: waiter.unbind(),
                    target,
                    outbox,
                    deferred: None,
                });
                self.poll(py)
            }
        }
    }

    /// The result when the operation is done (as `StopIteration`), else the waiter to yield.
    fn poll(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let State::Running(running) = &mut self.state else {
            return Err(PyRuntimeError::new_err(
                "cannot reuse already awaited coroutine",
            ));
        };
        let finished = running
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match finished {
            Some(finish) => {
                let deferred = running.deferred.take();
                self.state = State::Finished;
                // On the event loop's thread, which holds the GIL anyway (see `metrics.rs`).
                crate::metrics::flush_due(py);
                match deferred {
                    // Thrown while a shielded operation ran: its result goes unseen.
                    Some(err) => Err(err),
                    None => Err(stop_iteration(finish(py)?)),
                }
            }
            None => {
                // What `yield from future` does: the Task then waits for it.
                let waiter = running.waiter.bind(py);
                waiter.setattr(intern!(py, "_asyncio_future_blocking"), true)?;
                Ok(waiter.clone().unbind())
            }
        }
    }

    fn stop(&mut self, py: Python<'_>) {
        if let State::Running(running) = std::mem::replace(&mut self.state, State::Finished) {
            if self.shielded {
                running.hand_off();
            } else {
                running.abandon(py);
            }
        }
    }

    /// `err` thrown into a shielded operation: raised once the operation is done. Running,
    /// it waits on a fresh future of the running loop (the task cancelled the first one), or
    /// is handed off when no loop can wait for it; not started yet (a task cancelled before
    /// its first step), it is started without a waiter.
    fn shield(&mut self, py: Python<'_>, err: PyErr) -> PyResult<Py<PyAny>> {
        match std::mem::replace(&mut self.state, State::Finished) {
            State::Created(start) => {
                if let Ok(Begun::Spawn(handle, operation)) = guarded(|| start(py)) {
                    drop(handle.spawn(operation));
                }
                Err(err)
            }
            State::Running(mut running) => {
                let renewed = asyncio_get_running_loop(py)
                    .and_then(|event_loop| event_loop.call_method0(intern!(py, "create_future")))
                    .and_then(|waiter| Ok((Waiter::new(&waiter)?, waiter)));
                let Ok((target, waiter)) = renewed else {
                    running.hand_off();
                    return Err(err);
                };
                // The waiter first, then the result (the task's order reversed): a result
                // stored before the swap is seen by `poll`, one stored after wakes `waiter`.
                *running
                    .target
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(target);
                running.waiter = waiter.unbind();
                running.deferred.get_or_insert(err);
                self.state = State::Running(running);
                self.poll(py)
            }
            State::Finished => Err(err),
        }
    }
}

#[pymethods]
impl Coroutine {
    /// Runs the coroutine one step (what the event loop calls).
    fn send(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        match std::mem::replace(&mut self.state, State::Finished) {
            State::Created(start) => {
                if !value.is_none() {
                    return Err(PyTypeError::new_err(
                        "can't send non-None value to a just-started coroutine",
                    ));
                }
                self.begin(py, start)
            }
            running @ State::Running(_) => {
                self.state = running;
                self.poll(py)
            }
            State::Finished => Err(PyRuntimeError::new_err(
                "cannot reuse already awaited coroutine",
            )),
        }
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.send(py, &py.None().into_bound(py))
    }

    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Raises `typ` (an exception class or instance) at the await point: the operation is
    /// abandoned (an in-flight attempt is undone in the background).
    #[pyo3(signature = (typ, val=None, _tb=None))]
    fn throw(
        &mut self,
        py: Python<'_>,
        typ: &Bound<'_, PyAny>,
        val: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let err = if typ.is_instance_of::<PyBaseException>() {
            PyErr::from_value(typ.clone())
        } else if typ.cast::<PyType>().is_ok_and(|t| {
            t.is_subclass(&PyBaseException::type_object(py))
                .unwrap_or(false)
        }) {
            match val {
                Some(val) if val.is_instance(typ).unwrap_or(false) => {
                    PyErr::from_value(val.clone())
                }
                Some(val) if !val.is_none() => PyErr::from_value(typ.call1((val,))?),
                _ => PyErr::from_value(typ.call0()?),
            }
        } else {
            return Err(PyTypeError::new_err(
                "exceptions must be classes or instances deriving from BaseException",
            ));
        };
        if self.shielded {
            return self.shield(py, err);
        }
        self.stop(py);
        Err(err)
    }

    /// Abandons the operation (an in-flight attempt is undone in the background).
    fn close(&mut self, py: Python<'_>) {
        self.stop(py);
    }

    #[getter]
    fn __name__(&self) -> &'static str {
        self.qualname.rsplit('.').next().unwrap_or(self.qualname)
    }

    #[getter]
    fn __qualname__(&self) -> &'static str {
        self.qualname
    }

    /// True while suspended at its await point (for asyncio's task repr).
    #[getter]
    fn cr_running(&self) -> bool {
        false
    }

    /// The waiter refers back to the task that awaits this coroutine (its done-callback), so
    /// a task left pending on a closed loop is a reference cycle. The garbage collector sees
    /// through this edge and can collect it: the operation is then stopped, and a lock it won
    /// is released in the background, instead of both leaking until the process ends.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let State::Running(running) = &self.state {
            visit.call(&running.waiter)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        if let State::Running(running) = std::mem::replace(&mut self.state, State::Finished) {
            if self.shielded {
                running.hand_off();
            } else {
                drop(running.abort());
            }
        }
    }

    fn __repr__(&self) -> String {
        let state = match self.state {
            State::Created(_) => "created",
            State::Running(_) => "running",
            State::Finished => "finished",
        };
        format!("<redlock_rs coroutine {} ({state})>", self.qualname)
    }
}

impl Drop for Coroutine {
    fn drop(&mut self) {
        if self.pid != crate::process::process_id() {
            // A copy in a forked child: its operation (if any) lives in the parent.
            if let State::Running(running) = std::mem::replace(&mut self.state, State::Finished) {
                std::mem::forget(running);
            }
            return;
        }
        match std::mem::replace(&mut self.state, State::Finished) {
            State::Created(_) if self.optional => {}
            State::Created(_) => warn_unraisable(
                pyo3::exceptions::PyRuntimeWarning::type_object,
                &format!("coroutine '{}' was never awaited", self.qualname),
            ),
            State::Running(running) if self.shielded => running.hand_off(),
            State::Running(running) => {
                let _ = Python::try_attach(|py| running.abandon(py));
            }
            State::Finished => {}
        }
    }
}

fn stop_iteration(value: Py<PyAny>) -> PyErr {
    PyStopIteration::new_err((value,))
}

fn asyncio_get_running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    GET_RUNNING_LOOP
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("asyncio")?.getattr("get_running_loop")?.unbind())
        })?
        .bind(py)
        .call0()
}
