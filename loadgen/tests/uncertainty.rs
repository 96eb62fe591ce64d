//! Figures with their intervals, thresholds and `compare`, on real local masters.

mod common;

use common::{assert_schema_valid, exits, read_json, text};
use redlock_local::LocalMasters;

/// A threshold no run can meet (no acquire takes less than 1 µs) exits 4, after a report and
/// a JSON result that list every threshold with its verdict; met thresholds exit 0.
#[test]
fn a_threshold_not_met_exits_4_and_the_result_carries_every_verdict() {
    let masters = LocalMasters::start(3).expect("redis-server is installed");
    let urls = masters.urls().join(",");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let base = [
        "run",
        "--masters",
        &urls,
        "--fanout",
        "concurrent",
        "--clients",
        "4",
        "--duration",
        "600ms",
        "--warmup",
        "100ms",
        "--interval",
        "100ms",
    ];
    let mut failing = base.to_vec();
    failing.extend([
        "--threshold",
        "acquire.p99<1us",
        "--threshold",
        "violations==0",
        "--json",
        json.to_str().unwrap(),
    ]);
    let (stdout, stderr) = exits(4, &failing);
    assert!(
        stdout.contains("FAIL") && stdout.contains("acquire.p99<1us"),
        "{stdout}"
    );
    assert!(stderr.contains("1 threshold(s) not met"), "{stderr}");
    let result = read_json(&json);
    assert_schema_valid(&result);
    let verdicts = result["thresholds"]
        .as_array()
        .expect("thresholds in the JSON");
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert_eq!(verdicts[0]["expr"], "acquire.p99<1us");
    assert_eq!(verdicts[0]["passed"], false);
    assert!(verdicts[0]["measured"]["value"].as_f64().unwrap() >= 1.0);
    assert_eq!(verdicts[1]["passed"], true);

    let mut passing = base.to_vec();
    passing.extend([
        "--threshold",
        "violations==0",
        "--threshold",
        "acquire.p99<1000s",
    ]);
    let out = common::loadgen(&passing);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("FAIL"));
}

/// A `.ratio` threshold belongs to `compare`: `run` refuses it as a usage error.
#[test]
fn a_ratio_threshold_on_run_is_a_usage_error() {
    let (_, stderr) = exits(2, &["run", "--threshold", "goodput.ratio>=0.9"]);
    assert!(
        stderr.contains("goodput.ratio>=0.9") && stderr.contains("compare"),
        "{stderr}"
    );
}
