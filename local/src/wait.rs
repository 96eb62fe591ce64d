//! Waiting in tests, bounded: a poll with a generous deadline instead of a sleep standing in
//! for synchronisation, for a condition ([`eventually`], [`eventually_blocking`]) or for a
//! child process to end ([`wait_for_exit`]).

use std::future::Future;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often the waits ask again.
const POLL: Duration = Duration::from_millis(5);

/// Waits until `cond` holds, asking every few milliseconds; panics naming `what` once `limit`
/// has passed (a test failure, never a speed claim: give `limit` plenty of room).
pub async fn eventually<F, Fut>(what: &str, limit: Duration, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    while !cond().await {
        assert!(
            started.elapsed() < limit,
            "timed out after {limit:?} waiting for: {what}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`] for code without a runtime: blocks the calling thread between polls.
pub fn eventually_blocking(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let started = Instant::now();
    while !cond() {
        assert!(
            started.elapsed() < limit,
            "timed out after {limit:?} waiting for: {what}"
        );
        std::thread::sleep(POLL);
    }
}

/// Waits until `child` ends and returns its status; once `limit` has passed, kills and reaps
/// it and panics naming `what`, so a child that ignores its signal cannot hang a test.
pub fn wait_for_exit(child: &mut Child, what: &str, limit: Duration) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait on a child process") {
            return status;
        }
        if started.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait(); // SIGKILL cannot be ignored: this returns
            panic!("timed out after {limit:?} waiting for {what} to end (killed it)");
        }
        std::thread::sleep(POLL);
    }
}
