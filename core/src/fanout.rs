//! Sending one request to every master, sequentially or concurrently, and collecting the vote.

use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};

use crate::config::FanOut;
use crate::master::{Master, Request};
use crate::vote::{FailureKind, MasterVote, Outcome, Vote};

/// Whether a round may stop before every master answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Stop once the vote is decided: quorum granted, or quorum no longer reachable
    /// (concurrent fan-out only; sequential goes through the whole list).
    WhenDecided,
    /// Wait for every master (bounded by the per-master timeout): cleanup and release.
    AfterAll,
}

fn record(vote: &mut Vote, master: usize, result: redis::RedisResult<bool>, rtt: Duration) {
    let outcome = match result {
        Ok(true) => Outcome::Granted,
        Ok(false) => Outcome::Denied,
        Err(err) => Outcome::Failed(FailureKind::classify(&err)),
    };
    vote.masters[master] = MasterVote {
        master,
        outcome,
        round_trip: Some(rtt),
    };
}

/// True once the outcome cannot change: quorum granted, or too many refusals to reach it.
fn decided(vote: &Vote, granted: usize, refused: usize) -> bool {
    granted >= vote.quorum || refused > vote.masters.len() - vote.quorum
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
    match fanout {
        FanOut::Sequential => {
            for (i, master) in masters.iter().enumerate() {
                let sent = Instant::now();
                match tokio::time::timeout(timeout, master.send(request)).await {
                    Ok(result) => record(&mut vote, i, result, sent.elapsed()),
                    Err(_) => vote.masters[i].outcome = Outcome::TimedOut,
                }
            }
        }
        FanOut::Concurrent => {
            let mut pending: FuturesUnordered<_> = masters
                .iter()
                .enumerate()
                .map(|(i, master)| async move {
                    let sent = Instant::now();
                    let result = master.send(request).await;
                    (i, result, sent.elapsed())
                })
                .collect();
            let deadline = tokio::time::sleep(timeout);
            tokio::pin!(deadline);
            let (mut granted, mut refused) = (0usize, 0usize);
            loop {
                tokio::select! {
                    biased;
                    next = pending.next() => {
                        let Some((i, result, rtt)) = next else { break };
                        match result {
                            Ok(true) => granted += 1,
                            _ => refused += 1,
                        }
                        record(&mut vote, i, result, rtt);
                        if stop == Stop::WhenDecided && decided(&vote, granted, refused) {
                            break;
                        }
                    }
                    () = &mut deadline => {
                        for m in vote.masters.iter_mut().filter(|m| m.outcome == Outcome::NotAwaited) {
                            m.outcome = Outcome::TimedOut;
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
