//! Fencing tokens (docs/src/design.md#fencing) on real local masters: tokens increase in real-time order and
//! are never returned twice, in both fan-out modes; the counters live under their own keys,
//! without a TTL; an unfenced lock has none.

use crate::common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use redlock_core::{fencing_counter_key, FanOut, Redlock, Retry};
use redlock_local::resp::Reply;
use redlock_local::LocalMasters;

const TTL: Duration = Duration::from_secs(10);

async fn fenced(m: &LocalMasters, fanout: FanOut) -> Redlock {
    connected(builder(m, fanout).fencing(true)).await
}

/// The counter of `resource` on master `i`, `None` when absent.
fn counter(m: &LocalMasters, i: usize, resource: &str) -> Option<u64> {
    match m.command(i, &[b"GET".to_vec(), fencing_counter_key(resource)]) {
        Ok(Reply::Nil) => None,
        Ok(Reply::Bulk(digits)) => Some(String::from_utf8(digits).unwrap().parse().unwrap()),
        other => panic!("GET counter on master {i}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_turns_across_three_clients_get_strictly_increasing_tokens() {
    let m = masters(5);
    for fanout in FANOUTS {
        let clients = [
            fenced(&m, fanout).await,
            fenced(&m, fanout).await,
            fenced(&m, fanout).await,
        ];
        let resource = format!("turns:{fanout}");
        let mut tokens = Vec::new();
        for turn in 0..60 {
            let client = &clients[turn % 3];
            let lock = client.acquire(&resource, TTL).await.expect("uncontended");
            tokens.push(
                lock.fencing_token()
                    .expect("a fenced client's lock has a token"),
            );
            client.release(&lock).await.unwrap();
        }
        assert!(
            tokens.windows(2).all(|w| w[0] < w[1]),
            "{fanout}: {tokens:?}"
        );
        assert_eq!(tokens[0], 1, "{fanout}: a fresh resource's first token");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contending_tasks_never_get_a_token_twice_nor_one_below_an_earlier_one() {
    const TASKS_PER_CLIENT: usize = 4;
    const RUN: Duration = Duration::from_secs(3);
    let m = masters(5);
    for fanout in FANOUTS {
        let clients = [fenced(&m, fanout).await, fenced(&m, fanout).await];
        let resource = Arc::new(format!("contended:{fanout}"));
        // The highest token returned so far, and every token returned.
        let highest = Arc::new(Mutex::new(0u64));
        let returned = Arc::new(Mutex::new(Vec::new()));
        let until = Instant::now() + RUN;
        let mut tasks = Vec::new();
        for client in &clients {
            for _ in 0..TASKS_PER_CLIENT {
                let (client, resource) = (client.clone(), Arc::clone(&resource));
                let (highest, returned) = (Arc::clone(&highest), Arc::clone(&returned));
                tasks.push(tokio::spawn(async move {
                    while Instant::now() < until {
                        let before = *highest.lock().unwrap();
                        let retry = Retry::Until(until);
                        let Ok(lock) = client
                            .acquire_observed(&resource, TTL, retry, &mut |_| {})
                            .await
                        else {
                            continue;
                        };
                        let token = lock.fencing_token().expect("fenced");
                        assert!(
                            token > before,
                            "token {token} is not above {before}, returned before its acquire began"
                        );
                        {
                            let mut highest = highest.lock().unwrap();
                            *highest = (*highest).max(token);
                        }
                        returned.lock().unwrap().push(token);
                        client.release(&lock).await.unwrap();
                    }
                }));
            }
        }
        for task in tasks {
            task.await.expect("a task failed its checks");
        }
        let returned = returned.lock().unwrap();
        let distinct: HashSet<u64> = returned.iter().copied().collect();
        assert_eq!(distinct.len(), returned.len(), "{fanout}: a token twice");
        assert!(
            returned.len() >= 2,
            "{fanout}: too few acquisitions to tell"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_counter_is_its_own_key_without_ttl_and_extend_keeps_the_token() {
    let m = masters(5);
    let redlock = fenced(&m, FanOut::Concurrent).await;
    let mut lock = redlock.acquire("kept", TTL).await.unwrap();
    let token = lock.fencing_token().unwrap();
    // Round 2 reached every master that granted round 1; a quorum at least holds the token.
    eventually(
        "the counters of the granting masters",
        Duration::from_secs(5),
        || {
            (0..5)
                .filter(|&i| counter(&m, i, "kept") == Some(token))
                .count()
                >= 3
        },
    )
    .await;
    for i in 0..5 {
        if counter(&m, i, "kept").is_some() {
            let ttl = m.command(i, &[b"PTTL".to_vec(), fencing_counter_key("kept")]);
            assert_eq!(
                ttl.unwrap(),
                Reply::Integer(-1),
                "master {i}: counters never expire"
            );
        }
    }
    // The lock key itself is the plain resource name, holding the lock's token.
    assert!(holders(&m, "kept", lock.token()).len() >= 3);
    redlock.extend(&mut lock, TTL).await.unwrap();
    assert_eq!(lock.fencing_token(), Some(token));
    redlock.release(&lock).await.unwrap();
    let next = redlock.acquire("kept", TTL).await.unwrap();
    assert_eq!(next.fencing_token(), Some(token + 1));
    redlock.release(&next).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_round_two_reaches_every_granting_master_though_decided_at_quorum() {
    let m = masters(5);
    let redlock = fenced(&m, FanOut::Sequential).await;
    let lock = redlock.acquire("everywhere", TTL).await.unwrap();
    assert_eq!(
        lock.vote().granted() + lock.vote().not_awaited(),
        5,
        "{:?}",
        lock.vote()
    );
    let token = lock.fencing_token().unwrap();
    // Round 1 went through every master; round 2 stopped waiting at the quorum, yet every
    // master that granted gets the new counter.
    eventually("every master's counter", Duration::from_secs(5), || {
        (0..5).all(|i| counter(&m, i, "everywhere") == Some(token))
    })
    .await;
    redlock.release(&lock).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_usage_the_book_shows() -> Result<(), redlock_core::Error> {
    let m = masters(3);
    let urls = m.urls();
    // ANCHOR: usage
    let redlock = Redlock::builder(urls).fencing(true).build()?;
    let lock = redlock
        .acquire("orders:42", Duration::from_secs(10))
        .await?;
    let token: u64 = lock.fencing_token().expect("built with fencing(true)");
    // ... send `token` with every write to the protected resource ...
    redlock.release(&lock).await?;
    // ANCHOR_END: usage
    assert_eq!(token, 1);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfenced_lock_has_no_token_and_touches_no_counter() {
    let m = masters(3);
    let redlock = client(&m, FanOut::Concurrent).await;
    let lock = redlock.acquire("plain", TTL).await.unwrap();
    assert_eq!(lock.fencing_token(), None);
    redlock.release(&lock).await.unwrap();
    for i in 0..3 {
        assert_eq!(counter(&m, i, "plain"), None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_continue_from_the_highest_counter_of_the_granting_masters() {
    let m = masters(3);
    let set_counter = |i: usize, value: &str| {
        let key = fencing_counter_key("resumed");
        let reply = m.command(i, &[b"SET".to_vec(), key, value.as_bytes().to_vec()]);
        assert_eq!(reply.unwrap(), Reply::Status("OK".into()));
    };
    // Counters as earlier acquisitions through different majorities left them.
    set_counter(0, "41");
    set_counter(1, "17");
    set_counter(2, "41");
    for fanout in FANOUTS {
        let redlock = fenced(&m, fanout).await;
        let lock = redlock.acquire("resumed", TTL).await.unwrap();
        let token = lock.fencing_token().unwrap();
        assert!(token >= 42, "{fanout}: {token}");
        redlock.release(&lock).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_that_is_not_a_number_fails_its_master_naming_the_cause() {
    let m = masters(3);
    for i in 0..2 {
        let key = fencing_counter_key("garbled");
        m.command(i, &[b"SET".to_vec(), key, b"not-a-number".to_vec()])
            .unwrap();
    }
    let redlock = connected(builder(&m, FanOut::Concurrent).fencing(true).retry_count(0)).await;
    let err = redlock.acquire("garbled", TTL).await.unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    assert!(err.to_string().contains("fencing counter"), "{err}");
    // The failed attempt was undone everywhere.
    assert!(with_key(&m, "garbled").is_empty());
}
