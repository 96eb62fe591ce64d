//! Every series of the `otel` feature exists at 0 from the client's start (so that a rule's
//! `increase()` sees the first event), and `redlock.locks.held` goes down when a lock is lost
//! or forgotten, not only when it is released. Real masters; the SDK's in-memory exporter.
//! Run with `cargo test -p redlock-core --features otel --test otel -- otel_from_start::`.
#![cfg(feature = "otel")]

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use redlock_core::{AcquireOutcome, AttemptResult, Redlock, ERROR_TYPES};
use redlock_local::LocalMasters;

const MASTERS: usize = 3;

/// The last export's points of `name` in scope `redlock_core`: (attributes as `key=value`
/// strings, value or count).
fn points(exporter: &InMemoryMetricExporter, name: &str) -> Vec<(BTreeSet<String>, f64)> {
    let exported = exporter.get_finished_metrics().expect("exported");
    let last = exported.last().expect("one export");
    let metric = last
        .scope_metrics()
        .filter(|s| s.scope().name() == "redlock_core")
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no {name} exported"));
    let attrs = |a: &mut dyn Iterator<Item = &opentelemetry::KeyValue>| -> BTreeSet<String> {
        a.map(|kv| format!("{}={}", kv.key, kv.value)).collect()
    };
    match metric.data() {
        AggregatedMetrics::F64(MetricData::Histogram(h)) => h
            .data_points()
            .map(|p| (attrs(&mut p.attributes()), p.count() as f64))
            .collect(),
        AggregatedMetrics::U64(MetricData::Sum(s)) => s
            .data_points()
            .map(|p| (attrs(&mut p.attributes()), p.value() as f64))
            .collect(),
        AggregatedMetrics::I64(MetricData::Sum(s)) => s
            .data_points()
            .map(|p| (attrs(&mut p.attributes()), p.value() as f64))
            .collect(),
        other => panic!("{name}: unexpected data {other:?}"),
    }
}

/// The single value of an instrument without attributes.
fn single(exporter: &InMemoryMetricExporter, name: &str) -> f64 {
    let found = points(exporter, name);
    assert_eq!(found.len(), 1, "{name}: {found:?}");
    assert!(found[0].0.is_empty(), "{name}: {found:?}");
    found[0].1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_series_starts_at_zero_and_held_locks_go_down_when_lost_or_dropped() {
    let _alone = crate::ONE_PROVIDER_AT_A_TIME.lock().await;
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());
    let masters = LocalMasters::start(MASTERS).expect("masters");
    let redlock = Redlock::builder(masters.urls())
        .retry_count(0)
        .build()
        .expect("valid configuration");

    // Before any operation: every series a rule or panel reads, at 0.
    provider.force_flush().expect("flush");
    assert_eq!(single(&exporter, "redlock.locks.lost"), 0.0);
    assert_eq!(single(&exporter, "redlock.locks.held"), 0.0);
    let outcomes: BTreeSet<String> = points(&exporter, "redlock.acquire.duration")
        .into_iter()
        .filter(|(_, n)| *n == 0.0)
        .flat_map(|(a, _)| a)
        .filter(|a| a.starts_with("redlock.outcome="))
        .collect();
    let expected = AcquireOutcome::ALL.map(|o| format!("redlock.outcome={o}"));
    assert_eq!(outcomes, BTreeSet::from(expected));
    let results: BTreeSet<String> = points(&exporter, "redlock.attempts")
        .into_iter()
        .filter(|(_, n)| *n == 0.0)
        .flat_map(|(a, _)| a)
        .collect();
    let expected = AttemptResult::ALL.map(|r| format!("redlock.attempt.result={r}"));
    assert_eq!(results, BTreeSet::from(expected));
    let failures = points(&exporter, "redlock.master.failures");
    assert_eq!(failures.len(), MASTERS * ERROR_TYPES.len(), "{failures:?}");
    assert!(failures.iter().all(|(_, n)| *n == 0.0), "{failures:?}");
    for error in ERROR_TYPES {
        let with = failures
            .iter()
            .filter(|(a, _)| a.contains(&format!("error.type={error}")))
            .count();
        assert_eq!(with, MASTERS, "{error}");
    }

    let ttl = Duration::from_secs(30);
    let mut kept = redlock.acquire("start:kept", ttl).await.expect("won");
    let forgotten = redlock.acquire("start:forgotten", ttl).await.expect("won");
    let copy = forgotten.clone();
    provider.force_flush().expect("flush");
    assert_eq!(single(&exporter, "redlock.locks.held"), 2.0);
    // A lock forgotten (every copy dropped, never released): its keys expire at their TTL.
    drop(forgotten);
    drop(copy);
    provider.force_flush().expect("flush");
    assert_eq!(single(&exporter, "redlock.locks.held"), 1.0);

    // Lost: its keys deleted behind its back; the extend finds it gone.
    for master in 0..MASTERS {
        common::del(&masters, master, "start:kept");
    }
    let err = redlock.extend(&mut kept, ttl).await.expect_err("gone");
    assert!(err.is_lock_lost(), "{err}");
    provider.force_flush().expect("flush");
    assert_eq!(single(&exporter, "redlock.locks.lost"), 1.0);
    assert_eq!(single(&exporter, "redlock.locks.held"), 0.0);
    // Its release afterwards (nothing left to delete) does not count it down twice.
    let _ = redlock.release(&kept).await;
    drop(kept);
    provider.force_flush().expect("flush");
    assert_eq!(single(&exporter, "redlock.locks.held"), 0.0);
    provider.shutdown().expect("shutdown");
}
