//! Many more callers than one client needs: throughput levels off instead of collapsing,
//! waiting inside the client is not reported as masters failing, and memory stays bounded.

use crate::common;

use std::time::Duration;

use common::{masters, with_key};
use redlock_core::Redlock;

/// Resident memory of this process, from /proc.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_thousand_tasks_on_one_client_get_no_false_unavailable() {
    const TASKS: usize = 4000;
    const CYCLES: usize = 5;
    const PER_MASTER_TIMEOUT: Duration = Duration::from_millis(250);
    let m = masters(5);
    // On a busy 2-core host a master process that shares it can be off the CPU for more than
    // the default 50 ms with up to 256 of this client's requests in its queue (the admission
    // gate): its wait, and real. The client's own waits this test is about (in line behind
    // 4,000 tasks, replies unread) reach seconds on such a host, past this timeout too if they
    // were counted against a master.
    let redlock = Redlock::builder(m.urls())
        .retry_count(0)
        .instance_timeout(PER_MASTER_TIMEOUT)
        .build()
        .unwrap();
    redlock.wait_connected(Duration::from_secs(10)).await;
    let before = rss_bytes();
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let redlock = redlock.clone();
            tokio::spawn(async move {
                let mut unavailable = Vec::new();
                for c in 0..CYCLES {
                    match redlock
                        .acquire(&format!("crowd:{t}:{c}"), Duration::from_secs(30))
                        .await
                    {
                        Ok(lock) => {
                            redlock.release(&lock).await.unwrap();
                        }
                        Err(e) if e.is_unavailable() => unavailable.push(e.to_string()),
                        Err(e) => panic!("distinct keys cannot be contended: {e}"),
                    }
                }
                unavailable
            })
        })
        .collect();
    let mut unavailable = Vec::new();
    for task in tasks {
        unavailable.extend(task.await.unwrap());
    }
    let grown = rss_bytes().saturating_sub(before);
    // The masters are healthy: an `Unavailable` here would be the client's own queueing.
    // A generous bound (1 %) keeps a CPU-starved machine from failing the test; an idle one
    // sees none.
    assert!(
        unavailable.len() * 100 <= TASKS * CYCLES,
        "{} of {} acquires reported Unavailable with healthy masters, e.g. {:?}",
        unavailable.len(),
        TASKS * CYCLES,
        unavailable.first()
    );
    println!(
        "{} Unavailable of {}: {:?}",
        unavailable.len(),
        TASKS * CYCLES,
        unavailable.first()
    );
    assert!(grown < 512 << 20, "memory grew by {} MiB", grown >> 20);
    for i in 0..5 {
        assert!(with_key(&m, &format!("crowd:0:{i}")).is_empty());
    }
}
