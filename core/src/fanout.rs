//! Sending one request to every master, sequentially or concurrently, and collecting the vote.
//!
//! A round only ever stops *listening*: every request it submitted stays on its master's
//! queue and is sent in its place (see `master/mod.rs`), so stopping early can neither drop
//! nor reorder work.

use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Writes master `i`'s part of `vote` from what its collector recorded. `unanswered` is what
/// a master that did not answer gets: `TimedOut` after the deadline, else `NotAwaited`.
fn fill(
    vote: &mut Vote,
    i: usize,
    sent: Instant,
    recorded: Recorded,
    unanswered: Outcome,
    timeout: Duration,
) {
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
            m.error = Some(Arc::from(format!("no reply within {timeout:?}")));
        }
        None => m.outcome = unanswered,
    }
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
    let mut vote = Vote::new(masters.len(), quorum);
    let start = vote.started;
    let submit = |master: &Master, collector: &Arc<Collector>, index: usize, now: Instant| {
        master.handle().submit(
            request.op,
            request.resource,
            request.token,
            collector,
            index,
            now,
        )
    };
    match fanout {
        FanOut::Sequential => {
            let rule = Quorum::new(masters.len(), quorum);
            let each = Arc::new(Collector::new(masters.len(), rule, WakeWhen::EachAnswer));
            let mut waited = Vec::with_capacity(masters.len());
            for (i, master) in masters.iter().enumerate() {
                let sent = Instant::now();
                submit(master, &each, i, sent);
                let timed_out = tokio::time::timeout(timeout, each.answered(i))
                    .await
                    .is_err();
                waited.push((sent, timed_out));
            }
            if let Some(queued) = request.on_queued {
                queued();
            }
            for (i, recorded) in each.take().into_iter().enumerate() {
                let (sent, timed_out) = waited[i];
                let unanswered = if timed_out {
                    Outcome::TimedOut
                } else {
                    Outcome::NotAwaited
                };
                fill(&mut vote, i, sent, recorded, unanswered, timeout);
            }
        }
        FanOut::Concurrent => {
            let wake = match stop {
                Stop::WhenDecided => WakeWhen::Decided,
                Stop::AfterAll => WakeWhen::AllAnswered,
            };
            let rule = Quorum::new(masters.len(), quorum);
            let all = Arc::new(Collector::new(masters.len(), rule, wake));
            // Every request is queued, in master order, before anything is awaited.
            for (i, master) in masters.iter().enumerate() {
                submit(master, &all, i, start);
            }
            if let Some(queued) = request.on_queued {
                queued();
            }
            let timed_out = tokio::time::timeout(timeout, all.finished()).await.is_err();
            let unanswered = if timed_out {
                Outcome::TimedOut
            } else {
                Outcome::NotAwaited
            };
            for (i, recorded) in all.take().into_iter().enumerate() {
                fill(&mut vote, i, start, recorded, unanswered, timeout);
            }
        }
    }
    vote.elapsed = start.elapsed();
    vote
}
