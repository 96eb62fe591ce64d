//! Auto-extend: a background task that renews a held lock before it expires.

use std::fmt;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::client::Redlock;
use crate::error::{Error, LostReason, Result};
use crate::lock::Lock;
use crate::vote::Vote;

/// Renewal happens when this fraction of the validity is left.
const RENEW_AT_REMAINING: u32 = 3; // i.e. at 1/3 remaining

#[derive(Clone)]
struct State {
    lock: Lock,
    lost: Option<LostReason>,
}

/// A lock kept alive in the background: renewed at 1/3 of its validity left, each renewal
/// needing a quorum, up to the client's extension bound.
///
/// Check [`is_lost`](Self::is_lost) (or await [`lost`](Self::lost)) before acting as the
/// owner. [`release`](Self::release) stops renewing and releases; dropping the guard does the
/// same in the background.
pub struct AutoExtend {
    client: Redlock,
    state: watch::Receiver<State>,
    task: Option<JoinHandle<()>>,
}

impl fmt::Debug for AutoExtend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.borrow();
        f.debug_struct("AutoExtend")
            .field("lock", &state.lock)
            .field("lost", &state.lost)
            .finish()
    }
}

impl Redlock {
    /// Keeps `lock` alive in the background until the guard is released or dropped.
    /// Must be called inside a tokio runtime.
    pub fn auto_extend(&self, lock: Lock) -> AutoExtend {
        let (tx, rx) = watch::channel(State { lock, lost: None });
        let task = tokio::spawn(renew(self.clone(), tx));
        AutoExtend {
            client: self.clone(),
            state: rx,
            task: Some(task),
        }
    }
}

async fn renew(client: Redlock, tx: watch::Sender<State>) {
    let mut lock = tx.borrow().lock.clone();
    let mut next = renewal_time(&lock);
    loop {
        tokio::time::sleep_until(next.into()).await;
        let ttl = lock.ttl();
        match client.extend(&mut lock, ttl).await {
            Ok(()) => {
                next = renewal_time(&lock);
                tx.send_modify(|s| s.lock = lock.clone());
            }
            Err(Error::LockLost {
                reason: LostReason::ExtensionLimit,
                ..
            }) => {
                // Still ours until its validity ends; lost from then on.
                tokio::time::sleep_until(lock.valid_until().into()).await;
                tx.send_modify(|s| s.lost = Some(LostReason::ExtensionLimit));
                return;
            }
            Err(Error::LockLost { reason, .. }) => {
                tx.send_modify(|s| s.lost = Some(reason));
                return;
            }
            Err(_) => {
                // Too few masters answered: retry while the current validity lasts.
                let remaining = lock.remaining();
                if remaining.is_zero() {
                    tx.send_modify(|s| s.lost = Some(LostReason::Expired));
                    return;
                }
                let pause = client
                    .settings()
                    .retry_delay
                    .min(remaining / 2)
                    .max(Duration::from_millis(1));
                next = Instant::now() + pause;
            }
        }
    }
}

fn renewal_time(lock: &Lock) -> Instant {
    lock.valid_until()
        .checked_sub(lock.validity() / RENEW_AT_REMAINING)
        .unwrap_or_else(Instant::now)
}

impl AutoExtend {
    /// The lock as last renewed.
    pub fn lock(&self) -> Lock {
        self.state.borrow().lock.clone()
    }
    /// True once renewal failed for good: do not act as the owner any more.
    pub fn is_lost(&self) -> bool {
        self.state.borrow().lost.is_some()
    }
    /// Why the lock was lost, if it was.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.state.borrow().lost
    }
    /// Resolves when the lock is lost (never, while renewals keep succeeding).
    pub async fn lost(&mut self) -> LostReason {
        loop {
            if let Some(reason) = self.state.borrow_and_update().lost {
                return reason;
            }
            if self.state.changed().await.is_err() {
                // The renewal task is gone without reporting loss: the lock is unguarded.
                return self.state.borrow().lost.unwrap_or(LostReason::NotHeld);
            }
        }
    }

    /// Stops renewing and hands the lock back to the caller (still held until its validity).
    pub fn stop(mut self) -> Lock {
        self.stop_task();
        self.lock()
    }

    /// Stops renewing and releases the lock on every master. Returns `LockLost` (after
    /// releasing what is left) if the lock had been lost meanwhile.
    pub async fn release(mut self) -> Result<Vote> {
        self.stop_task();
        let lock = self.lock();
        let lost = self.lost_reason();
        let vote = self.client.release(&lock).await?;
        match lost {
            None => Ok(vote),
            Some(reason) => Err(Error::LockLost {
                resource: lock.resource.to_string(),
                reason,
                vote: Some(Box::new(vote)),
            }),
        }
    }

    fn stop_task(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl Drop for AutoExtend {
    fn drop(&mut self) {
        if self.task.is_none() {
            return; // stopped or released explicitly
        }
        self.stop_task();
        // Best effort: release in the background rather than leave the keys to expire.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let client = self.client.clone();
            let lock = self.lock();
            handle.spawn(async move {
                let _ = client.release(&lock).await;
            });
        }
    }
}
