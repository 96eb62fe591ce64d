//! What can go wrong starting and driving local masters.

/// Errors of starting or controlling local masters.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    /// The server binary is not installed.
    #[error("{server} server not found ({binary}): {hint}")]
    NotInstalled {
        /// The server asked for (`redis`, `valkey` or a path).
        server: String,
        /// The binary looked for.
        binary: String,
        /// How to install it.
        hint: &'static str,
    },
    /// A server kind that is neither `redis`, `valkey` nor a path.
    #[error("bad server {value}: {reason}")]
    BadServer {
        /// The value, with where it came from.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A server did not come up.
    #[error("{binary} on port {port} did not start: {reason}\n--- log {log} ---\n{tail}")]
    StartFailed {
        /// The server binary.
        binary: String,
        /// Its port.
        port: u16,
        /// What went wrong.
        reason: String,
        /// Path of its log file.
        log: String,
        /// The end of its log.
        tail: String,
    },
    /// No master with that index.
    #[error("no local master #{index}: there are {count}")]
    NoSuchMaster {
        /// Index asked for.
        index: usize,
        /// Masters started.
        count: usize,
    },
    /// The server cannot run with a fake clock (libfaketime).
    #[error("{binary} cannot run with a fake clock: {reason}")]
    NoFakeClock {
        /// The server binary.
        binary: String,
        /// Why, and what to use instead.
        reason: String,
    },
    /// An OS-level failure.
    #[error("local masters: {0}")]
    Io(#[from] std::io::Error),
}
