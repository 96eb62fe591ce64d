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
}
