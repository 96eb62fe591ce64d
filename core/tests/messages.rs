//! What a failed acquire says: an outage is never called contention, contention names the
//! other holder, and both give the whole call's attempts and time.

use crate::common;

use std::time::Duration;

use common::*;
use redlock_core::{DurationUnit, Error, Retry, Verdict};

const TTL: Duration = Duration::from_secs(60);

/// Acquires `key` with the client's retries and returns the error and every attempt's verdict.
async fn failed_acquire(redlock: &redlock_core::Redlock, key: &str) -> (Error, Vec<Verdict>) {
    let mut verdicts = Vec::new();
    let err = redlock
        .acquire_observed(key, TTL, Retry::Configured, &mut |vote| {
            verdicts.push(vote.verdict())
        })
        .await
        .expect_err("no quorum can be won");
    (err, verdicts)
}

fn occurrences(text: &str, words: &str) -> usize {
    text.matches(words).count()
}

#[tokio::test]
async fn an_outage_without_contention_is_unavailable_never_a_split_vote_or_a_loss() {
    let m = masters(5);
    m.kill(0).unwrap();
    m.kill(1).unwrap();
    m.pause(2).unwrap();
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("outage:{fanout}");
        let (err, verdicts) = failed_acquire(&redlock, &key).await;
        assert!(err.is_unavailable(), "{fanout}: {err}");
        assert_eq!(verdicts, vec![Verdict::Unavailable; 3], "{fanout}: {err}");
        let vote = err.vote().unwrap();
        assert_eq!(vote.verdict(), Verdict::Unavailable, "{fanout}: {vote}");
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "lock on \"{key}\" unavailable after 3 attempts in "
            )),
            "{message}"
        );
        // The causes are stated once, not repeated by a nested summary.
        assert_eq!(
            occurrences(&message, "could not be reached"),
            1,
            "{message}"
        );
        assert!(!message.contains("split"), "{message}");
    }
    m.resume(2).unwrap();
}

#[tokio::test]
async fn not_acquired_names_the_other_holder_and_the_whole_call() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("held:{fanout}");
        let held = redlock.acquire(&key, TTL).await.unwrap();
        let (err, verdicts) = failed_acquire(&redlock, &key).await;
        assert!(err.is_not_acquired(), "{fanout}: {err}");
        assert_eq!(verdicts, vec![Verdict::CleanLoss; 3], "{fanout}: {err}");
        let Error::NotAcquired { elapsed, vote, .. } = &err else {
            unreachable!("checked above")
        };
        // The call: 3 attempts and 2 jittered retry delays of at least 10 ms each.
        let retry_delay = redlock.settings().retry_delay;
        assert!(*elapsed >= retry_delay, "{fanout}: {elapsed:?}");
        assert!(*elapsed > vote.elapsed(), "{fanout}: {elapsed:?}");
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "lock on \"{key}\" not acquired after 3 attempts in "
            )),
            "{message}"
        );
        assert!(message.contains(": another holder has it; "), "{message}");
        // Every master is counted, the ones concurrent fan-out did not wait for included.
        let counted = vote.granted() + vote.denied() + vote.failed() + vote.not_awaited();
        assert_eq!(counted, 5, "{vote}");
        assert!(
            message.contains(&format!(
                "{} not awaited of 5 masters; quorum 3",
                vote.not_awaited()
            )),
            "{message}"
        );
        // One unit per surface: C reads milliseconds, Python seconds.
        let millis = err.display_in(DurationUnit::Millis).to_string();
        let seconds = err.display_in(DurationUnit::Seconds).to_string();
        assert!(millis.contains(" ms: another holder"), "{millis}");
        assert!(seconds.contains(" s: another holder"), "{seconds}");
        redlock.release(&held).await.unwrap();
    }
}
