//! One Redis master: a queue of requests in issue order, and a task that keeps a connection
//! open and serves the queue over it.
//!
//! Order by construction: a request is put on the master's queue the moment the algorithm
//! issues it (a non-blocking send, in master order), and one task writes the queue to the
//! connection front to back. While the connection is opening or re-opening, requests wait in
//! the queue; none is dropped to keep order, so the first lock of a fresh client reaches every
//! master that can be reached, and a cleanup or release always follows the request it undoes.
//! A caller that stops waiting (quorum decided early, per-master timeout) only stops
//! listening: its request still goes out in its place.
//!
//! Bounded against a master that misbehaves: the queue holds at most `QUEUE_CAPACITY`
//! requests (a full queue fails the request at once), a connection at most `MAX_IN_FLIGHT`
//! unanswered ones, replies are size-checked from their header (`redlock_resp::read_reply`),
//! a reply that is not its request's (`scripts.rs`) or a master silent for `silence` replaces
//! the connection, and requests left waiting for a connection longer than `QUEUE_GRACE` are
//! failed instead of sent late. A master that cannot be reached fails requests at once with
//! its cause, and so does one whose connections keep breaking (replaced only after a
//! back-off, `supervise`).

mod dial;
mod fence;
mod job;
mod pipeline;
mod scripts;
mod server;
#[cfg(feature = "tls")]
mod tls;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::{mpsc, Notify};

use crate::argument::ArgValue;
use crate::collector::Collector;
use crate::error::{Error, Result};
use crate::redact::redact_url;
use crate::vote::FailureKind;

pub(crate) use crate::answer::Failure;
pub use fence::{counter_key, MAX_FENCING_TOKEN};
use job::{Job, Queued};
pub(crate) use scripts::{is_refusal, Op};
pub use server::{ExtendCommand, MasterServer, NativeRefusal, ReleaseCommand};

use dial::Target;
use pipeline::Ended;

/// How long one connect (TCP, TLS) may take, and then the login handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// Reconnect back-off (see `supervise`): the delay doubles from `MIN_BACKOFF` to `MAX_BACKOFF`,
/// each drawn with jitter in `[d/2, d]` so that many clients (or many masters that are down)
/// do not retry in step. A master nobody asks for is retried rarely (an idle client with many
/// masters down costs next to nothing); one that refuses connects while requests keep asking
/// for it is retried at most every `KICK_INTERVAL`, so a restarted master is found again
/// quickly by a client that uses it.
const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
const KICK_INTERVAL: Duration = Duration::from_millis(100);
/// Requests one master's queue holds. A request that finds it full fails at once.
const QUEUE_CAPACITY: usize = 16 * 1024;
/// The silence bound is this many per-master timeouts, and at least `MIN_SILENCE`: a master
/// that leaves its oldest request unanswered that long has its connection replaced.
const SILENT_TIMEOUTS: u32 = 4;
const MIN_SILENCE: Duration = Duration::from_secs(1);

enum ConnState {
    /// A connect (or handshake) is under way: requests wait in the queue.
    Connecting,
    /// Serving requests, in the commands this server takes.
    Connected(Arc<MasterServer>),
    /// The last connect failed; requests fail at once with this until the next try.
    Down(Failure),
}

struct Shared {
    state: ArcSwap<ConnState>,
    /// Signalled on every state change.
    changed: Notify,
    /// Signalled by a request that found the master down: retry soon.
    kick: Notify,
}

/// A configured master.
pub(crate) struct Master {
    /// The URL with any password redacted: the only form ever displayed.
    display: String,
    handle: MasterHandle,
}

/// What a request needs of a master; cheap to clone.
#[derive(Clone)]
pub(crate) struct MasterHandle {
    queue: mpsc::Sender<Queued>,
    shared: Arc<Shared>,
}

impl fmt::Debug for Master {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Master")
            .field("url", &self.display)
            .finish()
    }
}

/// Parses master URL number `index` (what it points at and how to reach it), or
/// `InvalidArgument` naming it, redacted.
pub(crate) fn target_of(index: usize, url: &str) -> Result<Target> {
    Target::parse(url).map_err(|e| {
        Error::invalid_argument(
            format!("master URL #{index}"),
            ArgValue::Text(redact_url(url)),
            e,
        )
    })
}

impl Master {
    /// Parses `url` and starts connecting in the background. Must run inside a tokio runtime.
    /// `native`: release and extend may use the server's own commands (`server.rs`).
    pub(crate) fn new(
        index: usize,
        url: &str,
        instance_timeout: Duration,
        native: bool,
    ) -> Result<Self> {
        let display = redact_url(url);
        let target = target_of(index, url)?;
        let shared = Arc::new(Shared {
            state: ArcSwap::from_pointee(ConnState::Connecting),
            changed: Notify::new(),
            kick: Notify::new(),
        });
        let (queue, jobs) = mpsc::channel(QUEUE_CAPACITY);
        let silence = (instance_timeout * SILENT_TIMEOUTS).max(MIN_SILENCE);
        let label = MasterLabel {
            index,
            display: display.clone(),
        };
        tokio::spawn(supervise(
            target,
            jobs,
            Arc::clone(&shared),
            silence,
            native,
            label,
        ));
        Ok(Master {
            display,
            handle: MasterHandle { queue, shared },
        })
    }

    /// The URL with its password redacted.
    pub(crate) fn display(&self) -> &str {
        &self.display
    }

    /// A handle for sending requests.
    pub(crate) fn handle(&self) -> &MasterHandle {
        &self.handle
    }

    /// True while a connection is established.
    pub(crate) fn is_connected(&self) -> bool {
        matches!(**self.handle.shared.state.load(), ConnState::Connected(_))
    }

    /// What the master runs and the commands in use, while a connection is established.
    pub(crate) fn server(&self) -> Option<MasterServer> {
        match &**self.handle.shared.state.load() {
            ConnState::Connected(server) => Some(MasterServer::clone(server)),
            _ => None,
        }
    }

    /// The release and extend commands of the established connection (no allocation: read on
    /// every request's measurement); `None` while not connected.
    pub(crate) fn commands(&self) -> Option<(ReleaseCommand, ExtendCommand)> {
        match &**self.handle.shared.state.load() {
            ConnState::Connected(server) => Some((server.release, server.extend)),
            _ => None,
        }
    }

    /// Waits until connected (true) or until a connect attempt failed (false).
    pub(crate) async fn connected(&self) -> bool {
        let shared = &self.handle.shared;
        loop {
            let changed = shared.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match **shared.state.load() {
                ConnState::Connected(_) => return true,
                ConnState::Down(_) => return false,
                ConnState::Connecting => changed.await,
            }
        }
    }
}

impl MasterHandle {
    /// Puts a request on the queue now (so it keeps its place); its answer goes to
    /// `collector` at `index`. `now`: the caller's clock reading for this moment (one per
    /// round, not one per master). A master known to be down, or a full queue, answers at
    /// once with the failure.
    pub(crate) fn submit(
        &self,
        op: Op,
        resource: &Arc<str>,
        token: &Arc<str>,
        collector: &Arc<Collector>,
        index: usize,
        now: Instant,
    ) {
        if let ConnState::Down(failure) = &**self.shared.state.load() {
            self.shared.kick.notify_one();
            collector.record(index, Err(failure.clone()), now);
            return;
        }
        let job = Job {
            op,
            resource: Arc::clone(resource),
            token: Arc::clone(token),
            queued_at: now,
            sent_at: None,
            reply: (Arc::clone(collector), index),
            refused: None,
        };
        let failure = match self.queue.try_send(Queued::Request(job)) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Full(_)) => Failure::new(
                FailureKind::Overloaded,
                format!("{QUEUE_CAPACITY} requests already waiting for this master"),
            ),
            Err(mpsc::error::TrySendError::Closed(_)) => Failure::new(
                FailureKind::Other,
                "the master's connection task has stopped",
            ),
        };
        collector.record(index, Err(failure), now);
    }
}

impl MasterHandle {
    /// Completes once this master's connection has read every reply that reached this client
    /// before the call and written every request queued before it; returns when the
    /// connection last wrote (`None`: never, or no connection, or a full queue). Never
    /// completes while the connection cannot write (the caller bounds the wait). For a round
    /// whose deadline passed: to tell a silent master from replies this client has not read,
    /// or requests it sent late.
    ///
    ///
    /// Asked while a connect is under way (or just failed), it is answered in queue order
    /// after that connect ends: a refusal this client had not yet read by the deadline (a busy
    /// host) fails the requests queued before it with its cause, instead of leaving them to
    /// be called timed out.
    pub(crate) async fn caught_up(&self) -> Option<Instant> {
        let (done, answer) = tokio::sync::oneshot::channel();
        self.queue.try_send(Queued::CatchUp(done)).ok()?;
        // Dropped unanswered (the connection ended): nothing is left to read either.
        answer.await.ok().flatten()
    }
}

/// Which master a connection task serves, for what it logs.
struct MasterLabel {
    index: usize,
    /// The URL with any password redacted.
    display: String,
}

impl MasterLabel {
    /// The connection left a native command for its script: shown by
    /// [`crate::Redlock::master_servers`] from now on, and said once at WARN per connection
    /// and command.
    fn refused(&self, shared: &Shared, server: &MasterServer) {
        set_state(shared, ConnState::Connected(Arc::new(server.clone())));
        let cause = server.refused.as_ref().map_or("", |r| r.cause.as_str());
        tracing::warn!(
            target: "redlock",
            master = self.index,
            address = %self.display,
            cause,
            "master #{} ({}) refused a native command ({cause}): its releases and extends use \
             the scripts until it reconnects",
            self.index,
            self.display,
        );
    }
}

/// Connects, serves the queue, reconnects: until every handle of the client is gone.
///
/// Two back-offs, each doubling from `MIN_BACKOFF` to `MAX_BACKOFF` with jitter: one for
/// connects that fail (reset by a connect that succeeds), one for connections that break
/// before they are proven (`pipeline::PROVEN_AFTER`: a master that answers out of protocol,
/// drops replies or goes silent), reset only by a connection that proved itself. A proven
/// connection that breaks is re-opened at once: a restarted master is usually back.
async fn supervise(
    target: Target,
    mut queue: mpsc::Receiver<Queued>,
    shared: Arc<Shared>,
    silence: Duration,
    native: bool,
    label: MasterLabel,
) {
    let refused = |server: &MasterServer| label.refused(&shared, server);
    let mut connect_backoff = Duration::ZERO;
    let mut broken_backoff = Duration::ZERO;
    loop {
        set_state(&shared, ConnState::Connecting);
        let (failure, backoff, kickable) = match connect(&target, native).await {
            Ok((stream, server)) => {
                connect_backoff = Duration::ZERO;
                set_state(&shared, ConnState::Connected(Arc::new(server.clone())));
                match pipeline::serve(stream, &mut queue, silence, server, &refused).await {
                    Ended::Shutdown => return,
                    Ended::Broken { proven: true, .. } => {
                        broken_backoff = Duration::ZERO;
                        continue;
                    }
                    Ended::Broken { failure, .. } => {
                        // Requests cannot hurry this one: a master that misbehaves on every
                        // connection must not get one per request.
                        broken_backoff = (broken_backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF);
                        (failure, broken_backoff, false)
                    }
                }
            }
            Err(failure) => {
                connect_backoff = (connect_backoff * 2).clamp(MIN_BACKOFF, MAX_BACKOFF);
                (failure, connect_backoff, true)
            }
        };
        set_state(&shared, ConnState::Down(failure.clone()));
        if !back_off(&mut queue, &shared, &failure, backoff, kickable).await {
            return;
        }
    }
}

/// Waits out a jittered `backoff` after `failure`, failing the requests that arrive meanwhile
/// with it; a request that finds the master down ends the wait early (after at most
/// `KICK_INTERVAL`) when `kickable`. False once every handle of the client is gone.
async fn back_off(
    queue: &mut mpsc::Receiver<Queued>,
    shared: &Shared,
    failure: &Failure,
    backoff: Duration,
    kickable: bool,
) -> bool {
    let failed_at = tokio::time::Instant::now();
    let mut wake = failed_at + crate::validity::jittered(backoff);
    let kick_from = failed_at + KICK_INTERVAL.min(backoff);
    // Requests queued while connecting, or racing with the state change, fail with the cause
    // at once, before anything else: a kick only brings the next try forward, and the wait
    // for it keeps failing them (a kick used to sleep until `kick_from` with them queued:
    // a sequential acquire waited 100 ms, twice its per-master timeout, on a killed master).
    loop {
        tokio::select! {
            biased;
            job = queue.recv() => match job {
                Some(job) => job.fail(failure.clone()),
                None => return false,
            },
            () = tokio::time::sleep_until(wake) => return true,
            () = shared.kick.notified(), if kickable => wake = wake.min(kick_from),
        }
    }
}

/// Opens the stream and runs the handshake, each bounded by `CONNECT_TIMEOUT`.
async fn connect(
    target: &Target,
    native: bool,
) -> std::result::Result<(dial::Stream, MasterServer), Failure> {
    let mut stream = tokio::time::timeout(CONNECT_TIMEOUT, target.open())
        .await
        .map_err(|_| {
            Failure::new(
                FailureKind::Connection,
                format!("connecting timed out after {CONNECT_TIMEOUT:?}"),
            )
        })??;
    let server = tokio::time::timeout(CONNECT_TIMEOUT, target.handshake(&mut stream, native))
        .await
        .map_err(|_| {
            Failure::new(
                FailureKind::Connection,
                format!(
                    "accepted the connection but did not answer the handshake (AUTH, SCRIPT LOAD, INFO) within {CONNECT_TIMEOUT:?}"
                ),
            )
        })??;
    Ok((stream, server))
}

fn set_state(shared: &Shared, state: ConnState) {
    shared.state.store(Arc::new(state));
    shared.changed.notify_waiters();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn down_master() -> (
        Shared,
        mpsc::Sender<Queued>,
        mpsc::Receiver<Queued>,
        Failure,
    ) {
        let shared = Shared {
            state: ArcSwap::from_pointee(ConnState::Connecting),
            changed: Notify::new(),
            kick: Notify::new(),
        };
        let (queue, jobs) = mpsc::channel(4);
        let failure = Failure::new(FailureKind::Connection, "connection refused");
        (shared, queue, jobs, failure)
    }

    /// A request queued while the connect was under way, and a kick left by a request that
    /// found the master down before: the request is failed at once, never held until the
    /// kick's next try (tokio's `select!` picks among ready branches at random, so one
    /// round alone would pass half the time without the fix).
    #[tokio::test(start_paused = true)]
    async fn requests_queued_before_a_kick_fail_at_once() {
        for round in 0..20 {
            let (shared, queue, mut jobs, failure) = down_master();
            shared.kick.notify_one();
            let (done, answer) = tokio::sync::oneshot::channel();
            assert!(queue.try_send(Queued::CatchUp(done)).is_ok());
            let started = tokio::time::Instant::now();
            let backing_off = back_off(&mut jobs, &shared, &failure, MAX_BACKOFF, true);
            tokio::pin!(backing_off);
            tokio::select! {
                _ = &mut backing_off => panic!("round {round}: the back-off ended first"),
                answered = answer => assert_eq!(answered.ok(), Some(None)),
            }
            assert_eq!(started.elapsed(), Duration::ZERO, "round {round}");
        }
    }

    /// A kick brings the next try forward to `KICK_INTERVAL` after the failure, no sooner
    /// and not at the end of the back-off.
    #[tokio::test(start_paused = true)]
    async fn a_kick_brings_the_next_try_to_the_kick_interval() {
        let (shared, _queue, mut jobs, failure) = down_master();
        shared.kick.notify_one();
        let started = tokio::time::Instant::now();
        assert!(back_off(&mut jobs, &shared, &failure, MAX_BACKOFF, true).await);
        assert_eq!(started.elapsed(), KICK_INTERVAL);
    }
}
