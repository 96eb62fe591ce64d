//! Waits finer than a millisecond, for every precise wait of the suite: the fault proxy's
//! delays (`--rtt` plays 0.3 ms round trips) and the load generator's open-loop pacing.
//! Tokio's timer ticks in whole milliseconds and fires late by up to a tick more (a round trip
//! meant to add 0.5 ms added 3.3 ms). Here one thread per process keeps the deadlines in a
//! heap and sleeps on a condition variable (its timer slack lowered to 1 ns) until the
//! earliest is due, then wakes its task.
//!
//! A task holds a [`Registration`]: the thread may wake it up to [`EARLY`] before the time it
//! asked for, so a task polled before its deadline asks again once its wake-up has come —
//! without that, a wait woken early had nothing left to wake it and never ended.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// The thread wakes entries due within this much rather than sleep for so little.
pub const EARLY: Duration = Duration::from_micros(5);

/// One task's standing request to be woken.
#[derive(Debug, Default)]
pub struct Registration {
    /// When the thread was last asked to wake the task (`None`: never).
    asked: Option<Instant>,
}

impl Registration {
    /// Asks the thread to wake `cx`'s task at `at`, unless a request made earlier still
    /// stands (its time has not come: polled early, e.g. by a join of many futures).
    pub fn wake_at(&mut self, at: Instant, now: Instant, cx: &Context<'_>) {
        if self.asked.is_none_or(|asked| now + EARLY >= asked) {
            self.asked = Some(at);
            timer().register(at, cx.waker().clone());
        }
    }

    /// When the thread was last asked to wake the task.
    pub fn asked(&self) -> Option<Instant> {
        self.asked
    }
}

/// Completes at `at`, give or take the scheduler's delay in running the task.
pub fn sleep_until(at: Instant) -> SleepUntil {
    SleepUntil {
        at,
        registration: Registration::default(),
    }
}

/// See [`sleep_until`].
#[derive(Debug)]
pub struct SleepUntil {
    at: Instant,
    registration: Registration,
}

impl Future for SleepUntil {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = Instant::now();
        if now >= self.at {
            return Poll::Ready(());
        }
        let at = self.at;
        self.registration.wake_at(at, now, cx);
        Poll::Pending
    }
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
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
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Debug, Default)]
struct Pending {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

/// The process-wide timer thread's shared state.
#[derive(Debug, Default)]
struct Timer {
    pending: Mutex<Pending>,
    changed: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let timer: &'static Timer = Box::leak(Box::default());
        std::thread::Builder::new()
            .name("redlock-timer".into())
            .spawn(move || timer.run())
            .expect("spawning the timer thread");
        timer
    })
}

impl Timer {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(&self, at: Instant, waker: Waker) {
        let mut pending = self.lock();
        let earliest = pending.heap.peek().is_none_or(|Reverse(e)| at < e.at);
        pending.seq += 1;
        let seq = pending.seq;
        pending.heap.push(Reverse(Entry { at, seq, waker }));
        drop(pending);
        // Only a new earliest deadline changes how long the thread must sleep.
        if earliest {
            self.changed.notify_one();
        }
    }

    /// Forever: wakes every task due (within `EARLY`), then sleeps until the earliest other
    /// deadline or until a new one arrives.
    fn run(&self) {
        lower_timer_slack();
        let mut due = Vec::new();
        let mut pending = self.lock();
        loop {
            let now = Instant::now();
            while pending
                .heap
                .peek()
                .is_some_and(|Reverse(e)| e.at <= now + EARLY)
            {
                if let Some(Reverse(e)) = pending.heap.pop() {
                    due.push(e.waker);
                }
            }
            if !due.is_empty() {
                drop(pending);
                due.drain(..).for_each(Waker::wake);
                pending = self.lock();
                continue;
            }
            pending = match pending.heap.peek().map(|Reverse(e)| e.at) {
                None => self
                    .changed
                    .wait(pending)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(next) => {
                    self.changed
                        .wait_timeout(pending, next - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

/// Lets the thread's sleeps end when asked rather than up to 50 µs later (Linux's default
/// timer slack).
fn lower_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK only changes the calling thread's timer slack; no memory is
    // passed to the kernel.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Entries waiting for exactly `at`.
    fn entries_at(at: Instant) -> usize {
        timer().lock().heap.iter().filter(|e| e.0.at == at).count()
    }

    #[test]
    fn a_task_polled_once_its_wake_up_has_come_asks_again() {
        // The thread pops an entry up to `EARLY` before its time (and a caller may ask for a
        // later time than before): a task polled then, with no entry left, must ask again.
        // It once returned Pending instead, and a load worker waited forever.
        let (first, second) = (
            Instant::now() + Duration::from_secs(3600),
            Instant::now() + Duration::from_secs(3601),
        );
        let cx = Context::from_waker(Waker::noop());
        let mut registration = Registration::default();
        registration.wake_at(first, Instant::now(), &cx);
        assert_eq!(entries_at(first), 1, "asked once");
        registration.wake_at(first, Instant::now(), &cx);
        assert_eq!(
            entries_at(first),
            1,
            "polled before its wake-up: nothing more"
        );
        // The thread wakes the task: its entry is gone, and its time has (nearly) come.
        timer().lock().heap.retain(|e| e.0.at != first);
        registration.wake_at(second, first - EARLY, &cx);
        assert_eq!(entries_at(second), 1, "woken: asked again");
        assert_eq!(registration.asked(), Some(second));
        timer().lock().heap.retain(|e| e.0.at != second);
    }

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
        for (now, us) in ended.iter() {
            for earlier in offsets_us.iter().filter(|&&o| o < *us) {
                assert!(*now >= start + Duration::from_micros(*earlier));
            }
        }
    }
}
