//! Every HTML page renders hostile text as text. Real runs against local masters write their
//! results; strings holding `<script>`, `</svg>`, quotes and `&` are then planted in every
//! text field of the JSON that `report` shows as written (fault labels, master URLs, the
//! command line, merge provenance, a sweep's level names, a capacity search's answers), it
//! renders the page again, and headless Chromium must show each string as text, with no
//! element injected and every chart whole. The scenarios page, which no JSON feeds, gets
//! its strings planted in a real scenario's outcome before it is rendered.

use crate::common;

use std::path::Path;

use common::browser::check_in_browser;
use common::*;
use serde_json::Value;

/// A planted string, told apart by `tag`: it tries to open a script, to close the chart's
/// SVG, to break out of an attribute and to start an entity.
fn hostile(tag: &str) -> String {
    format!("{tag}<script>alert(1)</script></svg><b>\"x\" 'y' &amp; &</b>")
}

/// How Chromium's DOM serialises text `s` (quotes stay as they are in text).
fn as_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders `page` in Chromium and checks every planted string shows as text and nothing was
/// injected: no script, no `<b>` of ours, one whole SVG per chart.
fn assert_renders_as_text(page: &Path, name: &str, min_charts: usize, tags: &[&str]) {
    let dom = check_in_browser(page, name, min_charts);
    for tag in tags {
        assert!(
            dom.contains(&as_text(&hostile(tag))),
            "{name}: the planted {tag} string is not shown as text"
        );
    }
    assert!(!dom.contains("<script"), "{name}: a script element exists");
    assert!(
        !dom.contains("<b>\"x\""),
        "{name}: an injected element exists"
    );
    let charts = dom.matches("<div class=\"chart\">").count();
    assert_eq!(dom.matches("<svg").count(), charts, "{name}: <svg> count");
    assert_eq!(
        dom.matches("</svg>").count(),
        charts,
        "{name}: </svg> count"
    );
}

/// Plants `hostile(tag)` at every `(tag, pointer)` of `result`.
fn plant(result: &mut Value, places: &[(&str, String)]) {
    for (tag, pointer) in places {
        *result
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}: not in the result")) = hostile(tag).into();
    }
}

/// What a result's header and configuration carry, wherever the result sits (`at`).
fn header_places(at: &str) -> Vec<(&'static str, String)> {
    vec![
        ("COMMAND", format!("{at}/config/command_line")),
        ("URL", format!("{at}/masters/0/url")),
        ("SERVER", format!("{at}/masters/1/redis_version")),
    ]
}

#[test]
fn a_run_report_shows_planted_text_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("run.json"), dir.path().join("run.html"));
    succeed(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--clients",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "100ms",
        "--interval",
        "250ms",
        "--fault",
        "kill:1@300ms",
        "-q",
        "--json",
        s(&json),
    ]);
    let mut result = read_json(&json);
    let mut places = header_places("");
    places.extend([
        ("FAULT", "/faults/0/fault".to_string()),
        ("ACTION", "/faults/0/action".to_string()),
    ]);
    result["merged_from"] = vec![hostile("MERGED")].into();
    result["merge_notes"] = vec![hostile("NOTE")].into();
    plant(&mut result, &places);
    std::fs::write(&json, result.to_string()).unwrap();
    succeed(&["report", s(&json), "--html", s(&html)]);
    let tags = [
        "COMMAND", "URL", "SERVER", "FAULT", "ACTION", "MERGED", "NOTE",
    ];
    assert_renders_as_text(&html, "hostile-run", 3, &tags);
}

#[test]
fn a_sweep_report_shows_planted_text_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("sweep.json"), dir.path().join("sweep.html"));
    succeed(&[
        "sweep",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--clients",
        "1,2",
        "--duration",
        "300ms",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        s(&json),
    ]);
    let mut result = read_json(&json);
    let mut places = header_places("/levels/0/result");
    places.push(("LEVEL", "/levels/1/level".to_string()));
    plant(&mut result, &places);
    std::fs::write(&json, result.to_string()).unwrap();
    succeed(&["report", s(&json), "--html", s(&html)]);
    let tags = ["COMMAND", "URL", "SERVER", "LEVEL"];
    assert_renders_as_text(&html, "hostile-sweep", 2, &tags);
}

#[test]
fn a_capacity_report_shows_planted_text_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("cap.json"), dir.path().join("cap.html"));
    // Whether a step meets the objective depends on the machine: exit 0 or 1 both write it.
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
        "1%",
        "--start-rate",
        "100",
        "--max-rate",
        "200",
        "--max-steps",
        "2",
        "--clients",
        "8",
        "--duration",
        "300ms",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        s(&json),
    ]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
    let mut result = read_json(&json);
    let mut places = header_places("/steps/0/result");
    places.extend([
        ("STATEMENT", "/answers/0/statement".to_string()),
        ("REPRODUCE", "/answers/0/reproduce".to_string()),
    ]);
    plant(&mut result, &places);
    // The fan-out names the answer, its steps and the plot's lines: planted in all of them.
    let fanout = hostile("FANOUT");
    result["answers"][0]["fanout"] = fanout.clone().into();
    for step in result["steps"].as_array_mut().unwrap() {
        step["fanout"] = fanout.clone().into();
        step["passed"] = false.into();
        step["failures"] = vec![hostile("FAILURE")].into();
    }
    std::fs::write(&json, result.to_string()).unwrap();
    succeed(&["report", s(&json), "--html", s(&html)]);
    let tags = [
        "COMMAND",
        "URL",
        "SERVER",
        "STATEMENT",
        "REPRODUCE",
        "FANOUT",
        "FAILURE",
    ];
    assert_renders_as_text(&html, "hostile-capacity", 1, &tags);
}

#[test]
fn the_scenarios_page_shows_planted_text_as_text() {
    let mut outcome = passing_scenario("2 killed");
    outcome.scenario = hostile("SCENARIO");
    outcome.command = hostile("COMMAND");
    outcome.expected = hostile("EXPECTED");
    outcome.passed = false;
    outcome.reason = hostile("REASON");
    for event in outcome.faults.iter_mut().chain(&mut outcome.result.faults) {
        event.fault = hostile("FAULT");
    }
    let header = outcome.result.header.clone();
    let page = redlock_loadgen::render::html::scenarios_page(
        &redlock_loadgen::model::scenarios::ScenariosResult {
            header,
            rows: vec![outcome],
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("scenarios.html");
    std::fs::write(&html, page).unwrap();
    let tags = ["SCENARIO", "COMMAND", "EXPECTED", "REASON", "FAULT"];
    assert_renders_as_text(&html, "hostile-scenarios", 1, &tags);
}
