//! The state behind a Python `Lock`/`AsyncLock`: the core lock, its optional background
//! renewal, and whether it was released. Shared by the sync and async classes.

use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;
use redlock_core::{blocking, AutoExtend, Lock};
use tokio::runtime::Handle;

use crate::boundary::ProcessBound;
use crate::errors::RedlockError;

/// Characters of the token shown by `repr()`: enough to tell locks apart, not to steal one.
const TOKEN_PREFIX: usize = 8;

/// A background renewal of a lock (the core's auto-extend guard).
pub(crate) trait Renewal: Send + 'static {
    /// The lock as last renewed.
    fn lock(&self) -> Lock;
    /// True once renewal failed for good.
    fn is_lost(&self) -> bool;
}

impl Renewal for blocking::AutoExtend {
    fn lock(&self) -> Lock {
        blocking::AutoExtend::lock(self)
    }
    fn is_lost(&self) -> bool {
        blocking::AutoExtend::is_lost(self)
    }
}

/// The async guard plus the runtime its `Drop` needs (it may be dropped by Python's GC on any
/// thread; dropping releases the lock in the background).
#[derive(Debug)]
pub(crate) struct AsyncRenewal {
    guard: Option<AutoExtend>,
    handle: Handle,
}

impl AsyncRenewal {
    /// Starts renewing `lock`; must be called with `handle`'s runtime entered.
    pub(crate) fn start(client: &redlock_core::Redlock, lock: Lock, handle: Handle) -> Self {
        let _entered = handle.enter();
        AsyncRenewal {
            guard: Some(client.auto_extend(lock)),
            handle,
        }
    }
    /// Hands over the guard (to `release().await` it).
    pub(crate) fn into_guard(mut self) -> Option<AutoExtend> {
        self.guard.take()
    }
}

impl Renewal for AsyncRenewal {
    fn lock(&self) -> Lock {
        self.guard
            .as_ref()
            .map(AutoExtend::lock)
            .expect("guard present until handed over")
    }
    fn is_lost(&self) -> bool {
        self.guard.as_ref().is_none_or(AutoExtend::is_lost)
    }
}

impl Drop for AsyncRenewal {
    fn drop(&mut self) {
        if let Some(guard) = self.guard.take() {
            let _entered = self.handle.enter();
            drop(guard);
        }
    }
}

struct State<R> {
    lock: Lock,
    renewal: Option<ProcessBound<R>>,
    released: bool,
}

/// What releasing has to do.
pub(crate) enum ToRelease<R> {
    /// Release this lock.
    Plain(Lock),
    /// Stop renewing and release (fails with LockLost if the renewal had failed).
    Renewed(R),
    /// Released before: nothing left to do.
    AlreadyReleased,
}

/// A lock as the Python classes hold it; every method is short and never waits on I/O.
pub(crate) struct Held<R> {
    state: Mutex<State<R>>,
}

impl<R: Renewal> Held<R> {
    pub(crate) fn new(lock: Lock, renewal: Option<R>) -> Self {
        Held {
            state: Mutex::new(State {
                lock,
                renewal: renewal.map(ProcessBound::new),
                released: false,
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State<R>> {
        // A panic elsewhere cannot leave State inconsistent: every update is one assignment.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lock as last acquired, extended or renewed.
    pub(crate) fn current(&self) -> Lock {
        let state = self.state();
        match state.renewal.as_ref().map(ProcessBound::get) {
            Some(Ok(renewal)) => renewal.lock(),
            _ => state.lock.clone(),
        }
    }

    /// True while the holder may act as the owner: not released, not lost, validity left.
    pub(crate) fn is_valid(&self) -> bool {
        let state = self.state();
        if state.released {
            return false;
        }
        match state.renewal.as_ref().map(ProcessBound::get) {
            Some(Ok(renewal)) => !renewal.is_lost() && renewal.lock().is_valid(),
            Some(Err(_)) => false,
            None => state.lock.is_valid(),
        }
    }

    /// True when renewed in the background.
    pub(crate) fn auto_extends(&self) -> bool {
        self.state().renewal.is_some()
    }

    /// The lock to extend by hand, or an error saying why it cannot be.
    pub(crate) fn for_extend(&self) -> PyResult<Lock> {
        let state = self.state();
        if state.renewal.is_some() {
            return Err(RedlockError::new_err(
                "this lock is renewed in the background (auto_extend=True): extend() is not available",
            ));
        }
        if state.released {
            return Err(crate::errors::LockLost::new_err(format!(
                "lock on {:?} was released: it cannot be extended",
                state.lock.resource()
            )));
        }
        Ok(state.lock.clone())
    }

    /// Stores the result of a successful extend (unless released meanwhile).
    pub(crate) fn store_extended(&self, lock: Lock) {
        let mut state = self.state();
        if !state.released {
            state.lock = lock;
        }
    }

    /// Marks the lock released and says what is left to do.
    pub(crate) fn take_for_release(&self) -> PyResult<ToRelease<R>> {
        let mut state = self.state();
        if state.released {
            return Ok(ToRelease::AlreadyReleased);
        }
        state.released = true;
        match state.renewal.take() {
            Some(renewal) => {
                // Keep the last renewed lock readable after release.
                if let Ok(current) = renewal.get() {
                    state.lock = current.lock();
                }
                renewal.into_inner().map(ToRelease::Renewed)
            }
            None => Ok(ToRelease::Plain(state.lock.clone())),
        }
    }

    /// `repr()` of the lock: never the full token.
    pub(crate) fn describe(&self, class: &str) -> String {
        let lock = self.current();
        let released = self.state().released;
        let status = if released {
            "released"
        } else if self.is_valid() {
            "held"
        } else {
            "lost"
        };
        let token = &lock.token()[..TOKEN_PREFIX.min(lock.token().len())];
        format!(
            "{class}(resource={:?}, token='{token}…', validity={:.3}, extensions={}, auto_extend={}, status='{status}')",
            lock.resource(),
            lock.validity().as_secs_f64(),
            lock.extensions(),
            if self.auto_extends() { "True" } else { "False" },
        )
    }
}
