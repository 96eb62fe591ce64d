//! Helpers shared by the integration tests: run the binary, read results, check the schema.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use redlock_core::FanOut;
use redlock_loadgen::cli::translate::scenario_run;
use redlock_loadgen::hist::Hist;
use redlock_loadgen::plans::faults::scenarios::{run_scenario, select, Outcome};
use serde_json::Value;

pub mod browser;
pub mod history;

pub fn loadgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(args)
        .output()
        .expect("the binary runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs and asserts exit 0; returns stdout.
pub fn succeed(args: &[&str]) -> String {
    let out = loadgen(args);
    assert!(
        out.status.success(),
        "{args:?} failed with {}:\n{}\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs and asserts the exit code; returns (stdout, stderr).
pub fn exits(code: i32, args: &[&str]) -> (String, String) {
    let out = loadgen(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}:\n{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    (text(&out.stdout), text(&out.stderr))
}

/// Runs `args` briefly (500 ms measured after 100 ms of warm-up, quietly), asserts exit 0 and
/// returns the `--json` result.
pub fn short_run_json(args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut all = args.to_vec();
    all.extend([
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    succeed(&all);
    read_json(&json)
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn assert_schema_valid(result: &Value) {
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
    // The schema is closed: an unknown top-level key fails it, so a pass above means something.
    let mut extra = result.clone();
    extra
        .as_object_mut()
        .expect("a result is an object")
        .insert("not_in_the_schema".into(), Value::Null);
    assert!(
        !validator.is_valid(&extra),
        "schema.json accepts an unknown top-level key"
    );
}

pub fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not an unsigned integer in {v}"))
}

pub fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

pub fn hist(v: &Value) -> Hist {
    Hist::decode(v["hdr"].as_str().unwrap()).unwrap()
}

/// Every figure of one mode agrees with the others.
pub fn assert_consistent(mode: &Value, n_masters: u64, workers: u64) {
    let name = mode["fanout"].as_str().unwrap();
    let c = &mode["counts"];
    let attempts = u(c, "attempts");
    let won = u(c, "attempts_won");
    let lost = u(c, "split_votes")
        + u(c, "clean_losses")
        + u(c, "unavailable_attempts")
        + u(c, "expired_attempts");
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
    let open_loop = u(c, "scheduled_slots") > 0;
    let started = calls + u(c, "cancelled_calls");
    for (what, count) in [
        ("acquire", calls),
        ("attempt", attempts),
        ("release", u(c, "releases")),
        ("extend", u(c, "extends")),
        ("validity_margin", acquired),
        ("start_lag", if open_loop { started } else { 0 }),
    ] {
        assert_eq!(
            u(&l[what], "count"),
            count,
            "{name}: {what} histogram count"
        );
        assert_eq!(hist(&l[what]).count(), count, "{name}: {what} hdr content");
    }
    if open_loop {
        assert_eq!(
            u(c, "scheduled_slots"),
            started + u(c, "dropped_slots"),
            "{name}: every scheduled slot started or was dropped"
        );
        assert!(u(c, "late_no_free_client") <= u(c, "late_starts"), "{name}");
        assert!(
            u(&l["pacing_lag"], "count") <= u(&l["start_lag"], "count"),
            "{name}: the lag of waited-for slots is a part of all start lags"
        );
    }
    let p = |what: &str, key: &str| u(&l[what], key);
    assert!(
        p("acquire", "p50_us") <= p("acquire", "p99_us")
            && p("acquire", "p99_us") <= p("acquire", "max_us")
    );
    assert!(p("validity_margin", "min_us") <= p("validity_margin", "p1_us"));

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
    let fair = &mode["fairness"];
    assert_eq!(u(fair, "workers"), workers);
    let per_worker: u64 = fair["acquired_per_worker"]
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
    for key in [
        "acquire_calls",
        "acquired",
        "not_acquired",
        "unavailable",
        "other_errors",
        "attempts",
        "attempts_won",
        "split_votes",
        "clean_losses",
        "unavailable_attempts",
        "expired_attempts",
        "releases",
    ] {
        let sum: u64 = intervals.iter().map(|i| u(i, key)).sum();
        assert_eq!(
            sum,
            u(c, key),
            "{name}: per-interval {key} add up to the total"
        );
    }
    let interval_count = |i: &Value, key: &str| {
        Hist::decode(i[key].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{name}: {key}: {e}"))
            .count()
    };
    for (key, total) in [
        ("acquire_hdr", &mode["latency"]["acquire"]),
        ("attempt_hdr", &mode["latency"]["attempt"]),
        ("release_hdr", &mode["latency"]["release"]),
    ] {
        let sum: u64 = intervals.iter().map(|i| interval_count(i, key)).sum();
        assert_eq!(
            sum,
            u(total, "count"),
            "{name}: per-interval {key} add up to the whole run's"
        );
    }
    for (m, master) in mode["masters"].as_array().unwrap().iter().enumerate() {
        let sum: u64 = intervals
            .iter()
            .map(|i| {
                Hist::decode(i["round_trip_hdr"][m].as_str().unwrap())
                    .unwrap()
                    .count()
            })
            .sum();
        assert_eq!(
            sum,
            u(&master["round_trip"], "count"),
            "{name}: master {m}'s per-interval round trips add up"
        );
    }
    let start_lags: u64 = intervals
        .iter()
        .filter(|i| i.get("start_lag_hdr").is_some())
        .map(|i| interval_count(i, "start_lag_hdr"))
        .sum();
    assert_eq!(
        start_lags,
        u(&l["start_lag"], "count"),
        "{name}: per-interval start lags add up"
    );
    for (m, master) in mode["masters"].as_array().unwrap().iter().enumerate() {
        let failed: u64 = intervals
            .iter()
            .filter_map(|i| i.get("failures"))
            .flat_map(|list| list.as_array().unwrap())
            .filter(|f| u(f, "master") == m as u64)
            .map(|f| u(f, "requests"))
            .sum();
        assert_eq!(
            failed,
            u(master, "errors") + u(master, "timeouts"),
            "{name}: master {m}'s per-interval failures add up"
        );
    }
    let rate = f(&mode["rates"], "acquires_per_s");
    let duration = f(mode, "duration_s");
    assert!((rate * duration - acquired as f64).abs() < 1e-6 * acquired as f64 + 1e-9);
    let g = &mode["generator"];
    assert!(f(&g["cpu"], "core_s") > 0.0, "{name}: {g}");
    assert!(
        f(g, "cpu_per_cycle_us") >= 0.0 && f(g, "core_share") <= 1.5,
        "{name}: {g}"
    );
}

/// `n` distinct ports that were free a moment ago: nothing listens there. The listeners are
/// all held until every port is known, so the OS cannot hand out the same port twice (the
/// same server listed twice is refused as a configuration error).
pub fn closed_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// Runs fault scenario `name` (concurrent fan-out, its own fresh masters) and requires that
/// it passed.
pub fn passing_scenario(name: &str) -> Outcome {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let scenario = select(&[name.to_string()]).unwrap().remove(0);
    let signals = redlock_loadgen::signals::Signals::none();
    let outcome = run_scenario(
        &rt,
        &scenario,
        scenario_run(&scenario.run_flags(FanOut::Concurrent)).expect("the scenario's flags parse"),
        None,
        &signals,
    )
    .expect("the scenario runs");
    assert!(
        outcome.passed,
        "{name}: {} ({})\nfaults: {:#?}",
        outcome.reason, outcome.command, outcome.faults
    );
    outcome
}

/// The flags of a capacity search that shows only its mechanics: one concurrent mode, a lax
/// objective, at most `max_steps` steps of `duration` at 20–40 acquires/s over 16 clients
/// (whether a step passes is the masters' business here, not a busy machine's).
pub fn lax_search(max_steps: &'static str, duration: &'static str) -> Vec<&'static str> {
    vec![
        "--fanout",
        "concurrent",
        "--slo",
        "p99<5s",
        "--min-success",
        "50%",
        "--min-calls",
        "1",
        "--start-rate",
        "20",
        "--max-rate",
        "40",
        "--max-steps",
        max_steps,
        "--noise-repeats",
        "0",
        "--clients",
        "16",
        "--warmup",
        "200ms",
        "--duration",
        duration,
    ]
}
