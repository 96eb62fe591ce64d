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

/// Running tally of a concurrent round.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    granted: usize,
    denied: usize,
    failed: usize,
}

impl Tally {
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
            let mut tally = Tally::default();
            loop {
                tokio::select! {
                    biased;
                    next = pending.next() => {
                        let Some((i, result, rtt)) = next else { break };
                        match result {
                            Ok(true) => tally.granted += 1,
                            Ok(false) => tally.denied += 1,
                            Err(_) => tally.failed += 1,
                        }
                        record(&mut vote, i, result, rtt);
                        if stop == Stop::WhenDecided && tally.decided(masters.len(), quorum) {
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
