//! Sending one request to every master, sequentially or concurrently, and collecting the vote.
//!
//! A round only ever stops *listening*: every request it submitted stays on its master's
//! queue and is sent in its place (see `master/mod.rs`), so stopping early can neither drop
//! nor reorder work.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::config::FanOut;
use crate::master::{Answer, Failure, Master, Op, Submitted};
use crate::quorum::{Quorum, Tally};
use crate::vote::{MasterVote, Outcome, Vote};

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
}

fn record(vote: &mut Vote, tally: &mut Tally, master: usize, answer: Answer, rtt: Duration) {
    let (outcome, error) = match answer {
        Ok(true) => {
            tally.granted += 1;
            (Outcome::Granted, None)
        }
        Ok(false) => {
            tally.denied += 1;
            (Outcome::Denied, None)
        }
        Err(Failure { kind, cause }) => {
            tally.failed += 1;
            (Outcome::Failed(kind), Some(cause))
        }
    };
    vote.masters[master] = MasterVote {
        master,
        outcome,
        round_trip: Some(rtt),
        error,
    };
}

fn timed_out(vote: &mut Vote, master: usize, timeout: Duration) {
    let m = &mut vote.masters[master];
    m.outcome = Outcome::TimedOut;
    m.error = Some(Arc::from(format!("no reply within {timeout:?}")));
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
    let rule = Quorum::new(masters.len(), quorum);
    let mut tally = Tally::default();
    let start = vote.started;
    let submit = |master: &Master| {
        master
            .handle()
            .submit(request.op, request.resource, request.token)
    };
    match fanout {
        FanOut::Sequential => {
            for (i, master) in masters.iter().enumerate() {
                let sent = Instant::now();
                match submit(master) {
                    Submitted::Failed(f) => {
                        record(&mut vote, &mut tally, i, Err(f), sent.elapsed())
                    }
                    Submitted::Queued(pending) => {
                        match tokio::time::timeout(timeout, pending).await {
                            Ok(answer) => {
                                record(&mut vote, &mut tally, i, flatten(answer), sent.elapsed())
                            }
                            Err(_) => {
                                tally.failed += 1;
                                timed_out(&mut vote, i, timeout);
                            }
                        }
                    }
                }
            }
        }
        FanOut::Concurrent => {
            // Submit to every master first, in master order, then listen.
            let mut pending = FuturesUnordered::new();
            for (i, master) in masters.iter().enumerate() {
                match submit(master) {
                    Submitted::Failed(f) => {
                        record(&mut vote, &mut tally, i, Err(f), start.elapsed())
                    }
                    Submitted::Queued(reply) => {
                        pending.push(async move { (i, flatten(reply.await)) })
                    }
                }
            }
            let deadline = tokio::time::sleep(timeout);
            tokio::pin!(deadline);
            let decided = |tally| stop == Stop::WhenDecided && rule.decided(tally);
            while !pending.is_empty() && !decided(tally) {
                tokio::select! {
                    biased;
                    Some((i, answer)) = pending.next() => {
                        record(&mut vote, &mut tally, i, answer, start.elapsed());
                    }
                    () = &mut deadline => {
                        for i in 0..masters.len() {
                            if vote.masters[i].outcome == Outcome::NotAwaited {
                                timed_out(&mut vote, i, timeout);
                            }
                        }
                        break;
                    }
                }
            }
        }
    }
    vote.elapsed = start.elapsed();
    vote
}

/// A reply channel closed without an answer means the connection task is gone.
fn flatten(answer: Result<Answer, tokio::sync::oneshot::error::RecvError>) -> Answer {
    answer.unwrap_or_else(|_| {
        Err(Failure::new(
            crate::vote::FailureKind::Other,
            "the master's connection task stopped before answering",
        ))
    })
}
