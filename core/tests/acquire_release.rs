//! Acquire, contention and release against 5 real masters, in both fan-out modes.

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use redlock_core::{Outcome, Verdict};

const TTL: Duration = Duration::from_secs(10);

#[tokio::test]
async fn acquire_release_round_trip_with_fresh_tokens() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("round-trip:{fanout}");
        let mut tokens = HashSet::new();
        for _ in 0..5 {
            let lock = redlock
                .acquire(&key, TTL)
                .await
                .expect("uncontended acquire");
            assert_eq!(lock.resource(), key);
            assert_eq!(lock.token().len(), 40);
            assert!(lock.token().bytes().all(|b| b.is_ascii_hexdigit()));
            assert!(tokens.insert(lock.token().to_string()), "token reused");
            assert!(lock.validity() > Duration::ZERO && lock.validity() < TTL);
            assert!(lock.is_valid());
            assert_eq!(lock.vote().verdict(), Verdict::Won);
            assert!(lock.vote().granted() >= 3);
            // Every master that granted holds the token.
            let granted: Vec<usize> = lock
                .vote()
                .masters()
                .iter()
                .filter(|v| v.outcome == Outcome::Granted)
                .map(|v| v.master)
                .collect();
            // Not-awaited masters (concurrent) may hold it too: the SET was sent to all.
            let holding = holders(&m, &key, lock.token());
            assert!(
                granted.iter().all(|i| holding.contains(i)),
                "{fanout}: {granted:?} {holding:?}"
            );

            let released = redlock.release(&lock).await.unwrap();
            assert_eq!(
                released.granted(),
                5,
                "{fanout}: release reaches every master"
            );
            assert!(
                with_key(&m, &key).is_empty(),
                "{fanout}: key left after release"
            );
        }
    }
}

#[tokio::test]
async fn contender_is_refused_with_zero_granted_then_wins_after_release() {
    let m = masters(5);
    for fanout in FANOUTS {
        let a = client(&m, fanout).await;
        let b = client(&m, fanout).await;
        let key = format!("contention:{fanout}");
        let held = a.acquire(&key, TTL).await.unwrap();
        // Make sure A's SETs reached every master (concurrent fan-out does not wait for all).
        eventually("A's key on all masters", Duration::from_secs(2), || {
            holders(&m, &key, held.token()).len() == 5
        })
        .await;

        let err = b.acquire(&key, TTL).await.expect_err("B must not win");
        assert!(err.is_not_acquired(), "{fanout}: {err}");
        let vote = err.vote().expect("vote");
        assert_eq!(vote.granted(), 0, "{fanout}: {vote}");
        assert_eq!(vote.verdict(), Verdict::CleanLoss);
        assert_eq!(
            holders(&m, &key, held.token()).len(),
            5,
            "A's lock untouched"
        );

        a.release(&held).await.unwrap();
        let won = b.acquire(&key, TTL).await.expect("B wins after release");
        b.release(&won).await.unwrap();
    }
}

#[tokio::test]
async fn failed_acquire_leaves_no_key_of_its_attempts() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = client(&m, fanout).await;
        let key = format!("split:{fanout}");
        // Another owner holds 3 masters; our attempts win masters 3 and 4 only: a split vote.
        for i in 0..3 {
            set(&m, i, &key, "someone-else");
        }
        let mut verdicts = Vec::new();
        let err = redlock
            .acquire_observed(&key, TTL, redlock_core::Retry::Configured, &mut |v| {
                verdicts.push(v.verdict())
            })
            .await
            .expect_err("3 of 5 are taken");
        assert!(err.is_not_acquired(), "{err}");
        assert_eq!(verdicts.len(), 3, "1 + retry_count attempts");
        assert!(verdicts
            .iter()
            .all(|v| matches!(v, Verdict::SplitVote | Verdict::CleanLoss)));
        // Sequential asks every master, so it must see the split.
        if fanout == redlock_core::FanOut::Sequential {
            assert!(
                verdicts.iter().all(|v| *v == Verdict::SplitVote),
                "{verdicts:?}"
            );
        }
        assert_eq!(
            with_key(&m, &key),
            vec![0, 1, 2],
            "{fanout}: our keys were not undone"
        );
        for i in 0..3 {
            assert_eq!(get(&m, i, &key).as_deref(), Some("someone-else"));
        }
    }
}

#[tokio::test]
async fn releasing_an_expired_or_foreign_lock_deletes_nothing_of_the_holder() {
    let m = masters(5);
    for fanout in FANOUTS {
        let a = client(&m, fanout).await;
        let b = client(&m, fanout).await;
        let key = format!("foreign:{fanout}");
        let old = a.acquire(&key, TTL).await.unwrap();
        eventually("A's key on all masters", Duration::from_secs(2), || {
            holders(&m, &key, old.token()).len() == 5
        })
        .await;
        // A's lock "expires" (keys gone), then B takes the resource.
        for i in 0..5 {
            del(&m, i, &key);
        }
        let current = b.acquire(&key, TTL).await.unwrap();
        eventually("B's key on all masters", Duration::from_secs(2), || {
            holders(&m, &key, current.token()).len() == 5
        })
        .await;

        let released = a.release(&old).await.expect("not an error");
        assert_eq!(
            released.granted(),
            0,
            "{fanout}: released someone else's lock"
        );
        assert_eq!(released.denied(), 5);
        assert_eq!(holders(&m, &key, current.token()).len(), 5, "{fanout}");
        b.release(&current).await.unwrap();
    }
}

#[tokio::test]
async fn quorum_setting_raises_the_votes_needed() {
    let m = masters(5);
    for fanout in FANOUTS {
        let strict = connected(builder(&m, fanout).quorum(5)).await;
        let key = format!("quorum:{fanout}");
        set(&m, 4, &key, "someone-else");
        let err = strict
            .try_acquire(&key, TTL)
            .await
            .expect_err("needs all 5");
        assert!(err.is_not_acquired(), "{err}");
        assert_eq!(err.vote().unwrap().quorum(), 5);
        assert_eq!(with_key(&m, &key), vec![4], "{fanout}: attempt undone");
        del(&m, 4, &key);
        let lock = strict.try_acquire(&key, TTL).await.unwrap();
        assert_eq!(lock.vote().granted(), 5);
        strict.release(&lock).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_fanout_sets_the_key_on_every_master_even_those_not_awaited() {
    // The attempt is decided on the first 3 grants, but the other 2 SETs must still reach
    // their masters (a lock held on all 5 survives a master restart; one on exactly 3 does
    // not). Release then finds the key everywhere.
    let m = masters(5);
    // A per-master timeout no CPU stall reaches: this test is about where keys land.
    let redlock = connected(
        builder(&m, redlock_core::FanOut::Concurrent).instance_timeout(Duration::from_secs(5)),
    )
    .await;
    let mut not_awaited = 0;
    for i in 0..1000 {
        let lock = redlock
            .try_acquire(&format!("everywhere:{i}"), TTL)
            .await
            .unwrap();
        not_awaited += lock.vote().not_awaited();
        let key = format!("everywhere:{i}");
        // The straggler's SET lands on every master, and the release after it clears them
        // all. Checked on the masters: the release *count* depends on the per-master timeout,
        // which a starved CPU can exceed while the key is still deleted in the background.
        common::eventually(
            &format!("cycle {i}: token on all 5 masters"),
            Duration::from_secs(10),
            || common::holders(&m, &key, lock.token()).len() == 5,
        )
        .await;
        redlock.release(&lock).await.unwrap();
        common::eventually(
            &format!("cycle {i}: no key left after release"),
            Duration::from_secs(10),
            || common::with_key(&m, &key).is_empty(),
        )
        .await;
    }
    assert!(
        not_awaited > 0,
        "no attempt was decided early: the test proves nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tasks_on_one_client_never_let_a_release_overtake_its_acquire() {
    // Hundreds of operations in flight per master connection: a release must still reach each
    // master after the acquire's straggling SET (queued in the background), or it deletes
    // nothing there and the key stays until the TTL.
    const TASKS: usize = 256;
    const CYCLES: usize = 20;
    let m = masters(5);
    // A generous per-master timeout: this test is about order, not about a starved CPU.
    let redlock = connected(
        builder(&m, redlock_core::FanOut::Concurrent).instance_timeout(Duration::from_secs(5)),
    )
    .await;
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let redlock = redlock.clone();
            tokio::spawn(async move {
                let mut short = Vec::new();
                for c in 0..CYCLES {
                    let lock = redlock
                        .acquire(&format!("crowd:{t}:{c}"), TTL)
                        .await
                        .unwrap();
                    let released = redlock.release(&lock).await.unwrap();
                    if released.granted() != 5 {
                        short.push(format!("crowd:{t}:{c}: {released}"));
                    }
                }
                short
            })
        })
        .collect();
    let mut short = Vec::new();
    for task in tasks {
        short.extend(task.await.unwrap());
    }
    assert!(
        short.is_empty(),
        "{} release(s) missed a master, e.g. {}",
        short.len(),
        short[0]
    );
    for i in 0..5 {
        assert_eq!(m.key_count(i).unwrap(), 0, "keys left on master {i}");
    }
}

/// The scope rule (Python's with-block, the C++ Guard): a release at the end of a scope
/// reports `LockLost` (expired) when the validity ran out before it, and still releases.
#[tokio::test]
async fn a_scoped_release_reports_a_lock_that_expired_before_it() {
    let m = masters(3);
    let redlock = client(&m, redlock_core::FanOut::Concurrent).await;
    let held = redlock.acquire("scoped:held", TTL).await.unwrap();
    let vote = redlock
        .release_scoped(&held)
        .await
        .expect("valid to the end");
    assert_eq!(vote.granted(), 3);

    let short = redlock
        .acquire("scoped:expired", Duration::from_secs(1))
        .await
        .unwrap();
    // Wait (bounded) for the validity to run out: a condition, not a fixed sleep.
    eventually("the validity to run out", Duration::from_secs(30), || {
        !short.is_valid()
    })
    .await;
    let err = redlock.release_scoped(&short).await.unwrap_err();
    assert!(err.is_lock_lost(), "{err}");
    assert!(matches!(
        err,
        redlock_core::Error::LockLost {
            reason: redlock_core::LostReason::ExpiredBeforeRelease,
            ..
        }
    ));
    assert!(with_key(&m, "scoped:expired").is_empty());
}
