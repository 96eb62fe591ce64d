//! Waits finer than a millisecond for the proxy's delays. Tokio's timer ticks in whole
//! milliseconds and fires late by up to a tick more: a round trip meant to add 0.5 ms added
//! 3.3 ms, which would make a "same-zone" profile a cross-region one. One thread per process
//! sleeps until the earliest deadline on the operating system's own timer (sub-millisecond)
//! and wakes the tasks whose time has come.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

/// A waiting task: when it is due, its waker, and a number that keeps equal deadlines apart.
struct Entry(Instant, u64, Waker);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.0, self.1) == (other.0, other.1)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0, self.1).cmp(&(other.0, other.1))
    }
}

#[derive(Default)]
struct Waiting {
    heap: BinaryHeap<Reverse<Entry>>,
    next: u64,
}

/// The process's timer thread and what waits on it.
struct Timer {
    waiting: Mutex<Waiting>,
    changed: Condvar,
}

fn timer() -> &'static Arc<Timer> {
    static TIMER: OnceLock<Arc<Timer>> = OnceLock::new();
    TIMER.get_or_init(|| {
        let timer = Arc::new(Timer {
            waiting: Mutex::new(Waiting::default()),
            changed: Condvar::new(),
        });
        let runs = timer.clone();
        std::thread::Builder::new()
            .name("proxy-timer".into())
            .spawn(move || runs.run())
            .expect("the proxy's timer thread starts");
        timer
    })
}

impl Timer {
    /// Forever: wakes every task that is due, then sleeps until the earliest other deadline
    /// (or until a new one arrives).
    fn run(&self) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while waiting.heap.peek().is_some_and(|Reverse(e)| e.0 <= now) {
                if let Some(Reverse(entry)) = waiting.heap.pop() {
                    due.push(entry.2);
                }
            }
            if !due.is_empty() {
                drop(waiting);
                due.into_iter().for_each(Waker::wake);
                waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            waiting = match waiting.heap.peek().map(|Reverse(e)| e.0 - now) {
                Some(wait) => {
                    let (guard, _) = self
                        .changed
                        .wait_timeout(waiting, wait)
                        .unwrap_or_else(|e| e.into_inner());
                    guard
                }
                None => self
                    .changed
                    .wait(waiting)
                    .unwrap_or_else(|e| e.into_inner()),
            };
        }
    }

    fn register(&self, at: Instant, waker: Waker) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let earliest = waiting.heap.peek().is_none_or(|Reverse(e)| at < e.0);
        let n = waiting.next;
        waiting.next += 1;
        waiting.heap.push(Reverse(Entry(at, n, waker)));
        drop(waiting);
        // Only a new earliest deadline changes how long the thread must sleep.
        if earliest {
            self.changed.notify_one();
        }
    }
}

/// Completes at `at`, give or take the operating system's timer slack (tens of µs).
pub(super) fn sleep_until(at: Instant) -> PreciseSleep {
    PreciseSleep {
        at,
        registered: false,
    }
}

pub(super) struct PreciseSleep {
    at: Instant,
    registered: bool,
}

impl Future for PreciseSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            return Poll::Ready(());
        }
        // Polled again before its time (another branch of a select woke the task): the
        // waker registered first still wakes it; register once.
        if !self.registered {
            timer().register(self.at, cx.waker().clone());
            self.registered = true;
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waits_never_end_early_and_end_in_deadline_order() {
        let start = Instant::now();
        // Deadlines registered out of order, some closer together than a millisecond.
        let offsets_us = [900u64, 300, 600, 150, 1200, 450];
        let ended = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for us in offsets_us {
            let ended = ended.clone();
            tasks.push(tokio::spawn(async move {
                let at = start + Duration::from_micros(us);
                sleep_until(at).await;
                let now = Instant::now();
                assert!(now >= at, "{us} µs: ended {:?} early", at - now);
                ended.lock().unwrap().push((now, us));
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let ended = ended.lock().unwrap();
        assert_eq!(ended.len(), offsets_us.len());
        // Each ended after every earlier deadline.
        for (now, us) in ended.iter() {
            for earlier in offsets_us.iter().filter(|&&o| o < *us) {
                assert!(*now >= start + Duration::from_micros(*earlier));
            }
        }
    }
}
