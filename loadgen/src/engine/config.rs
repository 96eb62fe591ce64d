//! The resolved configuration of one run: every value checked, defaults applied.

use std::fmt;
use std::time::Duration;

use redlock_core::FanOut;

use crate::engine::faults::client::WorkerFaultPlan;
use crate::error::LoadgenError;
use crate::model::lock::LockAlgorithm;
use crate::model::values::{HoldSpec, KeyDist};

/// Closed loop (each worker starts its next acquire when the previous cycle ended) or open loop
/// (operations start on a fixed schedule, whether or not earlier ones finished).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    Closed { workers: u32 },
    Open { rate_per_s: f64, workers: u32 },
}

impl Load {
    pub fn workers(&self) -> u32 {
        match *self {
            Load::Closed { workers } => workers,
            Load::Open { workers, .. } => workers,
        }
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Load::Closed { workers } => write!(f, "closed loop, {workers} clients"),
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
    /// Length of one interval of the over-time figures.
    pub interval: Duration,
    pub seed: u64,
    /// `run --repeat N`: the modes measured N times (repeat r with seed + r), laid end to end.
    pub repeat: u32,
    pub quiet: bool,
    /// The command line, for the report.
    pub command_line: String,
    /// `run --client-fault`: faults of the load clients themselves.
    pub worker_faults: WorkerFaultPlan,
    /// What the progress lines name before the mode (e.g. a capacity step and its rate).
    pub progress_label: Option<String>,
    /// `run --fencing`: the Redlock client issues fencing tokens, and writes are checked.
    pub fencing: bool,
    /// `run --storage URL`: the protected resource (`None`: a local one is started when
    /// [`RunConfig::writes_storage`]).
    pub storage: Option<String>,
    /// `run --prometheus`: the running figures the exporter serves, fed by the control loop.
    pub live: Option<std::sync::Arc<crate::exporter::LiveFigures>>,
    /// Holders write again just before they release (`--write-at-release`).
    pub write_at_release: bool,
    /// Where every operation is logged (`--history`).
    pub history: Option<std::sync::Arc<crate::engine::history::HistoryLog>>,
}

/// Default measured time and warm-up of a `run`, and of each `sweep` level.
pub const RUN_TIMING: (Duration, Duration) = (Duration::from_secs(10), Duration::from_secs(2));
pub const SWEEP_TIMING: (Duration, Duration) = (Duration::from_secs(5), Duration::from_secs(1));

impl RunConfig {
    /// Whether holders write to a protected resource: fenced runs, a given storage, and
    /// holder pauses (whose late writes are the point).
    pub fn writes_storage(&self) -> bool {
        self.fencing || self.storage.is_some() || !self.worker_faults.pauses.is_empty()
    }

    /// What the single-master baselines cannot do, refused up front.
    pub fn check_locks(&self) -> Result<(), LoadgenError> {
        let Some(b) = self.locks.iter().find(|l| !l.votes()) else {
            return Ok(());
        };
        if self.writes_storage() {
            let flag = if self.fencing {
                "--fencing"
            } else if self.storage.is_some() {
                "--storage"
            } else {
                "--client-fault pause"
            };
            return Err(LoadgenError::Usage(format!(
                "{flag} with --lock {b}: fencing tokens and the protected resource are Redlock's only (--lock redlock)"
            )));
        }
        if self.extends_per_hold > 0 {
            return Err(LoadgenError::Usage(format!(
                "--extend {} with --lock {b}: only redlock extends its locks",
                self.extends_per_hold
            )));
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

/// The process's command line, shell-quoted where needed, passwords in URLs redacted.
pub fn command_line() -> String {
    shown_command_line(std::env::args())
}

/// `redlock-loadgen run` with `flags` (one side of `compare --run`), shown as
/// [`command_line`] shows the process's.
pub fn run_command_line(flags: &[String]) -> String {
    let program = ["redlock-loadgen".to_string(), "run".to_string()];
    shown_command_line(program.into_iter().chain(flags.iter().cloned()))
}

/// Flags whose values are master or coordinator URLs (comma-separated lists included).
const URL_FLAGS: [&str; 3] = ["--masters", "--coordinator", "--storage"];

/// `args` as a shell line: the program by its file name, each argument quoted where needed.
/// Redaction applies to URLs only: the values of [`URL_FLAGS`] and any comma-separated piece
/// with a scheme (`://`). Everything else — fault specs such as `kill:3@2s` included — is
/// shown as typed.
fn shown_command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut url_value_next = false;
    args.into_iter()
        .enumerate()
        .map(|(i, arg)| {
            let arg = if i == 0 {
                std::path::Path::new(&arg)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or(arg)
            } else if std::mem::take(&mut url_value_next) {
                redact_list(&arg, true)
            } else if let Some((flag, value)) =
                arg.split_once('=').filter(|(f, _)| f.starts_with("--"))
            {
                format!("{flag}={}", redact_list(value, URL_FLAGS.contains(&flag)))
            } else {
                url_value_next = URL_FLAGS.contains(&arg.as_str());
                redact_list(&arg, false)
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

/// Redacts the URLs of a comma-separated list: every piece when `all_urls`, else the pieces
/// that carry a scheme.
fn redact_list(list: &str, all_urls: bool) -> String {
    list.split(',')
        .map(|piece| {
            if all_urls || piece.contains("://") {
                redlock_core::redact_url(piece)
            } else {
                piece.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::shown_command_line;

    fn shown(args: &[&str]) -> String {
        shown_command_line(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn fault_specs_are_shown_as_typed() {
        let line = shown(&[
            "/usr/bin/redlock-loadgen",
            "run",
            "--fault",
            "kill:3@2s",
            "--fault=pause:m1,m2@5s-8s",
            "--client-fault",
            "pause:1:200ms@500ms",
        ]);
        assert_eq!(
            line,
            "redlock-loadgen run --fault kill:3@2s --fault=pause:m1,m2@5s-8s --client-fault pause:1:200ms@500ms"
        );
    }

    #[test]
    fn passwords_in_urls_are_redacted() {
        let line = shown(&[
            "redlock-loadgen",
            "--masters",
            "redis://u:secret1@127.0.0.1:7000,u:secret2@127.0.0.1:7001",
            "--coordinator=redis://:secret3@127.0.0.1:7002",
            "--json",
            "out.json",
        ]);
        for secret in ["secret1", "secret2", "secret3"] {
            assert!(!line.contains(secret), "{line}");
        }
        assert!(line.contains("127.0.0.1:7001"), "{line}");
        assert!(line.ends_with("--json out.json"), "{line}");
    }
}
