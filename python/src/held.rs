//! The state behind a Python `Lock`/`AsyncLock`: the core lock, its optional background
//! renewal, and whether it was released. Shared by the sync and async classes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use pyo3::prelude::*;
use redlock_core::{blocking, AutoExtend, Lock, LostReason, Vote};
use tokio::runtime::Handle;

use crate::boundary::ProcessBound;
use crate::errors::RedlockError;
use crate::logging::OpLog;

/// Characters of the token shown by `repr()`: enough to tell locks apart, not to steal one.
const TOKEN_PREFIX: usize = 8;

/// A background renewal of a lock (the core's auto-extend guard).
pub(crate) trait Renewal: Send + 'static {
    /// The lock as last renewed.
    fn lock(&self) -> Lock;
    /// True once renewal failed for good.
    fn is_lost(&self) -> bool;
    /// Why, once lost.
    fn lost_reason(&self) -> Option<LostReason>;
    /// Renewals that failed so far, and the vote of the last one.
    fn failed_renewals(&self) -> (u32, Option<Vote>);
}

impl Renewal for blocking::AutoExtend {
    fn lock(&self) -> Lock {
        blocking::AutoExtend::lock(self)
    }
    fn is_lost(&self) -> bool {
        blocking::AutoExtend::is_lost(self)
    }
    fn lost_reason(&self) -> Option<LostReason> {
        blocking::AutoExtend::lost_reason(self)
    }
    fn failed_renewals(&self) -> (u32, Option<Vote>) {
        (self.failed_renewals(), self.last_failed_renewal())
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
    fn lost_reason(&self) -> Option<LostReason> {
        match &self.guard {
            Some(guard) => guard.lost_reason(),
            None => Some(LostReason::NotHeld),
        }
    }
    fn failed_renewals(&self) -> (u32, Option<Vote>) {
        self.guard.as_ref().map_or((0, None), |guard| {
            (guard.failed_renewals(), guard.last_failed_renewal())
        })
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

/// What the renewal watcher sees.
pub(crate) enum Progress {
    /// Released (or a copy in a forked child): nothing left to watch.
    Done,
    /// Renewed in the background: the lock as last renewed, and the renewals that failed so
    /// far with the last one's vote.
    Renewing(Lock, u32, Option<Vote>),
    /// The renewal gave up (with the failed renewals and the last one's vote).
    Lost(LostReason, u32, Option<Vote>),
}

/// A lock as the Python classes hold it; every method is short and never waits on I/O.
pub(crate) struct Held<R> {
    state: Mutex<State<R>>,
    /// The process that won it (a forked child's copy is not held by the child).
    pid: u32,
    /// Set by the first report of this lock's loss in the log (the renewal watcher or the
    /// release that found it lost), so it is logged once.
    loss_logged: AtomicBool,
    /// An exception raised by a logging call of the renewal watcher (no caller waits for it
    /// there): the lock's next extend or release raises it.
    watcher_raised: Mutex<Option<PyErr>>,
}

impl<R: Renewal> Held<R> {
    pub(crate) fn new(lock: Lock, renewal: Option<R>) -> Self {
        Held {
            pid: crate::process::process_id(),
            loss_logged: AtomicBool::new(false),
            watcher_raised: Mutex::new(None),
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

    /// Seconds of validity left now: 0.0 once expired, lost or released.
    pub(crate) fn remaining(&self) -> f64 {
        if self.is_valid() {
            self.current().remaining().as_secs_f64()
        } else {
            0.0
        }
    }

    /// What the operation that just logged on this thread must raise, once done: an
    /// exception its own logging calls raised, or one the renewal watcher kept.
    pub(crate) fn raised_meanwhile(&self) -> Option<PyErr> {
        crate::logging::take_raised().or_else(|| {
            self.watcher_raised
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
        })
    }

    /// An async operation's outcome, unless Python code run on its behalf raised: `early`
    /// (while it started, on the event loop's thread) or its logging calls on this thread
    /// (see [`raised_meanwhile`](Self::raised_meanwhile)).
    pub(crate) fn outcome<T>(
        &self,
        early: Option<PyErr>,
        outcome: redlock_core::Result<T>,
    ) -> Result<T, crate::coroutine::Failed> {
        use crate::coroutine::Failed;
        let meanwhile = self.raised_meanwhile();
        match early.or(meanwhile) {
            Some(err) => Err(Failed::Raised(err)),
            None => outcome.map_err(Failed::Core),
        }
    }

    /// True the first time it is called: whoever logs the loss of this lock first.
    pub(crate) fn first_loss_report(&self) -> bool {
        !self.loss_logged.swap(true, Ordering::Relaxed)
    }

    /// For the renewal watcher.
    pub(crate) fn progress(&self) -> Progress {
        let state = self.state();
        if state.released {
            return Progress::Done;
        }
        match state.renewal.as_ref().map(ProcessBound::get) {
            Some(Ok(renewal)) => {
                let (failed, last_failed) = renewal.failed_renewals();
                match renewal.lost_reason() {
                    Some(reason) => Progress::Lost(reason, failed, last_failed),
                    None => Progress::Renewing(renewal.lock(), failed, last_failed),
                }
            }
            _ => Progress::Done,
        }
    }

    /// What the `ResourceWarning` of a lock garbage-collected while still held (and valid)
    /// by this process says; read before it is released, `fate` says how it is.
    pub(crate) fn forgotten(&self, class: &str, fate: &str) -> Option<String> {
        if self.pid != crate::process::process_id() || !self.is_valid() {
            return None;
        }
        let lock = self.current();
        Some(format!(
            "{class} on {} was garbage-collected while held ({:.3} s of validity left): {fate}. \
             Release it with release() or a with block.",
            redlock_core::shown_text(lock.resource()),
            lock.remaining().as_secs_f64()
        ))
    }

    /// True while this process holds the lock and has not released it (validity aside).
    pub(crate) fn held_here(&self) -> bool {
        self.pid == crate::process::process_id() && !self.state().released
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
                "lock on {} was released: it cannot be extended",
                redlock_core::shown_text(state.lock.resource())
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

    /// Takes the outcome of an `extend()` (sync or async): keeps the renewed lock, logs it, or
    /// logs the failure (a loss once per lock).
    pub(crate) fn after_extend(
        &self,
        log: Option<&OpLog>,
        extended: redlock_core::Result<Lock>,
    ) -> redlock_core::Result<()> {
        match extended {
            Ok(lock) => {
                if let Some(log) = log {
                    log.extended(&lock);
                }
                self.store_extended(lock);
                Ok(())
            }
            Err(err) => {
                if let Some(log) = log {
                    if !err.is_lock_lost() || self.first_loss_report() {
                        log.failed("extend", &err);
                    }
                }
                Err(err)
            }
        }
    }

    /// Takes the outcome of a `release()` (sync or async): logs it (a loss found by the
    /// background renewal once per lock) and returns how many masters released.
    pub(crate) fn after_release(
        &self,
        log: Option<&OpLog>,
        released: redlock_core::Result<redlock_core::Vote>,
    ) -> redlock_core::Result<usize> {
        if let Some(log) = log {
            log.release_result(&released);
            if let Err(redlock_core::Error::LockLost { reason, vote, .. }) = &released {
                if self.first_loss_report() {
                    log.lost(&format!("background renewal: {reason}"), vote.as_deref());
                }
            }
        }
        released.map(|vote| vote.granted())
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
            "{class}(resource={}, token='{token}…', validity={:.3}, extensions={}, auto_extend={}, status='{status}')",
            redlock_core::shown_text(lock.resource()),
            lock.validity().as_secs_f64(),
            lock.extensions(),
            if self.auto_extends() { "True" } else { "False" },
        )
    }
}

/// What leaving a `with` block reports once the lock was released (by the core's scope
/// rule, [`redlock_core::Redlock::release_scoped`], or by the renewal's guard): a `LockLost`
/// (expired before the release, or lost by the renewal) is logged, once per lock, and raised
/// unless the block raised (its exception wins); another release failure is raised as is.
pub(crate) fn exit_outcome<R: Renewal>(
    held: &Held<R>,
    log: Option<&OpLog>,
    released: redlock_core::Result<redlock_core::Vote>,
    body_raised: bool,
) -> redlock_core::Result<()> {
    if let Some(log) = log {
        log.release_result(&released);
    }
    let lost = match released {
        Ok(_) => return Ok(()),
        Err(err) if !err.is_lock_lost() => return Err(err),
        Err(lost) => lost,
    };
    if let (Some(log), redlock_core::Error::LockLost { reason, vote, .. }) = (log, &lost) {
        if held.first_loss_report() {
            log.lost(&format!("its with block: {reason}"), vote.as_deref());
        }
    }
    if body_raised {
        Ok(())
    } else {
        Err(lost)
    }
}

impl<R> Held<R> {
    /// Keeps what a logging call of the renewal watcher raised, for the lock's next extend or
    /// release; true when there was something (the watcher then stops logging).
    fn keep_watcher_raised(&self) -> bool {
        let Some(err) = crate::logging::take_raised() else {
            return false;
        };
        let mut kept = self
            .watcher_raised
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        kept.get_or_insert(err);
        true
    }
}

/// How often the renewal watcher looks at a lock: a sixth of its validity, within bounds
/// (renewals happen at a third of it left).
fn watch_period(lock: &Lock) -> Duration {
    (lock.validity() / 6).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// Logs the background renewals of a lock (DEBUG), the failed ones (WARNING, naming the
/// masters' causes) and its loss (WARNING) until it is released or dropped. The core's
/// auto-extend guard reports no events, so this samples it.
pub(crate) async fn watch_renewals<R: Renewal>(held: Weak<Held<R>>, log: OpLog) {
    let mut seen_extensions = None;
    let mut seen_failures = 0;
    loop {
        let Some(held) = held.upgrade() else {
            return;
        };
        let (lock, failed, last_failed) = match held.progress() {
            Progress::Done => return,
            Progress::Lost(reason, failed, last_failed) => {
                if failed > seen_failures {
                    log.renewal_failed(
                        failed - seen_failures,
                        last_failed.as_ref(),
                        Duration::ZERO,
                    );
                }
                if held.first_loss_report() {
                    log.lost(
                        &format!("background renewal: {reason}"),
                        last_failed.as_ref(),
                    );
                }
                held.keep_watcher_raised();
                return;
            }
            Progress::Renewing(lock, failed, last_failed) => (lock, failed, last_failed),
        };
        if failed > seen_failures {
            log.renewal_failed(
                failed - seen_failures,
                last_failed.as_ref(),
                lock.remaining(),
            );
            seen_failures = failed;
        }
        if seen_extensions.is_some_and(|seen| lock.extensions() > seen) {
            log.renewed(&lock);
            if held.keep_watcher_raised() {
                return;
            }
        }
        seen_extensions = Some(lock.extensions());
        drop(held);
        tokio::time::sleep(watch_period(&lock)).await;
    }
}
