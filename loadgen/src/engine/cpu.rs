//! The load generator's own CPU: user + sys time of this process (all its threads, read by
//! [`redlock_process_cpu`]), sampled at the start and the end of a measured window.

use std::time::Instant;

use redlock_process_cpu::{process_cpu, CpuTime};

use crate::model::mode::GeneratorCpu;

/// One reading of the process's CPU time and the wall clock.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample(Instant, CpuTime);

impl CpuSample {
    pub fn now() -> CpuSample {
        CpuSample(Instant::now(), process_cpu())
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
