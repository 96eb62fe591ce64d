//! `run --fault`: faults are applied to real local masters at their times, logged with their
//! timestamps in the text report and the JSON, and bad specs are refused naming the part.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn loadgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn schema_errors(result: &Value) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema.json is a JSON Schema");
    validator
        .iter_errors(result)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// A run with a kill, a latency window through the proxies and a pause: every step is applied
/// in time order, never before its scheduled time, logged in both reports, healed at the end, and the
/// majority that stayed up keeps the run live and safe.
#[test]
fn faults_are_applied_on_schedule_and_logged_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("result.json");
    let out = loadgen(&[
        "run",
        "--fanout",
        "concurrent",
        "--clients",
        "4",
        "--warmup",
        "300ms",
        "--duration",
        "3s",
        "--quiet",
        "--fault",
        "kill:1@300ms",
        "--fault",
        "latency:m4:20ms@200ms-700ms",
        "--fault",
        "pause:m3@500ms-900ms",
        "--json",
        json_path.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{}",
        out.status,
        text(&out.stderr)
    );
    assert!(stdout.contains("faults applied"), "{stdout}");
    for action in [
        "killed m0",
        "added 20ms to every reply of m4",
        "removed the latency of m4",
        "paused m3 (SIGSTOP)",
        "resumed m3 (SIGCONT)",
        "started m0 again (empty)",
    ] {
        assert!(
            stdout.contains(action),
            "{action:?} missing from:\n{stdout}"
        );
    }

    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let errors = schema_errors(&result);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let events = result["faults"].as_array().expect("a faults array");
    let window_ms = result["modes"][0]["duration_s"].as_f64().unwrap() * 1e3;
    let scheduled = [
        ("latency:m4:20ms@200ms-700ms", "added", 200.0),
        ("kill:1@300ms", "killed", 300.0),
        ("pause:m3@500ms-900ms", "paused", 500.0),
        ("latency:m4:20ms@200ms-700ms", "removed", 700.0),
        ("pause:m3@500ms-900ms", "resumed", 900.0),
    ];
    assert_eq!(events.len(), scheduled.len() + 1, "{events:?}");
    for (event, (fault, verb, due_ms)) in events.iter().zip(scheduled) {
        assert_eq!(event["fault"], fault, "{events:?}");
        assert_eq!(event["fanout"], "concurrent");
        assert!(
            event["action"].as_str().unwrap().starts_with(verb),
            "{event}"
        );
        let (at, done) = (
            event["at_ms"].as_f64().unwrap(),
            event["done_ms"].as_f64().unwrap(),
        );
        // Applied by the run's control loop: never early, in order, and inside the measured
        // window (the last step is due 2.1 s before its end, so a late tick still lands in it).
        assert!(
            at >= due_ms && at <= done && done < window_ms,
            "{event}: due at {due_ms} ms, window {window_ms} ms"
        );
    }
    let applied: Vec<f64> = events
        .iter()
        .map(|e| e["at_ms"].as_f64().unwrap())
        .collect();
    assert!(applied.is_sorted(), "{events:?}");
    let last = events.last().unwrap();
    assert_eq!(last["fault"], "end of mode");
    assert!(
        last["action"]
            .as_str()
            .unwrap()
            .contains("started m0 again"),
        "{last}"
    );

    let mode = &result["modes"][0];
    assert_eq!(mode["counts"]["violations"], 0);
    assert!(mode["counts"]["acquired"].as_u64().unwrap() > 0, "{mode}");
}

/// Latency is added on the network path: the client talks to the masters through the fault
/// proxies, and only the slowed master's round trips grow by the delay.
#[test]
fn latency_reaches_the_client_through_the_proxies() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("result.json");
    let out = loadgen(&[
        "run",
        "--fanout",
        "sequential",
        "--clients",
        "2",
        "--warmup",
        "0s",
        "--duration",
        "1s",
        "--quiet",
        "--fault",
        "latency:m4:20ms@0s",
        "--json",
        json_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let masters = result["modes"][0]["masters"].as_array().unwrap();
    let min_rtt_us = |i: usize| masters[i]["round_trip"]["min_us"].as_u64().unwrap();
    assert!(min_rtt_us(4) >= 20_000, "m4: {}", masters[4]);
    for (i, master) in masters.iter().enumerate().take(4) {
        let min = master["round_trip"]["min_us"].as_u64().unwrap();
        assert!(min < 20_000, "m{i} was not slowed: {master}");
    }
}

#[test]
fn a_bad_spec_exits_2_naming_the_part_at_fault() {
    for (spec, part) in [
        ("kill:2@soon", "time \"soon\""),
        ("explode:1@1s", "kind \"explode\""),
        ("pause:1@3s-1s", "window \"3s-1s\""),
    ] {
        let out = loadgen(&["run", "--fault", spec]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {stderr}");
        assert!(stderr.contains(part), "{spec}: {stderr}");
    }
}

#[test]
fn faults_on_masters_the_run_does_not_have_are_refused_before_loading() {
    let out = loadgen(&["run", "--spawn", "3", "--quiet", "--fault", "kill:m4@1s"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("m4 does not exist"), "{stderr}");

    let out = loadgen(&[
        "run",
        "--masters",
        "redis://127.0.0.1:1",
        "--quiet",
        "--fault",
        "kill:1@1s",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("needs the local masters"), "{stderr}");
}

/// docs/src/design.md#metrics: an attempt that fails with no denial is an outage, not contention. One client
/// (nobody to contend with) and 3 of 5 masters killed: every lost attempt is unavailable, none
/// is a split vote or a clean loss, the per-second series shows the outage, and the killed
/// masters' failed requests are not counted as round trips.
#[test]
fn an_outage_without_contention_counts_as_unavailable_never_as_split_votes() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("result.json");
    let out = loadgen(&[
        "run",
        "--fanout",
        "concurrent",
        "--clients",
        "1",
        "--resources",
        "10000",
        "--warmup",
        "0s",
        "--duration",
        "1500ms",
        "--quiet",
        "--fault",
        "kill:3@300ms",
        "--json",
        json_path.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let errors = schema_errors(&result);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let mode = &result["modes"][0];
    let c = &mode["counts"];
    let n = |key: &str| c[key].as_u64().unwrap();
    assert_eq!(n("split_votes"), 0, "{c}");
    assert_eq!(n("split_vote_retries"), 0, "{c}");
    assert_eq!(n("clean_losses"), 0, "{c}");
    assert!(n("unavailable_attempts") > 0, "{c}");
    assert_eq!(
        n("attempts"),
        n("attempts_won") + n("unavailable_attempts") + n("expired_attempts"),
        "{c}"
    );
    let per_second: u64 = mode["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["unavailable_attempts"].as_u64().unwrap())
        .sum();
    assert_eq!(per_second, n("unavailable_attempts"));
    assert!(
        stdout.lines().any(|l| l.starts_with("unavailable attempts")
            && l.split_whitespace().last() == Some(&n("unavailable_attempts").to_string())),
        "{stdout}"
    );
    // m0..m2 were killed: after that their requests failed, and only their answers before
    // the kill are round trips.
    for m in &mode["masters"].as_array().unwrap()[..3] {
        let answered = m["granted"].as_u64().unwrap() + m["denied"].as_u64().unwrap();
        assert_eq!(m["round_trip"]["count"].as_u64().unwrap(), answered, "{m}");
        assert!(m["errors"].as_u64().unwrap() > 0, "{m}");
    }
}

/// A majority killed for two seconds under no contention at all (one client): every attempt
/// the outage cost is counted unavailable, never a split vote or a clean loss; the killed
/// masters' round trips hold answered requests only; the fault spec is shown as typed; and
/// the outage sits where the run's own fault log says the masters were gone, on the measured
/// window's clock (the warm-up is not counted). How long a loaded machine takes to restart
/// three servers is not the test's business: it reads when the kill and the restart were
/// applied and finished from the log.
#[test]
fn an_outage_is_counted_unavailable_and_reported_where_it_happened() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("k.json");
    let out = loadgen(&[
        "run",
        "--clients",
        "1",
        "--resources",
        "10000",
        "--warmup",
        "500ms",
        "--duration",
        "4s",
        "--fault",
        "kill:3@1s-3s",
        "--json",
        json_path.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{}\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("--fault kill:3@1s-3s"), "{stdout}");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let errors = schema_errors(&result);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(
        result["config"]["command_line"]
            .as_str()
            .unwrap()
            .contains("--fault kill:3@1s-3s"),
        "{}",
        result["config"]["command_line"]
    );
    let modes = result["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2);
    for mode in modes {
        let counts = &mode["counts"];
        let fanout = mode["fanout"].as_str().unwrap();
        assert_eq!(counts["split_votes"], 0, "{fanout}: {counts}");
        assert_eq!(counts["clean_losses"], 0, "{fanout}: {counts}");
        assert!(
            counts["unavailable_attempts"].as_u64().unwrap() > 0,
            "{fanout}: {counts}"
        );
        for master in mode["masters"].as_array().unwrap() {
            let answered = master["granted"].as_u64().unwrap() + master["denied"].as_u64().unwrap();
            assert_eq!(
                master["round_trip"]["count"], answered,
                "{fanout}: {master}"
            );
        }
        let outages = mode["outages"].as_array().unwrap();
        assert_eq!(outages.len(), 1, "{fanout}: {outages:?}");
        let outage = &outages[0];
        let (from, to) = (
            outage["from_s"].as_f64().unwrap(),
            outage["to_s"].as_f64().unwrap(),
        );
        // The fault log of this mode: the kill and the start again, each applied no earlier
        // than due, and when each had finished.
        let step = |verb: &str| {
            let event = result["faults"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["fanout"] == fanout && e["action"].as_str().unwrap().starts_with(verb))
                .unwrap_or_else(|| panic!("{fanout}: no {verb:?} in {}", result["faults"]));
            let (at, done) = (
                event["at_ms"].as_f64().unwrap() / 1e3,
                event["done_ms"].as_f64().unwrap() / 1e3,
            );
            assert!(at <= done, "{event}");
            (at, done)
        };
        let (killed_at, killed) = step("killed");
        let (back_at, back) = step("started");
        assert!(killed_at >= 1.0 && back_at >= 3.0, "{}", result["faults"]);
        // Outages are found by whole intervals (1 s), so this one starts at the last lock of
        // the second before the kill at the earliest, and before the masters were back at the
        // latest (no quorum answered between the kill's end and the restart); its first lock
        // needed the restarted masters, and came before the window ended.
        assert!(
            killed_at - 1.0 <= from && from < back_at,
            "{fanout}: {outage}, killed {killed_at}..{killed} s"
        );
        assert!(
            to >= back_at,
            "{fanout}: {outage}, started again {back_at}..{back} s"
        );
        assert_eq!(outage["until_end"], false, "{fanout}: {outage}");
        let line = format!("outage     {fanout}: no lock acquired from +{from:.1} s to +{to:.1} s");
        assert!(stdout.contains(&line), "{line:?} missing from:\n{stdout}");
    }
}
