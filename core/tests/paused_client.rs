//! A client that stops running for a while — its process paused, starved of CPU, or its host
//! busy — does not report its healthy masters as timing out: a master's timeout counts from
//! the moment its request was written, and replies that arrived meanwhile are read before
//! any verdict.
//!
//! The pause is real: a child process stops this whole test process (SIGSTOP) for four
//! per-master timeouts and then lets it go on (SIGCONT), while tasks keep acquiring and
//! releasing on five healthy masters. This file is a test binary of its own holding one
//! test, so no other test shares the paused process (nor loads it while it measures).

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{connected, masters, FANOUTS};
use redlock_core::Redlock;
use tokio::sync::Notify;

/// Tasks sharing the client: enough for many rounds to be in flight when the pause begins.
const TASKS: usize = 32;
/// The per-master timeout: long enough that masters on a busy machine answer within it, so
/// any timeout counted here comes from the pauses.
const INSTANCE_TIMEOUT: Duration = Duration::from_millis(200);
/// How long each pause lasts, in seconds: four per-master timeouts.
const PAUSE_SECONDS: &str = "0.8";
const PAUSES: usize = 2;

/// Stops this process for `PAUSE_SECONDS` (a child sends SIGSTOP, sleeps, sends SIGCONT) and
/// returns how long the pause lasted as this process saw it.
fn pause_this_process() -> Duration {
    let pid = std::process::id();
    let began = Instant::now();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "kill -STOP {pid}; sleep {PAUSE_SECONDS}; kill -CONT {pid}"
        ))
        .status()
        .expect("sh runs");
    assert!(status.success(), "the pausing child failed: {status}");
    began.elapsed()
}

/// Cycles completed by all tasks, and a wake-up for whoever waits for a count.
#[derive(Default)]
struct Progress {
    cycles: AtomicUsize,
    changed: Notify,
}

impl Progress {
    fn add(&self) {
        self.cycles.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Waits until at least `target` cycles are done.
    async fn reached(&self, target: usize) {
        loop {
            let changed = self.changed.notified();
            if self.cycles.load(Ordering::SeqCst) >= target {
                return;
            }
            changed.await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_client_does_not_report_its_healthy_masters_as_timed_out() {
    for fanout in FANOUTS {
        let m = masters(5);
        let redlock = connected(
            Redlock::builder(m.urls())
                .fanout(fanout)
                .retry_count(0)
                .instance_timeout(INSTANCE_TIMEOUT),
        )
        .await;
        let stop = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(Progress::default());
        let workers: Vec<_> = (0..TASKS)
            .map(|t| {
                let (redlock, stop, progress) = (redlock.clone(), stop.clone(), progress.clone());
                tokio::spawn(async move {
                    let (mut timed_out, mut unavailable) = (0, Vec::new());
                    let mut n = 0;
                    while !stop.load(Ordering::SeqCst) {
                        n += 1;
                        let resource = format!("paused:{t}:{n}");
                        match redlock.acquire(&resource, Duration::from_secs(30)).await {
                            Ok(lock) => {
                                timed_out += lock.vote().timed_out();
                                let released = redlock.release(&lock).await.unwrap();
                                timed_out += released.timed_out();
                            }
                            Err(e) if e.is_unavailable() => unavailable.push(e.to_string()),
                            Err(e) => panic!("distinct keys cannot be contended: {e}"),
                        }
                        progress.add();
                    }
                    (timed_out, unavailable)
                })
            })
            .collect();
        let mut target = 0;
        for _ in 0..PAUSES {
            // Pause in the middle of the load: every task has rounds going.
            target += TASKS * 10;
            progress.reached(target).await;
            let paused = tokio::task::spawn_blocking(pause_this_process)
                .await
                .unwrap();
            assert!(
                paused >= INSTANCE_TIMEOUT * 4,
                "the process was paused for {paused:?} only"
            );
        }
        // Every round that was in flight during the last pause has finished after this.
        target = progress.cycles.load(Ordering::SeqCst) + TASKS * 10;
        progress.reached(target).await;
        stop.store(true, Ordering::SeqCst);
        let (mut timed_out, mut unavailable) = (0, Vec::new());
        for worker in workers {
            let (t, u) = worker.await.unwrap();
            timed_out += t;
            unavailable.extend(u);
        }
        assert!(
            unavailable.is_empty() && timed_out == 0,
            "{fanout:?}: after {PAUSES} pauses of the client, {} acquires reported Unavailable \
             and {timed_out} masters timed out in successful votes, with healthy masters; e.g. {:?}",
            unavailable.len(),
            unavailable.first()
        );
    }
}
