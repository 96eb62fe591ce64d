//! Sending one request to every master, sequentially or concurrently, and collecting the vote.

use std::future::Future;
use std::task::Poll;
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

/// How long requests nobody waits for any more are kept alive in the background.
const ABANDON_GRACE: Duration = Duration::from_secs(2);

/// Lets requests the round stopped waiting for (stragglers of an early decision, or requests
/// past the per-master timeout) finish in the background, for at most `ABANDON_GRACE`.
///
/// Why: the Redis client silently skips a queued request whose caller went away before it was
/// written. Dropping a straggler's SET would leave the lock on fewer masters than it could
/// have; dropping a timed-out release or cleanup (a CPU-starved client can take longer than
/// the timeout to write it) would leave its key until the TTL. Requests are queued in order on
/// first poll (the connection's queue has room for that: `PIPELINE_BUFFER` in `master.rs`), so
/// finishing them later never reorders them.
fn abandon<F>(requests: F)
where
    F: Future + Send + 'static,
{
    tokio::spawn(async move {
        let _ = tokio::time::timeout(ABANDON_GRACE, requests).await;
    });
}

/// Running tally of a concurrent round.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    granted: usize,
    denied: usize,
    failed: usize,
}

impl Tally {
    fn count(&mut self, result: &redis::RedisResult<bool>) {
        match result {
            Ok(true) => self.granted += 1,
            Ok(false) => self.denied += 1,
            Err(_) => self.failed += 1,
        }
    }

    /// True once nothing still pending can change the result or its classification:
    /// - quorum granted: won;
    /// - quorum out of reach AND it is clear why: enough masters answered (contention,
    ///   `NotAcquired`) or failures alone exceed `n − quorum` (`Unavailable`). With a mix of
    ///   failures and denials and too few answers, the pending masters decide which error
    ///   it is, so they are awaited (bounded by the per-master timeout).
    fn decided(&self, n: usize, quorum: usize) -> bool {
        let out_of_reach = self.denied + self.failed > n - quorum;
        let answered = self.granted + self.denied;
        self.granted >= quorum || (out_of_reach && (answered >= quorum || self.failed > n - quorum))
    }
}

/// Runs `request` on all masters and returns the vote (elapsed set; validity left `None`).
pub(crate) async fn round(
    masters: &[Master],
    fanout: FanOut,
    timeout: Duration,
    quorum: usize,
    request: &Request,
    stop: Stop,
) -> Vote {
    let mut vote = Vote::new(masters.len(), quorum);
    let start = vote.started;
    match fanout {
        FanOut::Sequential => {
            for (i, master) in masters.iter().enumerate() {
                let sent = Instant::now();
                let connected = master.is_connected();
                let (master, request) = (master.handle().clone(), request.clone());
                let mut reply = Box::pin(tokio::task::unconstrained(async move {
                    master.send(&request).await
                }));
                match tokio::time::timeout(timeout, &mut reply).await {
                    Ok(result) => record(&mut vote, i, result, sent.elapsed()),
                    Err(_) => {
                        vote.masters[i].outcome = Outcome::TimedOut;
                        // Queued (see the concurrent case) only if it had a connection.
                        if connected {
                            abandon(reply);
                        }
                    }
                }
            }
        }
        FanOut::Concurrent => {
            // Requests to connected masters are queued on their connection during their first
            // poll; those may be abandoned (finished in the background). Requests still waiting
            // for a connection are not queued yet: finishing them later could put them behind
            // a later request (e.g. the cleanup), so they are dropped instead.
            let mut queued = FuturesUnordered::new();
            let mut waiting = FuturesUnordered::new();
            let mut tally = Tally::default();
            let mut decided = false;
            for (i, master) in masters.iter().enumerate() {
                let connected = master.is_connected();
                let (master, request) = (master.handle().clone(), request.clone());
                // Unconstrained: no cooperative-budget yield before the request is queued.
                let mut reply = Box::pin(tokio::task::unconstrained(async move {
                    let sent = Instant::now();
                    let result = master.send(&request).await;
                    (i, result, sent.elapsed())
                }));
                // Poll each request once, in master order, before anything is decided.
                match std::future::poll_fn(|cx| Poll::Ready(reply.as_mut().poll(cx))).await {
                    Poll::Ready((i, result, rtt)) => {
                        tally.count(&result);
                        record(&mut vote, i, result, rtt);
                    }
                    Poll::Pending if connected => queued.push(reply),
                    Poll::Pending => waiting.push(reply),
                }
            }
            if stop == Stop::WhenDecided && tally.decided(masters.len(), quorum) {
                decided = true;
            }
            let deadline = tokio::time::sleep(timeout);
            tokio::pin!(deadline);
            loop {
                let all_answered = queued.is_empty() && waiting.is_empty();
                if decided || all_answered {
                    break;
                }
                let (i, result, rtt) = tokio::select! {
                    biased;
                    Some(reply) = queued.next() => reply,
                    Some(reply) = waiting.next() => reply,
                    () = &mut deadline => {
                        for m in vote.masters.iter_mut().filter(|m| m.outcome == Outcome::NotAwaited) {
                            m.outcome = Outcome::TimedOut;
                        }
                        break;
                    }
                };
                tally.count(&result);
                record(&mut vote, i, result, rtt);
                decided = stop == Stop::WhenDecided && tally.decided(masters.len(), quorum);
            }
            if !queued.is_empty() {
                abandon(async move { while queued.next().await.is_some() {} });
            }
        }
    }
    vote.elapsed = start.elapsed();
    vote
}

#[cfg(test)]
mod tests {
    use super::Tally;

    fn t(granted: usize, denied: usize, failed: usize) -> Tally {
        Tally {
            granted,
            denied,
            failed,
        }
    }

    #[test]
    fn a_round_stops_only_when_its_result_and_its_reason_are_known() {
        // 5 masters, quorum 3.
        assert!(t(3, 0, 0).decided(5, 3), "won");
        assert!(t(0, 3, 0).decided(5, 3), "contention: 3 answered no");
        assert!(t(0, 0, 3).decided(5, 3), "3 failed: unavailable");
        assert!(t(1, 2, 1).decided(5, 3), "3 answered, quorum out of reach");
        assert!(!t(2, 0, 0).decided(5, 3), "could still win");
        assert!(
            !t(0, 2, 1).decided(5, 3),
            "NotAcquired or Unavailable: the rest decide"
        );
        assert!(
            !t(0, 1, 2).decided(5, 3),
            "NotAcquired or Unavailable: the rest decide"
        );
        assert!(t(0, 2, 3).decided(5, 3));
    }
}
