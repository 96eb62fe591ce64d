//! CPU time of the current process: user and system time of every thread so far
//! (`getrusage(RUSAGE_SELF)`). Local masters and other children are other processes and are
//! not included. The load generator, the criterion benchmarks and the peer workloads all read
//! it here, so their CPU figures mean the same thing.
//!
//! And how long the process's threads were ready to run but waited for a core
//! ([`cpu_wait`]): what tells a run on a busy machine from one on a quiet machine.

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

/// How long the threads of this process alive now have waited, ready to run, for a core (the
/// scheduler's run delay: `/proc/self/task/*/schedstat`, second field). `None` where the
/// platform does not tell (not Linux, or schedstat switched off). A thread that has exited
/// takes its wait with it: read it at the start and the end of a window of the same threads.
pub fn cpu_wait() -> Option<Duration> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let mut total_ns = 0u64;
    let mut read_any = false;
    for task in tasks.flatten() {
        // A thread can exit between the listing and the read: skip it.
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        if let Some(ns) = run_delay_ns(&text) {
            total_ns = total_ns.saturating_add(ns);
            read_any = true;
        }
    }
    read_any.then(|| Duration::from_nanos(total_ns))
}

/// The run delay (ns) of one `schedstat` line: "<on-cpu ns> <waiting ns> <timeslices>".
fn run_delay_ns(schedstat: &str) -> Option<u64> {
    schedstat.split_ascii_whitespace().nth(1)?.parse().ok()
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

    #[test]
    fn the_run_delay_is_the_second_field_and_garbage_is_none() {
        assert_eq!(run_delay_ns("123 4567 8\n"), Some(4567));
        assert_eq!(run_delay_ns("123"), None);
        assert_eq!(run_delay_ns("1 x 2"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_process_wait_includes_this_threads_wait_which_never_shrinks() {
        let mine = || {
            let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
            run_delay_ns(&text).unwrap()
        };
        let before = mine();
        let process = cpu_wait().expect("Linux tells the run delay");
        assert!(
            process.as_nanos() >= u128::from(before),
            "the process waited {process:?}, this thread alone {before} ns before that"
        );
        assert!(mine() >= before);
    }
}
