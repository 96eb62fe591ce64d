//! Auto-extend: a background task that renews a held lock before it expires.

use std::fmt;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::client::Redlock;
use crate::error::{Error, LostReason, Result};
use crate::lock::Lock;
use crate::vote::Vote;

/// Renewal happens when this fraction of the validity is left.
const RENEW_AT_REMAINING: u32 = 3; // i.e. at 1/3 remaining

#[derive(Clone)]
struct State {
    /// The lock as last renewed; replaced only while the one it renews is still valid.
    lock: Lock,
    /// Set by the renewal when it knows the lock is lost before its validity ends.
    lost: Option<LostReason>,
    /// The reason reported once `lock`'s validity has run out without a renewal.
    at_expiry: LostReason,
    /// Renewals that failed (too few masters answered, or the lock was found lost).
    failed_renewals: u32,
    /// The vote of the last of them: which masters failed, and why.
    last_failed_renewal: Option<Vote>,
}

impl State {
    /// Lost once renewal failed for good, and in any case from the moment the lock's
    /// validity deadline (monotonic clock) has passed: never later than that.
    fn lost_reason(&self) -> Option<LostReason> {
        self.lost
            .or_else(|| (!self.lock.is_valid()).then_some(self.at_expiry))
    }
}

/// A lock kept alive in the background: renewed at 1/3 of its validity left, each renewal
/// needing a quorum, up to the client's extension bound.
///
/// Check [`is_lost`](Self::is_lost) (or await [`lost`](Self::lost)) before acting as the
/// owner: it is true from the instant the held lock's validity has run out, whatever the
/// renewal is doing (e.g. still waiting for paused masters), and stays true — a renewal that
/// completes after that instant is not taken back. [`release`](Self::release) stops renewing and releases; dropping the guard does the
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
            .field("lost", &state.lost_reason())
            .finish()
    }
}

impl Redlock {
    /// Keeps `lock` alive in the background until the guard is released or dropped.
    /// Must be called inside a tokio runtime.
    pub fn auto_extend(&self, lock: Lock) -> AutoExtend {
        let (tx, rx) = watch::channel(State {
            lock,
            lost: None,
            at_expiry: LostReason::Expired,
            failed_renewals: 0,
            last_failed_renewal: None,
        });
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
        let deadline = lock.valid_until();
        let mut renewed = lock.clone();
        let ttl = lock.ttl();
        let telemetry = client.telemetry();
        let watch = telemetry.renew_started(lock.resource());
        // A renewal that has not finished by the deadline is too late: the lock is lost then.
        let extended = tokio::select! {
            biased;
            result = client.extend(&mut renewed, ttl).instrument(watch.span().clone()) => result,
            () = tokio::time::sleep_until(deadline.into()) => {
                telemetry.lock_lost(&lock, LostReason::Expired);
                mark_lost(&tx, LostReason::Expired);
                return;
            }
        };
        telemetry.renew_finished(&watch, &extended.as_ref().map(|()| renewed.vote()));
        match extended {
            Ok(()) => {
                if !commit(&tx, &renewed) {
                    return;
                }
                lock = renewed;
                next = renewal_time(&lock);
            }
            Err(Error::LockLost {
                reason: LostReason::ExtensionLimit,
                ..
            }) => {
                // Still ours until its validity ends; lost from then on (`lost_reason` says
                // so at the deadline; the update below wakes `lost()` waiters).
                tx.send_modify(|s| s.at_expiry = LostReason::ExtensionLimit);
                tokio::time::sleep_until(deadline.into()).await;
                telemetry.lock_lost(&lock, LostReason::ExtensionLimit);
                mark_lost(&tx, LostReason::ExtensionLimit);
                return;
            }
            Err(Error::LockLost { reason, vote, .. }) => {
                record_failure(&tx, vote.as_deref());
                mark_lost(&tx, reason);
                return;
            }
            Err(err) => {
                record_failure(&tx, err.vote());
                // Too few masters answered: retry while the current validity lasts.
                let remaining = lock.remaining();
                if remaining.is_zero() {
                    telemetry.lock_lost(&lock, LostReason::Expired);
                    mark_lost(&tx, LostReason::Expired);
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

/// Publishes a renewed lock, unless the lock it renews has expired meanwhile (then it is
/// marked lost instead, so a holder that saw it lost never sees it held again). Returns
/// whether the renewal was kept.
fn commit(tx: &watch::Sender<State>, renewed: &Lock) -> bool {
    let mut kept = false;
    tx.send_modify(|s| {
        if s.lost_reason().is_none() {
            s.lock = renewed.clone();
            kept = true;
        } else {
            s.lost = s.lost_reason();
        }
    });
    kept
}

/// Counts a failed renewal and keeps its vote.
fn record_failure(tx: &watch::Sender<State>, vote: Option<&Vote>) {
    tx.send_modify(|s| {
        s.failed_renewals += 1;
        s.last_failed_renewal = vote.cloned();
    });
}

/// Records the loss (keeping an earlier reason).
fn mark_lost(tx: &watch::Sender<State>, reason: LostReason) {
    tx.send_modify(|s| {
        s.lost = s.lost.or(Some(reason));
    });
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
    /// True once the lock is lost: renewal failed for good, or — at the latest — the held
    /// lock's validity has run out (monotonic clock), even while a renewal is still under
    /// way. Do not act as the owner any more. Once true, stays true.
    pub fn is_lost(&self) -> bool {
        self.lost_reason().is_some()
    }
    /// Why the lock was lost, if it was (`Expired` when its validity ran out before a
    /// renewal).
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.state.borrow().lost_reason()
    }
    /// How many renewals failed so far: too few masters answered (retried while the validity
    /// lasts), or the last one found the lock lost.
    pub fn failed_renewals(&self) -> u32 {
        self.state.borrow().failed_renewals
    }
    /// The vote of the last failed renewal, when it got as far as a vote: which masters
    /// failed, and why ([`Vote::failure_summary`]).
    pub fn last_failed_renewal(&self) -> Option<Vote> {
        self.state.borrow().last_failed_renewal.clone()
    }
    /// Resolves when the lock is lost (never, while renewals keep succeeding); at the latest
    /// when the held lock's validity runs out.
    pub async fn lost(&mut self) -> LostReason {
        loop {
            let deadline = {
                let state = self.state.borrow_and_update();
                if let Some(reason) = state.lost_reason() {
                    return reason;
                }
                state.lock.valid_until()
            };
            tokio::select! {
                changed = self.state.changed() => {
                    if changed.is_err() {
                        // The renewal task is gone without reporting loss: unguarded.
                        return self.lost_reason().unwrap_or(LostReason::NotHeld);
                    }
                }
                () = tokio::time::sleep_until(deadline.into()) => {}
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
