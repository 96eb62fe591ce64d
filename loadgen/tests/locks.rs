//! The single-master baselines against a real local master: what each sends, what it leaves
//! on the master, and how its documented weak spot shows (crash between SETNX and EXPIRE,
//! clocks that disagree).

use std::sync::Arc;
use std::time::{Duration, Instant};

use redlock_loadgen::engine::faults::client::{CrashPlan, WorkerFaults};
use redlock_loadgen::engine::locks::baseline::{AttemptResult, Baseline, Held};
use redlock_loadgen::engine::locks::master::RequestError;
use redlock_loadgen::model::lock::LockAlgorithm;
use redlock_local::LocalMasters;

const TIMEOUT: Duration = Duration::from_millis(500);
const TTL: Duration = Duration::from_secs(10);

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn baseline(masters: &LocalMasters, algorithm: LockAlgorithm) -> Baseline {
    Baseline::new(algorithm, &masters.url(0).unwrap(), TIMEOUT).unwrap()
}

fn pttl(masters: &LocalMasters, key: &str) -> i64 {
    masters
        .command(0, &["PTTL", key])
        .unwrap()
        .as_integer()
        .unwrap()
}

fn expect_held(result: AttemptResult) -> Held {
    match result {
        AttemptResult::Acquired(held) => held,
        other => panic!("expected the lock, got {other:?}"),
    }
}

#[test]
fn single_sets_a_token_with_a_ttl_and_releases_only_its_own() {
    let masters = LocalMasters::start(1).unwrap();
    let lock = baseline(&masters, LockAlgorithm::Single);
    let none = WorkerFaults::default();
    rt().block_on(async {
        let won = lock.try_acquire("k", TTL, &none).await;
        assert_eq!(won.commands, 1, "one SET NX PX");
        let held = expect_held(won.result);
        assert_eq!(
            masters.get(0, "k").unwrap().as_deref(),
            Some(held.value.as_str())
        );
        let ttl = pttl(&masters, "k");
        assert!(ttl > 0 && ttl <= 10_000, "PTTL {ttl}");
        assert!(held.valid_until > held.completed);

        let lost = lock.try_acquire("k", TTL, &none).await;
        assert!(matches!(lost.result, AttemptResult::Denied), "{lost:?}");
        assert_eq!(lost.commands, 1);

        // Someone else's lock under the same name is left alone.
        masters.command(0, &["SET", "k", "someone-else"]).unwrap();
        let foreign = lock.release("k", &held, &none).await;
        assert!(!foreign.deleted && foreign.error.is_none(), "{foreign:?}");
        assert_eq!(
            masters.get(0, "k").unwrap().as_deref(),
            Some("someone-else")
        );

        masters.command(0, &["DEL", "k"]).unwrap();
        let held = expect_held(lock.try_acquire("k", TTL, &none).await.result);
        let released = lock.release("k", &held, &none).await;
        assert!(released.deleted && !released.foreign, "{released:?}");
        assert_eq!(released.commands, 1);
        assert_eq!(masters.get(0, "k").unwrap(), None);
    });
}

#[test]
fn setnx_expire_takes_two_commands_and_a_crash_between_them_leaves_a_key_that_never_expires() {
    let masters = LocalMasters::start(1).unwrap();
    let lock = baseline(&masters, LockAlgorithm::SetnxExpire);
    let none = WorkerFaults::default();
    rt().block_on(async {
        let won = lock
            .try_acquire("k", Duration::from_millis(1500), &none)
            .await;
        assert_eq!(won.commands, 2, "SETNX then EXPIRE");
        let held = expect_held(won.result);
        // EXPIRE counts whole seconds: 1.5 s is rounded up to 2 s.
        let ttl = pttl(&masters, "k");
        assert!(ttl > 1500 && ttl <= 2000, "PTTL {ttl}");
        let lost = lock.try_acquire("k", TTL, &none).await;
        assert!(matches!(lost.result, AttemptResult::Denied));
        assert_eq!(lost.commands, 1, "a lost SETNX sends nothing else");

        // The lock passed to someone else (expired, then retaken): a DEL without a token
        // deletes theirs, and the generator sees it.
        masters.command(0, &["SET", "k", "next-holder"]).unwrap();
        let released = lock.release("k", &held, &none).await;
        assert!(released.deleted && released.foreign, "{released:?}");
        assert_eq!(masters.get(0, "k").unwrap(), None);

        let crash = WorkerFaults {
            crash: Some(Arc::new(CrashPlan::new(Instant::now(), ()))),
            ..WorkerFaults::default()
        };
        let died = lock.try_acquire("k", TTL, &crash).await;
        assert!(matches!(died.result, AttemptResult::Crashed), "{died:?}");
        assert_eq!(died.commands, 1, "died after SETNX, before EXPIRE");
        assert_eq!(
            pttl(&masters, "k"),
            -1,
            "the key has no TTL: it never expires"
        );
        let stuck = lock.try_acquire("k", TTL, &none).await;
        assert!(matches!(stuck.result, AttemptResult::Denied));
    });
}

#[test]
fn setnx_getset_takes_over_expired_locks_and_disagreeing_clocks_make_two_holders() {
    let masters = LocalMasters::start(1).unwrap();
    let lock = baseline(&masters, LockAlgorithm::SetnxGetset);
    let none = WorkerFaults::default();
    let ahead = WorkerFaults {
        clock_offset_ms: 60_000,
        ..WorkerFaults::default()
    };
    rt().block_on(async {
        let won = lock.try_acquire("k", TTL, &none).await;
        assert_eq!(won.commands, 1);
        let first = expect_held(won.result);
        let stored: i64 = masters.get(0, "k").unwrap().unwrap().parse().unwrap();
        assert_eq!(stored, first.expires_ms, "the value is the expiry time");
        assert_eq!(
            pttl(&masters, "k"),
            -1,
            "no Redis TTL: the timestamp is the expiry"
        );

        // A contender whose clock agrees sees a live lock: SETNX, GET, give up.
        let lost = lock.try_acquire("k", TTL, &none).await;
        assert!(matches!(lost.result, AttemptResult::Denied));
        assert_eq!(lost.commands, 2, "SETNX and GET");

        // A contender whose clock runs a minute ahead sees it expired and takes it over.
        let stolen = lock.try_acquire("k", TTL, &ahead).await;
        assert_eq!(stolen.commands, 3, "SETNX, GET and GETSET");
        let second = expect_held(stolen.result);
        assert!(second.expires_ms > first.expires_ms);

        // The first holder's clock says its lock is still valid: its DEL removes the
        // second holder's lock.
        let released = lock.release("k", &first, &none).await;
        assert!(released.deleted && released.foreign, "{released:?}");
        assert_eq!(masters.get(0, "k").unwrap(), None);

        // A holder whose own clock says its lock expired sends nothing.
        masters
            .command(0, &["SET", "k", &second.expires_ms.to_string()])
            .unwrap();
        let late = WorkerFaults {
            clock_offset_ms: 120_000,
            ..WorkerFaults::default()
        };
        let skipped = lock.release("k", &second, &late).await;
        assert_eq!(skipped.commands, 0);
        assert!(!skipped.deleted);
        assert!(masters.get(0, "k").unwrap().is_some());
    });
}

#[test]
fn a_down_master_fails_fast_and_is_reconnected_when_it_is_back() {
    let masters = LocalMasters::start(1).unwrap();
    let none = WorkerFaults::default();
    for algorithm in [
        LockAlgorithm::Single,
        LockAlgorithm::SetnxExpire,
        LockAlgorithm::SetnxGetset,
    ] {
        let lock = baseline(&masters, algorithm);
        rt().block_on(async {
            let held = expect_held(lock.try_acquire("down", TTL, &none).await.result);
            masters.kill(0).unwrap();
            let failed = lock.try_acquire("down", TTL, &none).await;
            assert!(
                matches!(
                    failed.result,
                    AttemptResult::Failed(RequestError::Failed(_) | RequestError::TimedOut)
                ),
                "{algorithm}: {failed:?}"
            );
            let release = lock.release("down", &held, &none).await;
            assert!(release.error.is_some(), "{algorithm}: {release:?}");
            masters.start_again(0).unwrap();
            // Back empty: the next attempt reconnects and wins.
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let again = lock.try_acquire("down", TTL, &none).await;
                if let AttemptResult::Acquired(_) = again.result {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "{algorithm}: never reconnected: {again:?}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        masters.command(0, &["FLUSHALL"]).unwrap();
    }
}
