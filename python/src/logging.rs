//! The `redlock_rs` logger (Python's `logging`): attempts, extensions, releases and renewals
//! at DEBUG; each failed master and each lost lock at WARNING.
//!
//! Records name the resource and the master (its URL as `Redlock.masters` shows it, password
//! redacted), never a token or a password. The logger's levels are read once per operation
//! (`isEnabledFor`, with the GIL); an operation with nothing to log costs nothing more, and a
//! runtime thread attaches to the interpreter only to emit a record.
//!
//! An exception raised while a record is emitted (`KeyboardInterrupt` from Ctrl-C while the
//! handlers run, or a handler or filter that raises) is not logging's to swallow: it is kept
//! on the emitting thread, the operation's remaining records are skipped, and the operation
//! takes it with [`take_raised`] right after the logging call, to raise it to its caller once
//! it has finished what safety needs (see `carried.rs`).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use redlock_core::{Lock, Outcome, Vote};

use crate::boundary::AttachPermit;

/// The logger's name (`__init__.py` gives it a `NullHandler`, as a library should).
const LOGGER_NAME: &str = "redlock_rs";
const DEBUG: u8 = 10;
const WARNING: u8 = 30;
/// Characters of a resource name shown in a record.
const MAX_RESOURCE_CHARS: usize = 200;

fn logger(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    Ok(LOGGER
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("logging")?
                    .call_method1("getLogger", (LOGGER_NAME,))?
                    .unbind(),
            )
        })?
        .bind(py))
}

/// Whether the logger takes records of `level`; an exception raised meanwhile (Python code
/// runs: Ctrl-C can land here) is kept for [`take_raised`], and the answer is then no.
fn enabled(py: Python<'_>, level: u8) -> bool {
    let on = logger(py)
        .and_then(|l| l.call_method1(intern!(py, "isEnabledFor"), (level,)))
        .and_then(|on| on.is_truthy());
    on.unwrap_or_else(|err| {
        RAISED.with_borrow_mut(|raised| {
            raised.get_or_insert(err);
        });
        false
    })
}

thread_local! {
    /// The exception a record of this thread raised, until its operation takes it.
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The exception raised while this thread emitted a record, if any (see the module's doc):
/// call it right after the logging calls of an operation, on the same thread.
pub(crate) fn take_raised() -> Option<PyErr> {
    RAISED.with_borrow_mut(Option::take)
}

/// Emits one record from any thread (attaching if needed). Errors inside a handler are
/// logging's own business (its handlers report them); an exception that leaves the logger
/// is kept for [`take_raised`], and until then this thread emits nothing more.
fn emit(level: u8, message: String) {
    if RAISED.with_borrow(Option::is_some) {
        return;
    }
    let Some(_permit) = AttachPermit::acquire() else {
        return; // the interpreter is exiting
    };
    let _ = Python::try_attach(|py| {
        // A record emitted while an exception propagates must not swallow it.
        let pending = PyErr::take(py);
        if let Ok(logger) = logger(py) {
            if let Err(err) = logger.call_method1(intern!(py, "log"), (level, message)) {
                RAISED.with_borrow_mut(|raised| *raised = Some(err));
            }
        }
        if let Some(pending) = pending {
            pending.restore(py);
        }
    });
}

/// A resource name as records show it (quoted; cut when very long).
fn quoted(resource: &str) -> String {
    match resource.char_indices().nth(MAX_RESOURCE_CHARS) {
        Some((cut, _)) => format!("{:?}… ({} bytes)", &resource[..cut], resource.len()),
        None => format!("{resource:?}"),
    }
}

fn millis(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn counts(vote: &Vote) -> String {
    format!(
        "{} granted, {} denied, {} failed, {} not awaited of {}; quorum {}",
        vote.granted(),
        vote.denied(),
        vote.failed(),
        vote.not_awaited(),
        vote.masters().len(),
        vote.quorum()
    )
}

/// A failure in a few words (the full message may repeat a huge resource name).
fn summary(err: &redlock_core::Error) -> String {
    let what = match err.kind() {
        redlock_core::ErrorKind::NotAcquired => "not acquired: someone else holds it",
        redlock_core::ErrorKind::Unavailable => "unavailable: too few masters answered",
        redlock_core::ErrorKind::LockLost => "lock lost",
        redlock_core::ErrorKind::InvalidArgument => "invalid argument",
        _ => "internal error",
    };
    match err.vote() {
        Some(vote) => format!("{what} ({})", counts(vote)),
        None => what.to_string(),
    }
}

/// What one operation logs, decided when it starts. `None` from [`OpLog::start`] when the
/// logger would drop every record.
#[derive(Clone)]
pub(crate) struct OpLog {
    debug: bool,
    warning: bool,
    masters: Arc<[String]>,
    resource: String,
}

impl OpLog {
    pub(crate) fn start(py: Python<'_>, masters: &Arc<[String]>, resource: &str) -> Option<Self> {
        let warning = enabled(py, WARNING);
        let debug = warning && enabled(py, DEBUG);
        (warning || debug).then(|| OpLog {
            debug,
            warning,
            masters: masters.clone(),
            resource: quoted(resource),
        })
    }

    fn debug(&self, message: impl FnOnce() -> String) {
        if self.debug {
            emit(DEBUG, message());
        }
    }

    fn warning(&self, message: impl FnOnce() -> String) {
        if self.warning {
            emit(WARNING, message());
        }
    }

    /// One WARNING per master that failed or timed out in `vote`.
    fn failures(&self, vote: &Vote, during: &str) {
        if !self.warning || vote.failed() == 0 {
            return;
        }
        for master in vote.masters() {
            let what = match master.outcome {
                Outcome::Failed(kind) => format!("failed ({kind})"),
                Outcome::TimedOut => "timed out".to_string(),
                _ => continue,
            };
            let url = self.masters.get(master.master).map_or("?", String::as_str);
            emit(
                WARNING,
                format!(
                    "master #{} {url} {what} during {during} of {}",
                    master.master, self.resource
                ),
            );
        }
    }

    /// An acquire attempt's vote (call it from the core's attempt observer).
    pub(crate) fn attempt(&self, number: u32, vote: &Vote) {
        self.failures(vote, &format!("acquire attempt {number}"));
        self.debug(|| {
            format!(
                "acquire {} attempt {number}: {} ({}) in {}",
                self.resource,
                vote.verdict().as_str(),
                counts(vote),
                millis(vote.elapsed())
            )
        });
    }

    /// A successful extend, by hand.
    pub(crate) fn extended(&self, lock: &Lock) {
        self.failures(lock.vote(), "extend");
        self.debug(|| {
            format!(
                "extended {} to ttl {} s: validity {:.3} s ({}) in {}",
                self.resource,
                lock.ttl().as_secs_f64(),
                lock.validity().as_secs_f64(),
                counts(lock.vote()),
                millis(lock.vote().elapsed())
            )
        });
    }

    /// A renewal by the background auto-extend (seen by the renewal watcher).
    pub(crate) fn renewed(&self, lock: &Lock) {
        self.failures(lock.vote(), "renewal");
        self.debug(|| {
            format!(
                "renewed {} (extension {}): validity {:.3} s ({})",
                self.resource,
                lock.extensions(),
                lock.validity().as_secs_f64(),
                counts(lock.vote())
            )
        });
    }

    /// A release and how many masters let go.
    pub(crate) fn released(&self, vote: &Vote) {
        self.failures(vote, "release");
        self.debug(|| {
            format!(
                "released {} on {} of {} masters in {}",
                self.resource,
                vote.granted(),
                vote.masters().len(),
                millis(vote.elapsed())
            )
        });
    }

    /// The result of a release (a `LockLost` from a renewed lock still carries its vote).
    pub(crate) fn release_result(&self, released: &redlock_core::Result<Vote>) {
        match released {
            Ok(vote) => self.released(vote),
            Err(redlock_core::Error::LockLost {
                vote: Some(vote), ..
            }) => self.released(vote),
            Err(err) if !err.is_lock_lost() => self.failed("release", err),
            Err(_) => {}
        }
    }

    /// A failed operation: its vote's failures, and a WARNING if the lock is lost.
    pub(crate) fn failed(&self, during: &str, err: &redlock_core::Error) {
        if let Some(vote) = err.vote() {
            self.failures(vote, during);
        }
        match err {
            redlock_core::Error::LockLost { reason, .. } => {
                self.lost(&format!("{during}: {reason}"))
            }
            _ => self.debug(|| format!("{during} of {} failed: {}", self.resource, summary(err))),
        }
    }

    /// A lock lost (extend refused, expired in its block, renewal failed).
    pub(crate) fn lost(&self, why: &str) {
        self.warning(|| format!("lock on {} lost in {why}", self.resource));
    }
}
