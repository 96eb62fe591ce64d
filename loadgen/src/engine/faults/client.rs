//! Client faults (`--client-fault`): faults of the load clients themselves, where
//! [`super::master`] breaks masters. Parsed here ([`WorkerFault`]), resolved for a run
//! ([`WorkerFaultPlan`]), and carried by each worker ([`WorkerFaults`]); what they caused is
//! counted with the run (`crashed_clients`, `acquired_after_crash`; a holder pause's late
//! writes: the fencing figures, [`crate::model::fencing`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::model::values::parse_duration;

/// One client fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerFault {
    /// `crash@T`: the first client to win the lock at or after T (from the measured window's
    /// start) dies holding it; `setnx-expire` dies between its SETNX and its EXPIRE.
    Crash { at: Duration },
    /// `clock:C:±OFFSET`: client C's wall clock is off by OFFSET (read by `setnx-getset`).
    Clock { client: u32, offset_ms: i64 },
    /// `pause:C:D@T`: the first lock client C holds at or after T, it stops for D between its
    /// validity check and its write to the protected resource (a GC pause, a stopped VM).
    Pause {
        client: u32,
        length: Duration,
        at: Duration,
    },
}

impl WorkerFault {
    pub fn parse(text: &str) -> Result<WorkerFault, String> {
        let bad = |why: &str| {
            format!("{text:?}: {why} (expected crash@T, clock:CLIENT:±OFFSET or pause:CLIENT:D@T)")
        };
        if let Some(at) = text.strip_prefix("crash@") {
            return Ok(WorkerFault::Crash {
                at: parse_duration(at).map_err(|e| bad(&e))?,
            });
        }
        if let Some(rest) = text.strip_prefix("pause:") {
            let (client, rest) = rest
                .split_once(':')
                .ok_or_else(|| bad("missing the pause's length"))?;
            let (length, at) = rest
                .split_once('@')
                .ok_or_else(|| bad("missing @T, when the pause happens"))?;
            let length = parse_duration(length).map_err(|e| bad(&e))?;
            if length.is_zero() {
                return Err(bad("a pause of 0 is no pause"));
            }
            return Ok(WorkerFault::Pause {
                client: client_index(client).map_err(|e| bad(&e))?,
                length,
                at: parse_duration(at).map_err(|e| bad(&e))?,
            });
        }
        let Some(rest) = text.strip_prefix("clock:") else {
            return Err(bad("unknown client fault"));
        };
        let (client, offset) = rest
            .split_once(':')
            .ok_or_else(|| bad("missing the offset"))?;
        let client = client_index(client).map_err(|e| bad(&e))?;
        let (sign, magnitude) = match offset.as_bytes().first() {
            Some(b'+') => (1, &offset[1..]),
            Some(b'-') => (-1, &offset[1..]),
            _ => return Err(bad("the offset needs a sign, e.g. +5s or -5s")),
        };
        let magnitude = parse_duration(magnitude).map_err(|e| bad(&e))?;
        Ok(WorkerFault::Clock {
            client,
            offset_ms: sign * magnitude.as_millis() as i64,
        })
    }
}

fn client_index(text: &str) -> Result<u32, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not a client index"))
}

/// The client faults of a run, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerFaultPlan {
    pub crash_at: Option<Duration>,
    /// (client index, clock offset in ms).
    pub clock_offsets: Vec<(u32, i64)>,
    /// Holder pauses: (client index, length, when from the measured window's start).
    pub pauses: Vec<(u32, Duration, Duration)>,
}

impl WorkerFaultPlan {
    /// Resolves `faults` for a run of `clients` clients.
    pub fn new(faults: &[WorkerFault], clients: u32) -> Result<WorkerFaultPlan, String> {
        let mut plan = WorkerFaultPlan::default();
        for f in faults {
            let (kind, client) = match *f {
                WorkerFault::Crash { at } if plan.crash_at.replace(at).is_some() => {
                    return Err("--client-fault crash@T: given twice (one crash per run)".into());
                }
                WorkerFault::Crash { .. } => continue,
                WorkerFault::Clock { client, offset_ms } => {
                    plan.clock_offsets.push((client, offset_ms));
                    ("clock", client)
                }
                WorkerFault::Pause { client, length, at } => {
                    plan.pauses.push((client, length, at));
                    ("pause", client)
                }
            };
            if client >= clients {
                return Err(format!(
                    "--client-fault {kind}:{client}:...: there are only {clients} clients (0..{})",
                    clients.saturating_sub(1)
                ));
            }
        }
        Ok(plan)
    }

    pub fn is_empty(&self) -> bool {
        self.crash_at.is_none() && self.clock_offsets.is_empty() && self.pauses.is_empty()
    }
}

/// A fault that strikes once: the first worker to ask at or after `at` takes it.
#[derive(Debug)]
pub struct OneShot<T> {
    pub at: Instant,
    what: T,
    taken: AtomicBool,
}

/// "The holder dies": the first worker to win the lock at or after `at` stops for good
/// without releasing it (`setnx-expire`: right after its `SETNX`, before the `EXPIRE`).
pub type CrashPlan = OneShot<()>;

/// A holder pause of one client: the first time it holds a lock at or after `at`, it stops for
/// this long between its validity check and its write.
pub type PausePlan = OneShot<Duration>;

impl<T: Copy> OneShot<T> {
    pub fn new(at: Instant, what: T) -> OneShot<T> {
        OneShot {
            at,
            what,
            taken: AtomicBool::new(false),
        }
    }

    /// `Some` exactly once: for the first call at or after `at`.
    pub fn take(&self, now: Instant) -> Option<T> {
        (now >= self.at && !self.taken.swap(true, Ordering::AcqRel)).then_some(self.what)
    }

    /// Whether it has struck.
    pub fn happened(&self) -> bool {
        self.taken.load(Ordering::Acquire)
    }
}

/// The faults of one load worker (`--client-fault`).
#[derive(Debug, Clone, Default)]
pub struct WorkerFaults {
    /// Added to the wall clock this worker reads (only `setnx-getset` reads it).
    pub clock_offset_ms: i64,
    /// Shared by every worker of a run.
    pub crash: Option<std::sync::Arc<CrashPlan>>,
    /// This worker's holder pauses.
    pub pauses: Vec<std::sync::Arc<PausePlan>>,
}

impl WorkerFaults {
    /// How long to stop now, between the validity check and the write (zero: no pause due).
    pub fn pause_now(&self) -> Duration {
        let now = Instant::now();
        self.pauses.iter().filter_map(|p| p.take(now)).sum()
    }

    /// Whether a worker of the run has died holding the lock.
    pub fn crash_happened(&self) -> bool {
        self.crash.as_ref().is_some_and(|plan| plan.happened())
    }

    /// Whether this worker should die now, holding the lock it just won.
    pub fn crash_now(&self) -> bool {
        self.crash
            .as_ref()
            .is_some_and(|plan| plan.take(Instant::now()).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_faults_parse_and_bad_ones_are_named() {
        assert_eq!(
            WorkerFault::parse("crash@1s"),
            Ok(WorkerFault::Crash {
                at: Duration::from_secs(1)
            })
        );
        assert_eq!(
            WorkerFault::parse("clock:1:-5s"),
            Ok(WorkerFault::Clock {
                client: 1,
                offset_ms: -5000
            })
        );
        assert_eq!(
            WorkerFault::parse("clock:0:+250ms"),
            Ok(WorkerFault::Clock {
                client: 0,
                offset_ms: 250
            })
        );
        assert_eq!(
            WorkerFault::parse("pause:2:1500ms@1s"),
            Ok(WorkerFault::Pause {
                client: 2,
                length: Duration::from_millis(1500),
                at: Duration::from_secs(1)
            })
        );
        for bad in [
            "crash@soon",
            "clock:x:+1s",
            "clock:1:5s",
            "clock:1",
            "freeze@1s",
            "pause:1:2s",
            "pause:x:2s@1s",
            "pause:1:0s@1s",
            "pause:1:long@1s",
        ] {
            let err = WorkerFault::parse(bad).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn a_plan_refuses_unknown_clients_and_two_crashes() {
        let clock = WorkerFault::parse("clock:2:+1s").unwrap();
        assert!(WorkerFaultPlan::new(std::slice::from_ref(&clock), 2)
            .unwrap_err()
            .contains("only 2 clients"));
        assert_eq!(
            WorkerFaultPlan::new(&[clock], 3).unwrap().clock_offsets,
            [(2, 1000)]
        );
        let crash = WorkerFault::parse("crash@1s").unwrap();
        assert!(WorkerFaultPlan::new(&[crash.clone(), crash], 3).is_err());
        let pause = WorkerFault::parse("pause:3:1s@1s").unwrap();
        assert!(WorkerFaultPlan::new(std::slice::from_ref(&pause), 3)
            .unwrap_err()
            .contains("pause:3"));
        let plan = WorkerFaultPlan::new(&[pause], 4).unwrap();
        assert_eq!(
            plan.pauses,
            [(3, Duration::from_secs(1), Duration::from_secs(1))]
        );
        assert!(!plan.is_empty());
    }

    #[test]
    fn a_pause_plan_fires_once_and_not_before_its_time() {
        let now = Instant::now();
        let plan = PausePlan::new(now + Duration::from_secs(60), Duration::from_secs(2));
        assert_eq!(plan.take(now), None);
        let plan = PausePlan::new(now, Duration::from_secs(2));
        assert_eq!(plan.take(now), Some(Duration::from_secs(2)));
        assert_eq!(plan.take(now), None, "one pause per spec");
    }

    #[test]
    fn a_crash_plan_fires_once_and_not_before_its_time() {
        let now = Instant::now();
        let plan = CrashPlan::new(now + Duration::from_secs(60), ());
        assert!(plan.take(now).is_none());
        assert!(!plan.happened());
        let plan = CrashPlan::new(now, ());
        assert!(plan.take(now).is_some());
        assert!(plan.take(now).is_none(), "only the first worker crashes");
        assert!(plan.happened());
    }
}
