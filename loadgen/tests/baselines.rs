//! `--lock`: the single-master baselines measured next to Redlock in one run. Their fault rows
//! (each must break where the pattern is documented to break; Redlock must not) run with the
//! whole matrix in history_agreement.rs.

use crate::common;

use common::{assert_schema_valid, read_json, succeed, u};

#[test]
fn every_lock_algorithm_runs_side_by_side_and_its_figures_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let report = succeed(&[
        "run",
        "--lock",
        "redlock,single,setnx-expire,setnx-getset",
        "--fanout",
        "concurrent",
        "--clients",
        "4",
        "--hold",
        "1ms",
        "--instance-timeout",
        "1s",
        "--warmup",
        "0s",
        "--duration",
        "1s",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    let result = read_json(&json);
    assert_schema_valid(&result);
    assert_eq!(
        result["config"]["locks"],
        serde_json::json!(["redlock", "single", "setnx-expire", "setnx-getset"])
    );
    let modes = result["modes"].as_array().unwrap();
    let locks: Vec<&str> = modes.iter().map(|m| m["lock"].as_str().unwrap()).collect();
    assert_eq!(locks, ["redlock", "single", "setnx-expire", "setnx-getset"]);
    for m in modes {
        let c = &m["counts"];
        let lock = m["lock"].as_str().unwrap();
        assert!(u(c, "acquired") > 0, "{lock}: {c}");
        assert_eq!(u(c, "violations"), 0, "{lock}: {c}");
        assert_eq!(u(c, "foreign_releases"), 0, "{lock}: {c}");
        let (attempts, won, releases) = (u(c, "attempts"), u(c, "attempts_won"), u(c, "releases"));
        let commands = u(c, "redis_commands");
        match lock {
            // Every attempt one SET, every release one script call.
            "single" => assert_eq!(commands, attempts + releases, "{c}"),
            // SETNX per attempt, EXPIRE after each one won, one DEL per release.
            "setnx-expire" => assert_eq!(commands, attempts + won + releases, "{c}"),
            // SETNX, maybe GET, maybe GETSET; a release sends DEL or nothing.
            "setnx-getset" => {
                assert!(
                    commands >= attempts && commands <= 3 * attempts + releases,
                    "{c}"
                )
            }
            // Every attempt and every release goes to all 5 masters.
            _ => assert!(commands >= 5 * (attempts + releases), "{c}"),
        }
        let per_cycle = m["rates"]["redis_commands_per_cycle"].as_f64().unwrap();
        let expected = commands as f64 / u(c, "acquired") as f64;
        assert!((per_cycle - expected).abs() < 1e-9, "{lock}: {per_cycle}");
        if lock != "redlock" {
            assert_eq!(
                m["masters"].as_array().unwrap().len(),
                1,
                "{lock}: one master"
            );
            assert_eq!(m["vote_patterns"], serde_json::json!([]), "{lock}");
        }
    }
    let against = result["against_redlock"].as_array().unwrap();
    let compared: Vec<&str> = against
        .iter()
        .map(|a| a["lock"].as_str().unwrap())
        .collect();
    assert_eq!(compared, ["single", "setnx-expire", "setnx-getset"]);
    assert!(against.iter().all(|a| a["redlock_fanout"] == "concurrent"));

    // The text report: one column per algorithm, vote figures not applicable to baselines.
    let quorum = report
        .lines()
        .find(|l| l.starts_with("quorum success rate"))
        .unwrap();
    assert_eq!(quorum.matches("n/a").count(), 3, "{quorum}");
    assert!(report.contains("÷ redlock (same fan-out)"), "{report}");
    assert!(report.contains("redis commands per cycle"), "{report}");
}

#[test]
fn bad_lock_choices_are_refused_naming_the_value() {
    let (_, err) = common::exits(2, &["run", "--lock", "redlock,zookeeper"]);
    assert!(
        err.contains("\"zookeeper\"") && err.contains("setnx-getset"),
        "{err}"
    );
    let (_, err) = common::exits(
        2,
        &[
            "run",
            "--lock",
            "single",
            "--extend",
            "1",
            "--duration",
            "1s",
        ],
    );
    assert!(
        err.contains("--extend 1") && err.contains("single"),
        "{err}"
    );
    let (_, err) = common::exits(
        2,
        &["run", "--clients", "2", "--client-fault", "clock:5:+1s"],
    );
    assert!(err.contains("clock:5"), "{err}");
}

/// `capacity --lock`: one search per mode, each step a run of that lock, answers named by it.
#[test]
fn capacity_searches_each_lock_algorithm() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("capacity.json");
    // A lax objective and at most 2 steps of 0.5 s per mode; which steps pass depends on the
    // machine, so only the shape is checked.
    let out = common::loadgen(&[
        "capacity",
        // Mechanics at low rates: the percentiles may rest on few calls.
        "--min-calls",
        "1",
        "--lock",
        "single,redlock",
        "--fanout",
        "concurrent",
        "--slo",
        "p99<5s",
        "--min-success",
        "50%",
        "--start-rate",
        "100",
        "--max-rate",
        "200",
        "--max-steps",
        "2",
        "--duration",
        "500ms",
        "--warmup",
        "0s",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        common::text(&out.stderr)
    );
    let result = read_json(&json);
    assert_schema_valid(&result);
    let answers: Vec<&str> = result["answers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["fanout"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["single", "concurrent"]);
    for step in result["steps"].as_array().unwrap() {
        let mode = &step["result"]["modes"][0];
        let expected = if step["fanout"] == "single" {
            "single"
        } else {
            "redlock"
        };
        assert_eq!(mode["lock"], expected, "{step}");
    }
}
