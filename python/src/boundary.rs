//! Crossing between Python and Rust: the one GIL helper, panic containment, fork detection and
//! Ctrl-C while blocked in Rust.

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::attach::AttachPermit;
use crate::errors::{forked, panic_to_py_err, to_py_err};
use crate::process::process_id;

/// How often a thread blocked in Rust looks for pending signals (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs Python-facing code, turning a Rust panic into `RedlockError` instead of pyo3's
/// `PanicException` (a `BaseException` that `except Exception` would not catch).
pub(crate) fn guarded<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| Err(panic_to_py_err(payload)))
}

/// THE helper for every blocking call into the core: releases the GIL while `io` runs (other
/// Python threads keep going), contains panics, and maps core errors once. Back with the GIL,
/// it records the metrics batches due (see `metrics.rs`).
pub(crate) fn without_gil<T, F>(py: Python<'_>, io: F) -> PyResult<T>
where
    F: Send + FnOnce() -> redlock_core::Result<T>,
    T: Send,
{
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(io)));
    crate::metrics::flush_due(py);
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(to_py_err(py, err)),
        Err(payload) => Err(panic_to_py_err(payload)),
    }
}

/// Issues a warning from a destructor (an object being garbage-collected), where raising is
/// impossible: with warnings turned into errors it is reported as unraisable, as Python does
/// for its own `ResourceWarning`s. Nothing happens once the interpreter is exiting.
pub(crate) fn warn_unraisable(
    category: impl FnOnce(Python<'_>) -> Bound<'_, PyType>,
    message: &str,
) {
    let Some(_permit) = AttachPermit::acquire() else {
        return;
    };
    let Ok(message) = CString::new(message.replace('\0', "")) else {
        return;
    };
    let _ = Python::try_attach(|py| {
        // A destructor may run while an exception propagates: keep it.
        let pending = PyErr::take(py);
        let category = category(py);
        if let Err(err) = PyErr::warn(py, &category, &message, 1) {
            let context = pyo3::types::PyString::new(py, "the destructor of a redlock_rs object");
            err.write_unraisable(py, Some(&context));
        }
        if let Some(pending) = pending {
            pending.restore(py);
        }
    });
}

/// True when this thread has an exception set: a destructor running while it propagates (a
/// `KeyboardInterrupt` raised as a call returned, unwinding the frame that held its result).
pub(crate) fn exception_in_flight() -> bool {
    let Some(_permit) = AttachPermit::acquire() else {
        return false;
    };
    Python::try_attach(PyErr::occurred).unwrap_or(false)
}

/// Like [`without_gil`], but hands back the core's error unmapped (to log it first).
pub(crate) fn detached<T, F>(py: Python<'_>, io: F) -> PyResult<redlock_core::Result<T>>
where
    F: Send + FnOnce() -> redlock_core::Result<T>,
    T: Send,
{
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(io)));
    crate::metrics::flush_due(py);
    outcome.map_err(panic_to_py_err)
}

/// The interpreter's main thread as `threading.get_ident()` numbers it, with the process it
/// was read in: after a fork the child's main thread is the one that forked, so it is read
/// again there. `(0, _)`: not read yet.
static MAIN_THREAD: Mutex<(u32, u64)> = Mutex::new((0, 0));

/// Whether Python runs signal handlers on this thread: CPython runs them only on the main
/// thread, so a call blocked on any other thread has no Ctrl-C to look for. When the main
/// thread cannot be told, says yes (looking costs a wake-up every [`SIGNAL_POLL`], nothing
/// more).
fn signals_run_here(py: Python<'_>) -> bool {
    let pid = process_id();
    let cached = *MAIN_THREAD.lock().unwrap_or_else(PoisonError::into_inner);
    let main = if cached.0 == pid {
        cached.1
    } else {
        let read = py
            .import("threading")
            .and_then(|threading| threading.call_method0("main_thread"))
            .and_then(|main| main.getattr("ident"))
            .and_then(|ident| ident.extract::<u64>());
        match read {
            Ok(ident) => {
                *MAIN_THREAD.lock().unwrap_or_else(PoisonError::into_inner) = (pid, ident);
                ident
            }
            Err(_) => return true,
        }
    };
    // `threading.get_ident()` is `pthread_self()` on POSIX systems.
    // SAFETY: pthread_self has no preconditions and cannot fail.
    let current = unsafe { libc::pthread_self() } as u64;
    current == main
}

/// Completes once a signal handler raised (e.g. `KeyboardInterrupt` on Ctrl-C), leaving the
/// exception in `raised`; never on a thread where no handler runs ([`signals_run_here`], read
/// now, while attached). Signal handlers only run on the main thread, and only while it is
/// attached, so a main thread blocked in Rust re-attaches briefly every [`SIGNAL_POLL`].
/// Other threads register no timer at all: an acquire from a worker thread costs one less.
pub(crate) fn signal_raised<'a>(
    py: Python<'_>,
    raised: &'a mut Option<PyErr>,
) -> impl std::future::Future<Output = ()> + Send + 'a {
    let signals_here = signals_run_here(py);
    async move {
        if !signals_here {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(SIGNAL_POLL).await;
            let Some(_permit) = AttachPermit::acquire() else {
                continue; // exiting: nobody is left to press Ctrl-C for
            };
            if let Some(Err(err)) = Python::try_attach(|py| py.check_signals()) {
                *raised = Some(err);
                return;
            }
        }
    }
}

/// A value tied to the process that created it. After `os.fork()` the child has a copy whose
/// runtime threads do not exist: using it raises `RedlockError`, and dropping it leaks it
/// (shutting down a runtime without its threads could wait forever).
pub(crate) struct ProcessBound<T> {
    pid: u32,
    value: Option<T>,
}

impl<T> ProcessBound<T> {
    pub(crate) fn new(value: T) -> Self {
        ProcessBound {
            pid: process_id(),
            value: Some(value),
        }
    }

    /// The value, or `RedlockError` in a forked child.
    pub(crate) fn get(&self) -> PyResult<&T> {
        match &self.value {
            Some(value) if self.pid == process_id() => Ok(value),
            _ => Err(forked(self.pid)),
        }
    }

    /// Takes the value out (for operations that consume it), or `RedlockError` in a forked child.
    pub(crate) fn into_inner(mut self) -> PyResult<T> {
        self.get()?;
        self.value.take().ok_or_else(|| forked(self.pid))
    }
}

impl<T> Drop for ProcessBound<T> {
    fn drop(&mut self) {
        if self.pid != process_id() {
            std::mem::forget(self.value.take());
        }
    }
}
