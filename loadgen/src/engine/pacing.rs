//! Precise waits: open-loop slots and sub-millisecond holds start on time.
//!
//! tokio's timer wheel has 1 ms granularity and rounds every deadline up, so a task that
//! sleeps until a slot starts up to ~1 ms late. Here one OS thread keeps the pending deadlines
//! in a heap and sleeps on a condition variable (its timer slack lowered to 1 ns) until the
//! earliest is due. It wakes each task a little *ahead* of its deadline — by the lead, a
//! running estimate of how late such a wake-up reaches the task (the thread's own oversleep
//! plus the hop to a runtime worker) — and the task then yields to the other tasks until its
//! deadline has come. So the final stretch is spent inside the runtime, interleaved with real
//! work, instead of in a thread spinning on a core of its own; the lag left is the runtime's
//! poll delay. Waits longer than a few milliseconds first sleep on tokio's timer.
//!
//! Learned from wrk2 (a schedule of intended starts, latency measured from them) and from
//! the usual "sleep, then spin the last part" of software pacers; the code is our own.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// Waits longer than this first sleep on tokio's timer until `COARSE_MARGIN` before the
/// deadline (the wheel may wake up to ~1 ms late, so the margin leaves room for that).
const COARSE_ABOVE: Duration = Duration::from_millis(3);
const COARSE_MARGIN: Duration = Duration::from_millis(2);
/// Bounds of the lead, and its starting value.
const LEAD_MIN_NS: u64 = 10_000;
const LEAD_MAX_NS: u64 = 100_000;
const LEAD_START_NS: u64 = 50_000;
/// The lead tracks this quantile of the observed wake-up lateness, moving by at most
/// `LEAD_STEP_NS` per observation (a stochastic quantile estimate).
const LEAD_QUANTILE: f64 = 0.95;
const LEAD_STEP_NS: f64 = 4_000.0;
/// The timer thread wakes entries due within this much rather than sleep for so little.
const EARLY: Duration = Duration::from_micros(5);

/// Current lead, ns.
static LEAD_NS: AtomicU64 = AtomicU64::new(LEAD_START_NS);

fn lead() -> Duration {
    Duration::from_nanos(LEAD_NS.load(Ordering::Relaxed))
}

/// Feeds one observation (how long after its wake time a task was polled) into the lead.
fn observe_wake_lateness(late: Duration) {
    let current = LEAD_NS.load(Ordering::Relaxed);
    LEAD_NS.store(next_lead(current, late), Ordering::Relaxed);
}

/// One step of the lead's quantile estimate: up by `STEP × q` when the wake-up was later than
/// the lead, down by `STEP × (1 − q)` otherwise, within the bounds.
fn next_lead(current_ns: u64, late: Duration) -> u64 {
    let current = current_ns as f64;
    let next = if late.as_nanos() as f64 > current {
        current + LEAD_STEP_NS * LEAD_QUANTILE
    } else {
        current - LEAD_STEP_NS * (1.0 - LEAD_QUANTILE)
    };
    (next as u64).clamp(LEAD_MIN_NS, LEAD_MAX_NS)
}

/// Sleeps until `deadline` with microsecond-level precision (see the module docs).
pub async fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline <= now {
        return;
    }
    if deadline - now > COARSE_ABOVE {
        tokio::time::sleep_until((deadline - COARSE_MARGIN).into()).await;
    }
    PreciseSleep {
        deadline,
        wake_at: None,
        observed: false,
    }
    .await
}

/// Sleeps for `d` (see [`sleep_until`]).
pub async fn sleep(d: Duration) {
    if !d.is_zero() {
        sleep_until(Instant::now() + d).await;
    }
}

/// The last stretch of a wait: registered once with the timer thread, then polled until the
/// deadline has come.
#[derive(Debug)]
struct PreciseSleep {
    deadline: Instant,
    /// When the timer thread was asked to wake us (`None`: not asked yet).
    wake_at: Option<Instant>,
    /// The wake-up's lateness was fed into the lead.
    observed: bool,
}

impl Future for PreciseSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = Instant::now();
        if let Some(at) = self.wake_at {
            if now >= at && !self.observed {
                self.observed = true;
                observe_wake_lateness(now - at);
            }
        }
        if now >= self.deadline {
            return Poll::Ready(());
        }
        let left = self.deadline - now;
        if left > lead() {
            // Not yet in the final stretch: the timer thread wakes us. Registered again when
            // the wake-up asked for has come (it may come up to `EARLY` ahead, and the lead
            // may have shrunk since): polled then with no entry left, a sleep would never end.
            // Polled before it (e.g. by a join of many futures), the entry still stands.
            if self.wake_at.is_none_or(|at| now + EARLY >= at) {
                let at = self.deadline - lead();
                self.wake_at = Some(at);
                timer().register(at, cx.waker().clone());
            }
            return Poll::Pending;
        }
        // The final stretch (at most the lead): spin it out here. Yielding instead would make
        // every re-poll wake an idle worker thread (a futex call and a context switch each).
        while Instant::now() < self.deadline {
            std::hint::spin_loop();
        }
        Poll::Ready(())
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
            .name("redlock-loadgen-pacer".into())
            .spawn(move || timer.run())
            .expect("spawning the pacing thread");
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
        if earliest {
            self.changed.notify_one();
        }
    }

    fn run(&self) {
        lower_timer_slack();
        let mut due = Vec::new();
        let mut pending = self.lock();
        loop {
            let now = Instant::now();
            while let Some(Reverse(e)) = pending.heap.peek() {
                if e.at > now + EARLY {
                    break;
                }
                let Some(Reverse(e)) = pending.heap.pop() else {
                    break;
                };
                due.push(e.waker);
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

/// Lets the pacing thread's sleeps end when asked rather than up to 50 µs later (Linux's
/// default timer slack).
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

    use crate::signals::Stop;

    #[test]
    fn a_sleep_polled_once_its_wake_up_has_come_asks_to_be_woken_again() {
        // The timer thread pops an entry up to `EARLY` before its time, and the lead may
        // shrink between registering and waking: either way the sleep is polled outside its
        // final stretch with no entry left. It once returned Pending then, and a load worker
        // waited forever (a capacity search hung mid-step).
        let deadline = Instant::now() + Duration::from_secs(3600);
        let entries_of = |deadline: Instant| {
            let pending = timer().lock();
            let ours = |e: &&Reverse<Entry>| deadline - e.0.at <= Duration::from_nanos(LEAD_MAX_NS);
            pending.heap.iter().filter(ours).count()
        };
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut sleep = PreciseSleep {
            deadline,
            wake_at: None,
            observed: true,
        };
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
        assert_eq!(entries_of(deadline), 1, "registered once");
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
        assert_eq!(
            entries_of(deadline),
            1,
            "a poll before its wake-up registers nothing more"
        );
        // The timer thread wakes it: its entry is gone, and its wake-up time has come.
        timer()
            .lock()
            .heap
            .retain(|e| deadline - e.0.at > Duration::from_nanos(LEAD_MAX_NS));
        sleep.wake_at = Some(Instant::now() - Duration::from_micros(1));
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
        assert_eq!(
            entries_of(deadline),
            1,
            "woken outside its final stretch: registered again"
        );
        timer()
            .lock()
            .heap
            .retain(|e| deadline - e.0.at > Duration::from_nanos(LEAD_MAX_NS));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sleeps_never_end_before_their_deadline() {
        // Lower bounds only: how late a sleep ends depends on the machine's load.
        for d in [0u64, 30, 120, 700, 2_500, 5_000] {
            let d = Duration::from_micros(d);
            let start = Instant::now();
            sleep(d).await;
            assert!(
                start.elapsed() >= d,
                "{d:?}: woke after {:?}",
                start.elapsed()
            );
        }
        let deadlines: Vec<Instant> = (0..50)
            .map(|i| Instant::now() + Duration::from_micros(200 + 37 * i))
            .collect();
        let waits = deadlines.iter().map(|&at| async move {
            sleep_until(at).await;
            Instant::now() >= at
        });
        let on_time = futures_util::future::join_all(waits).await;
        assert!(on_time.iter().all(|&ok| ok));
    }

    #[test]
    fn the_lead_follows_the_wake_up_lateness_within_its_bounds() {
        let us = Duration::from_micros;
        let mut lead = LEAD_START_NS;
        for _ in 0..200 {
            lead = next_lead(lead, us(70));
        }
        // Wake-ups always 70 µs late: the lead settles just around 70 µs.
        assert!(lead.abs_diff(70_000) <= LEAD_STEP_NS as u64, "{lead}");
        for _ in 0..100_000 {
            lead = next_lead(lead, us(5_000));
        }
        assert_eq!(lead, LEAD_MAX_NS);
        for _ in 0..1_000_000 {
            lead = next_lead(lead, Duration::ZERO);
        }
        assert_eq!(lead, LEAD_MIN_NS);
    }

    #[tokio::test]
    async fn stop_wakes_every_waiter_and_stays_set() {
        let stop = Stop::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let stop = Arc::clone(&stop);
                tokio::spawn(async move { stop.wait().await })
            })
            .collect();
        stop.set();
        for w in waiters {
            w.await.unwrap();
        }
        assert!(stop.is_set());
        stop.wait().await; // already set: returns at once
    }
}
