//! Shared helpers of the core's integration tests: real local masters and key inspection.
#![allow(dead_code)] // each test binary uses a different subset

use std::time::{Duration, Instant};

use redlock_core::local::LocalMasters;
use redlock_core::{FanOut, Redlock, RedlockBuilder};

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
pub fn get(masters: &LocalMasters, i: usize, key: &str) -> Option<String> {
    let reply = masters.command(i, &["GET", key]).expect("GET");
    if reply.starts_with("$-1") {
        return None;
    }
    // "$<len>\r\n<value>\r\n"
    reply.split("\r\n").nth(1).map(str::to_string)
}

/// Masters (indices) on which `key` holds `value`.
pub fn holders(masters: &LocalMasters, key: &str, value: &str) -> Vec<usize> {
    (0..masters.len())
        .filter(|&i| masters.is_up(i).unwrap_or(false))
        .filter(|&i| get(masters, i, key).as_deref() == Some(value))
        .collect()
}

/// Masters on which `key` exists at all.
pub fn with_key(masters: &LocalMasters, key: &str) -> Vec<usize> {
    (0..masters.len())
        .filter(|&i| masters.is_up(i).unwrap_or(false))
        .filter(|&i| get(masters, i, key).is_some())
        .collect()
}

pub fn set(masters: &LocalMasters, i: usize, key: &str, value: &str) {
    let reply = masters.command(i, &["SET", key, value]).expect("SET");
    assert!(reply.starts_with("+OK"), "SET on master {i}: {reply}");
}

pub fn del(masters: &LocalMasters, i: usize, key: &str) {
    masters.command(i, &["DEL", key]).expect("DEL");
}

/// Waits (bounded) until `cond` holds; panics with `what` if it never does.
pub async fn eventually(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
