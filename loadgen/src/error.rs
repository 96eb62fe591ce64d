//! The load generator's errors and exit codes, mapped once.

use redlock_core::ErrorKind;

/// Why a command did not succeed; each maps to one exit code.
#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    /// A bad argument or configuration value (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The run completed but holders of one resource overlapped (exit code 3).
    #[error("mutual exclusion violated: {0} overlapping ownership window pair(s)")]
    Violations(u64),
    /// The run (or comparison) completed but a `--threshold` was not met (exit code 4).
    #[error("{0} threshold(s) not met")]
    ThresholdsFailed(usize),
    /// Anything else (exit code 1).
    #[error("{0}")]
    Failed(String),
    /// A signal ended the command early, after the partial report (exit code 128 + signal).
    #[error("interrupted by {0}: the report shows what was measured until then")]
    Interrupted(crate::signals::Signal),
}

/// The exit codes, as listed in `--help`.
pub const EXIT_CODES_HELP: &str =
    "Exit codes: 0 success; 1 failure (masters unreachable, no lock won, \
a scenario missed its outcome, a file could not be written); 2 bad argument or input (named in \
the message); 3 mutual-exclusion violations; 4 a --threshold not met; 130 / 143 / 129 interrupted by SIGINT (Ctrl-C) / \
SIGTERM / SIGHUP, after the partial report.";

impl LoadgenError {
    /// The process exit code: 2 bad arguments, 3 mutual-exclusion violations, 4 a threshold
    /// not met, 128 + n after
    /// signal n, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            LoadgenError::Usage(_) => 2,
            LoadgenError::Violations(_) => 3,
            LoadgenError::ThresholdsFailed(_) => 4,
            LoadgenError::Failed(_) => 1,
            LoadgenError::Interrupted(signal) => signal.exit_code(),
        }
    }
}

/// The core's parameters as the CLI's flags: the core checks the values, and its
/// `InvalidArgument` names the flag, here, once.
const CORE_FLAGS: redlock_core::Surface = redlock_core::Surface {
    names: &[
        ("ttl", "--ttl"),
        ("retry_count", "--retry-count"),
        ("retry_delay", "--retry-delay"),
        ("instance_timeout", "--instance-timeout"),
        ("quorum", "--quorum"),
        ("masters", "--masters"),
    ],
    durations: redlock_core::DurationUnit::Readable,
};

impl From<redlock_core::Error> for LoadgenError {
    fn from(e: redlock_core::Error) -> Self {
        match e.kind() {
            ErrorKind::InvalidArgument => {
                LoadgenError::Usage(e.for_surface(&CORE_FLAGS).to_string())
            }
            _ => LoadgenError::Failed(e.to_string()),
        }
    }
}

impl From<std::io::Error> for LoadgenError {
    fn from(e: std::io::Error) -> Self {
        LoadgenError::Failed(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_contract() {
        assert_eq!(LoadgenError::Usage("x".into()).exit_code(), 2);
        assert_eq!(LoadgenError::Violations(1).exit_code(), 3);
        assert_eq!(LoadgenError::ThresholdsFailed(1).exit_code(), 4);
        assert_eq!(LoadgenError::Failed("x".into()).exit_code(), 1);
        let sigint = LoadgenError::Interrupted(crate::signals::Signal::Sigint);
        assert_eq!(sigint.exit_code(), 130);
        let invalid = redlock_core::Redlock::builder(Vec::<String>::new()).build_blocking();
        let err = LoadgenError::from(invalid.expect_err("no masters is invalid"));
        assert_eq!(err.exit_code(), 2, "{err}");
    }
}
