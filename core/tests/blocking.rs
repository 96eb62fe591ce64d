//! The blocking facade: same behaviour from synchronous code, shared across threads.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use redlock_core::{blocking, FanOut, Retry};
use redlock_local::eventually_blocking;

fn blocking_client(m: &redlock_local::LocalMasters, fanout: FanOut) -> blocking::Redlock {
    let client = builder(m, fanout).build_blocking().unwrap();
    client.wait_connected(Duration::from_secs(5)).unwrap();
    client
}

#[test]
fn blocking_round_trip_and_contention_across_threads() {
    let m = masters(5);
    for fanout in FANOUTS {
        let client = blocking_client(&m, fanout);
        let key = format!("blocking:{fanout}");
        let mut lock = client.acquire(&key, Duration::from_secs(10)).unwrap();
        client.extend(&mut lock, Duration::from_secs(10)).unwrap();
        std::thread::scope(|s| {
            let other = client.clone();
            let key = key.clone();
            s.spawn(move || {
                let err = other
                    .try_acquire(&key, Duration::from_secs(10))
                    .unwrap_err();
                assert!(err.is_not_acquired(), "{err}");
            });
        });
        assert!(client.release(&lock).unwrap().granted() >= 3);
        assert!(with_key(&m, &key).is_empty());
    }
}

#[tokio::test]
async fn blocking_api_inside_a_runtime_is_refused_not_a_panic() {
    let m = masters(3);
    let client = tokio::task::spawn_blocking({
        let urls = m.urls();
        move || {
            redlock_core::Redlock::builder(urls)
                .build_blocking()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let err = client.acquire("k", Duration::from_secs(1)).unwrap_err();
    assert!(
        err.is_invalid_argument() && err.to_string().contains("async"),
        "{err}"
    );
    tokio::task::spawn_blocking(move || drop(client))
        .await
        .unwrap();
}

#[test]
fn cancelled_acquire_returns_none_and_leaves_no_key() {
    let m = masters(5);
    let key = "cancel-me";
    // Someone else holds 3 masters, so every attempt loses; master 4 is frozen so a
    // sequential attempt stalls there (after winning master 3) until the cancel fires.
    for i in 0..3 {
        set(&m, i, key, "someone-else");
    }
    let client = builder(&m, FanOut::Sequential)
        .instance_timeout(Duration::from_secs(1))
        .build_blocking()
        .unwrap();
    client.wait_connected(Duration::from_secs(5)).unwrap();
    m.pause(4).unwrap();
    let started = Instant::now();
    let outcome = client
        .acquire_cancellable(
            key,
            Duration::from_secs(30),
            Retry::Until(Instant::now() + Duration::from_secs(60)),
            &mut |_| {},
            async { tokio::time::sleep(Duration::from_millis(300)).await },
        )
        .unwrap();
    assert!(outcome.is_none(), "cancelled acquire returned a lock");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "cancel was not prompt"
    );
    assert_eq!(
        get(&m, 3, key),
        None,
        "the in-flight attempt's key was left on master 3"
    );
    m.resume(4).unwrap();
    // Master 4 now runs its queued SET and then the queued cleanup, in that order.
    eventually_blocking(
        "master 4 to drop the attempt's key",
        Duration::from_secs(5),
        || with_key(&m, key) == vec![0, 1, 2],
    );
}

#[test]
fn dropping_an_acquire_mid_attempt_undoes_it_in_the_background() {
    let m = masters(5);
    let key = "dropped";
    for i in 0..3 {
        set(&m, i, key, "someone-else");
    }
    let client = builder(&m, FanOut::Sequential)
        .instance_timeout(Duration::from_secs(1))
        .build_blocking()
        .unwrap();
    client.wait_connected(Duration::from_secs(5)).unwrap();
    m.pause(4).unwrap();
    let timed_out = client
        .block_on(async {
            tokio::time::timeout(
                Duration::from_millis(300),
                client.as_async().acquire(key, Duration::from_secs(30)),
            )
            .await
        })
        .unwrap();
    assert!(
        timed_out.is_err(),
        "the acquire should still be stalled on master 4"
    );
    m.resume(4).unwrap();
    eventually_blocking(
        "the dropped attempt to be undone",
        Duration::from_secs(5),
        || get(&m, 3, key).is_none(),
    );
}
