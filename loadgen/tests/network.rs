//! `--rtt`: the network distance a proxy process adds between the generator and its local
//! masters, what it does to each fan-out mode, and what the proxy itself cost.

use crate::common;

use common::*;
use serde_json::Value;

/// Runs both fan-out modes with `extra` flags; returns the result and the text report.
fn run_with(dir: &std::path::Path, extra: &[&str]) -> (Value, String) {
    let json = dir.join("network.json");
    let mut args = vec![
        "run",
        "--resources",
        "1000",
        "--clients",
        "4",
        "--warmup",
        "200ms",
        "--duration",
        "1s",
        "--json",
        s(&json),
    ];
    args.extend_from_slice(extra);
    let (stdout, _) = exits(0, &args);
    let v = read_json(&json);
    assert_schema_valid(&v);
    (v, stdout)
}

fn mode<'a>(v: &'a Value, fanout: &str) -> &'a Value {
    v["modes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["fanout"] == fanout)
        .unwrap_or_else(|| panic!("no {fanout} mode"))
}

fn us(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn a_round_trip_costs_sequential_fan_out_five_times_and_concurrent_once() {
    let dir = tempfile::tempdir().unwrap();
    let (v, stdout) = run_with(dir.path(), &["--rtt", "2ms"]);
    let network = &v["network"];
    assert_eq!(network["profile"], "2ms");
    assert_eq!(
        network["rtt_ms"],
        serde_json::json!([2.0, 2.0, 2.0, 2.0, 2.0])
    );
    assert!(f(network, "proxy_cpu_s") > 0.0, "{network}");
    assert!(stdout.contains(
        "network    2ms: 2 ms ± 0 ms to every master's round trip added through a proxy; its proxy process used "
    ), "{stdout}");
    for fanout in ["sequential", "concurrent"] {
        // Every master's answers came at least one added round trip later.
        for m in mode(&v, fanout)["masters"].as_array().unwrap() {
            let p50 = us(&m["round_trip"]["p50_us"]);
            assert!(
                p50 >= 2000.0,
                "{fanout} m{}: round trip p50 {p50} µs",
                m["index"]
            );
        }
    }
    let attempt = |fanout: &str| us(&mode(&v, fanout)["latency"]["attempt"]["p50_us"]);
    let (sequential, concurrent) = (attempt("sequential"), attempt("concurrent"));
    // Sequential asks the five masters one after the other: five round trips at least.
    assert!(
        sequential >= 5.0 * 2000.0,
        "sequential attempt p50 {sequential} µs"
    );
    // Concurrent asks them at once: one round trip, however many masters.
    assert!(
        concurrent >= 2000.0,
        "concurrent attempt p50 {concurrent} µs"
    );
    // Sequential waits four round trips more than concurrent (three asserted, for margin).
    // Taken as a difference, not a ratio: a busy machine's scheduling delays add to every
    // attempt alike (to sequential's five waits more), which a ratio would let shrink.
    assert!(
        sequential - concurrent >= 3.0 * 2000.0,
        "concurrent {concurrent} µs against sequential {sequential} µs"
    );
}

#[test]
fn a_latency_fault_acts_on_top_of_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (v, _) = run_with(
        dir.path(),
        &[
            // Sequential fan-out awaits every master (concurrent leaves the slowest unawaited).
            "--fanout",
            "sequential",
            "--rtt",
            "1ms",
            "--fault",
            "latency:m0:5ms@0s",
        ],
    );
    let masters = mode(&v, "sequential")["masters"].as_array().unwrap();
    let p50 = |i: usize| us(&masters[i]["round_trip"]["p50_us"]);
    // m0 behind both proxies: the profile's round trip and the fault's delay.
    assert!(p50(0) >= 6000.0, "m0 round trip p50 {} µs", p50(0));
    assert!(
        p50(1) >= 1000.0 && p50(1) < p50(0),
        "m1 {} µs, m0 {} µs",
        p50(1),
        p50(0)
    );
}

#[test]
fn bad_profiles_exit_2_naming_the_value() {
    let (_, stderr) = exits(2, &["run", "--rtt", "far"]);
    assert!(
        stderr.contains("\"far\"") && stderr.contains("same-zone, cross-zone"),
        "{stderr}"
    );
    let (_, stderr) = exits(2, &["run", "--rtt", "1ms,2ms", "--duration", "1s"]);
    assert!(stderr.contains("2 round trips for 5 masters"), "{stderr}");
    let (_, stderr) = exits(
        2,
        &[
            "run",
            "--rtt",
            "same-zone",
            "--masters",
            "redis://127.0.0.1:1",
        ],
    );
    assert!(stderr.contains("--rtt"), "{stderr}");
}

#[test]
fn loopback_adds_no_proxy_and_the_report_points_at_rtt() {
    let dir = tempfile::tempdir().unwrap();
    let (v, stdout) = run_with(dir.path(), &["--fanout", "concurrent", "--rtt", "loopback"]);
    assert!(v.get("network").is_none(), "{}", v["network"]);
    assert!(
        stdout.contains("network    loopback (about 50 µs round trips); for masters at a real network distance add --rtt same-zone"),
        "{stdout}"
    );
}

#[test]
fn runs_at_different_network_distances_do_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let (near, far) = (dir.path().join("near"), dir.path().join("far"));
    std::fs::create_dir_all(&near).unwrap();
    std::fs::create_dir_all(&far).unwrap();
    run_with(&near, &["--fanout", "concurrent"]);
    run_with(&far, &["--fanout", "concurrent", "--rtt", "1ms"]);
    let (a, b) = (near.join("network.json"), far.join("network.json"));
    let (_, stderr) = exits(2, &["merge", s(&a), s(&b), "--allow-disjoint"]);
    assert!(
        stderr.contains("in network: nothing added vs 1ms"),
        "{stderr}"
    );
}

#[test]
fn a_capacity_answer_reproduces_at_the_same_distance() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("capacity.json");
    let mut args = vec!["capacity", "--rtt", "1ms"];
    args.extend(lax_search("1", "1s"));
    args.extend(["-q", "--json", s(&json)]);
    let out = loadgen(&args);
    let v = read_json(&json);
    let reproduce = v["answers"][0]["reproduce"].as_str().unwrap();
    assert!(
        reproduce.contains(" --rtt 1ms "),
        "{reproduce}\n{}",
        text(&out.stderr)
    );
}
