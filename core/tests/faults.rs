//! Masters that are down, frozen or behind a faulty network: liveness with a majority, fast
//! Unavailable without one.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use redlock_core::{FanOut, Outcome, Redlock};
use redlock_local::proxy::{Direction, FaultProxies};

const TTL: Duration = Duration::from_secs(60);

#[tokio::test]
async fn two_of_five_killed_still_acquires() {
    let m = masters(5);
    m.kill(1).unwrap();
    m.kill(3).unwrap();
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("two-down:{fanout}");
        let lock = redlock
            .acquire(&key, TTL)
            .await
            .expect("3 of 5 is a quorum");
        assert_eq!(lock.vote().granted(), 3, "{fanout}: {}", lock.vote());
        for down in [1, 3] {
            assert!(
                matches!(
                    lock.vote().masters()[down].outcome,
                    Outcome::Failed(_) | Outcome::TimedOut | Outcome::NotAwaited
                ),
                "{fanout}: master {down}: {:?}",
                lock.vote().masters()[down]
            );
        }
        let released = redlock.release(&lock).await.unwrap();
        assert_eq!(released.granted(), 3);
        assert!(with_key(&m, &key).is_empty());
    }
}

#[tokio::test]
async fn three_of_five_killed_is_unavailable_within_timeouts_not_ttl() {
    let m = masters(5);
    for i in 0..3 {
        m.kill(i).unwrap();
    }
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("three-down:{fanout}");
        let started = Instant::now();
        let err = redlock.acquire(&key, TTL).await.expect_err("no quorum");
        let took = started.elapsed();
        assert!(err.is_unavailable(), "{fanout}: {err}");
        let vote = err.vote().unwrap();
        assert!(vote.failed() >= 3, "{fanout}: {vote}");
        // 3 attempts, each bounded by the per-master timeout (sequential: per master), plus
        // the retry delays: far below the 60 s TTL.
        let s = redlock.settings();
        let per_attempt = s.instance_timeout * 5 * 2; // lock round + cleanup round
        let bound = (per_attempt + s.retry_delay) * (s.retry_count + 1) + Duration::from_secs(1);
        assert!(took < bound, "{fanout}: took {took:?}, bound {bound:?}");
        assert!(err.to_string().contains("unavailable"), "{err}");
        assert!(
            with_key(&m, &key).is_empty(),
            "{fanout}: attempt not undone"
        );
    }
}

#[tokio::test]
async fn a_killed_master_is_used_again_after_it_restarts() {
    let m = masters(3);
    let redlock = client(&m, FanOut::Concurrent).await;
    m.kill(2).unwrap();
    let lock = redlock.acquire("comeback", TTL).await.unwrap();
    redlock.release(&lock).await.unwrap();
    m.start_again(2).unwrap();
    // The connection comes back on its own; wait for it (bounded), then it votes again.
    eventually("reconnect to master 2", Duration::from_secs(5), || {
        redlock.connected_masters() == 3
    })
    .await;
    let lock = redlock.try_acquire("comeback", TTL).await.unwrap();
    assert!(
        matches!(
            lock.vote().masters()[2].outcome,
            Outcome::Granted | Outcome::NotAwaited
        ),
        "{:?}",
        lock.vote()
    );
    let released = redlock.release(&lock).await.unwrap();
    assert_eq!(
        released.granted(),
        3,
        "all 3 masters answer again: {released}"
    );
}

#[tokio::test]
async fn a_paused_master_does_not_stall_concurrent_fanout() {
    let m = masters(5);
    // A long per-master timeout makes waiting for the paused master obvious.
    let timeout = Duration::from_secs(2);
    let concurrent = connected(builder(&m, FanOut::Concurrent).instance_timeout(timeout)).await;
    let sequential = connected(builder(&m, FanOut::Sequential).instance_timeout(timeout)).await;
    m.pause(4).unwrap();

    let lock = concurrent
        .acquire("paused:concurrent", TTL)
        .await
        .expect("4 healthy masters");
    let vote = lock.vote();
    assert_eq!(vote.masters()[4].outcome, Outcome::NotAwaited, "{vote:?}");
    assert!(
        vote.elapsed() < timeout,
        "concurrent attempt waited for the paused master: {:?}",
        vote.elapsed()
    );
    let slowest_healthy = vote
        .masters()
        .iter()
        .filter_map(|v| v.round_trip)
        .max()
        .unwrap();
    assert!(vote.elapsed() >= slowest_healthy);

    let lock2 = sequential
        .acquire("paused:sequential", TTL)
        .await
        .expect("4 healthy masters");
    assert_eq!(lock2.vote().masters()[4].outcome, Outcome::TimedOut);
    assert_eq!(lock2.vote().granted(), 4);

    m.resume(4).unwrap();
    assert_eq!(concurrent.release(&lock).await.unwrap().denied(), 0);
    sequential.release(&lock2).await.unwrap();
    assert!(with_key(&m, "paused:concurrent").is_empty());
    assert!(with_key(&m, "paused:sequential").is_empty());
}

#[tokio::test]
async fn a_master_down_at_construction_does_not_block_or_fail_it() {
    let m = masters(5);
    m.kill(0).unwrap();
    let mut urls = m.urls();
    urls[0] = format!("redis://127.0.0.1:{}", m.port(0).unwrap());
    for fanout in FANOUTS {
        let redlock = redlock_core::Redlock::builder(urls.clone())
            .fanout(fanout)
            .build()
            .expect("construction does no I/O");
        let lock = redlock
            .acquire(&format!("down-at-start:{fanout}"), TTL)
            .await
            .unwrap();
        assert!(lock.vote().granted() >= 3);
        redlock.release(&lock).await.unwrap();
    }
}

#[tokio::test]
async fn tls_masters_work_through_rediss_urls() {
    let m = redlock_local::LocalMasters::of(common::TLS_SERVER)
        .start_tls(3)
        .expect("TLS masters");
    assert!(m.urls().iter().all(|u| u.starts_with("rediss://")));
    for fanout in FANOUTS {
        let a = connected(redlock_core::Redlock::builder(m.urls()).fanout(fanout)).await;
        let b = connected(redlock_core::Redlock::builder(m.urls()).fanout(fanout)).await;
        assert_eq!(a.connected_masters(), 3, "TLS handshake failed");
        let key = format!("tls:{fanout}");
        let lock = a.acquire(&key, TTL).await.unwrap();
        let err = b.try_acquire(&key, TTL).await.unwrap_err();
        assert!(err.is_not_acquired(), "{err}");
        assert_eq!(a.release(&lock).await.unwrap().granted(), 3);
        let lock = b
            .try_acquire(&key, TTL)
            .await
            .expect("free again after release");
        b.release(&lock).await.unwrap();
    }
}

#[tokio::test]
async fn redlock_through_five_proxies_acquires_releases_and_sees_the_faults() {
    let m = masters(5);
    const PATIENCE: Duration = Duration::from_secs(5);
    let proxies = FaultProxies::start(&m).await.unwrap();
    assert_eq!(proxies.len(), 5);
    let urls = proxies.urls();
    assert!(urls.iter().zip(&m.urls()).all(|(p, d)| p != d));

    for fanout in [FanOut::Sequential, FanOut::Concurrent] {
        let redlock = Redlock::builder(urls.clone())
            .fanout(fanout)
            // Room for a loaded machine: only blackholed masters should ever time out.
            .instance_timeout(Duration::from_millis(250))
            .retry_count(2)
            .retry_delay(Duration::from_millis(20))
            .build()
            .expect("valid configuration");
        redlock.wait_connected(PATIENCE).await;
        assert_eq!(redlock.connected_masters(), 5);

        let key = format!("through-proxies:{fanout}");
        let lock = redlock.acquire(&key, TTL).await.expect("no fault");
        assert!(lock.vote().won(), "{}", lock.vote());
        // Concurrent fan-out decides at quorum; the other requests still reach their master.
        eventually("the lock set on all 5 masters", PATIENCE, || {
            m.holders(&key, lock.token()).unwrap().len() == 5
        })
        .await;
        assert_eq!(redlock.release(&lock).await.unwrap().granted(), 5);
        assert!(m.with_key(&key).unwrap().is_empty());

        // Two silent masters and a slow one: still a quorum; the silent ones time out.
        proxies[1].set_blackhole(true);
        proxies[3].set_blackhole(true);
        proxies[4].set_latency(
            Direction::Downstream,
            Duration::from_millis(10),
            Duration::ZERO,
        );
        let key = format!("two-blackholed:{fanout}");
        let lock = redlock.acquire(&key, TTL).await.expect("3 of 5 answer");
        assert!(lock.vote().granted() >= 3, "{}", lock.vote());
        for silent in [1, 3] {
            assert!(
                matches!(
                    lock.vote().masters()[silent].outcome,
                    Outcome::TimedOut | Outcome::NotAwaited | Outcome::Failed(_)
                ),
                "{fanout}: master {silent}: {:?}",
                lock.vote().masters()[silent]
            );
        }
        redlock.release(&lock).await.unwrap();
        proxies.clear();

        // Three masters down: no quorum, and the error says Redis is unreachable.
        for i in 0..3 {
            proxies[i].set_down(true);
        }
        let err = redlock
            .acquire(&format!("three-down:{fanout}"), TTL)
            .await
            .expect_err("no quorum");
        assert!(err.is_unavailable(), "{fanout}: {err}");
        proxies.clear();
        // Back to full service once the client has reconnected.
        eventually("reconnected to all 5", PATIENCE, || {
            redlock.connected_masters() == 5
        })
        .await;
        let key = format!("after-clear:{fanout}");
        let lock = redlock.acquire(&key, TTL).await.expect("faults cleared");
        let released = redlock.release(&lock).await.unwrap();
        assert!(released.granted() >= 3, "{fanout}: {released}");
        m.flush_all().unwrap();
    }
    assert!(proxies.connections() >= 5);
}
