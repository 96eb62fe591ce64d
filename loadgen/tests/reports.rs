//! The reports people look at: a run's `--html` renders in a real browser with its charts
//! (the fault window shaded and named), `report` renders the saved result again, `--hlog` is
//! read back by HdrHistogram's own `HistogramLogProcessor` with the JSON's totals, and the
//! reports of `sweep` and `capacity` render too. Screenshots are kept under
//! target/tmp/report-screenshots/.

use crate::common;

use common::browser::{check_in_browser, log_processor_total};
use common::*;

#[test]
fn a_run_with_a_fault_writes_an_html_report_a_browser_renders_and_an_hlog_with_the_json_totals() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str| dir.path().join(name);
    let (json, html, hlog, again) = (
        file("r.json"),
        file("r.html"),
        file("r.hlog"),
        file("again.html"),
    );
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (json_s, html_s, hlog_s, again_s) = (s(&json), s(&html), s(&hlog), s(&again));
    succeed(&[
        "run",
        "--spawn",
        "5",
        "--clients",
        "4",
        "--duration",
        "2s",
        "--warmup",
        "200ms",
        "--interval",
        "500ms",
        "--fault",
        "kill:1@1s",
        "-q",
        "--json",
        &json_s,
        "--html",
        &html_s,
        "--hlog",
        &hlog_s,
    ]);
    let result = read_json(&json);
    assert_schema_valid(&result);
    assert_eq!(result["schema_version"], 4);
    let modes = result["modes"].as_array().unwrap();
    for mode in modes {
        assert_eq!(u(mode, "interval_ms"), 500);
        let intervals = mode["intervals"].as_array().unwrap();
        assert!(
            !intervals.is_empty() && intervals.iter().all(|i| u(i, "index") < 4),
            "2 s in 500 ms intervals: {intervals:?}"
        );
        assert_consistent(mode, 5, 4);
    }

    // The interval log, read by HdrHistogram's own processor: untagged, every acquire call.
    let acquires: u64 = modes
        .iter()
        .map(|m| u(&m["latency"]["acquire"], "count"))
        .sum();
    assert!(acquires > 0);
    assert_eq!(log_processor_total(&hlog, None), acquires);
    let concurrent = modes.iter().find(|m| m["fanout"] == "concurrent").unwrap();
    for what in ["attempt", "release"] {
        assert_eq!(
            log_processor_total(&hlog, Some(&format!("concurrent.{what}"))),
            u(&concurrent["latency"][what], "count"),
            "concurrent.{what}"
        );
    }
    let sequential = modes.iter().find(|m| m["fanout"] == "sequential").unwrap();
    assert_eq!(
        log_processor_total(&hlog, Some("sequential.round_trip.m4")),
        u(&sequential["masters"][4]["round_trip"], "count")
    );

    // Over time (throughput, one latency chart per mode), three spectra.
    let dom = check_in_browser(&html, "run", 6);
    // The fault window is shaded and named on the over-time charts.
    let over_time = dom.split("<h2>Latency by percentile").next().unwrap();
    assert!(
        over_time.matches("kill:1@1s").count() >= 3,
        "the fault is named on every over-time chart"
    );
    assert!(dom.contains("Mutual exclusion held"));

    // The saved result renders again.
    let out = succeed(&["report", &json_s, "--html", &again_s]);
    assert!(out.contains("concurrent ÷ sequential"), "{out}");
    let again_dom = check_in_browser(&again, "report", 6);
    assert!(again_dom.contains(result["run_id"].as_str().unwrap()));
}

#[test]
fn the_reports_of_a_sweep_a_capacity_search_and_the_scenarios_render_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios.html");
    let (sweep, capacity) = (
        dir.path().join("sweep.html"),
        dir.path().join("capacity.html"),
    );
    succeed(&[
        "sweep",
        "--spawn",
        "3",
        "--clients",
        "1,4",
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
        "--html",
        sweep.to_str().unwrap(),
    ]);
    let dom = check_in_browser(&sweep, "sweep", 2);
    assert!(dom.contains("Sweep: throughput at each level"));
    // Whether a step meets the objective depends on the machine: the page is checked either way.
    let out = loadgen(&[
        "capacity",
        // Mechanics at low rates: the percentiles may rest on few calls.
        "--min-calls",
        "1",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--slo",
        "p99<5s",
        "--min-success",
        "50%",
        "--start-rate",
        "200",
        "--max-rate",
        "400",
        "--max-steps",
        "3",
        "--clients",
        "32",
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
        "--html",
        capacity.to_str().unwrap(),
    ]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
    let dom = check_in_browser(&capacity, "capacity", 1);
    assert!(dom.contains("Steps against the objective"));

    succeed(&[
        "scenarios",
        "--only",
        "2 killed",
        "--fanout",
        "concurrent",
        "--quiet",
        "--html",
        scenarios.to_str().unwrap(),
    ]);
    let dom = check_in_browser(&scenarios, "scenarios", 1);
    assert!(
        dom.contains("2 killed") && dom.contains("kill:2@"),
        "the fault is named"
    );
}

/// 2 clients cannot start a million acquires a second: the page says the figures measure the
/// generator, in a warning right below the answer.
#[test]
fn a_generator_bound_run_is_flagged_at_the_top_of_its_html_report() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("bound.html");
    succeed(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--rate",
        "1000000",
        "--clients",
        "2",
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
        "--html",
        html.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&html).unwrap();
    let top = page.split("<h2>").next().unwrap();
    assert!(
        top.contains("class=\"warn\"") && top.contains("GENERATOR-BOUND"),
        "{top}"
    );
}
