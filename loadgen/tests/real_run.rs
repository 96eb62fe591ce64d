//! Real runs of the binary against local redis-server masters: the JSON is schema-valid and
//! internally consistent, `merge` adds real results exactly, and exit codes follow the contract.

use std::path::Path;
use std::process::{Command, Output};

use redlock_loadgen::hist::Hist;
use serde_json::Value;

fn loadgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn succeed(args: &[&str]) -> String {
    let out = loadgen(args);
    assert!(
        out.status.success(),
        "{args:?} failed with {}:\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_schema_valid(result: &Value) {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema.json is a valid JSON Schema");
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match schema.json:\n{}",
        errors.join("\n")
    );
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not an unsigned integer in {v}"))
}

fn hist(v: &Value) -> Hist {
    Hist::decode(v["hdr"].as_str().unwrap()).unwrap()
}

/// Every figure of one mode agrees with the others.
fn assert_consistent(mode: &Value, n_masters: u64, workers: u64) {
    let name = mode["fanout"].as_str().unwrap();
    let c = &mode["counts"];
    let attempts = u(c, "attempts");
    let won = u(c, "attempts_won");
    let lost = u(c, "split_votes") + u(c, "clean_losses") + u(c, "expired_attempts");
    assert!(attempts > 0, "{name}: no attempts");
    assert_eq!(attempts, won + lost, "{name}: attempts = won + lost");
    assert!(
        u(c, "split_votes") <= attempts - won,
        "{name}: split votes ≤ failed attempts"
    );
    assert!(u(c, "split_vote_retries") <= u(c, "split_votes"), "{name}");
    let calls = u(c, "acquire_calls");
    let acquired = u(c, "acquired");
    assert_eq!(acquired, won, "{name}: every won attempt returned a lock");
    assert_eq!(
        calls,
        acquired + u(c, "not_acquired") + u(c, "unavailable") + u(c, "other_errors"),
        "{name}: every acquire call ended one way"
    );
    assert_eq!(
        u(c, "releases"),
        acquired,
        "{name}: every lock was released"
    );
    assert_eq!(u(c, "violations"), 0, "{name}: mutual exclusion violated");
    assert!(u(c, "windows_checked") >= acquired, "{name}");
    assert_eq!(
        u(c, "redis_commands"),
        n_masters * (attempts + (attempts - won) + u(c, "releases") + u(c, "extends")),
        "{name}: commands = masters × (attempts + cleanups + releases + extends)"
    );

    let l = &mode["latency"];
    for (what, count) in [
        ("acquire", calls),
        ("attempt", attempts),
        ("release", u(c, "releases")),
        ("extend", u(c, "extends")),
        ("validity_margin", acquired),
    ] {
        assert_eq!(
            u(&l[what], "count"),
            count,
            "{name}: {what} histogram count"
        );
        assert_eq!(hist(&l[what]).count(), count, "{name}: {what} hdr content");
    }
    let p = |what: &str, key: &str| u(&l[what], key);
    assert!(
        p("acquire", "p50_us") <= p("acquire", "p99_us")
            && p("acquire", "p99_us") <= p("acquire", "max_us")
    );
    // Validity left at acquisition is below the 1 s TTL minus the drift allowance (12 ms).
    assert!(p("validity_margin", "max_us") <= 988_000 + 1_000, "{name}");

    let patterns: u64 = mode["vote_patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(p, "attempts"))
        .sum();
    assert_eq!(
        patterns, attempts,
        "{name}: vote patterns cover every attempt"
    );
    let masters = mode["masters"].as_array().unwrap();
    assert_eq!(masters.len() as u64, n_masters);
    for m in masters {
        // Every attempt asked every master: it granted, denied, was not awaited, or failed
        // (errors and timeouts also count those of releases, hence the range).
        let answered = u(m, "granted") + u(m, "denied") + u(m, "not_awaited");
        let failed = u(m, "errors") + u(m, "timeouts");
        assert!(
            answered <= attempts && answered + failed >= attempts,
            "{name}: {m}"
        );
    }
    let f = &mode["fairness"];
    assert_eq!(u(f, "workers"), workers);
    let per_worker: u64 = f["acquired_per_worker"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(
        per_worker, acquired,
        "{name}: per-worker acquisitions add up"
    );

    let intervals = mode["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    for key in ["acquire_calls", "acquired", "attempts", "split_votes"] {
        let sum: u64 = intervals.iter().map(|i| u(i, key)).sum();
        assert_eq!(
            sum,
            u(c, key),
            "{name}: per-second {key} add up to the total"
        );
    }
    let rate = mode["rates"]["acquires_per_s"].as_f64().unwrap();
    let duration = mode["duration_s"].as_f64().unwrap();
    assert!((rate * duration - acquired as f64).abs() < 1e-6 * acquired as f64 + 1e-9);
}

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
    args.extend_from_slice(&["--json", json_s, "--hgrm", hgrm_s, "--plot", plot_s]);
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
    );
}

#[test]
fn merge_of_two_real_results_is_the_sum_of_its_parts() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (a, b, merged) = (path("a.json"), path("b.json"), path("merged.json"));
    for file in [&a, &b] {
        let mut args = vec!["run", "--fanout", "concurrent"];
        args.extend_from_slice(SHORT_RUN);
        args.extend_from_slice(&["--json", file]);
        succeed(&args);
    }
    let report = succeed(&["merge", &a, &b, "--json", &merged]);
    assert!(report.contains("merged     2 result files"), "{report}");
    let (a, b, m) = (
        read_json(Path::new(&a)),
        read_json(Path::new(&b)),
        read_json(Path::new(&merged)),
    );
    assert_schema_valid(&m);
    let (ma, mb, mm) = (&a["modes"][0], &b["modes"][0], &m["modes"][0]);
    for (key, _) in mm["counts"].as_object().unwrap() {
        assert_eq!(
            u(&mm["counts"], key),
            u(&ma["counts"], key) + u(&mb["counts"], key),
            "counts.{key}"
        );
    }
    for what in ["acquire", "attempt", "release", "validity_margin"] {
        let mut sum = hist(&ma["latency"][what]);
        sum.add(&hist(&mb["latency"][what]));
        let merged = hist(&mm["latency"][what]);
        assert_eq!(merged, sum, "{what}: merged histogram = sum of the parts");
        // Percentiles are recomputed from the sum, not averaged.
        assert_eq!(
            u(&mm["latency"][what], "p99_us"),
            sum.quantile(0.99),
            "{what}"
        );
    }
    for i in 0..5 {
        let mut sum = hist(&ma["masters"][i]["round_trip"]);
        sum.add(&hist(&mb["masters"][i]["round_trip"]));
        assert_eq!(hist(&mm["masters"][i]["round_trip"]), sum, "master {i}");
    }
    assert_eq!(u(&mm["fairness"], "workers"), 16);
    let seconds = |v: &Value| {
        v["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| u(i, "acquired"))
            .sum::<u64>()
    };
    assert_eq!(seconds(mm), seconds(ma) + seconds(mb));
    assert_consistent(mm, 5, 16);
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
    let scheduled = u(c, "acquire_calls") + u(c, "dropped_slots");
    assert!(
        scheduled.abs_diff(400) <= 2,
        "{scheduled} slots in a 1 s window at 400/s: {c}"
    );
    assert!(u(c, "late_starts") <= u(c, "acquire_calls"));
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
    let results = read_json(&json);
    let results = results.as_array().unwrap();
    assert_eq!(results.len(), 2);
    for (result, clients) in results.iter().zip([1, 4]) {
        assert_schema_valid(result);
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
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("existing.json");
    succeed(&[
        "run",
        "--masters",
        &urls,
        "--fanout",
        "both",
        "--clients",
        "4",
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let result = read_json(&json);
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
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("many.json");
    succeed(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--clients",
        "100",
        "--resources",
        "32",
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let result = read_json(&json);
    let mode = &result["modes"][0];
    // 100 clients run in 64 tasks; fairness still lists every client.
    assert_consistent(mode, 3, 100);
}

#[test]
fn unreachable_masters_fail_the_run_with_exit_1_after_the_report() {
    // Ports that were free a moment ago: nothing listens there.
    let urls: Vec<String> = (0..3)
        .map(|_| {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!(
                "redis://127.0.0.1:{}",
                listener.local_addr().unwrap().port()
            )
        })
        .collect();
    let out = loadgen(&[
        "--masters",
        &urls.join(","),
        "--fanout",
        "concurrent",
        "--retry-delay",
        "20ms",
        "--duration",
        "300ms",
        "--warmup",
        "0s",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("acquire errors: unavailable"), "{report}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("fewer than a quorum of masters reachable") && stderr.contains(&urls[0]),
        "{stderr}"
    );
}

#[test]
fn extends_during_the_hold_are_measured() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("extend.json");
    succeed(&[
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
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let result = read_json(&json);
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
