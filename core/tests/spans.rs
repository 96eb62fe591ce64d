//! `tracing` spans and events of the client (`docs/src/design.md#observability`), seen by a
//! capturing subscriber, against real local masters that require a password: won, contended and
//! unavailable acquisitions, extends, releases, lost locks. No token, password or (unless opted in)
//! resource name in any span field or event.

use crate::common;

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redlock_core::{ClientStats, FanOut, Redlock, RedlockBuilder};
use redlock_local::LocalMasters;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

const PASSWORD: &str = "s3cret-Pa55";
const RESOURCE: &str = "spans:orders:42";

/// A span as finally recorded, or an event.
#[derive(Debug, Clone, Default)]
struct Seen {
    name: String,
    level: Option<Level>,
    /// The span an event happened in, or a span's parent.
    parent: Option<String>,
    fields: Vec<(String, String)>,
}

impl Seen {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Visit for Seen {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.fields
            .push((field.name().to_string(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields
            .push((field.name().to_string(), value.to_string()));
    }
}

/// Keeps every span (fields as recorded by the time it closes) and every event.
#[derive(Clone, Default)]
struct Capture {
    spans: Arc<Mutex<Vec<Seen>>>,
    events: Arc<Mutex<Vec<Seen>>>,
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut seen = Seen {
            name: attrs.metadata().name().to_string(),
            ..Seen::default()
        };
        attrs.record(&mut seen);
        if let Some(span) = ctx.span(id) {
            seen.parent = span.parent().map(|p| p.name().to_string());
            span.extensions_mut().insert(seen);
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(seen) = span.extensions_mut().get_mut::<Seen>() {
                values.record(seen);
            }
        }
    }
    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut seen = Seen {
            name: event.metadata().target().to_string(),
            level: Some(*event.metadata().level()),
            parent: ctx.event_span(event).map(|s| s.name().to_string()),
            ..Seen::default()
        };
        event.record(&mut seen);
        self.events.lock().unwrap().push(seen);
    }
    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id) {
            if let Some(seen) = span.extensions().get::<Seen>() {
                self.spans.lock().unwrap().push(seen.clone());
            }
        }
    }
}

impl Capture {
    fn spans(&self, name: &str) -> Vec<Seen> {
        let spans = self.spans.lock().unwrap();
        spans.iter().filter(|s| s.name == name).cloned().collect()
    }
    fn warnings(&self) -> Vec<Seen> {
        let events = self.events.lock().unwrap();
        events
            .iter()
            .filter(|e| e.level == Some(Level::WARN))
            .cloned()
            .collect()
    }
    /// Every field of every span and event: none may hold a secret.
    fn assert_never_shows(&self, secrets: &[&str]) {
        let spans = self.spans.lock().unwrap();
        let events = self.events.lock().unwrap();
        for seen in spans.iter().chain(events.iter()) {
            for (key, value) in &seen.fields {
                for secret in secrets {
                    assert!(
                        !value.contains(secret),
                        "{} field {key} = {value:?} shows {secret:?}",
                        seen.name
                    );
                }
            }
        }
    }
}

/// Runs `test` on a current-thread runtime with `capture` as the subscriber (every task of
/// the test, the masters' connection tasks included, runs on this thread).
fn with_capture<F: std::future::Future<Output = ()>>(capture: &Capture, test: impl FnOnce() -> F) {
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(test());
}

fn builder(masters: &LocalMasters) -> RedlockBuilder {
    Redlock::builder(masters.urls())
        .fanout(FanOut::Concurrent)
        .retry_count(1)
        .retry_delay(Duration::from_millis(10))
}

#[test]
fn won_and_contended_acquires_have_spans_with_the_vote_and_no_secret() {
    let masters = LocalMasters::start_with_password(3, PASSWORD).expect("masters");
    let capture = Capture::default();
    let mut tokens = Vec::new();
    with_capture(&capture, || async {
        let holder = common::connected(builder(&masters)).await;
        let rival = common::connected(builder(&masters)).await;
        tokens.push(
            common::won_contended_extended_released(&masters, &holder, &rival, RESOURCE).await,
        );
    });

    let acquires = capture.spans("redlock.acquire");
    assert_eq!(acquires.len(), 2, "{acquires:?}");
    let won = &acquires[0];
    assert_eq!(won.field("outcome"), Some("acquired"), "{won:?}");
    assert_eq!(won.field("fanout"), Some("concurrent"));
    assert_eq!(won.field("attempts"), Some("1"));
    assert_eq!(won.field("failed"), Some("0"));
    let granted: usize = won.field("granted").expect("granted").parse().unwrap();
    assert!(granted >= 2, "{won:?}");
    let lost = &acquires[1];
    assert_eq!(lost.field("outcome"), Some("not_acquired"), "{lost:?}");
    assert_eq!(
        lost.field("attempts"),
        Some("2"),
        "retry_count 1: two attempts"
    );
    // The holder's key is on all three masters before the rival tries (see the scene): a
    // clean loss, decided by two denials (the third reply is not awaited once 2 denied).
    assert_eq!(lost.field("granted"), Some("0"), "{lost:?}");
    let denied: usize = lost.field("denied").expect("denied").parse().unwrap();
    assert!((2..=3).contains(&denied), "{lost:?}");
    assert!(won.field("resource").is_none(), "resource names are opt-in");

    let extends = capture.spans("redlock.extend");
    assert_eq!(extends.len(), 1);
    assert_eq!(extends[0].field("outcome"), Some("extended"));
    let releases = capture.spans("redlock.release");
    assert_eq!(releases.len(), 1);
    assert_eq!(releases[0].field("outcome"), Some("released"));
    // Every master held the holder's key, and each deletes it.
    assert_eq!(releases[0].field("granted"), Some("3"), "{:?}", releases[0]);
    assert!(capture.warnings().is_empty(), "{:?}", capture.warnings());
    let mut secrets = vec![PASSWORD, RESOURCE];
    secrets.extend(tokens.iter().map(String::as_str));
    capture.assert_never_shows(&secrets);
}

#[test]
fn an_unavailable_acquire_warns_once_per_failed_master_with_its_redacted_address() {
    let masters = LocalMasters::start_with_password(3, PASSWORD).expect("masters");
    let capture = Capture::default();
    with_capture(&capture, || async {
        let client = common::connected(builder(&masters).retry_count(0)).await;
        masters.kill(1).expect("kill");
        masters.kill(2).expect("kill");
        let err = client
            .acquire(RESOURCE, Duration::from_secs(10))
            .await
            .expect_err("two of three masters are down");
        assert!(err.is_unavailable(), "{err}");
    });

    let acquires = capture.spans("redlock.acquire");
    assert_eq!(acquires.len(), 1);
    assert_eq!(acquires[0].field("outcome"), Some("unavailable"));
    assert_eq!(acquires[0].field("failed"), Some("2"), "{:?}", acquires[0]);
    let warnings = capture.warnings();
    let failed: Vec<&Seen> = warnings
        .iter()
        .filter(|w| w.field("operation") == Some("acquire"))
        .collect();
    assert_eq!(failed.len(), 2, "one WARN per failed master: {warnings:?}");
    for (warning, position) in failed.iter().zip(["1", "2"]) {
        assert_eq!(warning.field("master"), Some(position), "{warning:?}");
        assert_eq!(warning.parent.as_deref(), Some("redlock.acquire"));
        let port = masters.port(position.parse().unwrap()).unwrap();
        let address = warning.field("address").expect("address");
        assert!(address.contains(&format!(":{port}")), "{address}");
        assert!(address.contains("***"), "password redacted: {address}");
        assert!(warning.field("error.type").is_some_and(|t| !t.is_empty()));
        assert!(warning.field("cause").is_some_and(|c| !c.is_empty()));
    }
    capture.assert_never_shows(&[PASSWORD, RESOURCE]);
}

/// One master down while 1,000 locks are taken and released as fast as the client goes: at
/// most one WARN per second about it (per the run's own clock), every other failure at DEBUG,
/// and each WARN after the first counts exactly the failures held back since the one before.
#[test]
fn a_failed_master_warns_at_most_once_per_interval_with_the_count_held_back() {
    const CYCLES: usize = 1_000;
    let masters = LocalMasters::start_with_password(5, PASSWORD).expect("masters");
    let stats = Arc::new(ClientStats::new(5));
    let capture = Capture::default();
    let mut elapsed = Duration::ZERO;
    with_capture(&capture, || async {
        // A generous per-master timeout: on a busy machine no healthy master times out, so
        // the only failures are the dead one's (refused at once).
        let client = builder(&masters)
            .instance_timeout(Duration::from_secs(2))
            .metrics_sink(stats.clone());
        let client = common::connected(client).await;
        masters.kill(4).expect("kill");
        let started = Instant::now();
        for i in 0..CYCLES {
            let lock = client
                .acquire(&format!("spans:burst:{i}"), Duration::from_secs(10))
                .await
                .expect("4 of 5 masters up");
            client.release(&lock).await.expect("released");
        }
        elapsed = started.elapsed();
    });

    let events = capture.events.lock().unwrap().clone();
    let failures: Vec<&Seen> = events
        .iter()
        .filter(|e| {
            e.field("message")
                .is_some_and(|m| m.starts_with("master #") && m.contains(" failed ("))
        })
        .collect();
    assert!(failures.iter().all(|e| e.field("master") == Some("4")));
    // The line itself names the master: its position and its address (password redacted).
    let port = masters.port(4).unwrap();
    let named = format!("master #4 (redis://:***@127.0.0.1:{port}) failed");
    assert!(
        failures
            .iter()
            .all(|e| e.field("message").is_some_and(|m| m.starts_with(&named))),
        "{named}: {:?}",
        failures.first()
    );
    // Every failed request is one event, at WARN or DEBUG.
    let failed_requests = stats.snapshot().master_failures();
    assert_eq!(failures.len() as u64, failed_requests);
    assert!(failed_requests >= CYCLES as u64, "{failed_requests}");

    let warns: Vec<usize> = (0..failures.len())
        .filter(|&i| failures[i].level == Some(Level::WARN))
        .collect();
    let allowed = 1 + elapsed.as_secs() as usize + 1;
    assert!(
        !warns.is_empty() && warns.len() <= allowed,
        "{} WARN lines in {elapsed:?} ({failed_requests} failures)",
        warns.len()
    );
    assert_eq!(failures[warns[0]].field("suppressed"), Some("0"));
    for pair in warns.windows(2) {
        let held_back = pair[1] - pair[0] - 1;
        assert_eq!(
            failures[pair[1]].field("suppressed"),
            Some(held_back.to_string().as_str()),
            "{:?}",
            failures[pair[1]]
        );
    }
}

#[test]
fn resource_names_appear_only_when_opted_in_and_a_lost_lock_warns() {
    let masters = LocalMasters::start_with_password(3, PASSWORD).expect("masters");
    let capture = Capture::default();
    with_capture(&capture, || async {
        // ANCHOR: opt_in
        let client = common::connected(builder(&masters).trace_resource_names(true)).await;
        // ANCHOR_END: opt_in
        let mut lock = client
            .acquire(RESOURCE, Duration::from_secs(10))
            .await
            .expect("won");
        for i in 0..3 {
            common::del(&masters, i, RESOURCE);
        }
        let err = client
            .extend(&mut lock, Duration::from_secs(10))
            .await
            .expect_err("the keys are gone");
        assert!(err.is_lock_lost(), "{err}");
    });

    let acquires = capture.spans("redlock.acquire");
    assert_eq!(acquires[0].field("resource"), Some(RESOURCE));
    let extends = capture.spans("redlock.extend");
    assert_eq!(extends[0].field("outcome"), Some("lost"));
    let lost: Vec<Seen> = capture
        .warnings()
        .into_iter()
        .filter(|w| w.field("reason").is_some())
        .collect();
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].field("reason"), Some("not_held"));
    assert_eq!(lost[0].field("resource"), Some(RESOURCE));
    capture.assert_never_shows(&[PASSWORD]);
}

#[test]
fn each_background_renewal_has_a_renew_span_around_its_extend() {
    let masters = LocalMasters::start_with_password(3, PASSWORD).expect("masters");
    let capture = Capture::default();
    with_capture(&capture, || async {
        let client = common::connected(builder(&masters)).await;
        let lock = client
            .acquire(RESOURCE, Duration::from_secs(2))
            .await
            .expect("won");
        let guard = client.auto_extend(lock);
        common::eventually("a renewal", Duration::from_secs(10), || {
            guard.lock().extensions() >= 1
        })
        .await;
        guard.release().await.expect("released");
    });

    let renewals = capture.spans("redlock.renew");
    assert!(!renewals.is_empty());
    assert_eq!(
        renewals[0].field("outcome"),
        Some("extended"),
        "{renewals:?}"
    );
    // Concurrent fan-out stops listening once a quorum (2 of 3) renewed.
    let granted: usize = renewals[0]
        .field("granted")
        .expect("granted")
        .parse()
        .unwrap();
    assert!(granted >= 2, "{renewals:?}");
    assert!(renewals[0].field("resource").is_none());
    let inside: Vec<Seen> = capture
        .spans("redlock.extend")
        .into_iter()
        .filter(|s| s.parent.as_deref() == Some("redlock.renew"))
        .collect();
    assert_eq!(
        inside.len(),
        renewals.len(),
        "one extend inside each renewal"
    );
    capture.assert_never_shows(&[PASSWORD, RESOURCE]);
}
