//! Extend and auto-extend against real masters.

use crate::common;

use std::time::Duration;

use common::*;
use redlock_core::{FanOut, LostReason};
use redlock_local::LocalMasters;

#[tokio::test]
async fn extend_renews_a_held_lock() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("extend:{fanout}");
        let mut lock = redlock.acquire(&key, Duration::from_secs(2)).await.unwrap();
        redlock
            .extend(&mut lock, Duration::from_secs(30))
            .await
            .expect("held");
        assert_eq!(lock.extensions(), 1);
        assert_eq!(lock.ttl(), Duration::from_secs(30));
        assert!(
            lock.validity() > Duration::from_secs(20),
            "{:?}",
            lock.validity()
        );
        // The keys really carry the new TTL.
        let pttl = m.command(0, &["PTTL", &key]).unwrap();
        let pttl = pttl.as_integer().unwrap_or_else(|| panic!("PTTL: {pttl}"));
        assert!(pttl > 20_000, "PTTL {pttl}");
        redlock.release(&lock).await.unwrap();
    }
}

#[tokio::test]
async fn extend_after_expiry_is_lock_lost_and_recreates_nothing() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("expired:{fanout}");
        let mut lock = redlock
            .acquire(&key, Duration::from_millis(100))
            .await
            .unwrap();
        eventually("keys expire", Duration::from_secs(3), || {
            with_key(&m, &key).is_empty()
        })
        .await;
        let err = redlock
            .extend(&mut lock, Duration::from_secs(10))
            .await
            .expect_err("expired");
        assert!(err.is_lock_lost(), "{fanout}: {err}");
        assert_eq!(lock.extensions(), 0);
        assert!(
            with_key(&m, &key).is_empty(),
            "{fanout}: extend re-created the key"
        );
    }
}

#[tokio::test]
async fn extend_after_takeover_is_lock_lost_and_keeps_the_new_owner() {
    let m = masters(5);
    for fanout in FANOUTS {
        let a = client(&m, fanout).await;
        let b = client(&m, fanout).await;
        let key = format!("takeover:{fanout}");
        let mut old = a.acquire(&key, Duration::from_secs(10)).await.unwrap();
        for i in 0..5 {
            del(&m, i, &key);
        }
        let new = b.acquire(&key, Duration::from_secs(10)).await.unwrap();
        let before = holders(&m, &key, new.token());
        let err = a
            .extend(&mut old, Duration::from_secs(10))
            .await
            .expect_err("taken over");
        assert!(err.is_lock_lost(), "{err}");
        assert!(matches!(
            err,
            redlock_core::Error::LockLost {
                reason: LostReason::NotHeld,
                ..
            }
        ));
        assert_eq!(holders(&m, &key, new.token()), before);
        b.release(&new).await.unwrap();
    }
}

#[tokio::test]
async fn extend_stops_at_the_bound() {
    let m = masters(5);
    let redlock = connected(builder(&m, FanOut::Concurrent).max_extensions(2)).await;
    let mut lock = redlock
        .acquire("bounded", Duration::from_secs(5))
        .await
        .unwrap();
    redlock
        .extend(&mut lock, Duration::from_secs(5))
        .await
        .unwrap();
    redlock
        .extend(&mut lock, Duration::from_secs(5))
        .await
        .unwrap();
    let err = redlock
        .extend(&mut lock, Duration::from_secs(5))
        .await
        .expect_err("third extension is over the bound");
    assert!(matches!(
        err,
        redlock_core::Error::LockLost {
            reason: LostReason::ExtensionLimit,
            ..
        }
    ));
    assert_eq!(lock.extensions(), 2);
    redlock.release(&lock).await.unwrap();
}

/// One fan-out's lock, renewed in the background for 2.5 TTLs.
async fn hold_past_several_ttls(m: &LocalMasters, fanout: FanOut) {
    let redlock = client(m, fanout).await;
    let key = format!("watchdog:{fanout}");
    // Renewal starts with a third of the validity left: a renewal may come a whole second
    // late (about ten times what a loaded 2-core machine, load 10, delays a ready task) before
    // the keys expire.
    let ttl = Duration::from_secs(3);
    let lock = redlock.acquire(&key, ttl).await.unwrap();
    let token = lock.token().to_string();
    let guard = redlock.auto_extend(lock);
    // Without renewal the keys would be gone after the first TTL.
    tokio::time::sleep(ttl * 5 / 2).await;
    assert!(!guard.is_lost(), "{fanout}");
    assert!(
        guard.lock().extensions() >= 2,
        "{fanout}: {:?}",
        guard.lock()
    );
    assert!(guard.lock().is_valid());
    assert!(holders(m, &key, &token).len() >= 3, "{fanout}");
    let released = guard.release().await.expect("not lost");
    assert!(released.granted() >= 3);
    assert!(with_key(m, &key).is_empty());
}

#[tokio::test]
async fn auto_extend_keeps_the_lock_past_several_ttls() {
    let m = masters(5);
    let [first, second] = FANOUTS;
    tokio::join!(
        hold_past_several_ttls(&m, first),
        hold_past_several_ttls(&m, second)
    );
}

#[tokio::test]
async fn auto_extend_reports_loss_when_a_majority_drops_the_key() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("watchdog-loss:{fanout}");
        let lock = redlock
            .acquire(&key, Duration::from_millis(300))
            .await
            .unwrap();
        let mut guard = redlock.auto_extend(lock);
        for i in 0..3 {
            del(&m, i, &key);
        }
        let reason = tokio::time::timeout(Duration::from_secs(3), guard.lost())
            .await
            .expect("loss reported within the lock's validity");
        assert_eq!(reason, LostReason::NotHeld, "{fanout}");
        assert!(guard.is_lost());
        let err = guard.release().await.expect_err("release reports the loss");
        assert!(err.is_lock_lost());
        assert!(
            with_key(&m, &key).is_empty(),
            "{fanout}: leftovers released"
        );
    }
}

/// With a quorum of masters paused before renewal starts, no renewal can succeed, and a
/// renewal round (per-master timeout longer than the TTL) outlasts the validity: `is_lost()`
/// must still be true at every instant the lock's validity has run out, and stay true.
#[tokio::test]
async fn auto_extend_is_lost_as_soon_as_validity_runs_out() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = connected(builder(&m, fanout).instance_timeout(Duration::from_secs(1))).await;
        let key = format!("watchdog-deadline:{fanout}");
        let lock = redlock
            .acquire(&key, Duration::from_millis(400))
            .await
            .unwrap();
        for i in 0..3 {
            m.pause(i).unwrap();
        }
        let mut guard = redlock.auto_extend(lock);
        let give_up = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            // Validity first, then is_lost(): once the first says expired, the second must agree.
            let expired = !guard.lock().is_valid();
            let lost = guard.is_lost();
            if expired {
                assert!(lost, "{fanout}: validity ran out but is_lost() is false");
                break;
            }
            assert!(
                std::time::Instant::now() < give_up,
                "{fanout}: never expired"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(guard.lost_reason(), Some(LostReason::Expired), "{fanout}");
        assert_eq!(guard.lost().await, LostReason::Expired, "{fanout}");
        for i in 0..3 {
            m.resume(i).unwrap();
        }
        // Lost stays lost, whatever the renewal does once the masters answer again.
        assert!(guard.is_lost(), "{fanout}");
        let err = guard.release().await.expect_err("release reports the loss");
        assert!(err.is_lock_lost(), "{fanout}: {err}");
        eventually("keys gone", Duration::from_secs(10), || {
            with_key(&m, &key).is_empty()
        })
        .await;
    }
}

/// A renewal that finds too few masters says which ones failed and why.
#[tokio::test]
async fn auto_extend_keeps_the_vote_of_a_failed_renewal() {
    for fanout in FANOUTS {
        let m = masters(5);
        let redlock = client(&m, fanout).await;
        let key = format!("watchdog-failure:{fanout}");
        let lock = redlock
            .acquire(&key, Duration::from_millis(600))
            .await
            .unwrap();
        let guard = redlock.auto_extend(lock);
        assert_eq!(guard.failed_renewals(), 0);
        for i in 0..3 {
            m.kill(i).unwrap();
        }
        eventually("a failed renewal", Duration::from_secs(10), || {
            guard.failed_renewals() > 0
        })
        .await;
        let vote = guard
            .last_failed_renewal()
            .expect("the failed renewal's vote");
        assert!(vote.failed() >= 3, "{fanout}: {vote}");
        assert!(
            vote.failure_summary().contains("could not be reached"),
            "{fanout}: {}",
            vote.failure_summary()
        );
        drop(guard);
    }
}
