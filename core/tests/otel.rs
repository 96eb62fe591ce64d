//! OpenTelemetry metrics (feature `otel`, `docs/src/design.md#observability`) collected by the
//! SDK's in-memory exporter from the global meter provider, after won, contended and unavailable
//! acquisitions on real password-protected masters. Run with `cargo test -p redlock-core --features
//! otel --test otel -- otel::`.
#![cfg(feature = "otel")]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use redlock_core::{FanOut, Redlock};
use redlock_local::LocalMasters;

const PASSWORD: &str = "otel-Pa55word";
const RESOURCE: &str = "otel:orders:42";

/// Every data point of one instrument: its attributes and its count (histogram) or value.
fn points(metric: &Metric) -> Vec<(Vec<KeyValue>, f64)> {
    fn collect<T: Copy + Into<f64>>(data: &MetricData<T>) -> Vec<(Vec<KeyValue>, f64)> {
        match data {
            MetricData::Histogram(h) => h
                .data_points()
                .map(|p| (p.attributes().cloned().collect(), p.count() as f64))
                .collect(),
            MetricData::Sum(s) => s
                .data_points()
                .map(|p| (p.attributes().cloned().collect(), p.value().into()))
                .collect(),
            MetricData::Gauge(g) => g
                .data_points()
                .map(|p| (p.attributes().cloned().collect(), p.value().into()))
                .collect(),
            MetricData::ExponentialHistogram(_) => Vec::new(),
        }
    }
    match metric.data() {
        AggregatedMetrics::F64(d) => collect(d),
        AggregatedMetrics::U64(d) => match d {
            MetricData::Sum(s) => s
                .data_points()
                .map(|p| (p.attributes().cloned().collect(), p.value() as f64))
                .collect(),
            _ => Vec::new(),
        },
        AggregatedMetrics::I64(d) => match d {
            MetricData::Sum(s) => s
                .data_points()
                .map(|p| (p.attributes().cloned().collect(), p.value() as f64))
                .collect(),
            _ => Vec::new(),
        },
    }
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// The last export's metrics of the scope `redlock_core`, by name.
fn metrics(exported: &[ResourceMetrics]) -> Vec<&Metric> {
    let last = exported.last().expect("one export");
    last.scope_metrics()
        .filter(|s| s.scope().name() == "redlock_core")
        .flat_map(|s| s.metrics())
        .collect()
}

fn find<'a>(all: &[&'a Metric], name: &str) -> &'a Metric {
    all.iter()
        .find(|m| m.name() == name)
        .copied()
        .unwrap_or_else(|| {
            let names: Vec<&str> = all.iter().map(|m| m.name()).collect();
            panic!("no {name} among {names:?}")
        })
}

/// Each value of attribute `key` with its points' total (count of a histogram, sum of a
/// counter).
fn totals_by(metric: &Metric, key: &str) -> BTreeMap<String, f64> {
    let mut totals = BTreeMap::new();
    for (attributes, n) in points(metric) {
        if let Some(value) = attribute(&attributes, key) {
            *totals.entry(value.as_str().into_owned()).or_insert(0.0) += n;
        }
    }
    totals
}

fn values_of(metric: &Metric, key: &str) -> BTreeSet<String> {
    points(metric)
        .iter()
        .filter_map(|(a, _)| attribute(a, key).map(|v| v.as_str().into_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn won_contended_and_unavailable_acquires_are_recorded_under_the_semantic_names() {
    let _alone = crate::ONE_PROVIDER_AT_A_TIME.lock().await;
    // ANCHOR: provider
    // Install the meter provider before building the client: a client takes its instruments
    // from the global provider once, when it is built.
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());
    // ANCHOR_END: provider

    let masters = LocalMasters::start_with_password(3, PASSWORD).expect("masters");
    let builder = || {
        Redlock::builder(masters.urls())
            .fanout(FanOut::Concurrent)
            .retry_count(1)
            .retry_delay(Duration::from_millis(10))
    };
    let holder = common::connected(builder()).await;
    let rival = common::connected(builder().retry_count(0)).await;
    let token = common::won_contended_extended_released(&masters, &holder, &rival, RESOURCE).await;
    masters.kill(1).expect("kill");
    masters.kill(2).expect("kill");
    let err = rival
        .acquire(RESOURCE, Duration::from_secs(10))
        .await
        .expect_err("two of three down");
    assert!(err.is_unavailable(), "{err}");

    provider.force_flush().expect("flush");
    let exported = exporter.get_finished_metrics().expect("exported");
    let all = metrics(&exported);

    let acquire = find(&all, "redlock.acquire.duration");
    assert_eq!(acquire.unit(), "s");
    // One acquire of each kind; every outcome's series exists from the client's start (the
    // hot path's attribute sets are bound once), so one never seen reads 0, not absent.
    assert_eq!(
        totals_by(acquire, "redlock.outcome"),
        [
            ("acquired", 1.0),
            ("cancelled", 0.0),
            ("error", 0.0),
            ("not_acquired", 1.0),
            ("unavailable", 1.0)
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into(),
    );
    assert_eq!(
        values_of(acquire, "redlock.fanout"),
        BTreeSet::from(["concurrent".to_string()])
    );

    let attempts = find(&all, "redlock.attempts");
    assert_eq!(
        totals_by(attempts, "redlock.attempt.result"),
        [
            ("clean_loss", 1.0),
            ("expired", 0.0),
            ("split", 0.0),
            ("unavailable", 1.0),
            ("won", 1.0)
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into(),
    );

    for name in ["redlock.extend.duration", "redlock.release.duration"] {
        let metric = find(&all, name);
        assert_eq!(metric.unit(), "s");
        let total: f64 = points(metric).iter().map(|(_, n)| n).sum();
        assert_eq!(total, 1.0, "{name}");
    }
    let held = find(&all, "redlock.locks.held");
    let held: f64 = points(held).iter().map(|(_, v)| v).sum();
    assert_eq!(held, 0.0, "acquired once, released once");

    let requests = find(&all, "db.client.operation.duration");
    assert_eq!(requests.unit(), "s");
    assert_eq!(
        values_of(requests, "db.system.name"),
        BTreeSet::from(["redis".to_string()])
    );
    // Every command a request can be is bound (read 0 until sent); Redis 7 masters were sent
    // the acquire's `SET` and the scripts.
    assert_eq!(
        values_of(requests, "db.operation.name"),
        BTreeSet::from(["DELEX", "DELIFEQ", "EVALSHA", "SET"].map(String::from))
    );
    let sent: BTreeSet<String> = points(requests)
        .iter()
        .filter(|(_, n)| *n > 0.0)
        .filter_map(|(a, _)| attribute(a, "db.operation.name").map(|v| v.as_str().into_owned()))
        .collect();
    assert_eq!(sent, BTreeSet::from(["EVALSHA", "SET"].map(String::from)));
    let ports: BTreeSet<String> = (0..3)
        .map(|i| masters.port(i).unwrap().to_string())
        .collect();
    assert_eq!(values_of(requests, "server.port"), ports);
    assert_eq!(
        values_of(requests, "server.address"),
        BTreeSet::from(["127.0.0.1".to_string()])
    );
    assert!(
        !values_of(requests, "error.type").is_empty(),
        "failed requests say why"
    );

    let failures = find(&all, "redlock.master.failures");
    // Every master's series exist at 0 (`tests/otel_from_start.rs`); these counted failures.
    let failed_ports: BTreeSet<String> = points(failures)
        .iter()
        .filter(|(_, n)| *n > 0.0)
        .filter_map(|(a, _)| attribute(a, "server.port").map(|v| v.as_str().into_owned()))
        .collect();
    let down: BTreeSet<String> = (1..3)
        .map(|i| masters.port(i).unwrap().to_string())
        .collect();
    assert_eq!(failed_ports, down, "only the killed masters failed");

    // No attribute of any instrument holds the token, the password or the resource name.
    for metric in &all {
        for (attributes, _) in points(metric) {
            for kv in attributes {
                let value = kv.value.as_str();
                for secret in [PASSWORD, RESOURCE, token.as_str()] {
                    assert!(
                        !value.contains(secret),
                        "{} {} = {value}",
                        metric.name(),
                        kv.key
                    );
                }
            }
        }
    }
    provider.shutdown().expect("shutdown");
}
