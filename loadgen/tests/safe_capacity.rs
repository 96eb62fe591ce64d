//! `capacity --fault`: every step of the search runs under the same fault schedule, a step
//! with a safety violation never passes, and the answer names the schedule — a safe capacity,
//! or "no safe rate" when the lock was unsafe at every rate tried.

use crate::common;

use common::*;
use serde_json::Value;

/// The steps of a result (or of its baseline) as an array.
fn steps(v: &Value) -> &Vec<Value> {
    v["steps"].as_array().expect("steps")
}

#[test]
fn a_search_under_a_killed_master_answers_a_safe_capacity_beside_its_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("safe.json"), dir.path().join("safe.html"));
    // Each step 2 s, at most 2 per search.
    let mut args = vec!["capacity", "--fault", "kill:m4@1s", "--baseline"];
    args.extend(lax_search("2", "2s"));
    args.extend(["--json", s(&json), "--html", s(&html)]);
    let (stdout, _) = exits(0, &args);
    let v = read_json(&json);
    assert_schema_valid(&v);
    assert_eq!(v["faults"], serde_json::json!(["kill:m4@1s"]));
    assert_eq!(v["faults_words"], "m4 killed at 1s");
    // Every step ran under the schedule: m4 killed 1 s into its own measured window.
    for step in steps(&v) {
        let result = &step["result"];
        assert_eq!(
            result["config"]["faults"], v["faults"],
            "{}",
            step["rate_asked_per_s"]
        );
        let kill = result["faults"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["action"] == "killed m4")
            .unwrap_or_else(|| panic!("no kill in the step's fault log: {}", result["faults"]));
        assert!(f(kill, "at_ms") >= 1000.0, "{kill}");
    }
    let answer = &v["answers"][0];
    let statement = answer["statement"].as_str().unwrap();
    assert!(
        statement.starts_with("concurrent: safe capacity with m4 killed at 1s: "),
        "{statement}"
    );
    assert!(answer["rate_per_s"].as_f64().is_some(), "{answer}");
    assert!(
        answer["reproduce"]
            .as_str()
            .unwrap()
            .contains(" --fault kill:m4@1s "),
        "{answer}"
    );
    // The baseline: the same search, measured first, without the faults.
    let baseline = &v["baseline"];
    assert!(!steps(baseline).is_empty());
    for step in steps(baseline) {
        let rate = &step["rate_asked_per_s"];
        let faults = step["result"]["faults"].as_array();
        assert!(faults.is_none_or(Vec::is_empty), "{rate}: {faults:?}");
        assert!(step["result"]["config"].get("faults").is_none(), "{rate}");
    }
    let plain = baseline["answers"][0]["statement"].as_str().unwrap();
    assert!(!plain.contains("m4"), "{plain}");
    let (without, with) = (
        stdout
            .find("capacity without faults (--baseline):")
            .expect(&stdout),
        stdout
            .find("safe capacity under m4 killed at 1s (")
            .expect(&stdout),
    );
    assert!(without < with, "{stdout}");
    assert!(
        stdout.contains(plain) && stdout.contains(statement),
        "{stdout}"
    );
    // The page shows each step's charts with the fault window named on it.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("Each step under the faults"),
        "no step charts"
    );
    assert!(
        page.contains("Steps without faults (--baseline)"),
        "no baseline steps"
    );
    // Each chart names its shaded window in an SVG text element.
    let shaded = page
        .split("</text>")
        .filter(|t| t.rsplit('>').next().map(str::trim) == Some("kill:m4@1s"))
        .count();
    assert!(
        shaded >= 2 * steps(&v).len(),
        "{shaded} shaded windows named for {} steps",
        steps(&v).len()
    );
}

#[test]
fn a_clock_jump_on_a_shared_master_leaves_no_safe_rate() {
    // Kleppmann's schedule (as the fault matrix's control): the first holder wins exactly
    // m0-m2, then m0's wall clock jumps past the key's expiry; the other client wins m0, m3,
    // m4 while the first still holds. Valkey's masters run under libfaketime.
    let (stdout, stderr) = exits(
        3,
        &[
            "capacity",
            "--server",
            "valkey",
            "--fault",
            "kill:m3,m4@0s-lock+500ms",
            "--fault",
            "clock:m0:+5s@lock+1s",
            "--fanout",
            "concurrent",
            "--clients",
            "2",
            "--resources",
            "1",
            "--ttl",
            "3s",
            "--hold",
            "2500ms",
            "--warmup",
            "0s",
            "--duration",
            "4s",
            "--slo",
            "p99<10s",
            "--min-success",
            "1%",
            "--min-calls",
            "1",
            "--start-rate",
            "2",
            "--min-rate",
            "1",
            "--max-rate",
            "4",
            "--max-steps",
            "2",
            "--noise-repeats",
            "0",
            "--json",
            "-",
        ],
    );
    let json_start = stdout.find("{\n").expect(&stdout);
    let v: Value = serde_json::from_str(&stdout[json_start..]).expect("the JSON");
    assert_schema_valid(&v);
    let all = steps(&v);
    assert_eq!(all.len(), 2, "{stdout}");
    for step in all {
        let violations = step["result"]["modes"][0]["counts"]["violations"]
            .as_u64()
            .unwrap();
        assert!(violations > 0, "{}", step["failures"]);
        assert_eq!(step["passed"], false);
        let failures: Vec<&str> = step["failures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert!(
            failures.contains(&format!("{violations} violations").as_str()),
            "{failures:?}"
        );
    }
    let statement = v["answers"][0]["statement"].as_str().unwrap();
    assert_eq!(
        statement,
        "concurrent: no safe rate with m3, m4 killed from 0s to lock+500ms and m0's wall clock jumped +5s at lock+1s (lock: when the first lock was granted): safety violations at every rate tried (2 steps, 1–2/s)"
    );
    assert_eq!(v["answers"][0]["rate_per_s"], Value::Null);
    assert!(stderr.contains("mutual exclusion violated"), "{stderr}");
}

#[test]
fn faults_are_refused_up_front_where_they_cannot_act() {
    let (_, stderr) = exits(
        2,
        &[
            "capacity",
            "--masters",
            "redis://127.0.0.1:1",
            "--fault",
            "kill:m0@1s",
        ],
    );
    assert!(
        stderr.contains("--fault needs the local masters"),
        "{stderr}"
    );
    let (_, stderr) = exits(2, &["capacity", "--baseline"]);
    assert!(stderr.contains("--fault"), "{stderr}");
    let (_, stderr) = exits(2, &["capacity", "--fault", "kill:m9@1s", "--spawn", "3"]);
    assert!(stderr.contains("m9"), "{stderr}");
}
