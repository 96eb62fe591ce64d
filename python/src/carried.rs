//! What ends a running operation besides its own outcome, and what its caller then gets:
//! an exception raised by Python code run on the operation's behalf (a logging handler, or
//! Ctrl-C landing while it runs: see `logging.rs`), and the client being closed.
//!
//! Either one stops an acquire between two attempts or during one; the attempt in flight is
//! then undone on every master first (the core's cancel path), and a lock won meanwhile is
//! released before the exception is raised. Extend and release run to their end (bounded by
//! the per-master timeout), then raise it.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::task::Poll;

use pyo3::prelude::*;
use tokio::sync::Notify;

use crate::errors::RedlockError;
use crate::logging;

/// The first exception raised by Python code run on behalf of one operation.
#[derive(Default)]
pub(crate) struct Carried {
    raised: Mutex<Option<PyErr>>,
    set: AtomicBool,
}

impl Carried {
    /// Takes what this thread's logging calls raised (call it right after them).
    pub(crate) fn collect(&self) {
        if let Some(err) = logging::take_raised() {
            self.keep(err);
        }
    }

    /// Keeps `err` unless an earlier exception is kept already.
    pub(crate) fn keep(&self, err: PyErr) {
        let mut raised = self.raised.lock().unwrap_or_else(PoisonError::into_inner);
        if raised.is_none() {
            *raised = Some(err);
            self.set.store(true, Ordering::SeqCst);
        }
    }

    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    pub(crate) fn take(&self) -> Option<PyErr> {
        self.raised
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Completes once an exception is kept. Only the operation's own task keeps one (its
    /// observer runs between the polls of this future), so no waker is needed: the next poll
    /// of the acquire sees it.
    fn kept(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(|_| {
            if self.is_set() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

/// Closing a client: what its calls in flight wait on.
#[derive(Default)]
pub(crate) struct Closing {
    closed: AtomicBool,
    changed: Notify,
}

impl Closing {
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Completes once the client is closed.
    pub(crate) async fn closed(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.is_closed() {
                return;
            }
            changed.await;
        }
    }
}

/// The cancel signal of an acquire: completes when `signal` does (Ctrl-C), when `carried`
/// keeps an exception, or when the client is closed.
pub(crate) async fn stop_signal(
    signal: impl Future<Output = ()>,
    carried: &Carried,
    closing: &Closing,
) {
    tokio::select! {
        () = signal => {}
        () = carried.kept() => {}
        () = closing.closed() => {}
    }
}

/// What a call in flight raises when its client was closed under it.
pub(crate) fn closed_while_running(operation: &str, resource: &str) -> PyErr {
    RedlockError::new_err(format!(
        "client closed: {operation} of {} was stopped by close() (or the end of the client's \
         with block); its attempt in flight was undone on every master",
        redlock_core::shown_text(resource)
    ))
}
