//! The load generator's own CPU: user + sys time of this process (all its threads), sampled
//! at the start and the end of a measured window.

use std::time::Instant;

use crate::stats::GeneratorCpu;

/// One reading of the process's CPU time and the wall clock.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    at: Instant,
    user_s: f64,
    sys_s: f64,
}

impl CpuSample {
    pub fn now() -> CpuSample {
        let (user_s, sys_s) = process_cpu();
        CpuSample {
            at: Instant::now(),
            user_s,
            sys_s,
        }
    }

    /// What the process used from `self` to `later`, against what the machine offered.
    pub fn until(&self, later: &CpuSample) -> GeneratorCpu {
        let cores = cores();
        let wall_s = later.at.saturating_duration_since(self.at).as_secs_f64();
        GeneratorCpu {
            user_s: (later.user_s - self.user_s).max(0.0),
            sys_s: (later.sys_s - self.sys_s).max(0.0),
            core_s: wall_s * f64::from(cores),
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

#[cfg(unix)]
fn process_cpu() -> (f64, f64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `rusage` into the pointer it is given, which points to
    // writable memory of that type.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    // SAFETY: getrusage returned 0, so it filled the struct.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

#[cfg(not(unix))]
fn process_cpu() -> (f64, f64) {
    (0.0, 0.0)
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
