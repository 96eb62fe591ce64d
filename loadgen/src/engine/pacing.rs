//! Precise waits: open-loop slots and sub-millisecond holds start on time.
//!
//! tokio's timer wheel has 1 ms granularity and rounds every deadline up, so a task that
//! sleeps until a slot starts up to ~1 ms late. Here the suite's timer thread
//! (`redlock_local::timer`) wakes each task a little *ahead* of its deadline — by the lead, a
//! running estimate of how late such a wake-up reaches the task (the thread's own oversleep
//! plus the hop to a runtime worker) — and the task spins out the rest of it (at most the
//! lead: 10–100 µs) on its runtime worker. Waits longer than a few milliseconds first sleep
//! on tokio's timer.
//!
//! Learned from wrk2 (a schedule of intended starts, latency measured from them) and from
//! the usual "sleep, then spin the last part" of software pacers; the code is our own.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use redlock_local::timer::Registration;

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
        registration: Registration::default(),
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

/// The last stretch of a wait: the timer thread wakes it a lead before its deadline, then it
/// spins the rest.
#[derive(Debug)]
struct PreciseSleep {
    deadline: Instant,
    registration: Registration,
    /// The wake-up's lateness was fed into the lead.
    observed: bool,
}

impl Future for PreciseSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let now = Instant::now();
        if let Some(at) = self.registration.asked() {
            if now >= at && !self.observed {
                self.observed = true;
                observe_wake_lateness(now - at);
            }
        }
        if now >= self.deadline {
            return Poll::Ready(());
        }
        if self.deadline - now > lead() {
            // Not yet in the final stretch: the timer thread wakes us.
            let at = self.deadline - lead();
            self.registration.wake_at(at, now, cx);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use crate::signals::Stop;

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
