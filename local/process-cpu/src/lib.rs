//! CPU time of the current process: user and system time of every thread so far
//! (`getrusage(RUSAGE_SELF)`). Local masters and other children are other processes and are
//! not included. The load generator, the criterion benchmarks and the peer workloads all read
//! it here, so their CPU figures mean the same thing.

use std::ops::Sub;
use std::time::Duration;

/// User and system CPU time used by this process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct CpuTime {
    pub user: Duration,
    pub system: Duration,
}

impl CpuTime {
    /// User + system.
    pub fn total(&self) -> Duration {
        self.user + self.system
    }
}

impl Sub for CpuTime {
    type Output = CpuTime;

    /// The time used between two readings (zero, never negative, if `rhs` is the later one).
    fn sub(self, rhs: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user.saturating_sub(rhs.user),
            system: self.system.saturating_sub(rhs.system),
        }
    }
}

/// The CPU time this process has used so far (zero where the platform cannot tell).
#[cfg(unix)]
pub fn process_cpu() -> CpuTime {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `rusage` into the pointer it is given, which points to
    // writable memory of that type.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return CpuTime::default();
    }
    // SAFETY: getrusage returned 0, so it filled the struct.
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    CpuTime {
        user: time(usage.ru_utime),
        system: time(usage.ru_stime),
    }
}

/// The CPU time this process has used so far (zero where the platform cannot tell).
#[cfg(not(unix))]
pub fn process_cpu() -> CpuTime {
    CpuTime::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_user_time_and_readings_only_grow() {
        let start = process_cpu();
        // A fixed amount of work: tens of ms of CPU however loaded the machine is.
        let mut x = 0u64;
        for _ in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let end = process_cpu();
        let used = end - start;
        assert!(used.user > Duration::ZERO, "{used:?}");
        assert!(end.total() >= start.total());
        assert_eq!(
            start - end,
            CpuTime::default(),
            "an earlier reading minus a later one is zero"
        );
    }
}
