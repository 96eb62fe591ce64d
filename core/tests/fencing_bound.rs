//! Fencing tokens stay within 2^53 − 1 on real local masters: a counter above the bound, or
//! not a number, planted on one master of five fails that master for that resource only;
//! fenced acquires go on through the others with strictly increasing tokens, and nothing
//! above the bound is ever written.

use crate::common;

use std::time::Duration;

use common::*;
use redlock_core::{fencing_counter_key, FanOut, Outcome, Redlock, MAX_FENCING_TOKEN};
use redlock_local::resp::Reply;
use redlock_local::LocalMasters;

const TTL: Duration = Duration::from_secs(10);
const TURNS: usize = 12;

fn plant(m: &LocalMasters, i: usize, resource: &str, value: &str) {
    let reply = m.command(
        i,
        &[
            b"SET".to_vec(),
            fencing_counter_key(resource),
            value.as_bytes().to_vec(),
        ],
    );
    assert_eq!(reply.unwrap(), Reply::Status("OK".into()), "SET on {i}");
}

fn counter(m: &LocalMasters, i: usize, resource: &str) -> Option<String> {
    match m.command(i, &[b"GET".to_vec(), fencing_counter_key(resource)]) {
        Ok(Reply::Nil) => None,
        Ok(Reply::Bulk(bytes)) => Some(String::from_utf8(bytes).unwrap()),
        other => panic!("GET counter on master {i}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_damaged_counter_of_five_fails_that_master_and_tokens_go_on_increasing() {
    let m = masters(5);
    for fanout in FANOUTS {
        let clients = [
            connected(builder(&m, fanout).fencing(true)).await,
            connected(builder(&m, fanout).fencing(true)).await,
        ];
        for (n, planted) in ["18446744073709551614", "9223372036854775808", "abc"]
            .into_iter()
            .enumerate()
        {
            let resource = format!("bounded-{fanout}-{n}");
            // The damaged master is the first one asked in sequential fan-out, and another
            // one for the next value, so both positions are covered.
            let damaged = n % 2 * 3;
            plant(&m, damaged, &resource, planted);
            let mut issued = Vec::new();
            let mut failed_votes = 0;
            for turn in 0..TURNS {
                let redlock: &Redlock = &clients[turn % 2];
                let lock = redlock
                    .acquire(&resource, TTL)
                    .await
                    .unwrap_or_else(|e| panic!("{fanout} {planted} turn {turn}: {e}"));
                let token = lock.fencing_token().expect("a fenced lock has a token");
                let vote = &lock.vote().masters()[damaged];
                // Concurrent fan-out stops listening at quorum: the damaged master's answer
                // may come after that, but it is never a grant.
                match vote.outcome {
                    Outcome::Failed(_) => {
                        failed_votes += 1;
                        let cause = vote.error.as_deref().unwrap_or_default();
                        assert!(
                            cause.contains("fencing counter") && cause.contains("delete that key"),
                            "{cause}"
                        );
                    }
                    Outcome::NotAwaited if fanout == FanOut::Concurrent => {}
                    _ => panic!("{fanout} {planted}: {vote:?}"),
                }
                // The damaged master set no lock key.
                assert_eq!(get(&m, damaged, &resource), None, "{fanout} {planted}");
                redlock.release(&lock).await.unwrap();
                issued.push(token);
            }
            if fanout == FanOut::Sequential {
                assert_eq!(
                    failed_votes, TURNS,
                    "{planted}: every vote counts it failed"
                );
            }
            let violations = issued.windows(2).filter(|w| w[1] <= w[0]).count();
            assert_eq!(violations, 0, "{fanout} {planted}: tokens {issued:?}");
            assert!(issued.iter().all(|&t| t <= MAX_FENCING_TOKEN), "{issued:?}");
            assert_eq!(issued[0], 1, "the sane counters were absent");
            assert_eq!(counter(&m, damaged, &resource).as_deref(), Some(planted));
            for i in (0..5).filter(|&i| i != damaged) {
                let value = counter(&m, i, &resource).map(|c| c.parse::<u64>().unwrap());
                assert!(value <= Some(TURNS as u64), "master {i}: {value:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_token_is_two_pow_53_minus_1_and_none_is_issued_above_it() {
    let m = masters(5);
    let redlock = connected(builder(&m, FanOut::Concurrent).fencing(true).retry_count(0)).await;
    let below = (MAX_FENCING_TOKEN - 1).to_string();
    for i in 0..5 {
        plant(&m, i, "last", &below);
    }
    let lock = redlock.acquire("last", TTL).await.unwrap();
    assert_eq!(lock.fencing_token(), Some(MAX_FENCING_TOKEN));
    redlock.release(&lock).await.unwrap();
    let bound = MAX_FENCING_TOKEN.to_string();
    let at_bound = || (0..5).filter(|&i| counter(&m, i, "last").as_deref() == Some(&bound));
    // Round 2 confirmed on a quorum before the lock was returned.
    assert!(at_bound().count() >= 3);
    // Exhausted on a quorum: unavailable, those masters saying why, and nothing set.
    let err = redlock.acquire("last", TTL).await.unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    assert!(err.to_string().contains("no higher token"), "{err}");
    assert!(with_key(&m, "last").is_empty());
    assert!(at_bound().count() >= 3);
    let above = (MAX_FENCING_TOKEN + 1).to_string();
    assert!((0..5).all(|i| counter(&m, i, "last").as_deref() != Some(&above)));
}
