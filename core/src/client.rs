//! The async Redlock client: acquire, extend, release.

mod fencing;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::Instrument;

use crate::argument::InvalidArgument;
use crate::config::{check_resource, check_ttl, RedlockBuilder, Settings};
use crate::error::{Error, LostReason, Result};
use crate::fanout::{round, Request, Stop};
use crate::handoff::{Handoff, Ticket};
use crate::lock::Lock;
use crate::master::{Master, MasterServer, Op};
use crate::quorum::Quorum;
use crate::telemetry::{RoundKind, Telemetry};
use crate::validity::{drift, fill_token, jittered, validity};
use crate::vote::Vote;

/// A Redlock client over N independent masters. Cheap to clone; clones share connections.
///
/// Safe to use from many tasks at once: the connections are multiplexed and pipeline
/// concurrent requests; no lock is shared on the hot path.
#[derive(Clone)]
pub struct Redlock {
    inner: Arc<Inner>,
}

struct Inner {
    masters: Vec<Master>,
    settings: Settings,
    /// Admission: at most `MAX_ROUNDS_IN_FLIGHT` rounds talk to the masters at once; more
    /// callers wait here, in arrival order (tokio's semaphore is fair), before their round
    /// starts. Why: the per-master timeout and the validity clock must measure the masters,
    /// not a queue inside this client. Without it, thousands of callers on one client push
    /// each other's requests past the timeout and healthy masters get reported as failed.
    admission: tokio::sync::Semaphore,
    /// Lines of this client's tasks waiting for the same resource (`handoff.rs`).
    handoff: Handoff,
    /// Spans, events and (feature `otel`) metrics (`telemetry/`).
    telemetry: Telemetry,
}

/// Rounds (acquire attempts, extends, releases, cleanups) of one client talking to the
/// masters at once. Enough for the client's peak rate (rounds in flight ≈ rate × round
/// trip), and each master then has at most this many of our requests queued: a few
/// milliseconds of its work, far inside the per-master timeout. Chosen by measurement: fewer
/// cost throughput, more gained none (docs/src/benchmarks.md, "Admission gate: 256 rounds").
pub const MAX_ROUNDS_IN_FLIGHT: usize = 256;

impl fmt::Debug for Redlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redlock")
            .field("masters", &self.masters())
            .field("servers", &self.master_servers())
            .field("settings", &self.inner.settings)
            .finish()
    }
}

/// How many attempts an acquire may make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Exactly one attempt.
    Once,
    /// `1 + retry_count` attempts (the client's setting).
    Configured,
    /// As many attempts as fit before the deadline: no attempt starts after it.
    Until(Instant),
}

impl Retry {
    /// As many attempts as start within `timeout` from now (at least one); a timeout too large
    /// for the clock waits "forever" (see [`crate::deadline_after`]).
    pub fn within(timeout: Duration) -> Retry {
        Retry::Until(crate::argument::deadline_after(timeout))
    }
}

/// Deletes an attempt's keys in the background if the acquire future is dropped while the
/// attempt is in flight (cancel safety for `select!`, `timeout` and aborted tasks).
struct InFlight<'a> {
    client: &'a Redlock,
    resource: &'a Arc<str>,
    token: &'a Arc<str>,
    armed: bool,
}

impl<'a> InFlight<'a> {
    fn arm(client: &'a Redlock, resource: &'a Arc<str>, token: &'a Arc<str>) -> Self {
        InFlight {
            client,
            resource,
            token,
            armed: true,
        }
    }
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let client = self.client.clone();
            let (resource, token) = (Arc::clone(self.resource), Arc::clone(self.token));
            handle.spawn(async move {
                client.unlock_all(&resource, &token).await;
            });
        }
    }
}

/// Sleeps `delay`, or less when a hand-off reaches `place` (`handoff.rs`). True when `cancel`
/// completed first.
async fn pause<C: std::future::Future<Output = ()>>(
    place: Option<&Ticket<'_>>,
    delay: Duration,
    cancel: std::pin::Pin<&mut C>,
) -> bool {
    let wait = async {
        match place {
            Some(place) => {
                // Handed on or not, the next attempt starts now.
                let _handed = place.wait(delay).await;
            }
            None => tokio::time::sleep(delay).await,
        }
    };
    tokio::select! {
        biased;
        () = wait => false,
        () = cancel => true,
    }
}

impl RedlockBuilder {
    /// Validates the configuration and creates the client. Does no network I/O: connections
    /// open in the background and reconnect on their own, so a master that is down cannot
    /// block this. Must be called inside a tokio runtime (use
    /// [`crate::blocking::Redlock`] from synchronous code).
    pub fn build(self) -> Result<Redlock> {
        let settings = self.settings()?;
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::InvalidArgument(InvalidArgument::without_value(
                "Redlock::build",
                "needs a running tokio runtime: call it inside one, or use redlock_core::blocking",
            )));
        }
        let masters = self
            .urls
            .iter()
            .enumerate()
            .map(|(i, url)| {
                Master::new(i, url, settings.instance_timeout, settings.native_commands)
            })
            .collect::<Result<Vec<_>>>()?;
        let telemetry = Telemetry::new(
            &masters,
            settings.fanout.as_str(),
            self.trace_resource_names,
            self.metrics_sink,
        );
        Ok(Redlock {
            inner: Arc::new(Inner {
                telemetry,
                masters,
                settings,
                admission: tokio::sync::Semaphore::new(MAX_ROUNDS_IN_FLIGHT),
                handoff: Handoff::default(),
            }),
        })
    }
}

impl Redlock {
    /// Starts configuring a client over the given master URLs
    /// (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS).
    pub fn builder<I, S>(urls: I) -> RedlockBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        RedlockBuilder::new(urls.into_iter().map(Into::into).collect())
    }

    /// The validated settings.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// Checks `ttl` as every acquire and extend of this client does (longer than the drift
    /// allowance, at most [`crate::validity::MAX_TTL`]) and returns it in whole milliseconds,
    /// or the same `InvalidArgument`: to refuse a bad TTL up front.
    pub fn check_ttl(&self, ttl: Duration) -> Result<Duration> {
        check_ttl(ttl, self.inner.settings.drift_factor)
    }

    /// Master URLs in configured order, passwords redacted.
    pub fn masters(&self) -> Vec<String> {
        self.inner
            .masters
            .iter()
            .map(|m| m.display().to_string())
            .collect()
    }

    /// What each master runs (server name and version, read when its connection opened) and
    /// the commands this client's release and extend use on it, in configured order; `None`
    /// for a master not connected right now.
    pub fn master_servers(&self) -> Vec<Option<MasterServer>> {
        self.inner.masters.iter().map(Master::server).collect()
    }

    /// Number of masters.
    pub fn master_count(&self) -> usize {
        self.inner.masters.len()
    }

    /// Masters with an established connection right now.
    pub fn connected_masters(&self) -> usize {
        self.inner
            .masters
            .iter()
            .filter(|m| m.is_connected())
            .count()
    }

    /// Waits until every master is connected or known to be down, at most `timeout`, and
    /// returns how many are connected. Optional: connections open in the background anyway;
    /// this lets a caller (or a benchmark) start with warm connections.
    pub async fn wait_connected(&self, timeout: Duration) -> usize {
        let all = futures_util::future::join_all(self.inner.masters.iter().map(|m| m.connected()));
        let _ = tokio::time::timeout(timeout, all).await;
        self.connected_masters()
    }

    /// One attempt, no retry.
    pub async fn try_acquire(&self, resource: &str, ttl: Duration) -> Result<Lock> {
        self.acquire_observed(resource, ttl, Retry::Once, &mut |_| {})
            .await
    }

    /// Up to `1 + retry_count` attempts with jittered delays between them.
    pub async fn acquire(&self, resource: &str, ttl: Duration) -> Result<Lock> {
        self.acquire_observed(resource, ttl, Retry::Configured, &mut |_| {})
            .await
    }

    /// Attempts until `deadline` (no attempt starts after it), whatever `retry_count` says.
    pub async fn acquire_with_deadline(
        &self,
        resource: &str,
        ttl: Duration,
        deadline: Instant,
    ) -> Result<Lock> {
        self.acquire_observed(resource, ttl, Retry::Until(deadline), &mut |_| {})
            .await
    }

    /// The general acquire: `observer` sees every attempt's vote as it completes (this is how
    /// the load generator counts split votes and attempt latency without a shared lock).
    pub async fn acquire_observed(
        &self,
        resource: &str,
        ttl: Duration,
        retry: Retry,
        observer: &mut (dyn FnMut(&Vote) + Send),
    ) -> Result<Lock> {
        let never = std::future::pending::<()>();
        match self
            .acquire_cancellable(resource, ttl, retry, observer, never)
            .await?
        {
            Some(lock) => Ok(lock),
            None => Err(Error::Internal(
                "acquire cancelled without a cancel signal".into(),
            )),
        }
    }

    /// Like [`acquire_observed`](Self::acquire_observed), but gives up as soon as `cancel`
    /// completes (e.g. a Ctrl-C check or a shutdown signal) and returns `Ok(None)` — after the
    /// in-flight attempt's keys have been deleted on every master, so nothing is left behind.
    ///
    /// Every acquire is also cancel-safe when its future is simply dropped: the in-flight
    /// attempt's keys are then deleted in the background.
    pub async fn acquire_cancellable<C>(
        &self,
        resource: &str,
        ttl: Duration,
        retry: Retry,
        observer: &mut (dyn FnMut(&Vote) + Send),
        cancel: C,
    ) -> Result<Option<Lock>>
    where
        C: std::future::Future<Output = ()>,
    {
        let telemetry = &self.inner.telemetry;
        let mut watch = telemetry.acquire_started(resource);
        let span = watch.span().clone();
        let mut seen = |vote: &Vote| {
            telemetry.attempt_finished(&mut watch, vote);
            observer(vote);
        };
        let result = self
            .acquire_attempts(resource, ttl, retry, &mut seen, cancel)
            .instrument(span)
            .await;
        telemetry.acquire_finished(watch, &result);
        result
    }

    /// The attempts of an acquire (see [`acquire_cancellable`](Self::acquire_cancellable)).
    async fn acquire_attempts<C>(
        &self,
        resource: &str,
        ttl: Duration,
        retry: Retry,
        observer: &mut (dyn FnMut(&Vote) + Send),
        cancel: C,
    ) -> Result<Option<Lock>>
    where
        C: std::future::Future<Output = ()>,
    {
        let call_started = Instant::now();
        check_resource(resource)?;
        let settings = &self.inner.settings;
        let ttl = check_ttl(ttl, settings.drift_factor)?;
        let resource: Arc<str> = Arc::from(resource);
        let max_attempts = match retry {
            Retry::Once => 1,
            Retry::Configured => settings.retry_count.saturating_add(1),
            Retry::Until(_) => u32::MAX,
        };
        tokio::pin!(cancel);
        // This acquire's place in the resource's line, from its first wait on (handoff.rs).
        let mut ticket: Option<Ticket<'_>> = None;
        if max_attempts > 1 && self.waits_in_line(&resource) {
            // Others of this client wait for it already: wait in line before the first
            // attempt, as a waiter that lost one would (it is held, or about to be handed on).
            let delay = self.delay_before(retry);
            let place = ticket.insert(self.inner.handoff.join(&resource));
            if pause(Some(place), delay, cancel.as_mut()).await {
                return Ok(None);
            }
        }
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let mut hex = [0u8; 40];
            fill_token(&mut hex).map_err(|e| Error::Internal(format!("OS random source: {e}")))?;
            // Hex digits are ASCII: always valid UTF-8.
            let token: Arc<str> = Arc::from(std::str::from_utf8(&hex).unwrap_or_default());
            let mut in_flight = InFlight::arm(self, &resource, &token);
            let (vote, fencing_token) = tokio::select! {
                biased;
                won = self.attempt(&resource, &token, ttl) => won,
                () = &mut cancel => {
                    self.unlock_all(&resource, &token).await;
                    in_flight.disarm();
                    return Ok(None);
                }
            };
            observer(&vote);
            if let Some(validity) = vote.validity() {
                in_flight.disarm();
                drop(in_flight);
                return Ok(Some(Lock {
                    resource,
                    token,
                    ttl,
                    validity,
                    computed_at: vote.completed(),
                    extensions: 0,
                    vote,
                    fencing_token,
                    held: self.inner.telemetry.won(),
                }));
            }
            // Lost: undo whatever this attempt set, on every master (even those that denied
            // or failed: their answer may have been lost after the key was written).
            self.unlock_all(&resource, &token).await;
            in_flight.disarm();
            let delay = jittered(settings.retry_delay);
            let out_of_time = match retry {
                Retry::Until(deadline) => Instant::now() + delay > deadline,
                _ => false,
            };
            if attempts >= max_attempts || out_of_time {
                return Err(self.acquire_error(&resource, attempts, call_started.elapsed(), vote));
            }
            // Sleep the drawn delay; in line, a release of the resource by this client may
            // end it early.
            if ticket.is_none() && settings.local_handoff {
                ticket = Some(self.inner.handoff.join(&resource));
            }
            if pause(ticket.as_ref(), delay, cancel.as_mut()).await {
                return Ok(None);
            }
        }
    }

    /// This client's lines (tests look at them to know who waits).
    #[cfg(test)]
    pub(crate) fn handoff(&self) -> &Handoff {
        &self.inner.handoff
    }

    /// True when this client hands off and other tasks of it wait for `resource`.
    fn waits_in_line(&self, resource: &str) -> bool {
        self.inner.settings.local_handoff && self.inner.handoff.others_waiting(resource)
    }

    /// The wait before an attempt: the drawn retry delay, cut to the deadline if any.
    fn delay_before(&self, retry: Retry) -> Duration {
        let delay = jittered(self.inner.settings.retry_delay);
        match retry {
            Retry::Until(deadline) => delay.min(deadline.saturating_duration_since(Instant::now())),
            _ => delay,
        }
    }

    /// One attempt: SET NX PX on all masters, then the validity check; fenced, the two rounds
    /// of `fencing.rs`. The fencing token is `Some` only when the attempt won.
    async fn attempt(
        &self,
        resource: &Arc<str>,
        token: &Arc<str>,
        ttl: Duration,
    ) -> (Vote, Option<u64>) {
        if self.inner.settings.fencing {
            // Telemetry sees the merged vote: one request per master, both rounds together.
            let (vote, fencing_token) = self.fenced_attempt(resource, token, ttl).await;
            self.inner.telemetry.round_finished(
                RoundKind::FencedAcquire,
                &vote,
                &self.inner.masters,
            );
            return (vote, fencing_token);
        }
        let op = Op::Lock {
            ttl_ms: ttl.as_millis() as u64,
        };
        let vote = self.round(op, resource, token, Stop::WhenDecided).await;
        self.inner
            .telemetry
            .round_finished(RoundKind::Acquire, &vote, &self.inner.masters);
        (self.with_validity(vote, ttl), None)
    }

    /// One request on every master, by the client's fan-out and timeout.
    async fn round(&self, op: Op, resource: &Arc<str>, token: &Arc<str>, stop: Stop) -> Vote {
        self.round_then(op, resource, token, stop, None).await
    }

    /// A round that calls `on_queued` once its requests are on every master's queue.
    async fn round_then(
        &self,
        op: Op,
        resource: &Arc<str>,
        token: &Arc<str>,
        stop: Stop,
        on_queued: Option<&(dyn Fn() + Sync)>,
    ) -> Vote {
        let settings = &self.inner.settings;
        // Never closed, so never an error; the permit is held until the round is decided.
        let _admitted = self.inner.admission.acquire().await;
        let request = Request {
            op,
            resource,
            token,
            on_queued,
        };
        round(
            &self.inner.masters,
            settings.fanout,
            settings.instance_timeout,
            settings.quorum,
            request,
            stop,
        )
        .await
    }

    /// The quorum rule of this client.
    fn quorum(&self) -> Quorum {
        Quorum::new(self.inner.masters.len(), self.inner.settings.quorum)
    }

    /// Sets the vote's validity when a quorum granted and time is left (acquire and extend).
    fn with_validity(&self, mut vote: Vote, ttl: Duration) -> Vote {
        if self.quorum().reached(vote.granted()) {
            let drift = drift(ttl, self.inner.settings.drift_factor);
            vote.validity = validity(ttl, vote.elapsed, drift);
        }
        vote
    }

    /// The error of an acquire call that made `attempts` in `elapsed` and lost the last one.
    fn acquire_error(&self, resource: &str, attempts: u32, elapsed: Duration, vote: Vote) -> Error {
        // Unavailable when failures alone made the quorum unreachable: Redis is down, not busy.
        let (resource, vote) = (resource.to_string(), Box::new(vote));
        if self.quorum().unavailable(vote.failed()) {
            Error::Unavailable {
                resource,
                attempts,
                elapsed,
                vote,
            }
        } else {
            Error::NotAcquired {
                resource,
                attempts,
                elapsed,
                vote,
            }
        }
    }

    async fn unlock_all(&self, resource: &Arc<str>, token: &Arc<str>) -> Vote {
        let vote = self
            .round(Op::Unlock, resource, token, Stop::AfterAll)
            .await;
        self.inner
            .telemetry
            .round_finished(RoundKind::Cleanup, &vote, &self.inner.masters);
        vote
    }

    /// This client's spans, events and metrics.
    pub(crate) fn telemetry(&self) -> &Telemetry {
        &self.inner.telemetry
    }

    /// Renews `lock` to `ttl` on every master that still holds its token. Succeeds iff a
    /// quorum renewed it within the new validity; then `lock` carries the new validity.
    /// Never re-creates a key that is gone. Fails with `LockLost` when the lock is not held
    /// (or the extension bound is reached), `Unavailable` when too few masters answered.
    pub async fn extend(&self, lock: &mut Lock, ttl: Duration) -> Result<()> {
        let telemetry = &self.inner.telemetry;
        let watch = telemetry.extend_started(&lock.resource);
        let result = self
            .extend_round(lock, ttl)
            .instrument(watch.span().clone())
            .await;
        telemetry.extend_finished(&watch, &result.as_ref().map(|()| &lock.vote));
        if let Err(Error::LockLost { reason, .. }) = &result {
            if *reason != LostReason::ExtensionLimit {
                telemetry.lock_lost(lock, *reason);
            }
        }
        result
    }

    /// The round of an extend (see [`extend`](Self::extend)).
    async fn extend_round(&self, lock: &mut Lock, ttl: Duration) -> Result<()> {
        let settings = &self.inner.settings;
        let ttl = check_ttl(ttl, settings.drift_factor)?;
        if lock.extensions >= settings.max_extensions {
            return Err(Error::LockLost {
                resource: lock.resource.to_string(),
                reason: LostReason::ExtensionLimit,
                vote: None,
            });
        }
        let op = Op::Extend {
            ttl_ms: ttl.as_millis() as u64,
        };
        let vote = self
            .round(op, &lock.resource, &lock.token, Stop::WhenDecided)
            .await;
        self.inner
            .telemetry
            .round_finished(RoundKind::Extend, &vote, &self.inner.masters);
        let vote = self.with_validity(vote, ttl);
        if self.quorum().reached(vote.granted()) {
            if let Some(validity) = vote.validity {
                lock.ttl = ttl;
                lock.validity = validity;
                lock.computed_at = vote.completed();
                lock.extensions += 1;
                lock.vote = vote;
                return Ok(());
            }
            return Err(Error::LockLost {
                resource: lock.resource.to_string(),
                reason: LostReason::Expired,
                vote: Some(Box::new(vote)),
            });
        }
        if self.quorum().unavailable(vote.failed()) {
            return Err(Error::Unavailable {
                resource: lock.resource.to_string(),
                attempts: 1,
                elapsed: vote.elapsed(),
                vote: Box::new(vote),
            });
        }
        Err(Error::LockLost {
            resource: lock.resource.to_string(),
            reason: LostReason::NotHeld,
            vote: Some(Box::new(vote)),
        })
    }

    /// Deletes the lock's key on every master where it still holds the lock's token. The
    /// vote's `granted()` is the number of masters that released; releasing an expired or
    /// foreign lock is not an error (0 released). Waits for every master, bounded by the
    /// per-master timeout. A master that refuses the native release (renamed, denied by an
    /// ACL) is asked again with the script at once; one that refuses both makes the call
    /// fail with [`Error::ReleaseRefused`], naming it: "0 released" never hides a refusal.
    pub async fn release(&self, lock: &Lock) -> Result<Vote> {
        let telemetry = &self.inner.telemetry;
        let watch = telemetry.release_started(&lock.resource);
        let vote = self
            .release_round(lock)
            .instrument(watch.span().clone())
            .await;
        telemetry.release_finished(&watch, lock, &vote);
        let refusals: Vec<String> = vote
            .masters()
            .iter()
            .filter_map(|m| {
                let cause = m
                    .error
                    .as_deref()
                    .filter(|c| crate::master::is_refusal(c))?;
                let address = self.inner.masters[m.master].display();
                Some(format!("master #{} ({address}): {cause}", m.master))
            })
            .collect();
        if refusals.is_empty() {
            return Ok(vote);
        }
        Err(Error::ReleaseRefused {
            resource: lock.resource.to_string(),
            refusals,
            vote: Box::new(vote),
        })
    }

    /// The round of a release (see [`release`](Self::release)).
    async fn release_round(&self, lock: &Lock) -> Vote {
        // This client's next waiter for the resource may ask as soon as the deletes are
        // queued: each master sends its SET after this release's delete. (Whatever the vote,
        // the key is then gone or was never ours; the waiter's own vote decides.)
        let hand_off = || self.inner.handoff.released(&lock.resource);
        let vote = self
            .round_then(
                Op::Unlock,
                &lock.resource,
                &lock.token,
                Stop::AfterAll,
                Some(&hand_off),
            )
            .await;
        self.inner
            .telemetry
            .round_finished(RoundKind::Release, &vote, &self.inner.masters);
        vote
    }

    /// Releases `lock` at the end of a scope that acted as its owner (a `with` block, a C++
    /// `Guard`): like [`release`](Self::release), but `LockLost` (reason
    /// `ExpiredBeforeRelease`) when the
    /// validity had run out before the release, which is still made on every master. See
    /// [`Lock::check_still_valid`].
    pub async fn release_scoped(&self, lock: &Lock) -> Result<Vote> {
        let checked = lock.check_still_valid();
        if checked.is_err() {
            self.inner
                .telemetry
                .lock_lost(lock, LostReason::ExpiredBeforeRelease);
        }
        Lock::end_of_scope(checked, self.release(lock).await)
    }
}
