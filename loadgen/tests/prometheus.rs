//! `run --prometheus ADDR`: the running figures in the Prometheus text format. A scrape taken
//! mid-run parses and serves every series the Grafana dashboard (`deploy/grafana`) queries, and
//! no other; a real Prometheus server (Debian's `prometheus`, installed by `make deps`)
//! scrapes a run and, after it, its query API returns the run's final figures. Masters are
//! password-protected and one is down, so per-master failures are served and the password is
//! checked to appear nowhere.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::closed_ports;
use redlock_loadgen::exporter::encode::METRIC_NAMES;
use redlock_local::{eventually_blocking, wait_for_exit, LocalMasters};
use serde_json::Value;

const PASSWORD: &str = "prom-s3cret-pw";

/// Generous bounds: the machine may have both cores busy with other work.
const LIMIT: Duration = Duration::from_secs(120);

/// A child process killed and reaped when the test ends, passed or not.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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

/// Three masters that need a password, and a fourth URL (with the password) where nothing
/// listens: the quorum of 3 is reached, and that master's requests fail.
fn masters() -> (LocalMasters, String, u16) {
    let masters = LocalMasters::start_with_password(3, PASSWORD).unwrap();
    let dead = closed_ports(1)[0];
    let mut urls = masters.urls();
    urls.push(format!("redis://:{PASSWORD}@127.0.0.1:{dead}"));
    (masters, urls.join(","), dead)
}

/// Starts a run serving its figures on `port`; its output goes to files in `dir`.
fn start_run(dir: &Path, masters: &str, port: u16, extra: &[&str]) -> Killed {
    let mut args = vec![
        "run".to_string(),
        "--masters".into(),
        masters.into(),
        "--fanout".into(),
        "concurrent".into(),
        "--prometheus".into(),
        format!("127.0.0.1:{port}"),
        "--quiet".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let child = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(&args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .expect("the binary runs");
    Killed(child)
}

/// One sample line: (name, labels, value).
fn parse_sample(line: &str) -> (String, BTreeMap<String, String>, f64) {
    let (series, value) = line.rsplit_once(' ').expect("a sample has a value");
    let value: f64 = value
        .parse()
        .unwrap_or_else(|_| panic!("not a number in {line:?}"));
    let (name, labels) = match series.split_once('{') {
        Some((name, rest)) => {
            let rest = rest.strip_suffix('}').expect("labels end with }");
            let labels = rest
                .split("\",")
                .filter(|p| !p.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
                    (k.to_string(), v.trim_end_matches('"').to_string())
                })
                .collect();
            (name.to_string(), labels)
        }
        None => (series.to_string(), BTreeMap::new()),
    };
    (name, labels, value)
}

/// A scrape, checked as the text format: every family has HELP and TYPE lines before its
/// samples, every sample parses, histograms are cumulative with `+Inf` = `_count`. Returns the
/// samples.
fn parse_exposition(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let mut typed = BTreeMap::new();
    let mut helped = BTreeSet::new();
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            helped.insert(rest.split(' ').next().unwrap().to_string());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            typed.insert(name.to_string(), kind.to_string());
        } else {
            let sample = parse_sample(line);
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| {
                    sample
                        .0
                        .strip_suffix(s)
                        .filter(|f| typed.get(*f).is_some_and(|k| k == "histogram"))
                })
                .unwrap_or(&sample.0)
                .to_string();
            assert!(
                typed.contains_key(&family) && helped.contains(&family),
                "{line:?} comes before its family's HELP and TYPE"
            );
            samples.push(sample);
        }
    }
    for name in METRIC_NAMES {
        assert!(typed.contains_key(name), "no # TYPE for {name}:\n{text}");
    }
    assert_eq!(typed["redlock_attempts_total"], "counter");
    assert_eq!(typed["redlock_acquire_duration_seconds"], "histogram");
    assert_eq!(typed["redlock_loadgen_generator_cpu_ratio"], "gauge");
    // Histograms: per series, buckets rise with `le` and the +Inf bucket is the count.
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut counts = BTreeMap::new();
    for (name, labels, value) in &samples {
        let mut key_labels = labels.clone();
        let le = key_labels.remove("le");
        let key = |family: &str| format!("{family}{key_labels:?}");
        if let (Some(family), Some(le)) = (name.strip_suffix("_bucket"), le) {
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            series.entry(key(family)).or_default().push((le, *value));
        } else if let Some(family) = name.strip_suffix("_count") {
            counts.insert(key(family), *value);
        }
    }
    for (key, buckets) in &series {
        assert!(
            buckets
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
            "{key}: buckets not cumulative: {buckets:?}"
        );
        let (le, last) = buckets.last().unwrap();
        assert!(le.is_infinite(), "{key}: no +Inf bucket");
        assert_eq!(
            Some(last),
            counts.get(key),
            "{key}: +Inf bucket is not _count"
        );
    }
    samples
}

fn value_of(
    samples: &[(String, BTreeMap<String, String>, f64)],
    name: &str,
    label: (&str, &str),
) -> f64 {
    samples
        .iter()
        .filter(|(n, l, _)| n == name && l.get(label.0).is_some_and(|v| v == label.1))
        .map(|(_, _, v)| v)
        .sum()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `expr` of the dashboard (panels and template variables).
fn dashboard_exprs() -> Vec<String> {
    fn walk(v: &Value, found: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("expr", Value::String(e)) => found.push(e.clone()),
                        ("query", Value::Object(q)) => {
                            if let Some(Value::String(e)) = q.get("query") {
                                found.push(e.clone());
                            }
                        }
                        _ => walk(v, found),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, found)),
            _ => {}
        }
    }
    let path = repo().join("deploy/grafana/redlock-loadgen.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let dashboard: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut found = Vec::new();
    walk(&dashboard, &mut found);
    found
}

/// The `redlock_…` identifiers of an expression: metric and label names.
fn redlock_identifiers(expr: &str) -> BTreeSet<String> {
    expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("redlock_"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_scrape_mid_run_parses_and_serves_exactly_what_the_dashboard_queries() {
    let dir = tempfile::tempdir().unwrap();
    let (_masters, urls, dead) = masters();
    let port = closed_ports(1)[0];
    // Long enough to be scraped mid-run; the test stops it once it has looked.
    let mut run = start_run(
        dir.path(),
        &urls,
        port,
        &["--rate", "200", "--warmup", "200ms", "--duration", "5m"],
    );
    let mut text = String::new();
    eventually_blocking(
        "a scrape showing an acquired lock and a failed request",
        LIMIT,
        || {
            if let Ok(Some(status)) = run.0.try_wait() {
                panic!(
                    "the run ended early ({status}): {}",
                    std::fs::read_to_string(dir.path().join("stderr")).unwrap()
                );
            }
            let Ok((200, body)) = get(port, "/metrics") else {
                return false;
            };
            text = body;
            let samples = parse_exposition(&text);
            value_of(
                &samples,
                "redlock_acquire_duration_seconds_count",
                ("redlock_outcome", "acquired"),
            ) > 0.0
                && value_of(
                    &samples,
                    "redlock_master_failures_total",
                    ("server_port", &dead.to_string()),
                ) > 0.0
        },
    );
    assert!(
        run.0.try_wait().unwrap().is_none(),
        "the run is still going"
    );
    let samples = parse_exposition(&text);
    assert!(
        samples.iter().any(|(n, _, _)| n.ends_with("_bucket")),
        "{text}"
    );
    assert!(!text.contains(PASSWORD), "the password is served:\n{text}");
    assert!(
        value_of(
            &samples,
            "redlock_attempts_total",
            ("redlock_attempt_result", "won")
        ) > 0.0
    );
    assert!(
        value_of(
            &samples,
            "redlock_loadgen_start_lag_seconds_count",
            ("redlock_fanout", "concurrent")
        ) > 0.0
    );
    for (name, labels, _) in &samples {
        assert_eq!(
            labels.get("redlock_lock").map(String::as_str),
            Some("redlock"),
            "{name}"
        );
    }
    let failure = samples
        .iter()
        .find(|(n, _, _)| n == "redlock_master_failures_total")
        .unwrap();
    assert_eq!(failure.1["server_address"], "127.0.0.1");
    assert_eq!(failure.1["server_port"], dead.to_string());
    assert_eq!(failure.1["error_type"], "connection");

    // The dashboard reads only series (and labels) this scrape serves, and shows every family.
    let served: BTreeSet<&str> = samples.iter().map(|(n, _, _)| n.as_str()).collect();
    let labels: BTreeSet<&str> = samples
        .iter()
        .flat_map(|(_, l, _)| l.keys().map(String::as_str))
        .collect();
    let used: BTreeSet<String> = dashboard_exprs()
        .iter()
        .flat_map(|e| redlock_identifiers(e))
        .collect();
    for name in &used {
        assert!(
            served.contains(name.as_str()) || labels.contains(name.as_str()),
            "the dashboard queries {name}, which is neither a series nor a label served"
        );
    }
    for family in METRIC_NAMES {
        assert!(
            used.iter().any(|u| u.starts_with(family)),
            "the dashboard shows nothing of {family}"
        );
    }

    // Anything else than GET /metrics is a 404.
    assert_eq!(get(port, "/other").unwrap().0, 404);
    // A signal ends the run (and the server with it).
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    unsafe { libc::kill(run.0.id() as i32, libc::SIGTERM) };
    wait_for_exit(&mut run.0, "the run after SIGTERM", LIMIT);
    assert!(
        get(port, "/metrics").is_err(),
        "the server outlived the run"
    );
}

#[test]
fn addresses_that_cannot_be_listened_on_are_named() {
    let (_, stderr) = common::exits(2, &["run", "--prometheus", "127.0.0.1:99999"]);
    assert!(
        stderr.contains("\"127.0.0.1:99999\"") && stderr.contains("0 to 65535"),
        "{stderr}"
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let (_, stderr) = common::exits(2, &["run", "--prometheus", &address]);
    assert!(
        stderr.contains(&format!("--prometheus {address}: cannot listen there")),
        "{stderr}"
    );
    let (_, stderr) = common::exits(2, &["run", "--prometheus-linger", "5s"]);
    assert!(stderr.contains("--prometheus"), "{stderr}");
}

/// The `prometheus` command, or a failure saying how to install it.
fn prometheus() -> &'static str {
    let found = Command::new("prometheus").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "prometheus is not installed: `make deps-prometheus` installs it"
    );
    "prometheus"
}

/// A PromQL instant query's results: (labels, value).
fn query(port: u16, promql: &str) -> Vec<(BTreeMap<String, String>, f64)> {
    let encoded: String = url::form_urlencoded::byte_serialize(promql.as_bytes()).collect();
    let (status, body) = get(port, &format!("/api/v1/query?query={encoded}")).unwrap();
    assert_eq!(status, 200, "{promql}: {body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    answer["data"]["result"]
        .as_array()
        .unwrap_or_else(|| panic!("{promql}: {body}"))
        .iter()
        .map(|r| {
            let labels = r["metric"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
            let value = r["value"][1].as_str().unwrap().parse().unwrap();
            (labels, value)
        })
        .collect()
}

/// The one value of a query that must return one series.
fn scalar(port: u16, promql: &str) -> f64 {
    let results = query(port, promql);
    assert_eq!(results.len(), 1, "{promql}: {results:?}");
    results[0].1
}

#[test]
fn a_real_prometheus_scrapes_a_run_and_holds_its_final_figures() {
    let prometheus = prometheus();
    let dir = tempfile::tempdir().unwrap();
    let (_masters, urls, dead) = masters();
    let ports = closed_ports(2);
    let (loadgen_port, prometheus_port) = (ports[0], ports[1]);
    // The book's configuration (deploy/prometheus), pointed at this run, scraping every 2 s
    // (the scrape timeout is as long: a scrape of the final figures on a busy machine must
    // not be dropped after the run counted it as collected).
    let documented =
        std::fs::read_to_string(repo().join("deploy/prometheus/prometheus.yml")).unwrap();
    assert!(documented.contains("'127.0.0.1:9464'") && documented.contains("scrape_interval: 5s"));
    let config = dir.path().join("prometheus.yml");
    // The rules it loads, beside it as in deploy/prometheus.
    std::fs::copy(
        repo().join("deploy/prometheus/redlock-alerts.yml"),
        dir.path().join("redlock-alerts.yml"),
    )
    .unwrap();
    std::fs::write(
        &config,
        documented
            .replace("'127.0.0.1:9464'", &format!("'127.0.0.1:{loadgen_port}'"))
            .replace("scrape_interval: 5s", "scrape_interval: 2s"),
    )
    .unwrap();
    let server = Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
        .spawn()
        .expect("prometheus starts");
    let _server = Killed(server);
    eventually_blocking("prometheus ready", LIMIT, || {
        matches!(get(prometheus_port, "/-/ready"), Ok((200, _)))
    });
    // It loaded the rules the configuration names.
    let (_, rules) = get(prometheus_port, "/api/v1/rules").unwrap();
    assert!(rules.contains("RedlockLocksLost"), "{rules}");

    let json = dir.path().join("result.json");
    let mut run = start_run(
        dir.path(),
        &urls,
        loadgen_port,
        &[
            "--rate",
            "200",
            "--warmup",
            "200ms",
            "--duration",
            "4s",
            // Time for Prometheus to collect the final figures once the run is over.
            "--prometheus-linger",
            "90s",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    eventually_blocking("Prometheus's first scrape of the run", LIMIT, || {
        query(prometheus_port, "up{job=\"redlock-loadgen\"} == 1").len() == 1
    });
    let status = wait_for_exit(&mut run.0, "the run and its linger", LIMIT);
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("no scrape collected"), "{stderr}");

    // Prometheus holds what the report says (the run's final figures), read past the
    // staleness that followed the server's stop.
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // Its intervals hold start lags and the dead master's failures: the schema knows them.
    common::assert_schema_valid(&result);
    let intervals = result["modes"][0]["intervals"].as_array().unwrap();
    assert!(intervals.iter().any(|i| i.get("start_lag_hdr").is_some()));
    assert!(intervals.iter().any(|i| i.get("failures").is_some()));
    let counts = &result["modes"][0]["counts"];
    let last = |expr: &str| format!("sum(last_over_time({expr}[10m]))");
    let attempts = counts["attempts"].as_f64().unwrap();
    eventually_blocking("Prometheus storing the final scrape", LIMIT, || {
        query(prometheus_port, &last("redlock_attempts_total"))
            .first()
            .is_some_and(|r| r.1 == attempts)
    });
    assert!(attempts > 0.0);
    assert_eq!(
        scalar(
            prometheus_port,
            &last("redlock_acquire_duration_seconds_count")
        ),
        counts["acquire_calls"].as_f64().unwrap()
    );
    assert_eq!(
        scalar(
            prometheus_port,
            &last("redlock_acquire_duration_seconds_count{redlock_outcome=\"acquired\"}")
        ),
        counts["acquired"].as_f64().unwrap()
    );
    assert!(
        scalar(
            prometheus_port,
            &last("redlock_attempts_total{redlock_attempt_result=\"won\"}")
        ) > 0.0
    );
    assert!(
        scalar(
            prometheus_port,
            &last("redlock_loadgen_generator_cpu_ratio")
        ) > 0.0
    );
    assert!(
        scalar(
            prometheus_port,
            &last("redlock_loadgen_start_lag_seconds_count")
        ) > 0.0
    );
    assert_eq!(
        scalar(
            prometheus_port,
            &last("redlock_loadgen_mutual_exclusion_violations_total")
        ),
        0.0
    );
    let dead_master = result["modes"][0]["masters"][3]["errors"].as_f64().unwrap();
    assert!(dead_master > 0.0);
    assert_eq!(
        scalar(
            prometheus_port,
            &last(&format!(
                "redlock_master_failures_total{{server_port=\"{dead}\",error_type=\"connection\"}}"
            ))
        ),
        dead_master
    );
    // The buckets give quantiles (what the dashboard draws).
    let p99 = scalar(
        prometheus_port,
        "histogram_quantile(0.99, sum by (le) (last_over_time(redlock_acquire_duration_seconds_bucket[10m])))",
    );
    assert!(p99 > 0.0 && p99.is_finite(), "{p99}");
    // No label of any series holds the password.
    let encoded: String =
        url::form_urlencoded::byte_serialize(b"{__name__=~\"redlock_.*\"}").collect();
    let (status, series) = get(
        prometheus_port,
        &format!("/api/v1/series?match[]={encoded}"),
    )
    .unwrap();
    assert_eq!(status, 200, "{series}");
    assert!(
        series.contains("redlock_attempts_total") && !series.contains(PASSWORD),
        "{series}"
    );
}
