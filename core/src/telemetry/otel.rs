//! OpenTelemetry metrics (feature `otel`), recorded through the global meter provider, named
//! as the book's design page (`docs/src/design.md`, "observability") says. Instruments are created once per client, and the attribute sets of the
//! hot path (each master's requests, each acquire outcome, each attempt result) are bound to
//! them once per client: recording then neither hashes an attribute set nor allocates, except
//! for a failed request's duration (with its `error.type`).
//!
//! Every series a rule or panel reads exists from the client's start at 0 (each outcome,
//! attempt result, master and `error.type`, and the two lock counters): Prometheus'
//! `increase()` needs a sample before the first event to see it. A bound series is exported
//! from its binding; the SDK exports a series without attributes only once something was
//! recorded into it, hence the `add(0)`.

use opentelemetry::metrics::{BoundCounter, BoundHistogram, Counter, Histogram, UpDownCounter};
use opentelemetry::KeyValue;

use super::sink::{Measurement, MetricsSink};
use super::vocabulary::{AcquireOutcome, AttemptResult, DURATION_BUCKETS_S, ERROR_TYPES};
use crate::master::Master;

/// The meter's name (instrumentation scope).
const METER: &str = "redlock_core";

/// Every `db.operation.name` a request can have: an acquire's `SET`, the scripts' `EVALSHA`,
/// and a server's own release (`DELIFEQ`, `DELEX`); a Lua-free extend is a `SET` too.
const OPERATIONS: [&str; 4] = ["SET", "EVALSHA", "DELIFEQ", "DELEX"];

/// One master's precomputed attributes.
struct MasterAttributes {
    /// By [`OPERATIONS`]: `db.*` and `server.*` of a request of that command, and
    /// `db.client.operation.duration` bound to them (an answered request).
    operations: [(Vec<KeyValue>, BoundHistogram<f64>); OPERATIONS.len()],
    /// `redlock.master.failures` bound to `server.*` and each `error.type`, by
    /// [`ERROR_TYPES`].
    failures: [BoundCounter<u64>; ERROR_TYPES.len()],
}

pub(super) struct Metrics {
    extend_duration: Histogram<f64>,
    release_duration: Histogram<f64>,
    locks_held: UpDownCounter<i64>,
    locks_lost: Counter<u64>,
    operation_duration: Histogram<f64>,
    masters: Vec<MasterAttributes>,
    /// `redlock.acquire.duration` bound to `redlock.fanout` and each `redlock.outcome`, by
    /// [`AcquireOutcome::index`].
    outcomes: [BoundHistogram<f64>; AcquireOutcome::ALL.len()],
    /// `redlock.attempts` bound to each `redlock.attempt.result`, by [`AttemptResult::index`].
    results: [BoundCounter<u64>; AttemptResult::ALL.len()],
}

impl Metrics {
    pub(super) fn new(masters: &[Master], fanout: &'static str) -> Self {
        let meter = opentelemetry::global::meter(METER);
        let seconds = |name: &'static str, what: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(DURATION_BUCKETS_S.to_vec())
                .build()
        };
        let acquire_duration = seconds(
            "redlock.acquire.duration",
            "Duration of acquires, every attempt and wait included",
        );
        let attempts = meter
            .u64_counter("redlock.attempts")
            .with_unit("{attempt}")
            .with_description("Acquire attempts, by how each ended")
            .build();
        let operation_duration = seconds(
            "db.client.operation.duration",
            "Duration of each request to a master",
        );
        let master_failures = meter
            .u64_counter("redlock.master.failures")
            .with_unit("{failure}")
            .with_description("Requests to a master that failed or timed out")
            .build();
        let locks_held = meter
            .i64_up_down_counter("redlock.locks.held")
            .with_unit("{lock}")
            .with_description("Locks acquired and not yet released, lost or dropped")
            .build();
        let locks_lost = meter
            .u64_counter("redlock.locks.lost")
            .with_unit("{lock}")
            .with_description("Held locks found lost before their release")
            .build();
        // Served at 0 from now on (see the module's comment).
        locks_held.add(0, &[]);
        locks_lost.add(0, &[]);
        Metrics {
            masters: masters
                .iter()
                .map(|m| attributes_of(m.display(), &operation_duration, &master_failures))
                .collect(),
            outcomes: AcquireOutcome::ALL.map(|outcome| {
                acquire_duration.bind(&[
                    KeyValue::new("redlock.outcome", outcome.as_str()),
                    KeyValue::new("redlock.fanout", fanout),
                ])
            }),
            results: AttemptResult::ALL.map(|result| {
                attempts.bind(&[KeyValue::new("redlock.attempt.result", result.as_str())])
            }),
            extend_duration: seconds("redlock.extend.duration", "Duration of extends"),
            release_duration: seconds("redlock.release.duration", "Duration of releases"),
            locks_held,
            locks_lost,
            operation_duration,
        }
    }
}

impl MetricsSink for Metrics {
    fn record(&self, measurement: Measurement) {
        match measurement {
            Measurement::Request {
                master,
                operation,
                seconds,
                error_type,
            } => self.request(master, operation, seconds, error_type),
            Measurement::Attempt { result } => self.results[result.index()].add(1),
            Measurement::Acquire { outcome, seconds } => {
                self.outcomes[outcome.index()].record(seconds)
            }
            Measurement::LocksHeld { delta } => self.locks_held.add(delta, &[]),
            Measurement::Extend { seconds } => self.extend_duration.record(seconds, &[]),
            Measurement::Release { seconds } => self.release_duration.record(seconds, &[]),
            Measurement::LockLost => self.locks_lost.add(1, &[]),
        }
    }
}

impl Metrics {
    /// One request to a master: its duration, and a failure with its `error.type`.
    fn request(&self, master: usize, operation: &str, seconds: f64, error: Option<&'static str>) {
        let Some(attributes) = self.masters.get(master) else {
            return;
        };
        // Four names compared in turn: no hashing on the hot path.
        let index = OPERATIONS
            .iter()
            .position(|&name| name == operation)
            .unwrap_or(1);
        let (base, answered) = &attributes.operations[index];
        let Some(error) = error else {
            answered.record(seconds);
            return;
        };
        let mut with_error = base.clone();
        with_error.push(KeyValue::new("error.type", error));
        self.operation_duration.record(seconds, &with_error);
        // An unknown kind (none today) counts as `other`.
        let kind = ERROR_TYPES.iter().position(|&e| e == error).unwrap_or(3);
        attributes.failures[kind].add(1);
    }
}

/// A master's attributes from its redacted URL (host and port carry no password), bound.
fn attributes_of(
    display: &str,
    operation_duration: &Histogram<f64>,
    master_failures: &Counter<u64>,
) -> MasterAttributes {
    let mut server = Vec::with_capacity(3);
    if let Ok(url) = url::Url::parse(display) {
        match url.host_str() {
            Some(host) => server.push(KeyValue::new("server.address", host.to_string())),
            None => server.push(KeyValue::new("server.address", url.path().to_string())),
        }
        if let Some(port) = url.port_or_known_default().or(url.host().map(|_| 6379)) {
            server.push(KeyValue::new("server.port", i64::from(port)));
        }
    }
    let with = |operation: &'static str| {
        let mut attributes = vec![
            KeyValue::new("db.system.name", "redis"),
            KeyValue::new("db.operation.name", operation),
        ];
        attributes.extend(server.iter().cloned());
        attributes
    };
    MasterAttributes {
        operations: OPERATIONS.map(|operation| {
            let attributes = with(operation);
            let bound = operation_duration.bind(&attributes);
            (attributes, bound)
        }),
        failures: ERROR_TYPES.map(|error| {
            let mut attributes = server.clone();
            attributes.push(KeyValue::new("error.type", error));
            master_failures.bind(&attributes)
        }),
    }
}
