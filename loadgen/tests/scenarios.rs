//! A short subset of the `scenarios` matrix (the whole matrix runs under `make reliability`):
//! a healthy run, the largest minority killed, and a negative control that the checker must
//! catch. Each row runs on its own 5 fresh local masters and ends by itself.

mod common;

use std::process::Command;

use common::{assert_schema_valid, passing_scenario, read_json, scenario_counts};
use redlock_loadgen::engine::faults::scenarios::Outcome;

fn run(name: &str) -> Outcome {
    let outcome = passing_scenario(name);
    assert!(outcome.keys_left.is_empty(), "{:?}", outcome.keys_left);
    outcome
}

/// Through the binary, as `make reliability` runs it: the table ends with the line CI tooling
/// reads, the exit code is 0, and `--json` keeps the row with its full result.
#[test]
fn no_faults_is_live_and_safe_through_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("scenarios.json");
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args([
            "scenarios",
            "--only",
            "no faults",
            "--fanout",
            "concurrent",
            "--quiet",
        ])
        .arg("--json")
        .arg(&json_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().last(),
        Some("1 passed, 0 failed"),
        "{stdout}"
    );
    assert!(stdout.contains("| no faults "), "{stdout}");
    let result = read_json(&json_path);
    assert_schema_valid(&result);
    assert_eq!(result["kind"], "scenarios");
    let row = &result["rows"][0];
    assert_eq!(row["scenario"], "no faults");
    assert_eq!(row["passed"], true);
    assert_eq!(row["faults"], serde_json::json!([]));
    let counts = &row["result"]["modes"][0]["counts"];
    assert_eq!(counts["violations"], 0);
    assert!(counts["acquired"].as_u64().unwrap() > 0, "{counts}");
}

#[test]
fn an_unknown_row_is_refused_with_the_names_that_exist() {
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(["scenarios", "--only", "4 killed"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("\"4 killed\"") && stderr.contains("3 killed"),
        "{stderr}"
    );
}

#[test]
fn two_masters_killed_still_acquire_every_second_without_violations() {
    let outcome = run("2 killed");
    assert_eq!(outcome.faults[0].action, "killed m0, m1");
    let c = scenario_counts(&outcome);
    assert_eq!(c["violations"], 0);
    assert!(c["acquired"].as_u64().unwrap() > 0);
}

/// The negative control: the checker must see the two holders a restart without persistence
/// creates (the first holds m0..m2 only; m0 comes back empty and a contender wins m0, m3, m4).
#[test]
fn an_immediate_restart_of_a_holders_master_is_detected_as_a_violation() {
    let outcome = run("control: restart");
    let actions: Vec<&str> = outcome.faults.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "killed m3, m4",
            "started m3, m4 again (empty)",
            "restarted m0 at once (empty)"
        ]
    );
    assert!(scenario_counts(&outcome)["violations"].as_u64().unwrap() > 0);
}
