//! What a client tells the people running it: `tracing` spans and events (always compiled,
//! free when no subscriber listens) and, with the `otel` feature, OpenTelemetry metrics
//! (`otel.rs`). The book's design page (`docs/src/design.md`, "observability") names every
//! span, field, instrument and attribute.
//!
//! Privacy: a lock's token and a URL's password never reach this module's output (addresses
//! are the redacted URLs; failure causes are the vote's, which never hold a password);
//! resource names go into spans only when the client was built with
//! [`crate::RedlockBuilder::trace_resource_names`], and never into metrics.

use std::sync::Arc;
use std::time::Instant;

use tracing::field::Empty;
use tracing::Span;

use crate::error::{Error, LostReason, Result};
use crate::lock::Lock;
use crate::master::Master;
use crate::vote::{Outcome, Vote};

mod held;
mod latency;
mod names;
#[cfg(feature = "otel")]
mod otel;
mod sink;
mod stats;
mod throttle;
mod vocabulary;

pub use latency::{LatencyHistogram, LatencySnapshot};
use names::failure_kind;
pub(crate) use names::RoundKind;
pub use sink::{Measurement, MetricsSink};
pub use stats::{AcquireCounts, AttemptCounts, ClientStats, MasterCounts, StatsSnapshot};
pub use throttle::{MasterWarnings, MASTER_WARNING_INTERVAL};
pub use vocabulary::{AcquireOutcome, AttemptResult, DURATION_BUCKETS_S, ERROR_TYPES};

/// One client's telemetry: built once with the client.
pub(crate) struct Telemetry {
    resource_in_spans: bool,
    fanout: &'static str,
    /// Redacted master URLs, in configured order (the `address` of WARN events).
    addresses: Vec<Box<str>>,
    /// Where measurements go: a binding's sink, the `otel` feature's instruments, or both.
    sink: Option<Arc<dyn MetricsSink>>,
    /// One WARN per failing master per interval; the others at DEBUG.
    warnings: MasterWarnings,
    /// The sink as every won lock's `redlock.locks.held` gauge (built once, shared).
    held: Option<Arc<held::SinkGauge>>,
}

/// One operation's span with the design page's fields; `tracing` needs the name as a literal, so
/// the four operations share this macro rather than a function.
macro_rules! operation_span {
    ($name:literal, $fanout:expr, $attempts:expr) => {
        tracing::info_span!(
            $name,
            fanout = $fanout,
            attempts = $attempts,
            granted = Empty,
            denied = Empty,
            failed = Empty,
            outcome = Empty,
            resource = Empty,
        )
    };
}

impl Telemetry {
    pub(crate) fn new(
        masters: &[Master],
        fanout: &'static str,
        resource_in_spans: bool,
        sink: Option<Arc<dyn MetricsSink>>,
    ) -> Self {
        #[cfg(feature = "otel")]
        let sink = {
            let otel: Arc<dyn MetricsSink> = Arc::new(otel::Metrics::new(masters, fanout));
            Some(match sink {
                Some(binding) => Arc::new(sink::Both(otel, binding)) as Arc<dyn MetricsSink>,
                None => otel,
            })
        };
        Telemetry {
            resource_in_spans,
            held: sink.clone().map(|s| Arc::new(held::SinkGauge(s))),
            sink,
            fanout,
            addresses: masters.iter().map(|m| Box::from(m.display())).collect(),
            warnings: MasterWarnings::new(masters.len()),
        }
    }

    /// Starts watching an acquire: its span (enter it while the acquire runs) and clock.
    pub(crate) fn acquire_started(&self, resource: &str) -> Watch {
        self.watch(
            operation_span!("redlock.acquire", self.fanout, Empty),
            resource,
        )
    }

    pub(crate) fn extend_started(&self, resource: &str) -> Watch {
        self.watch(operation_span!("redlock.extend", self.fanout, 1), resource)
    }

    pub(crate) fn release_started(&self, resource: &str) -> Watch {
        self.watch(operation_span!("redlock.release", self.fanout, 1), resource)
    }

    pub(crate) fn renew_started(&self, resource: &str) -> Watch {
        self.watch(operation_span!("redlock.renew", self.fanout, 1), resource)
    }

    fn watch(&self, span: Span, resource: &str) -> Watch {
        if self.resource_in_spans {
            span.record("resource", resource);
        }
        // Only metrics need the clock.
        let timed = self.sink.is_some();
        Watch {
            span,
            started: timed.then(Instant::now),
            attempts: 0,
        }
    }

    /// A round is over: the per-request measurements, and for each failed master a WARN
    /// event at most once per [`MASTER_WARNING_INTERVAL`] (carrying `suppressed`, the failures
    /// of it held back since its last), DEBUG otherwise and for a cleanup round.
    /// `masters`: the client's, for the command each request used.
    pub(crate) fn round_finished(&self, kind: RoundKind, vote: &Vote, masters: &[Master]) {
        if let Some(sink) = &self.sink {
            requests(sink.as_ref(), kind, vote, masters);
        }
        for m in vote.masters() {
            if !matches!(m.outcome, Outcome::Failed(_) | Outcome::TimedOut) {
                continue;
            }
            let address = self.addresses.get(m.master).map_or("?", |a| a);
            let cause = m.error.as_deref().unwrap_or("");
            let kind_of_failure = failure_kind(m.outcome);
            let due = match kind {
                // The attempt's own round already said the master failed.
                RoundKind::Cleanup => None,
                _ => self.warnings.failure(m.master),
            };
            match due {
                Some(suppressed) => tracing::warn!(
                    target: "redlock",
                    master = m.master,
                    address,
                    operation = kind.as_str(),
                    error.type = kind_of_failure,
                    cause,
                    suppressed,
                    "master #{} ({address}) failed ({kind_of_failure}): {cause}",
                    m.master
                ),
                None => tracing::debug!(
                    target: "redlock",
                    master = m.master,
                    address,
                    operation = kind.as_str(),
                    error.type = kind_of_failure,
                    cause,
                    "master #{} ({address}) failed ({kind_of_failure}): {cause}",
                    m.master
                ),
            }
        }
    }

    /// An acquire attempt's vote is in.
    pub(crate) fn attempt_finished(&self, watch: &mut Watch, vote: &Vote) {
        watch.attempts += 1;
        if let Some(sink) = &self.sink {
            let result = AttemptResult::from(vote.verdict());
            sink.record(Measurement::Attempt { result });
        }
    }

    /// An acquire is over (`Ok(None)`: cancelled).
    pub(crate) fn acquire_finished(&self, watch: Watch, result: &Result<Option<Lock>>) {
        let outcome = match result {
            Ok(Some(lock)) => {
                counts(&watch.span, lock.vote());
                AcquireOutcome::Acquired
            }
            Ok(None) => AcquireOutcome::Cancelled,
            Err(Error::NotAcquired { vote, .. }) => {
                counts(&watch.span, vote);
                AcquireOutcome::NotAcquired
            }
            Err(Error::Unavailable { vote, .. }) => {
                counts(&watch.span, vote);
                AcquireOutcome::Unavailable
            }
            Err(_) => AcquireOutcome::Error,
        };
        watch.span.record("attempts", watch.attempts);
        watch.span.record("outcome", outcome.as_str());
        let seconds = watch.seconds();
        if let Some(sink) = &self.sink {
            // `redlock.locks.held` counted the lock when it was made (`won`).
            sink.record(Measurement::Acquire { outcome, seconds });
        }
    }

    /// An extend is over.
    pub(crate) fn extend_finished(
        &self,
        watch: &Watch,
        result: &std::result::Result<&Vote, &Error>,
    ) {
        if extend_outcome(&watch.span, result) == "error" {
            return;
        }
        let seconds = watch.seconds();
        if let Some(sink) = &self.sink {
            sink.record(Measurement::Extend { seconds });
        }
    }

    /// An auto-extend renewal is over (its extend recorded the metrics).
    pub(crate) fn renew_finished(
        &self,
        watch: &Watch,
        result: &std::result::Result<&Vote, &Error>,
    ) {
        extend_outcome(&watch.span, result);
    }

    /// A lock was just won: what counts it in `redlock.locks.held` until it ends (`None`
    /// without metrics).
    pub(crate) fn won(&self) -> Option<Arc<crate::lock::Held>> {
        self.held.as_ref().map(held::won)
    }

    /// A release of `lock` is over.
    pub(crate) fn release_finished(&self, watch: &Watch, lock: &Lock, vote: &Vote) {
        counts(&watch.span, vote);
        let outcome = if vote.granted() > 0 {
            "released"
        } else if vote.failed() > 0 {
            "unconfirmed"
        } else {
            "not_held"
        };
        watch.span.record("outcome", outcome);
        let seconds = watch.seconds();
        lock.stopped_holding();
        if let Some(sink) = &self.sink {
            sink.record(Measurement::Release { seconds });
        }
    }

    /// A held lock was found lost: a WARN event (its resource only when opted in); it no
    /// longer counts as held.
    pub(crate) fn lock_lost(&self, lock: &Lock, reason: LostReason) {
        lock.stopped_holding();
        let resource = lock.resource();
        if let Some(sink) = &self.sink {
            sink.record(Measurement::LockLost);
        }
        let why = lost_reason_name(reason);
        if self.resource_in_spans {
            tracing::warn!(target: "redlock", reason = why, resource, "lock lost: {reason}");
        } else {
            tracing::warn!(target: "redlock", reason = why, "lock lost: {reason}");
        }
    }
}

/// The span and clock of one operation.
pub(crate) struct Watch {
    span: Span,
    /// When the operation started, if metrics are recorded.
    started: Option<Instant>,
    attempts: u32,
}

impl Watch {
    fn seconds(&self) -> f64 {
        self.started.map_or(0.0, |at| at.elapsed().as_secs_f64())
    }

    /// The span to run the operation in.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }
}

/// Records an extend's outcome and counts on its span; returns the outcome.
fn extend_outcome(span: &Span, result: &std::result::Result<&Vote, &Error>) -> &'static str {
    let outcome = match result {
        Ok(vote) => {
            counts(span, vote);
            "extended"
        }
        Err(Error::Unavailable { vote, .. }) => {
            counts(span, vote);
            "unavailable"
        }
        Err(Error::LockLost { vote, .. }) => {
            if let Some(vote) = vote {
                counts(span, vote);
            }
            "lost"
        }
        Err(_) => "error",
    };
    span.record("outcome", outcome);
    outcome
}

/// One `Request` measurement per master that answered, failed or timed out, named by the
/// command its connection uses now (a reconnect in between may have changed it: rare, and
/// only for a request that failed with the old connection).
fn requests(sink: &dyn MetricsSink, kind: RoundKind, vote: &Vote, masters: &[Master]) {
    for m in vote.masters() {
        let operation = kind.operation_name(masters.get(m.master).and_then(Master::commands));
        let error_type = match m.outcome {
            Outcome::Granted | Outcome::Denied => None,
            Outcome::Failed(_) | Outcome::TimedOut => Some(failure_kind(m.outcome)),
            // No answer was waited for: nothing measured.
            _ => continue,
        };
        let took = m.round_trip.unwrap_or(vote.elapsed());
        sink.record(Measurement::Request {
            master: m.master,
            operation,
            seconds: took.as_secs_f64(),
            error_type,
        });
    }
}

fn counts(span: &Span, vote: &Vote) {
    span.record("granted", vote.granted());
    span.record("denied", vote.denied());
    span.record("failed", vote.failed());
}

fn lost_reason_name(reason: LostReason) -> &'static str {
    match reason {
        LostReason::NotHeld => "not_held",
        LostReason::Expired => "expired",
        LostReason::ExtensionLimit => "extension_limit",
        LostReason::ExpiredBeforeRelease => "expired_before_release",
    }
}
