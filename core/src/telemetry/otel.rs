//! OpenTelemetry metrics (feature `otel`), recorded through the global meter provider, named
//! as DESIGN §9 says. Instruments are created once per client, and the attribute sets of the
//! hot path (each master's requests, each acquire outcome, each attempt result) are bound to
//! them once per client: recording then neither hashes an attribute set nor allocates, except
//! for a failed request's `error.type`.

use opentelemetry::metrics::{BoundCounter, BoundHistogram, Counter, Histogram, UpDownCounter};
use opentelemetry::KeyValue;

use super::names::{attempt_result, failure_kind, RoundKind};
use crate::master::Master;
use crate::vote::{Outcome, Verdict, Vote};

/// The meter's name (instrumentation scope).
const METER: &str = "redlock_core";

/// Boundaries (s) of the duration histograms: from a loopback round trip to a long wait.
const DURATION_BOUNDARIES: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// One master's precomputed attributes.
struct MasterAttributes {
    /// `db.*` and `server.*` of an acquire's `SET`.
    set: Vec<KeyValue>,
    /// The same for a script (`EVALSHA`: extend and release).
    script: Vec<KeyValue>,
    /// `db.client.operation.duration` bound to `set` and to `script`: an answered request.
    set_duration: BoundHistogram<f64>,
    script_duration: BoundHistogram<f64>,
    /// `server.*` only (for `redlock.master.failures`, with `error.type` added).
    server: Vec<KeyValue>,
}

pub(super) struct Metrics {
    extend_duration: Histogram<f64>,
    release_duration: Histogram<f64>,
    locks_held: UpDownCounter<i64>,
    locks_lost: Counter<u64>,
    operation_duration: Histogram<f64>,
    master_failures: Counter<u64>,
    masters: Vec<MasterAttributes>,
    /// `redlock.acquire.duration` bound to `redlock.fanout` and each `redlock.outcome`.
    outcomes: [BoundHistogram<f64>; 4],
    /// `redlock.attempts` bound to each `redlock.attempt.result`, one per verdict.
    results: [BoundCounter<u64>; 5],
}

const OUTCOMES: [&str; 4] = ["acquired", "not_acquired", "unavailable", "cancelled"];
const VERDICTS: [Verdict; 5] = [
    Verdict::Won,
    Verdict::SplitVote,
    Verdict::CleanLoss,
    Verdict::Expired,
    Verdict::Unavailable,
];

impl Metrics {
    pub(super) fn new(masters: &[Master], fanout: &'static str) -> Self {
        let meter = opentelemetry::global::meter(METER);
        let seconds = |name: &'static str, what: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(DURATION_BOUNDARIES.to_vec())
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
        Metrics {
            masters: masters
                .iter()
                .map(|m| attributes_of(m.display(), &operation_duration))
                .collect(),
            outcomes: OUTCOMES.map(|outcome| {
                acquire_duration.bind(&[
                    KeyValue::new("redlock.outcome", outcome),
                    KeyValue::new("redlock.fanout", fanout),
                ])
            }),
            results: VERDICTS.map(|v| {
                attempts.bind(&[KeyValue::new("redlock.attempt.result", attempt_result(v))])
            }),
            extend_duration: seconds("redlock.extend.duration", "Duration of extends"),
            release_duration: seconds("redlock.release.duration", "Duration of releases"),
            locks_held: meter
                .i64_up_down_counter("redlock.locks.held")
                .with_unit("{lock}")
                .with_description("Locks acquired and not yet released")
                .build(),
            locks_lost: meter
                .u64_counter("redlock.locks.lost")
                .with_unit("{lock}")
                .with_description("Held locks found lost before their release")
                .build(),
            operation_duration,
            master_failures: meter
                .u64_counter("redlock.master.failures")
                .with_unit("{failure}")
                .with_description("Requests to a master that failed or timed out")
                .build(),
        }
    }

    pub(super) fn round_finished(&self, kind: RoundKind, vote: &Vote) {
        for m in vote.masters() {
            let Some(attributes) = self.masters.get(m.master) else {
                continue;
            };
            let (base, answered) = match kind.operation_name() {
                "SET" => (&attributes.set, &attributes.set_duration),
                _ => (&attributes.script, &attributes.script_duration),
            };
            match m.outcome {
                Outcome::Granted | Outcome::Denied => {
                    let took = m.round_trip.unwrap_or_default();
                    answered.record(took.as_secs_f64());
                }
                Outcome::Failed(_) | Outcome::TimedOut => {
                    let error = KeyValue::new("error.type", failure_kind(m.outcome));
                    let took = m.round_trip.unwrap_or(vote.elapsed());
                    let mut with_error = base.clone();
                    with_error.push(error.clone());
                    self.operation_duration
                        .record(took.as_secs_f64(), &with_error);
                    let mut server = attributes.server.clone();
                    server.push(error);
                    self.master_failures.add(1, &server);
                }
                // No answer was waited for: nothing measured.
                _ => {}
            }
        }
    }

    pub(super) fn attempt_finished(&self, verdict: Verdict) {
        let i = VERDICTS.iter().position(|v| *v == verdict).unwrap_or(4);
        self.results[i].add(1);
    }

    pub(super) fn acquire_finished(&self, outcome: &str, seconds: f64) {
        let i = OUTCOMES.iter().position(|o| *o == outcome).unwrap_or(3);
        self.outcomes[i].record(seconds);
        if i == 0 {
            self.locks_held.add(1, &[]);
        }
    }

    pub(super) fn extend_finished(&self, seconds: f64) {
        self.extend_duration.record(seconds, &[]);
    }

    pub(super) fn release_finished(&self, seconds: f64) {
        self.release_duration.record(seconds, &[]);
        self.locks_held.add(-1, &[]);
    }

    pub(super) fn lock_lost(&self) {
        self.locks_lost.add(1, &[]);
    }
}

/// A master's attributes from its redacted URL (host and port carry no password).
fn attributes_of(display: &str, operation_duration: &Histogram<f64>) -> MasterAttributes {
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
    let (set, script) = (with("SET"), with("EVALSHA"));
    MasterAttributes {
        set_duration: operation_duration.bind(&set),
        script_duration: operation_duration.bind(&script),
        set,
        script,
        server,
    }
}
