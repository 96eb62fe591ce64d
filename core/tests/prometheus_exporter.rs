//! The library's Grafana dashboard (`deploy/grafana/redlock-library.json`) against a service
//! using the lock with a real exporter: the OpenTelemetry project's Prometheus exporter
//! (`opentelemetry-prometheus`) as the meter provider's reader, its registry served in the text
//! format over HTTP, scraped by a real Prometheus server (Debian's `prometheus`, installed by
//! `make deps`). The service wins, extends and releases locks, loses contended ones and finds
//! held ones lost, with one of its masters down; then every query of the dashboard returns
//! series, under the same family names as the Python collector serves
//! (`python/tests/test_dashboard.py` runs the same check from Python). The same Prometheus
//! evaluates the project's alerting rules (`deploy/prometheus/redlock-alerts.yml`): the
//! lost-locks counter is scraped at 0 before the first lock, and the first lost lock raises
//! `RedlockLocksLost`. Run with
//! `cargo test -p redlock-core --features otel --test otel -- prometheus_exporter::`.
#![cfg(feature = "otel")]

use crate::common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry_sdk::metrics::SdkMeterProvider;
use redlock_core::Redlock;
use redlock_local::{eventually_blocking, LocalMasters};
use serde_json::Value;

/// Generous bounds: the machine may have both cores busy with other work.
const LIMIT: Duration = Duration::from_secs(120);
/// Between two rounds of the service (each followed by every query).
const POLL: Duration = Duration::from_millis(500);
const MASTERS: usize = 5;
/// The master stopped before the first lock, so its requests fail (by server).
const DOWN: usize = MASTERS - 1;
const PASSWORD: &str = "dash-Pa55word";

/// The families the dashboard reads, as the Python collector
/// (`redlock_rs.prometheus.RedlockCollector`) names them: one dashboard for both languages.
/// A histogram's are its `_bucket`, `_sum` and `_count` series.
const FAMILIES: [&str; 8] = [
    "db_client_operation_duration_seconds",
    "redlock_acquire_duration_seconds",
    "redlock_attempts_total",
    "redlock_extend_duration_seconds",
    "redlock_locks_held",
    "redlock_locks_lost_total",
    "redlock_master_failures_total",
    "redlock_release_duration_seconds",
];

/// A child process killed and reaped when the test ends, passed or not.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The service's `/metrics`: a registry encoded in the text format on each request, served
/// by a thread that ends (and is joined) when this is dropped.
struct MetricsEndpoint {
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
    port: u16,
}

impl MetricsEndpoint {
    fn serve(registry: prometheus::Registry) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("a loopback port"));
        let port = server.server_addr().to_ip().expect("an IP listener").port();
        let serving = Arc::clone(&server);
        let thread = std::thread::spawn(move || {
            // ANCHOR: serve
            for request in serving.incoming_requests() {
                let text = prometheus::TextEncoder::new()
                    .encode_to_string(&registry.gather())
                    .unwrap_or_else(|e| format!("# encoding failed: {e}\n"));
                let content_type: tiny_http::Header =
                    "Content-Type: text/plain; version=0.0.4; charset=utf-8"
                        .parse()
                        .expect("a valid header");
                let response = tiny_http::Response::from_string(text).with_header(content_type);
                // A scraper that hung up is no failure of the service.
                let _ = request.respond(response);
            }
            // ANCHOR_END: serve
        });
        MetricsEndpoint {
            server,
            thread: Some(thread),
            port,
        }
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A loopback port nothing listens on (for Prometheus, which picks no port of its own).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address").port()
}

/// `GET path` on `port` (HTTP/1.0, the whole answer read): (status, body).
fn get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, body.to_string()))
}

/// A real Prometheus server on a free loopback port, scraping `target` every second, its data
/// in `dir`; ready to answer queries.
fn start_prometheus(dir: &Path, target: u16) -> (Killed, u16) {
    let found = Command::new("prometheus").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "prometheus is not installed: `make deps-prometheus` installs it"
    );
    let port = free_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - '{}'\n\
             scrape_configs:\n  - job_name: svc\n    static_configs:\n      \
             - targets: ['127.0.0.1:{target}']\n",
            alert_rules().display()
        ),
    )
    .expect("write the configuration");
    let log = std::fs::File::create(dir.join("prometheus.log")).expect("a log file");
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("prometheus starts");
    let mut server = Killed(child);
    // It refuses connections, then answers 503, while it starts.
    eventually_blocking("Prometheus to be ready", LIMIT, || {
        if let Ok(Some(status)) = server.0.try_wait() {
            let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
            panic!("prometheus ended ({status}):\n{log}");
        }
        matches!(get(port, "/-/ready"), Ok((200, _)))
    });
    (server, port)
}

/// The project's alerting rules.
fn alert_rules() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/prometheus/redlock-alerts.yml")
}

/// The alerts Prometheus has firing: (name, job).
fn firing(port: u16) -> Vec<(String, String)> {
    let (status, body) = get(port, "/api/v1/alerts").expect("the alerts API answers");
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    answer["data"]["alerts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["state"] == "firing")
        .map(|a| {
            let label = |k: &str| a["labels"][k].as_str().unwrap_or_default().to_string();
            (label("alertname"), label("job"))
        })
        .collect()
}

/// The value of an instant query that returns one series.
fn single_value(port: u16, promql: &str) -> Option<f64> {
    match query(port, promql).as_slice() {
        [one] => one["value"][1].as_str()?.parse().ok(),
        _ => None,
    }
}

/// Every `expr` of the dashboard (panels and template variables), with Grafana's variables
/// replaced as Grafana would: every job, a 1-minute rate window, a 1-hour range.
fn dashboard_exprs() -> Vec<String> {
    fn walk(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, item) in map {
                    match (key.as_str(), item) {
                        ("expr", Value::String(e)) => found.push(e.clone()),
                        ("query", Value::Object(q))
                            if q.get("query").is_some_and(Value::is_string) =>
                        {
                            found.push(q["query"].as_str().unwrap_or_default().to_string())
                        }
                        _ => walk(item, found),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, found)),
            _ => {}
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/grafana/redlock-library.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dashboard: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut found = Vec::new();
    walk(&dashboard, &mut found);
    found
        .iter()
        .map(|e| {
            e.replace("$job", ".*")
                .replace("$__rate_interval", "1m")
                .replace("$__range", "1h")
        })
        .collect()
}

fn encoded(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// What Prometheus answers to a dashboard query: the label values of a `label_values(metric,
/// label)` variable, else an instant query's series.
fn query(port: u16, promql: &str) -> Vec<Value> {
    let path = match promql
        .strip_prefix("label_values(")
        .and_then(|rest| rest.strip_suffix(')'))
        .and_then(|args| args.split_once(", "))
    {
        Some((metric, label)) => {
            format!("/api/v1/label/{label}/values?match[]={}", encoded(metric))
        }
        None => format!("/api/v1/query?query={}", encoded(promql)),
    };
    let (status, body) = get(port, &path).unwrap_or_else(|e| panic!("{promql}: {e}"));
    assert_eq!(status, 200, "{promql}: {body}");
    let answer: Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{promql}: {e}: {body}"));
    let data = &answer["data"];
    let found = data.get("result").unwrap_or(data);
    found
        .as_array()
        .unwrap_or_else(|| panic!("{promql}: {body}"))
        .clone()
}

/// One round of what a service does with the lock: a lock won, extended and released; a
/// contended one not acquired; a held one found lost by its extend (its keys deleted behind
/// its back). With master [`DOWN`] stopped, every request to it fails.
async fn one_round(masters: &LocalMasters, redlock: &Redlock, rival: &Redlock, round: usize) {
    let ttl = Duration::from_secs(10);
    let resource = format!("dash:{round}");
    let mut lock = redlock.acquire(&resource, ttl).await.expect("won");
    redlock.extend(&mut lock, ttl).await.expect("extended");
    redlock.release(&lock).await.expect("released");
    let err = rival
        .acquire("dash:busy", ttl)
        .await
        .expect_err("held by the other client");
    assert!(err.is_not_acquired(), "{err}");
    lose_a_lock(masters, redlock, &format!("dash:lost:{round}")).await;
}

/// A held lock found lost by its extend (its keys deleted behind its back).
async fn lose_a_lock(masters: &LocalMasters, redlock: &Redlock, resource: &str) {
    let ttl = Duration::from_secs(10);
    let mut lock = redlock.acquire(resource, ttl).await.expect("won");
    for master in 0..DOWN {
        common::del(masters, master, resource);
    }
    let err = redlock
        .extend(&mut lock, ttl)
        .await
        .expect_err("its keys are gone");
    assert!(err.is_lock_lost(), "{err}");
    // Nothing is left to release: not held.
    let _ = redlock.release(&lock).await;
}

/// The service's first lost lock: Prometheus, evaluating the project's rules every second,
/// raises `RedlockLocksLost`; `increase()` sees the loss (the counter was scraped at 0
/// before it) and the dashboard's *Locks lost* panel reads 1.
fn first_loss_pages(prometheus_port: u16, lost_panel: &str) {
    let increase = r#"sum(increase(redlock_locks_lost_total{job="svc"}[10m]))"#;
    eventually_blocking(
        "RedlockLocksLost firing after the first loss",
        LIMIT,
        || {
            firing(prometheus_port).contains(&("RedlockLocksLost".into(), "svc".into()))
                && single_value(prometheus_port, increase).is_some_and(|v| v > 0.0)
                && single_value(prometheus_port, lost_panel) == Some(1.0)
        },
    );
}

#[test]
fn every_dashboard_query_returns_series_from_a_service_using_the_lock() {
    let _alone = crate::ONE_PROVIDER_AT_A_TIME.blocking_lock();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");

    // ANCHOR: exporter
    // The Prometheus exporter is the meter provider's reader; install the provider before
    // building the client (a client takes its instruments from the global provider once).
    let registry = prometheus::Registry::new();
    let exporter = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()
        .expect("the exporter");
    let provider = SdkMeterProvider::builder().with_reader(exporter).build();
    opentelemetry::global::set_meter_provider(provider.clone());
    // Then serve `registry.gather()`, encoded by `prometheus::TextEncoder`, at /metrics.
    // ANCHOR_END: exporter
    let endpoint = MetricsEndpoint::serve(registry);
    let (_prometheus, prometheus_port) = start_prometheus(dir.path(), endpoint.port);

    let masters = LocalMasters::start_with_password(MASTERS, PASSWORD).expect("masters");
    let builder = || {
        Redlock::builder(masters.urls())
            .retry_count(0)
            .build()
            .expect("valid configuration")
    };
    let (redlock, rival) = runtime.block_on(async { (builder(), builder()) });
    // Served at 0 from the client's start, and scraped so before anything is lost: the first
    // loss is then an increase Prometheus can see.
    eventually_blocking("locks lost scraped at 0", LIMIT, || {
        single_value(prometheus_port, r#"redlock_locks_lost_total{job="svc"}"#) == Some(0.0)
    });
    masters.kill(DOWN).expect("stop a master");
    // Held for longer than the test may wait, so every round's rival finds it taken.
    let busy = runtime
        .block_on(redlock.acquire("dash:busy", 2 * LIMIT))
        .expect("won");

    let exprs = dashboard_exprs();
    assert!(exprs.len() >= 10, "{exprs:?}");
    let lost_panel = exprs
        .iter()
        .find(|e| e.contains("redlock_locks_lost_total"))
        .expect("a locks-lost panel")
        .clone();
    runtime.block_on(lose_a_lock(&masters, &redlock, "dash:first-loss"));
    first_loss_pages(prometheus_port, &lost_panel);
    let started = Instant::now();
    let mut round = 0;
    loop {
        round += 1;
        runtime.block_on(one_round(&masters, &redlock, &rival, round));
        let empty: Vec<&String> = exprs
            .iter()
            .filter(|e| query(prometheus_port, e).is_empty())
            .collect();
        if empty.is_empty() {
            break;
        }
        assert!(
            started.elapsed() < LIMIT,
            "after {round} rounds in {LIMIT:?}, these dashboard queries still return nothing: \
             {empty:#?}"
        );
        std::thread::sleep(POLL);
    }
    // The panel counts every loss: the first and one per round.
    let expected = Some(1.0 + round as f64);
    eventually_blocking("the locks-lost panel to count every loss", LIMIT, || {
        single_value(prometheus_port, &lost_panel) == expected
    });
    // Read while the endpoint serves: once a scrape fails, Prometheus marks its series stale.
    let series = query(prometheus_port, r#"{__name__=~"redlock_.*|db_client_.*"}"#);

    runtime.block_on(redlock.release(&busy)).expect("released");
    provider.shutdown().expect("shutdown");
    drop(endpoint);

    // The families are those the Python collector serves (no other name, none missing).
    let families: BTreeSet<&str> = series
        .iter()
        .filter_map(|s| s["metric"]["__name__"].as_str())
        .map(|name| {
            ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix))
                .filter(|family| FAMILIES.contains(family))
                .unwrap_or(name)
        })
        .collect();
    assert_eq!(families, BTreeSet::from(FAMILIES));
    // The failures name the stopped master by address and port, and why.
    let down = masters.port(DOWN).expect("its port").to_string();
    // Every master's failure series exist (at 0); those that counted are the stopped one's.
    let failures: Vec<&Value> = series
        .iter()
        .filter(|s| s["metric"]["__name__"] == "redlock_master_failures_total")
        .filter(|s| s["value"][1].as_str() != Some("0"))
        .collect();
    assert!(
        !failures.is_empty()
            && failures
                .iter()
                .all(|s| s["metric"]["server_port"] == down.as_str()
                    && s["metric"]["server_address"] == "127.0.0.1"
                    && s["metric"]["error_type"].is_string()),
        "{failures:#?}"
    );
    // No label holds a resource name or the password.
    for s in &series {
        for (label, value) in s["metric"].as_object().into_iter().flatten() {
            let value = value.as_str().unwrap_or_default();
            assert!(
                !value.contains("dash:") && !value.contains(PASSWORD),
                "{label}={value} in {s}"
            );
        }
    }
}
