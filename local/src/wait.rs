//! Waiting for a condition in tests, bounded: a poll with a generous deadline instead of a
//! sleep standing in for synchronisation.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often [`eventually`] asks again.
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
