//! Completing asyncio futures from runtime threads without taking the GIL there.
//!
//! An operation finishes on a tokio thread while the event loop's thread usually holds the
//! GIL. Taking the GIL from the tokio thread for `call_soon_threadsafe` means a GIL hand-over
//! (two futex wake-ups and a stall of the loop) plus a self-pipe write for every single
//! completion. Instead, each event loop gets a mailbox: the tokio thread pushes the finished
//! waiter into it (a mutex, no Python) and, only when the mailbox was empty, writes one byte to
//! a socket the loop watches with `add_reader`. The loop's callback then completes every waiter
//! that arrived meanwhile in one go, so under concurrency many completions share one wake-up.
//!
//! The same per-loop entry holds the loop's outbox (see `outbox.rs`), where operations begun
//! during one iteration wait to be spawned together.
//!
//! A loop without `add_reader` (or one that cannot be weak-referenced) falls back to
//! `call_soon_threadsafe`, the previous behaviour, and to spawning each operation at once.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCFunction, PyWeakrefMethods, PyWeakrefReference};

use crate::attach::AttachPermit;
use crate::outbox::{Outbox, StartPending, Starter};

/// How to start an operation on `event_loop` and how to wake the loop when it is done
/// (called on the loop's thread, when an operation begins).
pub(crate) fn for_loop(event_loop: &Bound<'_, PyAny>) -> (Starter, Wakeup) {
    match entry_of(event_loop) {
        Ok(Some(entry)) => {
            let entry = entry.get();
            (
                Starter::Batched {
                    outbox: entry.outbox.clone(),
                    start_pending: entry.start_pending.clone_ref(event_loop.py()),
                },
                Wakeup::Mailbox(entry.mailbox.clone()),
            )
        }
        _ => (
            Starter::Immediate,
            Wakeup::Threadsafe(event_loop.clone().unbind()),
        ),
    }
}

/// How a finished operation reaches the event loop that awaits it.
pub(crate) enum Wakeup {
    /// Through the loop's mailbox (no GIL on the runtime thread).
    Mailbox(Arc<Mailbox>),
    /// Through `call_soon_threadsafe` on this loop (takes the GIL on the runtime thread).
    Threadsafe(Py<PyAny>),
}

/// The asyncio future an operation completes, held weakly. The coroutine that awaits it
/// holds it strongly, so a task left pending on a closed loop is a cycle the garbage collector
/// can see and collect (see `Coroutine::__traverse__`); a strong reference from here (a
/// running operation, a mailbox nobody drains any more) would keep it, and the lock its
/// operation won, alive until the process ends.
pub(crate) struct Waiter(Py<PyWeakrefReference>);

impl Waiter {
    pub(crate) fn new(future: &Bound<'_, PyAny>) -> PyResult<Waiter> {
        Ok(Waiter(PyWeakrefReference::new(future)?.unbind()))
    }

    /// The future, unless nobody holds it any more (its coroutine was dropped).
    fn get<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        self.0.bind(py).upgrade()
    }
}

impl Wakeup {
    /// Completes `waiter` on its loop; called on a runtime thread.
    pub(crate) fn wake(self, waiter: Waiter) {
        match self {
            Wakeup::Mailbox(mailbox) => mailbox.post(waiter),
            Wakeup::Threadsafe(event_loop) => wake_threadsafe(event_loop, waiter),
        }
    }
}

/// Waiters finished since the loop last looked, and the socket pair that tells it to look.
pub(crate) struct Mailbox {
    finished: Mutex<Vec<Waiter>>,
    /// Written (one byte) when `finished` goes from empty to not empty.
    bell: UnixStream,
    /// Watched by the loop (`add_reader`); drained before `finished` is taken.
    ear: UnixStream,
}

impl Mailbox {
    fn new() -> std::io::Result<Mailbox> {
        let (bell, ear) = UnixStream::pair()?;
        bell.set_nonblocking(true)?;
        ear.set_nonblocking(true)?;
        Ok(Mailbox {
            finished: Mutex::new(Vec::new()),
            bell,
            ear,
        })
    }

    fn post(&self, waiter: Waiter) {
        let was_empty = {
            let mut finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
            finished.push(waiter);
            finished.len() == 1
        };
        if was_empty {
            // A full socket buffer (WouldBlock) means the loop has a wake-up pending anyway; a
            // closed loop no longer reads, and nobody awaits its futures.
            let _ = (&self.bell).write(&[1]);
        }
    }

    /// Runs on the loop's thread: completes every waiter posted so far.
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        // The bell first, then the waiters: a post that lands after this read and finds the
        // list empty rings again, so none is left waiting without a wake-up.
        let mut bytes = [0u8; 256];
        loop {
            match (&self.ear).read(&mut bytes) {
                Ok(n) if n == bytes.len() => continue,
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let finished =
            std::mem::take(&mut *self.finished.lock().unwrap_or_else(PoisonError::into_inner));
        let mut first_error = None;
        for waiter in finished.iter().filter_map(|waiter| waiter.get(py)) {
            if let Err(err) = complete(&waiter) {
                first_error.get_or_insert(err);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// One loop's entry: its mailbox, whose `add_reader` callback this is, and its outbox.
#[pyclass(module = "redlock_rs", name = "_LoopWakeup", frozen)]
struct LoopWakeup {
    mailbox: Arc<Mailbox>,
    outbox: Arc<Outbox>,
    /// The outbox's `call_soon` callback, made once.
    start_pending: Py<PyAny>,
}

#[pymethods]
impl LoopWakeup {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        self.mailbox.drain(py)
    }
}

/// This loop's entry, made and registered with the loop on first use; `None` when the loop
/// cannot watch a socket or be weak-referenced.
fn entry_of<'py>(event_loop: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, LoopWakeup>>> {
    let py = event_loop.py();
    // One entry per loop, gone with the loop.
    static MAILBOXES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let mailboxes = MAILBOXES
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("weakref")?
                    .getattr("WeakKeyDictionary")?
                    .call0()?
                    .unbind(),
            )
        })?
        .bind(py);
    let known = mailboxes.call_method1(intern!(py, "get"), (event_loop,))?;
    if let Ok(known) = known.cast::<LoopWakeup>() {
        return Ok(Some(known.clone()));
    }
    if !known.is_none() {
        // Registered as "cannot" before.
        return Ok(None);
    }
    let registered = Mailbox::new().map_err(PyErr::from).and_then(|mailbox| {
        let mailbox = Arc::new(mailbox);
        let outbox = Arc::new(Outbox::new());
        let start_pending = Bound::new(py, StartPending::new(outbox.clone()))?;
        let entry = Bound::new(
            py,
            LoopWakeup {
                mailbox: mailbox.clone(),
                outbox,
                start_pending: start_pending.into_any().unbind(),
            },
        )?;
        event_loop.call_method1(
            intern!(py, "add_reader"),
            (mailbox.ear.as_raw_fd(), entry.clone()),
        )?;
        mailboxes.set_item(event_loop, entry.clone())?;
        Ok(entry)
    });
    match registered {
        Ok(entry) => Ok(Some(entry)),
        Err(_) => {
            // Remember the refusal (if the loop can be weak-referenced at all).
            let _ = mailboxes.set_item(event_loop, false);
            Ok(None)
        }
    }
}

/// Completes `waiter` through `call_soon_threadsafe`, from a runtime thread.
fn wake_threadsafe(event_loop: Py<PyAny>, waiter: Waiter) {
    let Some(_permit) = AttachPermit::acquire() else {
        // The interpreter is exiting: nobody awaits this any more.
        std::mem::forget((event_loop, waiter));
        return;
    };
    let _ = Python::try_attach(|py| {
        static COMPLETE: PyOnceLock<Py<PyCFunction>> = PyOnceLock::new();
        let Ok(complete) =
            COMPLETE.get_or_try_init(py, || wrap_pyfunction!(complete, py).map(Bound::unbind))
        else {
            return;
        };
        let Some(waiter) = waiter.get(py) else {
            return; // its coroutine is gone: nobody awaits it
        };
        // Raises when the loop is closed: then nobody awaits it either.
        let _ = event_loop.call_method1(
            py,
            intern!(py, "call_soon_threadsafe"),
            (complete.clone_ref(py), waiter),
        );
    });
}

/// Sets the waiter's result unless it was cancelled meanwhile (runs on the event loop).
#[pyfunction]
fn complete(waiter: &Bound<'_, PyAny>) -> PyResult<()> {
    let py = waiter.py();
    if !waiter.call_method0(intern!(py, "done"))?.is_truthy()? {
        waiter.call_method1(intern!(py, "set_result"), (py.None(),))?;
    }
    Ok(())
}
