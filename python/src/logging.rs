//! The `redlock_rs` logger (Python's `logging`): attempts, extensions, releases, renewals and
//! each failed master at DEBUG; at WARNING, one record per call in which masters failed
//! (naming the causes once: `3 of 5 masters could not be reached (Connection refused ...)`),
//! per failed background renewal, and per lost lock.
//!
//! A failing master's WARNING records are rate-limited like the core's events: at most one per
//! failing master per [`redlock_core::MASTER_WARNING_INTERVAL`], carrying the number held back since the
//! last (`(41 similar warnings held back)`); the others go out at DEBUG.
//!
//! Records name the master (its URL as `Redlock.masters` shows it, password redacted), never a
//! token or a password; the resource only with `trace_resource_names=True` (the opt-in of the
//! core's spans: a resource name may carry user data), `<resource>` otherwise. The logger's levels are read once per operation
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
use redlock_core::{DurationUnit, Lock, MasterWarnings, Outcome, Vote};

use crate::attach::AttachPermit;

/// The logger's name (`__init__.py` gives it a `NullHandler`, as a library should).
const LOGGER_NAME: &str = "redlock_rs";
const DEBUG: u8 = 10;
const WARNING: u8 = 30;
/// Characters of a resource name shown in a record.
const MAX_RESOURCE_CHARS: usize = 200;
/// What a record shows for a resource unless `trace_resource_names=True`.
const HIDDEN_RESOURCE: &str = "<resource>";

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

/// Keeps `err`, raised by Python code this thread ran for an operation (e.g. its metrics),
/// for [`take_raised`], as a record's exception is kept (an earlier one wins).
pub(crate) fn keep_raised(err: PyErr) {
    RAISED.with_borrow_mut(|raised| {
        raised.get_or_insert(err);
    });
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

/// A duration as every record of this logger shows it (seconds, as Python's API).
fn seconds(d: Duration) -> String {
    DurationUnit::Seconds.show(d)
}

/// `"acquire failed: lock on \"x\" unavailable after ..."`: the error as its exception says it.
fn failure_text(during: &str, err: &redlock_core::Error) -> String {
    format!("{during} failed: {}", err.display_in(DurationUnit::Seconds))
}

/// A client's logging settings, shared by its operations.
pub(crate) struct LogSettings {
    /// Master URLs, passwords redacted.
    masters: Arc<[String]>,
    /// `trace_resource_names`: records may show resource names.
    resource_names: bool,
    /// One WARNING per failing master per interval.
    warnings: MasterWarnings,
}

impl LogSettings {
    pub(crate) fn new(masters: Arc<[String]>, resource_names: bool) -> Self {
        LogSettings {
            warnings: MasterWarnings::new(masters.len()),
            masters,
            resource_names,
        }
    }
}

/// What one operation logs, decided when it starts. `None` from [`OpLog::start`] when the
/// logger would drop every record.
#[derive(Clone)]
pub(crate) struct OpLog {
    debug: bool,
    warning: bool,
    settings: Arc<LogSettings>,
    resource: String,
    /// The resource as an error message shows it, to hide there too (unless opted in).
    hidden_in_errors: Option<String>,
}

impl OpLog {
    pub(crate) fn start(
        py: Python<'_>,
        settings: &Arc<LogSettings>,
        resource: &str,
    ) -> Option<Self> {
        let warning = enabled(py, WARNING);
        let debug = warning && enabled(py, DEBUG);
        (warning || debug).then(|| OpLog {
            debug,
            warning,
            settings: settings.clone(),
            resource: if settings.resource_names {
                quoted(resource)
            } else {
                HIDDEN_RESOURCE.to_string()
            },
            hidden_in_errors: (!settings.resource_names)
                .then(|| redlock_core::shown_text(resource)),
        })
    }

    /// A WARNING about masters that failed in `vote`, rate-limited per master: emitted when
    /// one of them is due (with the count held back), at DEBUG otherwise.
    fn warning_for_failed_masters(&self, vote: &Vote, message: impl FnOnce() -> String) {
        if !self.warning {
            return;
        }
        let mut due = Vec::new();
        let mut held_back = 0;
        for master in vote.masters() {
            let kind = match master.outcome {
                Outcome::Failed(kind) => kind.as_str(),
                Outcome::TimedOut => "timeout",
                _ => continue,
            };
            if let Some(n) = self.settings.warnings.failure(master.master) {
                held_back += n;
                // The address (password redacted) is not private; the resource name is.
                let url = self
                    .settings
                    .masters
                    .get(master.master)
                    .map_or("?", String::as_str);
                due.push(format!("#{} {url} ({kind})", master.master));
            }
        }
        if !due.is_empty() {
            let message = format!("{}; failing: master {}", message(), due.join(", master "));
            emit(
                WARNING,
                match held_back {
                    0 => message,
                    n => format!("{message} ({n} similar warnings held back)"),
                },
            );
        } else {
            self.debug(message);
        }
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

    /// One DEBUG record per master that failed or timed out in `vote`, with its cause.
    fn failures(&self, vote: &Vote, during: &str) {
        if !self.debug || vote.failed() == 0 {
            return;
        }
        for master in vote.masters() {
            let what = match master.outcome {
                Outcome::Failed(kind) => format!("failed ({kind})"),
                Outcome::TimedOut => "timed out".to_string(),
                _ => continue,
            };
            let url = self
                .settings
                .masters
                .get(master.master)
                .map_or("?", String::as_str);
            let cause = master.error.as_deref().unwrap_or("no cause given");
            emit(
                DEBUG,
                format!(
                    "master #{} {url} {what} during {during} of {}: {cause}",
                    master.master, self.resource
                ),
            );
        }
    }

    /// One WARNING (rate-limited) for an operation that succeeded although masters failed in
    /// its vote.
    fn warn_if_masters_failed(&self, done: impl FnOnce() -> String, vote: &Vote) {
        if vote.failed() > 0 {
            self.warning_for_failed_masters(vote, || {
                format!(
                    "{} despite failed masters: {}",
                    done(),
                    vote.failure_summary()
                )
            });
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
                vote.counts(),
                seconds(vote.elapsed())
            )
        });
    }

    /// A won acquire: a WARNING when masters failed in its winning vote (the attempts before
    /// it were logged at DEBUG).
    pub(crate) fn acquired(&self, lock: &Lock) {
        self.warn_if_masters_failed(|| format!("acquired {}", self.resource), lock.vote());
    }

    /// A successful extend, by hand.
    pub(crate) fn extended(&self, lock: &Lock) {
        self.failures(lock.vote(), "extend");
        self.warn_if_masters_failed(|| format!("extended {}", self.resource), lock.vote());
        self.debug(|| {
            format!(
                "extended {} to ttl {}: validity {} ({}) in {}",
                self.resource,
                seconds(lock.ttl()),
                seconds(lock.validity()),
                lock.vote().counts(),
                seconds(lock.vote().elapsed())
            )
        });
    }

    /// A renewal by the background auto-extend (seen by the renewal watcher).
    pub(crate) fn renewed(&self, lock: &Lock) {
        self.failures(lock.vote(), "renewal");
        self.warn_if_masters_failed(|| format!("renewed {}", self.resource), lock.vote());
        self.debug(|| {
            format!(
                "renewed {} (extension {}): validity {} ({})",
                self.resource,
                lock.extensions(),
                seconds(lock.validity()),
                lock.vote().counts()
            )
        });
    }

    /// Background renewals that failed since the last report (`failed` of them; `vote` is the
    /// last one's): one WARNING naming the masters' causes.
    pub(crate) fn renewal_failed(&self, failed: u32, vote: Option<&Vote>, left: Duration) {
        if let Some(vote) = vote {
            self.failures(vote, "renewal");
        }
        self.warning(|| {
            let times = if failed == 1 {
                String::new()
            } else {
                format!(" {failed} times")
            };
            let causes = vote.map_or_else(
                || "no vote".to_string(),
                |vote| match vote.failure_summary() {
                    summary if summary.is_empty() => vote.counts().to_string(),
                    summary => summary,
                },
            );
            let next = if left.is_zero() {
                "no validity left".to_string()
            } else {
                format!("retrying while {} of validity is left", seconds(left))
            };
            format!(
                "renewal of {} failed{times}: {causes}; {next}",
                self.resource
            )
        });
    }

    /// A release and how many masters let go.
    pub(crate) fn released(&self, vote: &Vote) {
        self.failures(vote, "release");
        self.warn_if_masters_failed(
            || {
                format!(
                    "released {} on {} of {} masters",
                    self.resource,
                    vote.granted(),
                    vote.masters().len()
                )
            },
            vote,
        );
        self.debug(|| {
            format!(
                "released {} on {} of {} masters in {}",
                self.resource,
                vote.granted(),
                vote.masters().len(),
                seconds(vote.elapsed())
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

    /// A failed operation: its vote's failures at DEBUG, then one record: a WARNING that
    /// names the causes when masters failed (or the lock is lost), DEBUG for a loss to
    /// contention alone (another holder has it: the lock doing its job).
    pub(crate) fn failed(&self, during: &str, err: &redlock_core::Error) {
        if let Some(vote) = err.vote() {
            self.failures(vote, during);
        }
        self.outcome(during, err);
    }

    /// The error's text, its resource hidden unless opted in.
    fn failure_text(&self, during: &str, err: &redlock_core::Error) -> String {
        let text = failure_text(during, err);
        match &self.hidden_in_errors {
            Some(shown) => text.replacen(shown.as_str(), HIDDEN_RESOURCE, 1),
            None => text,
        }
    }

    /// A failed acquire, whose attempts (and their failed masters) were logged already.
    pub(crate) fn acquire_failed(&self, err: &redlock_core::Error) {
        self.outcome("acquire", err);
    }

    /// The one record of a failed operation (see [`OpLog::failed`]).
    fn outcome(&self, during: &str, err: &redlock_core::Error) {
        let masters_failed = err.vote().is_some_and(|vote| vote.failed() > 0);
        match err {
            redlock_core::Error::LockLost { reason, vote, .. } => {
                self.lost(&format!("{during}: {reason}"), vote.as_deref())
            }
            _ if err.is_invalid_argument() || (err.is_not_acquired() && !masters_failed) => {
                self.debug(|| self.failure_text(during, err))
            }
            _ => match err.vote() {
                Some(vote) if masters_failed => {
                    self.warning_for_failed_masters(vote, || self.failure_text(during, err))
                }
                _ => self.warning(|| self.failure_text(during, err)),
            },
        }
    }

    /// A lock lost (extend refused, expired in its block, renewal failed), with the causes of
    /// the masters that failed in `vote` (the failed extend or renewal, or the release).
    pub(crate) fn lost(&self, why: &str, vote: Option<&Vote>) {
        self.warning(|| {
            let causes = vote
                .map(Vote::failure_summary)
                .filter(|summary| !summary.is_empty())
                .map_or_else(String::new, |summary| format!("; {summary}"));
            format!("lock on {} lost in {why}{causes}", self.resource)
        });
    }
}
