//! The resolved configuration of one run: every value checked, defaults applied.

use std::fmt;
use std::time::Duration;

use redlock_core::FanOut;

use crate::cli::{parse_duration, FanoutChoice, WorkloadArgs};
use crate::locks::client_fault::ClientFaultPlan;
use crate::locks::LockAlgorithm;

/// Time spent inside the lock: fixed (`min == max`) or uniform in `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldSpec {
    pub min: Duration,
    pub max: Duration,
}

impl HoldSpec {
    /// `5ms` or `1ms..5ms`.
    pub fn parse(text: &str) -> Result<HoldSpec, String> {
        let spec = match text.split_once("..") {
            None => {
                let d = parse_duration(text)?;
                HoldSpec { min: d, max: d }
            }
            Some((lo, hi)) => HoldSpec {
                min: parse_duration(lo)?,
                max: parse_duration(hi)?,
            },
        };
        if spec.min > spec.max {
            return Err(format!(
                "{text:?}: the range's start is after its end (write MIN..MAX)"
            ));
        }
        Ok(spec)
    }
}

impl fmt::Display for HoldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{:?}", self.min)
        } else {
            write!(f, "{:?}..{:?} (uniform)", self.min, self.max)
        }
    }
}

/// How a client picks the resource of its next acquire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDist {
    Uniform,
    /// Zipf with this exponent: resource 0 is the hottest.
    Zipf(f64),
}

impl KeyDist {
    /// `uniform`, `zipf` or `zipf:EXPONENT`.
    pub fn parse(text: &str) -> Result<KeyDist, String> {
        match text.trim() {
            "uniform" => Ok(KeyDist::Uniform),
            "zipf" => Ok(KeyDist::Zipf(1.0)),
            other => {
                let exponent = other
                    .strip_prefix("zipf:")
                    .ok_or_else(|| format!("{text:?}: expected uniform, zipf or zipf:EXPONENT"))?;
                let s: f64 = exponent
                    .parse()
                    .map_err(|_| format!("{text:?}: the zipf exponent is not a number"))?;
                if !s.is_finite() || s <= 0.0 {
                    return Err(format!("{text:?}: the zipf exponent must be above 0"));
                }
                Ok(KeyDist::Zipf(s))
            }
        }
    }
}

impl fmt::Display for KeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDist::Uniform => f.write_str("uniform"),
            KeyDist::Zipf(s) => write!(f, "zipf:{s}"),
        }
    }
}

/// Closed loop (each worker starts its next acquire when the previous cycle ended) or open loop
/// (operations start on a fixed schedule, whether or not earlier ones finished).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    Closed { clients: u32 },
    Open { rate_per_s: f64, workers: u32 },
}

impl Load {
    pub fn workers(&self) -> u32 {
        match *self {
            Load::Closed { clients } => clients,
            Load::Open { workers, .. } => workers,
        }
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Load::Closed { clients } => write!(f, "closed loop, {clients} clients"),
            Load::Open {
                rate_per_s,
                workers,
            } => write!(
                f,
                "open loop at {rate_per_s} acquires/s over {workers} workers"
            ),
        }
    }
}

/// Everything one run needs, checked.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Lock algorithms, in order (`--lock`).
    pub locks: Vec<LockAlgorithm>,
    pub fanouts: Vec<FanOut>,
    pub load: Load,
    pub resources: u32,
    pub key_dist: KeyDist,
    pub hold: HoldSpec,
    pub extends_per_hold: u32,
    pub ttl: Duration,
    pub retry_count: u32,
    pub retry_delay: Duration,
    pub instance_timeout: Duration,
    pub quorum: Option<usize>,
    pub duration: Duration,
    pub warmup: Duration,
    pub seed: u64,
    pub quiet: bool,
    /// The command line, for the report.
    pub command_line: String,
    /// `run --client-fault`: faults of the load clients themselves.
    pub client_faults: ClientFaultPlan,
}

/// Default measured time and warm-up of a `run`, and of each `sweep` level.
pub const RUN_TIMING: (Duration, Duration) = (Duration::from_secs(10), Duration::from_secs(2));
pub const SWEEP_TIMING: (Duration, Duration) = (Duration::from_secs(5), Duration::from_secs(1));

impl RunConfig {
    /// Resolves the shared workload flags with `load` and the command's default timing.
    pub fn new(w: &WorkloadArgs, load: Load, timing: (Duration, Duration)) -> RunConfig {
        let fanouts = match w.fanout {
            FanoutChoice::Sequential => vec![FanOut::Sequential],
            FanoutChoice::Concurrent => vec![FanOut::Concurrent],
            FanoutChoice::Both => vec![FanOut::Sequential, FanOut::Concurrent],
        };
        RunConfig {
            locks: w.lock.0.clone(),
            fanouts,
            load,
            resources: w.resources.unwrap_or(1),
            key_dist: w.key_dist,
            hold: w.hold,
            extends_per_hold: w.extend,
            ttl: w.ttl,
            retry_count: w.retry_count,
            retry_delay: w.retry_delay,
            instance_timeout: w.instance_timeout,
            quorum: w.quorum.map(|q| q as usize),
            duration: w.duration.unwrap_or(timing.0),
            warmup: w.warmup.unwrap_or(timing.1),
            seed: w.seed.unwrap_or_else(random_seed),
            quiet: w.quiet,
            command_line: command_line(),
            client_faults: ClientFaultPlan::default(),
        }
    }

    /// What the single-master baselines cannot do, refused up front.
    pub fn check_locks(&self) -> Result<(), crate::error::LoadgenError> {
        if self.extends_per_hold > 0 {
            if let Some(b) = self.locks.iter().find(|l| !l.votes()) {
                return Err(crate::error::LoadgenError::Usage(format!(
                    "--extend {} with --lock {b}: only redlock extends its locks",
                    self.extends_per_hold
                )));
            }
        }
        Ok(())
    }

    /// The measured modes, in order: Redlock once per fan-out, each single-master baseline
    /// once (fan-out means nothing with one master; it keeps the first one for the record).
    pub fn modes(&self) -> Vec<(LockAlgorithm, FanOut)> {
        let first = self.fanouts.first().copied().unwrap_or(FanOut::Concurrent);
        self.locks
            .iter()
            .flat_map(|&lock| {
                let fanouts = if lock.votes() {
                    self.fanouts.clone()
                } else {
                    vec![first]
                };
                fanouts.into_iter().map(move |f| (lock, f))
            })
            .collect()
    }
}

fn random_seed() -> u64 {
    rand::random()
}

/// The process's command line, shell-quoted where needed, passwords in URLs redacted.
fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, arg)| {
            let arg = if i == 0 {
                std::path::Path::new(&arg)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or(arg)
            } else {
                arg.split(',')
                    .map(redlock_core::redact_url)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '\'') {
                format!("'{}'", arg.replace('\'', r"'\''"))
            } else {
                arg
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_is_fixed_or_a_range() {
        let fixed = HoldSpec::parse("5ms").unwrap();
        assert_eq!(
            (fixed.min, fixed.max),
            (Duration::from_millis(5), Duration::from_millis(5))
        );
        let range = HoldSpec::parse("1ms..3ms").unwrap();
        assert_eq!(
            (range.min, range.max),
            (Duration::from_millis(1), Duration::from_millis(3))
        );
        assert!(HoldSpec::parse("3ms..1ms")
            .unwrap_err()
            .contains("3ms..1ms"));
        assert!(HoldSpec::parse("soon").unwrap_err().contains("soon"));
    }

    #[test]
    fn key_dist_accepts_an_exponent() {
        assert_eq!(KeyDist::parse("uniform").unwrap(), KeyDist::Uniform);
        assert_eq!(KeyDist::parse("zipf").unwrap(), KeyDist::Zipf(1.0));
        assert_eq!(KeyDist::parse("zipf:1.5").unwrap(), KeyDist::Zipf(1.5));
        assert!(KeyDist::parse("zipf:-1").unwrap_err().contains("zipf:-1"));
        assert!(KeyDist::parse("normal").unwrap_err().contains("normal"));
    }
}
