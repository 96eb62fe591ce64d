//! 32 tasks hammering one resource: never two holders inside their validity at once.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use redlock_core::Retry;

const TASKS: usize = 32;
const CYCLES_PER_TASK: usize = 10;
/// Long enough that a key still there at the end was left behind, not merely unexpired.
const TTL: Duration = Duration::from_secs(30);
/// Bound on the whole run per fan-out mode, whatever happens.
const RUN_LIMIT: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_tasks_never_hold_one_resource_at_once() {
    let m = masters(5);
    for fanout in FANOUTS {
        let redlock = connected(
            builder(&m, fanout)
                .retry_count(50)
                .retry_delay(Duration::from_millis(4)),
        )
        .await;
        let key = format!("hammer:{fanout}");
        // Windows during which each holder may act as owner: from the moment its winning vote
        // completed (when it learns it holds the lock) to the earlier of its validity end and
        // the start of its release.
        let windows: Arc<Mutex<Vec<(Instant, Instant)>>> = Arc::default();
        let holding = Arc::new(AtomicUsize::new(0));
        let max_seen = Arc::new(AtomicUsize::new(0));
        let deadline = Instant::now() + RUN_LIMIT;
        let mut tasks = Vec::new();
        for _ in 0..TASKS {
            let (redlock, key) = (redlock.clone(), key.clone());
            let (windows, holding, max_seen) = (windows.clone(), holding.clone(), max_seen.clone());
            tasks.push(tokio::spawn(async move {
                let mut won = 0;
                for _ in 0..CYCLES_PER_TASK {
                    if Instant::now() > deadline {
                        break;
                    }
                    let Ok(lock) = redlock
                        .acquire_observed(&key, TTL, Retry::Configured, &mut |_| {})
                        .await
                    else {
                        continue;
                    };
                    let now_holding = holding.fetch_add(1, Ordering::SeqCst) + 1;
                    max_seen.fetch_max(now_holding, Ordering::SeqCst);
                    tokio::task::yield_now().await; // a little work inside the lock
                    holding.fetch_sub(1, Ordering::SeqCst);
                    let end = lock.valid_until().min(Instant::now());
                    windows.lock().unwrap().push((lock.vote().completed(), end));
                    redlock.release(&lock).await.unwrap();
                    won += 1;
                }
                won
            }));
        }
        let mut total = 0;
        for t in tasks {
            total += t.await.unwrap();
        }
        assert!(
            total >= TASKS,
            "{fanout}: only {total} acquisitions: the test proves nothing"
        );
        assert_eq!(
            max_seen.load(Ordering::SeqCst),
            1,
            "{fanout}: two holders at once"
        );
        let mut windows = windows.lock().unwrap().clone();
        windows.sort();
        for pair in windows.windows(2) {
            assert!(
                pair[0].1 <= pair[1].0,
                "{fanout}: validity windows overlap: {:?} and {:?}",
                pair[0],
                pair[1]
            );
        }
        // A cleanup or release that hit the per-master timeout (a CPU-starved test machine)
        // finishes in the background: wait for it, far below the TTL.
        eventually("no key left", Duration::from_secs(3), || {
            with_key(&m, &key).is_empty()
        })
        .await;
    }
}
