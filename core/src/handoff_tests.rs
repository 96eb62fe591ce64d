//! The hand-off on real masters: who gets a released lock, and when.
//!
//! Every client here has a retry delay of an hour, so a waiter that gets the lock within the
//! test's bound got it from a hand-off, never from its own delay running out.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redlock_local::LocalMasters;

use crate::{Lock, Redlock};

const TTL: Duration = Duration::from_secs(30);
/// How long the test lets a handed-off waiter take; its own retry delay is ≥ 30 minutes.
const BOUND: Duration = Duration::from_secs(60);
const KEY: &str = "handoff-key";

async fn client(masters: &LocalMasters) -> Redlock {
    let client = Redlock::builder(masters.urls())
        .retry_count(3)
        .retry_delay(Duration::from_secs(3600))
        .build()
        .expect("valid configuration");
    assert_eq!(client.wait_connected(Duration::from_secs(10)).await, 3);
    client
}

/// Waits (bounded) until `n` tasks of `client` wait in `KEY`'s line.
async fn in_line(client: &Redlock, n: usize) {
    let what = format!("{n} task(s) waiting in line");
    redlock_local::eventually(&what, BOUND, || {
        std::future::ready(client.handoff().waiting_for(KEY) == n)
    })
    .await;
}

fn spawn_acquire(client: &Redlock) -> tokio::task::JoinHandle<Lock> {
    let client = client.clone();
    tokio::spawn(async move { client.acquire(KEY, TTL).await.expect("acquired") })
}

/// Fresh masters, a client holding `KEY` on them, and one task of it waiting in line.
/// (Bind the masters to a name: dropping them stops them.)
async fn held_with_a_waiter() -> (LocalMasters, Redlock, Lock, tokio::task::JoinHandle<Lock>) {
    let masters = LocalMasters::start(3).expect("local masters");
    let client = client(&masters).await;
    let held = client.acquire(KEY, TTL).await.expect("first acquire");
    let waiter = spawn_acquire(&client);
    in_line(&client, 1).await;
    (masters, client, held, waiter)
}

async fn join(task: tokio::task::JoinHandle<Lock>) -> Lock {
    tokio::time::timeout(BOUND, task)
        .await
        .expect("a release of this client handed the lock on, long before the retry delay")
        .expect("task")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_hands_the_lock_to_the_waiters_in_arrival_order() {
    let masters = LocalMasters::start(3).expect("local masters");
    let client = client(&masters).await;
    let mut holder = client.acquire(KEY, TTL).await.expect("first acquire");
    let mut waiters = Vec::new();
    for n in 1..=3 {
        waiters.push(spawn_acquire(&client));
        in_line(&client, n).await;
    }
    for waiter in waiters {
        client.release(&holder).await.expect("release");
        let next = join(waiter).await;
        assert!(
            masters.holders(KEY, next.token()).expect("GET").len() >= 2,
            "the waiter holds the lock on a quorum"
        );
        holder = next;
    }
    client.release(&holder).await.expect("release");
    assert_eq!(client.handoff().waiting_for(KEY), 0, "the line is gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_releases_and_acquires_again_waits_behind_the_line() {
    let (_masters, client, first, waiter) = held_with_a_waiter().await;
    client.release(&first).await.expect("release");
    // The releaser asks again at once; the waiter was first.
    let again = spawn_acquire(&client);
    let handed = join(waiter).await;
    in_line(&client, 1).await;
    assert!(!again.is_finished(), "the releaser jumped the line");
    client.release(&handed).await.expect("release");
    let second = join(again).await;
    client.release(&second).await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_acquire_never_waits_in_line() {
    let (_masters, client, held, waiter) = held_with_a_waiter().await;
    let tried = tokio::time::timeout(BOUND, client.try_acquire(KEY, TTL))
        .await
        .expect("try_acquire answered at once");
    assert!(tried.is_err(), "the lock is held");
    client.release(&held).await.expect("release");
    let handed = join(waiter).await;
    client.release(&handed).await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_hand_off_a_waiter_sleeps_its_whole_delay() {
    let masters = LocalMasters::start(3).expect("local masters");
    let delay = Duration::from_millis(400);
    let client = Redlock::builder(masters.urls())
        .retry_count(1)
        .retry_delay(delay)
        .local_handoff(false)
        .build()
        .expect("valid configuration");
    assert!(!client.settings().local_handoff);
    let held = client.acquire(KEY, TTL).await.expect("first acquire");
    let starts = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&starts);
    let waiter = client.clone();
    let second = tokio::spawn(async move {
        waiter
            .acquire_observed(KEY, TTL, crate::Retry::Configured, &mut |vote| {
                seen.lock().unwrap().push(vote.started);
            })
            .await
    });
    redlock_local::eventually("the first attempt", BOUND, || {
        std::future::ready(!starts.lock().unwrap().is_empty())
    })
    .await;
    client.release(&held).await.expect("release");
    let lock = tokio::time::timeout(BOUND, second)
        .await
        .expect("bounded")
        .expect("task")
        .expect("the second attempt wins");
    let starts = starts.lock().unwrap().clone();
    assert_eq!(starts.len(), 2);
    // The delay is drawn from [d/2, d]; the release did not cut it short.
    assert!(
        starts[1] - starts[0] >= delay / 2,
        "second attempt {:?} after the first",
        starts[1] - starts[0]
    );
    assert_eq!(client.handoff().waiting_for(KEY), 0);
    client.release(&lock).await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_in_line_never_outlasts_the_callers_deadline() {
    let (_masters, client, held, waiter) = held_with_a_waiter().await;
    // Others wait already, so this acquire waits in line before its first attempt: at most
    // until its deadline, not its hour-long retry delay.
    let deadline = std::time::Instant::now() + Duration::from_millis(200);
    let late = tokio::time::timeout(BOUND, client.acquire_with_deadline(KEY, TTL, deadline))
        .await
        .expect("the deadline bounded the wait in line");
    let err = late.expect_err("the lock is held throughout");
    assert!(err.is_not_acquired(), "{err}");
    client.release(&held).await.expect("release");
    let handed = join(waiter).await;
    client.release(&handed).await.expect("release");
}
