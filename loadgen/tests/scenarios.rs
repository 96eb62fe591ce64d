//! A short subset of the `scenarios` matrix (the whole matrix runs under `make reliability`):
//! a healthy run, the largest minority killed, and a negative control that the checker must
//! catch. Each row runs on its own 5 fresh local masters and ends by itself.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use redlock_core::FanOut;
use redlock_loadgen::faults::scenarios::{run_scenario, select, Outcome};

fn run(name: &str) -> Outcome {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let scenario = select(&[name.to_string()]).unwrap().remove(0);
    let stop = Arc::new(AtomicBool::new(false));
    let outcome =
        run_scenario(&rt, &scenario, FanOut::Concurrent, stop).expect("the scenario runs");
    assert!(
        outcome.passed,
        "{name}: {} ({})\nfaults: {:#?}",
        outcome.reason, outcome.command, outcome.faults
    );
    assert!(outcome.keys_left.is_empty(), "{:?}", outcome.keys_left);
    outcome
}

fn counts(outcome: &Outcome) -> serde_json::Value {
    serde_json::to_value(&outcome.result).unwrap()["modes"][0]["counts"].clone()
}

#[test]
fn no_faults_is_live_and_safe() {
    let outcome = run("no faults");
    assert!(outcome.faults.is_empty(), "{:?}", outcome.faults);
    assert_eq!(counts(&outcome)["violations"], 0);
}

#[test]
fn two_masters_killed_still_acquire_every_second_without_violations() {
    let outcome = run("2 killed");
    assert_eq!(outcome.faults[0].action, "killed m0, m1");
    let c = counts(&outcome);
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
    assert!(counts(&outcome)["violations"].as_u64().unwrap() > 0);
}
