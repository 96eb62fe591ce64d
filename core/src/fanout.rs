//! Sending one request to every master, sequentially or concurrently, and collecting the vote.
//!
//! A round only ever stops *listening*: every request it submitted stays on its master's
//! queue and is sent in its place (see `master/mod.rs`), so stopping early can neither drop
//! nor reorder work.

use std::borrow::Borrow;
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;

use crate::collector::{Collector, Recorded, WakeWhen};
use crate::config::FanOut;
use crate::master::{Failure, Master, Op};
use crate::quorum::Quorum;
use crate::vote::{Outcome, Vote};

/// Whether a round may stop before every master answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Stop once the vote is decided: quorum granted, or quorum no longer reachable
    /// (concurrent fan-out only; sequential goes through the whole list).
    WhenDecided,
    /// Wait for every master (bounded by the per-master timeout): cleanup and release.
    AfterAll,
}

/// What one round sends.
pub(crate) struct Request<'a> {
    pub(crate) op: Op,
    pub(crate) resource: &'a Arc<str>,
    pub(crate) token: &'a Arc<str>,
    /// Called once every master's request is on its queue: concurrent, before any answer is
    /// awaited; sequential, after the last one. Later requests to the same masters are sent
    /// after these (each master's queue keeps issue order).
    pub(crate) on_queued: Option<&'a (dyn Fn() + Sync)>,
}

/// The cause of a timed-out master.
const NO_REPLY: &str = "no reply within the per-master timeout";

/// Writes master `i`'s part of `vote` from what its collector recorded. `unanswered` is what
/// a master that did not answer gets: `TimedOut` after the deadline, else `NotAwaited`.
fn fill(vote: &mut Vote, i: usize, sent: Instant, recorded: Recorded, unanswered: Outcome) {
    let m = &mut vote.masters[i];
    match recorded {
        Some((answer, arrived)) => {
            m.round_trip = Some(arrived.saturating_duration_since(sent));
            match answer {
                Ok(true) => m.outcome = Outcome::Granted,
                Ok(false) => m.outcome = Outcome::Denied,
                Err(Failure { kind, cause }) => {
                    m.outcome = Outcome::Failed(kind);
                    m.error = Some(cause);
                }
            }
        }
        None if unanswered == Outcome::TimedOut => {
            m.outcome = Outcome::TimedOut;
            // No duration in the words: each surface states durations in its own unit.
            m.error = Some(Arc::from(NO_REPLY));
        }
        None => m.outcome = unanswered,
    }
}

/// After a deadline, one tick of tokio's timer: the runtime polls the sockets before any later
/// timer fires, so what had arrived by the deadline is known to be readable after it.
const SOCKETS_POLLED: Duration = Duration::from_millis(1);

/// Waits until `decided` completes, or until the masters of `which` that have not answered
/// had `timeout` to answer, counted after this client sent their requests and before it has
/// read what they replied; returns whether the round was decided.
///
/// Why: with many callers, or a client short of CPU, paused, or on a busy host, a request can
/// wait in this client before it leaves, and a reply can wait unread in its socket when the
/// deadline's wake-up runs. Neither wait is the master's; counted against it, a healthy master
/// would be reported as timing out.
///
/// So after the deadline the round lets the runtime poll the sockets, then has each
/// unanswered master's connection catch up ([`MasterHandle::caught_up`]: read what arrived,
/// write what was queued), waiting at most `timeout` for that. If a connection wrote after
/// the deadline, the request may have left only then: the round waits until `timeout` after
/// that write, once. A silent master costs its timeout and about a millisecond (up to twice
/// its timeout when its connection is busy with other rounds), one that stopped reading at
/// most twice its timeout, and a paused client no timeouts at all.
///
/// [`MasterHandle::caught_up`]: crate::master::MasterHandle::caught_up
async fn wait_decided<M: Borrow<Master>>(
    masters: &[M],
    which: Range<usize>,
    collector: &Collector,
    start: Instant,
    timeout: Duration,
    decided: impl Future<Output = ()>,
) -> bool {
    tokio::pin!(decided);
    let Some(mut until) = start.checked_add(timeout) else {
        // A timeout too long for the clock: no deadline at all.
        decided.await;
        return true;
    };
    for last_look in [false, true] {
        let deadline = tokio::time::Instant::from_std(until);
        if tokio::time::timeout_at(deadline, decided.as_mut())
            .await
            .is_ok()
            || tokio::time::timeout(SOCKETS_POLLED, decided.as_mut())
                .await
                .is_ok()
        {
            return true;
        }
        let unanswered = which.clone().filter(|&i| !collector.has_answered(i));
        let caught_up = futures_util::future::join_all(
            unanswered.map(|i| masters[i].borrow().handle().caught_up()),
        );
        tokio::pin!(caught_up);
        let catching_up = async {
            match tokio::time::timeout(timeout, caught_up.as_mut()).await {
                Ok(written) => written,
                // As at the deadline: one tick for the connection tasks that became ready
                // while this client was off the CPU (a connect's refusal, a reply).
                Err(_) => tokio::time::timeout(SOCKETS_POLLED, caught_up.as_mut())
                    .await
                    .unwrap_or_default(),
            }
        };
        let written = tokio::select! {
            biased;
            () = decided.as_mut() => return true,
            written = catching_up => written,
        };
        let last_write = written.into_iter().flatten().max();
        match last_write.and_then(|at| at.checked_add(timeout)) {
            Some(next) if !last_look && next > Instant::now() => until = next,
            _ => break,
        }
    }
    // An answer recorded since the last wait still counts.
    decided.as_mut().now_or_never().is_some()
}

/// Runs `request` on all masters and returns the vote (elapsed set; validity left `None`).
pub(crate) async fn round(
    masters: &[Master],
    fanout: FanOut,
    timeout: Duration,
    quorum: usize,
    request: Request<'_>,
    stop: Stop,
) -> Vote {
    round_counted(masters, fanout, timeout, quorum, request, stop)
        .await
        .0
}

/// Runs `request` on `masters` (all of the client's, or some of them: a fenced acquire's
/// round 2 goes to the masters that granted its round 1) and returns the vote, in the order
/// of `masters`, and, for round 1 of a fenced acquire, the counter each granting master read
/// (empty for every other request).
pub(crate) async fn round_counted<M: Borrow<Master>>(
    masters: &[M],
    fanout: FanOut,
    timeout: Duration,
    quorum: usize,
    request: Request<'_>,
    stop: Stop,
) -> (Vote, Vec<u64>) {
    let mut vote = Vote::new(masters.len(), quorum);
    let start = vote.started;
    let counted = matches!(request.op, Op::FencedLock { .. });
    let submit = |master: &M, collector: &Arc<Collector>, index: usize, now: Instant| {
        master.borrow().handle().submit(
            request.op,
            request.resource,
            request.token,
            collector,
            index,
            now,
        )
    };
    let counters;
    match fanout {
        FanOut::Sequential => {
            let rule = Quorum::new(masters.len(), quorum);
            let each = Arc::new(Collector::with_counters(
                masters.len(),
                rule,
                WakeWhen::EachAnswer,
                counted,
            ));
            // Round 2 of a fenced acquire stops waiting once decided, like concurrent
            // fan-out: the remaining masters that granted round 1 still get the request, sent
            // at once and not awaited (one master after another for the whole list is round
            // 1's rule, the algorithm's step list).
            let stop_early = stop == Stop::WhenDecided && matches!(request.op, Op::Fence { .. });
            let mut decided = false;
            let mut waited = Vec::with_capacity(masters.len());
            for (i, master) in masters.iter().enumerate() {
                let sent = Instant::now();
                submit(master, &each, i, sent);
                if decided {
                    waited.push((sent, false));
                    continue;
                }
                let answered =
                    wait_decided(masters, i..i + 1, &each, sent, timeout, each.answered(i)).await;
                let timed_out = !answered;
                waited.push((sent, timed_out));
                decided = stop_early && each.is_decided();
            }
            if let Some(queued) = request.on_queued {
                queued();
            }
            let (answers, read) = each.take();
            counters = read;
            for (i, recorded) in answers.into_iter().enumerate() {
                let (sent, timed_out) = waited[i];
                let unanswered = if timed_out {
                    Outcome::TimedOut
                } else {
                    Outcome::NotAwaited
                };
                fill(&mut vote, i, sent, recorded, unanswered);
            }
        }
        FanOut::Concurrent => {
            let wake = match stop {
                Stop::WhenDecided => WakeWhen::Decided,
                Stop::AfterAll => WakeWhen::AllAnswered,
            };
            let rule = Quorum::new(masters.len(), quorum);
            let all = Arc::new(Collector::with_counters(masters.len(), rule, wake, counted));
            // Every request is queued, in master order, before anything is awaited.
            for (i, master) in masters.iter().enumerate() {
                submit(master, &all, i, start);
            }
            if let Some(queued) = request.on_queued {
                queued();
            }
            let decided = wait_decided(
                masters,
                0..masters.len(),
                &all,
                start,
                timeout,
                all.finished(),
            )
            .await;
            let timed_out = !decided;
            let unanswered = if timed_out {
                Outcome::TimedOut
            } else {
                Outcome::NotAwaited
            };
            let (answers, read) = all.take();
            counters = read;
            for (i, recorded) in answers.into_iter().enumerate() {
                fill(&mut vote, i, start, recorded, unanswered);
            }
        }
    }
    vote.elapsed = start.elapsed();
    (vote, counters)
}
