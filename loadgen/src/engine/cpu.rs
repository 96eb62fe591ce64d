//! The load generator's own CPU: user + sys time of this process (all its threads, read by
//! [`redlock_process_cpu`]) and how long its threads waited for a core, sampled at the start
//! and the end of a measured window.

use std::time::{Duration, Instant};

use redlock_process_cpu::{cpu_wait, process_cpu, CpuTime};

use crate::model::mode::GeneratorCpu;

/// One reading of the wall clock, the process's CPU time and its threads' wait for a core.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample(Instant, CpuTime, Option<Duration>);

impl CpuSample {
    pub fn now() -> CpuSample {
        CpuSample(Instant::now(), process_cpu(), cpu_wait())
    }

    /// What the process used from `self` to `later`, against what the machine offered.
    pub fn until(&self, later: &CpuSample) -> GeneratorCpu {
        let cores = cores();
        let used = later.1 - self.1;
        GeneratorCpu {
            user_s: used.user.as_secs_f64(),
            sys_s: used.system.as_secs_f64(),
            core_s: later.0.saturating_duration_since(self.0).as_secs_f64() * f64::from(cores),
            cores,
            // Threads that exited in the window take their wait with them: never negative.
            wait_s: later
                .2
                .zip(self.2)
                .map(|(end, start)| end.saturating_sub(start).as_secs_f64()),
        }
    }
}

/// The CPU of one measured window, sampled by a loop that wakes at its start and its end, but
/// late on a busy machine.
#[derive(Debug)]
pub struct CpuWindow {
    /// The last sample before the window: the start when the loop first wakes only after the
    /// window has ended (a stalled machine), so a window is never left unmeasured.
    before: CpuSample,
    start: Option<CpuSample>,
    used: Option<GeneratorCpu>,
}

impl CpuWindow {
    pub fn new() -> CpuWindow {
        CpuWindow {
            before: CpuSample::now(),
            start: None,
            used: None,
        }
    }

    pub fn started(&self) -> bool {
        self.start.is_some()
    }

    pub fn done(&self) -> bool {
        self.used.is_some()
    }

    /// One wake-up of the loop: whether the window has begun, and whether it has ended (or
    /// the run was stopped).
    pub fn observe(&mut self, begun: bool, ended: bool) {
        if self.start.is_none() {
            if !begun {
                self.before = CpuSample::now();
            } else {
                self.start = Some(if ended { self.before } else { CpuSample::now() });
            }
        }
        if self.used.is_none() && ended {
            // Stopped before the window began: nothing measured, nothing used.
            self.used = Some(
                self.start
                    .map(|s| s.until(&CpuSample::now()))
                    .unwrap_or_default(),
            );
        }
    }

    /// What the window used so far (all of it once it ended), once it has begun.
    pub fn so_far(&self) -> Option<GeneratorCpu> {
        let start = self.start?;
        Some(self.used.unwrap_or_else(|| start.until(&CpuSample::now())))
    }

    /// What the window used (nothing when it never began).
    pub fn used(&self) -> GeneratorCpu {
        self.used.unwrap_or_default()
    }
}

/// Cores this process may run on.
pub fn cores() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_user_time() {
        let start = CpuSample::now();
        // A fixed amount of work (tens of ms of CPU however loaded the machine is).
        let mut x = 0u64;
        for _ in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let used = start.until(&CpuSample::now());
        assert!(used.user_s > 0.0, "{used:?}");
        assert!(used.cores >= 1);
        assert!(used.core_share() > 0.0 && used.core_s > 0.0, "{used:?}");
    }

    #[test]
    fn a_window_the_loop_only_sees_after_its_end_is_still_measured() {
        let mut window = CpuWindow::new();
        window.observe(false, false);
        // The loop's next wake-up comes after the whole window: begun and ended at once.
        window.observe(true, true);
        let used = window.used();
        assert!(
            window.done() && used.core_s > 0.0 && used.cores >= 1,
            "{used:?}"
        );
    }

    #[test]
    fn a_window_measures_from_its_first_wake_up_inside_it_to_its_end() {
        let mut window = CpuWindow::new();
        window.observe(true, false);
        assert!(window.started() && !window.done());
        assert!(window.so_far().is_some());
        window.observe(true, true);
        assert!(window.done() && window.used().core_s > 0.0);
    }

    #[test]
    fn a_run_stopped_before_its_window_used_nothing() {
        let mut window = CpuWindow::new();
        window.observe(false, true);
        assert!(window.done() && !window.started());
        assert_eq!(window.used(), GeneratorCpu::default());
        assert_eq!(window.so_far(), None);
    }
}
