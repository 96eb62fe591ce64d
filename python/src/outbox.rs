//! Starting the operations of one event-loop iteration together.
//!
//! The event loop runs one task step at a time, some microseconds apart. Spawning each
//! operation on the runtime the moment its coroutine first ran let an idle runtime worker wake
//! for every spawn and write that single request to every master before the next one arrived:
//! one system call, and one wake-up of each master, per request. Instead the operations begun
//! during one iteration wait in the loop's outbox, and a callback the loop runs next
//! (`call_soon`) hands them to one runtime task that polls them all before any connection task
//! runs, so each connection task finds their requests queued together and sends them in one
//! write: fewer than half the `sendto` calls per lock cycle (docs/src/benchmarks.md, "asyncio: one
//! iteration's operations start together").

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::stream::{FuturesUnordered, StreamExt};
use pyo3::intern;
use pyo3::prelude::*;
use tokio::runtime::Handle;

/// An operation ready to run on a runtime; it reports its own result.
pub(crate) type Runnable = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Operations begun on one loop and not spawned yet.
pub(crate) struct Outbox {
    pending: Mutex<Vec<(Handle, Runnable)>>,
}

impl Outbox {
    pub(crate) fn new() -> Outbox {
        Outbox {
            pending: Mutex::new(Vec::new()),
        }
    }

    /// Queues `operation`; true when the outbox was empty, so a flush must be arranged.
    fn push(&self, handle: Handle, operation: Runnable) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.push((handle, operation));
        pending.len() == 1
    }

    /// Spawns every queued operation: one task drives them all, so their first steps all
    /// queue their requests before any connection task writes.
    pub(crate) fn flush(&self) {
        let mut pending =
            std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner));
        // Every asyncio operation runs on the process's one coroutine runtime (`runtime.rs`).
        let Some((handle, _)) = pending.last() else {
            return;
        };
        let handle = handle.clone();
        // Detached: each coroutine holds an abort handle of its own (see `coroutine.rs`).
        if pending.len() == 1 {
            drop(handle.spawn(pending.remove(0).1));
            return;
        }
        let mut group: FuturesUnordered<Runnable> = pending
            .into_iter()
            .map(|(_, operation)| operation)
            .collect();
        drop(handle.spawn(async move { while group.next().await.is_some() {} }));
    }
}

/// The loop's `call_soon` callback that spawns what its outbox holds.
#[pyclass(module = "redlock_rs", name = "_StartPending", frozen)]
pub(crate) struct StartPending {
    outbox: Arc<Outbox>,
}

impl StartPending {
    pub(crate) fn new(outbox: Arc<Outbox>) -> StartPending {
        StartPending { outbox }
    }
}

#[pymethods]
impl StartPending {
    fn __call__(&self) {
        self.outbox.flush();
    }
}

/// How an operation begun on a loop gets to its runtime.
pub(crate) enum Starter {
    /// Through the loop's outbox, spawned with the rest of this iteration's operations.
    Batched {
        outbox: Arc<Outbox>,
        start_pending: Py<PyAny>,
    },
    /// Spawned at once (a loop without a mailbox, see `loop_wakeup.rs`).
    Immediate,
}

impl Starter {
    /// The outbox an operation waits in until the loop's iteration ends, if any: an
    /// operation that must run even if its loop never gets there flushes it (see
    /// `coroutine.rs`, shielded operations).
    pub(crate) fn outbox(&self) -> Option<Arc<Outbox>> {
        match self {
            Starter::Batched { outbox, .. } => Some(outbox.clone()),
            Starter::Immediate => None,
        }
    }

    /// Runs `operation` on `handle`'s runtime, now or once the loop's current iteration ends.
    pub(crate) fn start(self, event_loop: &Bound<'_, PyAny>, handle: Handle, operation: Runnable) {
        match self {
            Starter::Batched {
                outbox,
                start_pending,
            } => {
                if outbox.push(handle, operation) {
                    let py = event_loop.py();
                    let scheduled =
                        event_loop.call_method1(intern!(py, "call_soon"), (start_pending,));
                    if scheduled.is_err() {
                        // The loop refused the callback: nothing may wait for it.
                        outbox.flush();
                    }
                }
            }
            Starter::Immediate => drop(handle.spawn(operation)),
        }
    }
}
