//! The tokio runtime behind the coroutine API, plugged into pyo3-async-runtimes.
//!
//! pyo3-async-runtimes' own tokio runtime is created once per address space; after
//! `os.fork()` the child would inherit it without its threads and every coroutine would hang.
//! This one is created once per *process* (keyed by pid), so a client made in a forked child
//! works.

use std::cell::{Cell, OnceCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3_async_runtimes::generic::{self, ContextExt, Runtime};
use pyo3_async_runtimes::TaskLocals;
use tokio::runtime::{Builder, Handle};
use tokio::task::JoinHandle;

use crate::boundary::{contain_panics, AttachPermit};
use crate::errors::RedlockError;

/// I/O threads of the coroutine runtime (the work is network-bound; 2 is plenty).
const WORKER_THREADS: usize = 2;

struct ProcessRuntime {
    pid: u32,
    handle: Handle,
}

static RUNTIME: Mutex<Option<ProcessRuntime>> = Mutex::new(None);

/// This process's coroutine runtime, started on first use (and again in a forked child).
pub(crate) fn handle() -> PyResult<Handle> {
    let pid = std::process::id();
    let mut slot = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(current) = slot.as_ref().filter(|rt| rt.pid == pid) {
        return Ok(current.handle.clone());
    }
    let runtime = Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name("redlock-async")
        .on_thread_start(|| ON_OUR_RUNTIME.with(|flag| flag.set(true)))
        .enable_all()
        .build()
        .map_err(|e| RedlockError::new_err(format!("cannot start the async I/O runtime: {e}")))?;
    let handle = runtime.handle().clone();
    // It serves until the process ends; never shutting it down means interpreter exit cannot
    // wait on its threads (and a forked child never touches its parent's copy).
    std::mem::forget(runtime);
    *slot = Some(ProcessRuntime {
        pid,
        handle: handle.clone(),
    });
    Ok(handle)
}

/// Runs `fut` on the coroutine runtime and returns the awaitable asyncio future of its result.
/// The operation starts at once; cancelling the asyncio future drops `fut` (the core's
/// futures are cancel-safe: an in-flight attempt is undone in the background).
pub(crate) fn awaitable<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    handle()?; // fail here, cleanly, if the runtime cannot start
    generic::future_into_py::<AsyncRuntime, _, T>(py, contain_panics(fut))
}

/// The pyo3-async-runtimes binding to [`handle`].
struct AsyncRuntime;

tokio::task_local! {
    static TASK_LOCALS: OnceCell<TaskLocals>;
}

thread_local! {
    /// True on this module's runtime threads (set by `on_thread_start`).
    static ON_OUR_RUNTIME: Cell<bool> = const { Cell::new(false) };
}

fn spawn_handle() -> Handle {
    // pyo3-async-runtimes spawns most of its work from inside our runtime's tasks: use that
    // runtime directly rather than the process-wide slot (no shared lock on the hot path).
    if ON_OUR_RUNTIME.with(Cell::get) {
        if let Ok(current) = Handle::try_current() {
            return current;
        }
    }
    // `awaitable` started the runtime before anything is spawned.
    handle().expect("the coroutine runtime was started by `awaitable`")
}

impl Runtime for AsyncRuntime {
    type JoinError = tokio::task::JoinError;
    type JoinHandle = JoinHandle<()>;

    fn spawn<F>(fut: F) -> Self::JoinHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        spawn_handle().spawn(fut)
    }

    fn spawn_blocking<F>(f: F) -> Self::JoinHandle
    where
        F: FnOnce() + Send + 'static,
    {
        // pyo3-async-runtimes hands results to asyncio from here, attached to the interpreter.
        // Once it is exiting nobody awaits them: drop them rather than attach.
        spawn_handle().spawn_blocking(move || {
            if let Some(_permit) = AttachPermit::acquire() {
                f();
            }
        })
    }
}

impl ContextExt for AsyncRuntime {
    fn scope<F, R>(locals: TaskLocals, fut: F) -> Pin<Box<dyn Future<Output = R> + Send>>
    where
        F: Future<Output = R> + Send + 'static,
    {
        let cell = OnceCell::new();
        let _ = cell.set(locals);
        Box::pin(TASK_LOCALS.scope(cell, fut))
    }

    fn get_task_locals() -> Option<TaskLocals> {
        TASK_LOCALS
            .try_with(|cell| cell.get().cloned())
            .unwrap_or_default()
    }
}
