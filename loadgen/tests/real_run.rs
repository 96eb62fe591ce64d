//! Real runs of the binary against local redis-server masters: the JSON is schema-valid and
//! internally consistent, and the outputs, sweeps and open loop behave as documented.

use crate::common;

use common::*;

const SHORT_RUN: &[&str] = &[
    "--spawn",
    "5",
    "--clients",
    "8",
    "--resources",
    "1",
    "--duration",
    "1s",
    "--warmup",
    "200ms",
    "-q",
];

#[test]
fn a_short_real_run_is_schema_valid_consistent_and_violation_free() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let hgrm = dir.path().join("hgrm");
    let plot = dir.path().join("plot.svg");
    let mut args = vec!["run"];
    args.extend_from_slice(SHORT_RUN);
    let (json_s, hgrm_s, plot_s) = (
        json.to_str().unwrap(),
        hgrm.to_str().unwrap(),
        plot.to_str().unwrap(),
    );
    let csv = dir.path().join("run.csv");
    let csv_s = csv.to_str().unwrap();
    args.extend_from_slice(&["--json", json_s, "--hgrm", hgrm_s, "--plot", plot_s]);
    args.extend_from_slice(&["--csv", csv_s, "--percentiles", "50,99,99.99"]);
    let report = succeed(&args);

    for figure in [
        "acquires/s (goodput)",
        "quorum success rate",
        "split votes",
        "split-vote retries",
        "mutual-exclusion violations",
        "concurrent ÷ sequential",
        "master 4",
        "vote patterns",
        "Jain's index",
        "generator CPU per cycle",
        "p99.99",
        "validity margin (ms)",
    ] {
        assert!(
            report.contains(figure),
            "the text report lacks {figure:?}:\n{report}"
        );
    }
    let result = read_json(&json);
    assert_schema_valid(&result);
    assert_eq!(result["masters"].as_array().unwrap().len(), 5);
    let modes = result["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2);
    assert_eq!(modes[0]["fanout"], "sequential");
    assert_eq!(modes[1]["fanout"], "concurrent");
    for mode in modes {
        assert_consistent(mode, 5, 8);
    }
    assert!(
        result["comparison"]["acquires_per_s_ratio"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    // One .hgrm per histogram; each ends with its histogram's total count.
    let acquire_hgrm = std::fs::read_to_string(hgrm.join("concurrent-acquire.hgrm")).unwrap();
    let total = u(&modes[1]["latency"]["acquire"], "count");
    assert!(
        acquire_hgrm.contains(&format!("Total count    = {total:>12}]")),
        "{acquire_hgrm}"
    );
    assert!(hgrm.join("sequential-master-4-round-trip.hgrm").exists());
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg")
            && svg.contains("concurrent acquire")
            && svg.contains("sequential acquire")
            && svg.contains("closed loop 8 clients"),
        "the plot names both modes and the workload"
    );
    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "a header and one row per mode:\n{csv}");
    assert!(lines[0].contains("acquire_p99.99_ms") && lines[0].contains("generator_bound"));
    assert!(lines[1].contains(",sequential,") && lines[2].contains(",concurrent,"));
}

#[test]
fn bad_configuration_exits_2_and_names_the_value() {
    let out = loadgen(&["--spawn", "3", "--quorum", "5", "--duration", "1s", "-q"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("quorum 5"), "{stderr}");
    let out = loadgen(&["--spawn", "1", "--ttl", "2ms", "--duration", "1s", "-q"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ttl"));
    let out = loadgen(&["merge", "/nonexistent/a.json", "/nonexistent/b.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/a.json"));
}

#[test]
fn open_loop_runs_or_drops_every_scheduled_slot() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("open.json");
    let json_s = json.to_str().unwrap();
    succeed(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--rate",
        "400",
        "--clients",
        "4",
        "--resources",
        "8",
        "--duration",
        "1s",
        "--warmup",
        "250ms",
        "-q",
        "--json",
        json_s,
    ]);
    let result = read_json(&json);
    assert_schema_valid(&result);
    assert_eq!(result["config"]["load"], "open");
    let mode = &result["modes"][0];
    let c = &mode["counts"];
    // 400/s over the 1 s window: 400 intended starts, each run or counted as dropped.
    assert_eq!(u(c, "scheduled_slots"), 400, "{c}");
    assert!(u(c, "late_starts") <= u(c, "acquire_calls") + u(c, "cancelled_calls"));
    assert_eq!(
        u(&mode["latency"]["start_lag"], "count"),
        u(c, "acquire_calls") + u(c, "cancelled_calls")
    );
    assert_consistent(mode, 3, 4);
}

#[test]
fn sweep_prints_one_row_per_level_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sweep.json");
    let table = succeed(&[
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
        "--json",
        json.to_str().unwrap(),
    ]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > 2 && (w[1] == "sequential" || w[1] == "concurrent"))
        .collect();
    let levels: Vec<(&str, &str)> = rows.iter().map(|w| (w[0], w[1])).collect();
    assert_eq!(
        levels,
        [
            ("1", "sequential"),
            ("1", "concurrent"),
            ("4", "sequential"),
            ("4", "concurrent")
        ],
        "{table}"
    );
    assert!(
        table.contains("late/dropped") && table.contains("gen CPU"),
        "{table}"
    );
    let sweep = read_json(&json);
    assert_schema_valid(&sweep);
    assert_eq!(sweep["kind"], "sweep");
    let levels = sweep["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2);
    for (level, clients) in levels.iter().zip([1, 4]) {
        assert_eq!(level["level"], clients.to_string());
        let result = &level["result"];
        assert_eq!(result["config"]["clients"], clients);
        for mode in result["modes"].as_array().unwrap() {
            assert_consistent(mode, 3, clients);
        }
    }
}

#[test]
fn existing_masters_are_loaded_without_being_started_or_flushed() {
    let masters = redlock_local::LocalMasters::start(3).expect("redis-server is installed");
    masters
        .command(0, &["SET", "unrelated-key", "kept"])
        .unwrap();
    let urls = masters.urls().join(",");
    let result = short_run_json(&[
        "run",
        "--masters",
        &urls,
        "--fanout",
        "both",
        "--clients",
        "4",
    ]);
    assert_schema_valid(&result);
    assert_eq!(result["local_masters"], false);
    let listed: Vec<&str> = result["masters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["url"].as_str().unwrap())
        .collect();
    assert_eq!(listed.join(","), urls);
    for mode in result["modes"].as_array().unwrap() {
        assert_consistent(mode, 3, 4);
    }
    // Other data on the masters is left alone, and no lock key is left behind.
    assert_eq!(
        masters.get(0, "unrelated-key").unwrap().as_deref(),
        Some("kept")
    );
    let left = masters.with_key("redlock-loadgen:0").unwrap();
    assert!(left.is_empty(), "lock key left on masters {left:?}");
}

#[test]
fn more_clients_than_shards_are_each_counted() {
    let result = short_run_json(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--clients",
        "100",
        "--resources",
        "32",
    ]);
    let mode = &result["modes"][0];
    // 100 clients run in 64 tasks; fairness still lists every client.
    assert_consistent(mode, 3, 100);
}

#[test]
fn extends_during_the_hold_are_measured() {
    let result = short_run_json(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "both",
        "--clients",
        "4",
        "--resources",
        "2",
        "--hold",
        "1ms..3ms",
        "--extend",
        "2",
    ]);
    assert_eq!(result["config"]["extends_per_hold"], 2);
    assert_eq!(result["config"]["hold_max_us"], 3000);
    for mode in result["modes"].as_array().unwrap() {
        assert_consistent(mode, 3, 4);
        let c = &mode["counts"];
        // Two extends per held lock; a failed one skips the one after it.
        let (extends, failures, acquired) =
            (u(c, "extends"), u(c, "extend_failures"), u(c, "acquired"));
        assert!(
            extends <= 2 * acquired && extends + failures >= 2 * acquired,
            "{c}"
        );
        assert!(extends > 0);
    }
}
