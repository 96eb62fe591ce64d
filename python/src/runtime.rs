//! The tokio runtime behind the asyncio API (see `coroutine.rs`).
//!
//! Created once per *process* (keyed by pid): after `os.fork()` the child inherits the
//! parent's runtime without its threads, so a client made in a forked child gets a fresh one.

use std::sync::{Mutex, PoisonError};

use pyo3::prelude::*;
use tokio::runtime::{Builder, Handle};

use crate::errors::RedlockError;

/// I/O threads of the coroutine runtime. One, like the blocking client's (`build_blocking`):
/// the operations only move bytes between the event loop and the masters, and a second
/// thread mostly adds wake-ups between the two (a `write` to the other thread's driver per
/// hand-over); one thread costs less CPU per cycle at a higher rate (docs/src/benchmarks.md,
/// "asyncio: one iteration's operations start together").
const WORKER_THREADS: usize = 1;

struct ProcessRuntime {
    pid: u32,
    handle: Handle,
}

static RUNTIME: Mutex<Option<ProcessRuntime>> = Mutex::new(None);

/// This process's coroutine runtime, started on first use (and again in a forked child).
pub(crate) fn handle() -> PyResult<Handle> {
    let pid = crate::process::process_id();
    let mut slot = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(current) = slot.as_ref().filter(|rt| rt.pid == pid) {
        return Ok(current.handle.clone());
    }
    let runtime = Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name("redlock-async")
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
