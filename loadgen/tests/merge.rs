//! `merge` on real results: runs that measured at the same time add up with rates over the
//! union of their windows and while both measured; what does not belong together is refused
//! with exit 2 naming the files and fields; sweeps merge level by level.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use redlock_local::resp::Reply;
use redlock_local::{eventually_blocking, wait_for_exit, LocalMasters};
use serde_json::Value;

fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// Waits (generous bound) until some `redlock-loadgen:*` lock key appears on master 0:
/// the first run is loading.
fn wait_for_load(masters: &LocalMasters) {
    eventually_blocking(
        "the first run to start loading",
        Duration::from_secs(60),
        || masters.command(0, &["KEYS", "redlock-loadgen:*"]).unwrap() != Reply::Array(Vec::new()),
    );
}

fn windows(mode: &Value) -> Vec<(u64, u64)> {
    let from = u(mode, "measured_from_unix_ms");
    vec![(from, from + (f(mode, "duration_s") * 1000.0).round() as u64)]
}

#[test]
fn runs_that_measured_together_merge_into_union_and_overlap_rates() {
    let masters = LocalMasters::start(3).expect("redis-server is installed");
    let urls = masters.urls().join(",");
    let dir = tempfile::tempdir().unwrap();
    let (a, b, merged) = (
        path(dir.path(), "a.json"),
        path(dir.path(), "b.json"),
        path(dir.path(), "merged.json"),
    );
    let workload = [
        "run",
        "--masters",
        &urls,
        "--fanout",
        "concurrent",
        "--clients",
        "2",
        "--resources",
        "50",
        "-q",
        "--hold",
        "1ms",
    ];
    // A measures 5 s; B starts once A is loading and measures 2 s, overlapping A's window.
    let mut first = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(workload)
        .args(["--warmup", "200ms", "--duration", "5s", "--json", s(&a)])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_load(&masters);
    let mut args = workload.to_vec();
    args.extend_from_slice(&["--warmup", "0s", "--duration", "2s", "--json", s(&b)]);
    succeed(&args);
    assert!(wait_for_exit(&mut first, "the first run", Duration::from_secs(120)).success());

    let report = succeed(&["merge", s(&a), s(&b), "--json", s(&merged)]);
    assert!(report.contains("merged     2 result files"), "{report}");
    let (ra, rb, rm) = (read_json(&a), read_json(&b), read_json(&merged));
    assert_schema_valid(&rm);
    let (ma, mb, mm) = (&ra["modes"][0], &rb["modes"][0], &rm["modes"][0]);
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
        assert_eq!(
            hist(&mm["latency"][what]),
            sum,
            "{what}: the merged histogram is the sum"
        );
        assert_eq!(
            u(&mm["latency"][what], "p99_us"),
            sum.quantile(0.99),
            "{what}"
        );
    }
    assert_consistent(mm, 3, 4);

    // Rates over the union of the two windows, and over the whole seconds both measured.
    let (wa, wb) = (windows(ma)[0], windows(mb)[0]);
    assert!(
        wb.0 < wa.1 && wa.0 < wb.1,
        "the runs overlapped: {wa:?} {wb:?}"
    );
    let union_ms = wa.1.max(wb.1) - wa.0.min(wb.0);
    assert_eq!(
        (f(mm, "duration_s") * 1000.0).round() as u64,
        union_ms,
        "duration = union"
    );
    let acquired = u(&mm["counts"], "acquired") as f64;
    let union_rate = f(&mm["rates"], "acquires_per_s");
    assert!((union_rate - acquired * 1000.0 / union_ms as f64).abs() < 1e-6 * union_rate + 1e-9);
    let (from, to) = (wa.0.max(wb.0), wa.1.min(wb.1));
    let base = u(mm, "measured_from_unix_ms");
    let inside: Vec<u64> = mm["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            let step = u(mm, "interval_ms");
            let start = base + u(i, "index") * step;
            start >= from && start + step <= to
        })
        .map(|i| u(i, "acquired"))
        .collect();
    let while_both = mm["rates"]["acquires_per_s_while_all_measured"].as_f64();
    if inside.is_empty() {
        assert_eq!(while_both, None);
    } else {
        let expected = inside.iter().sum::<u64>() as f64 / inside.len() as f64;
        assert_eq!(while_both, Some(expected));
    }
    assert_eq!(mm["windows_unix_ms"].as_array().unwrap().len(), 2);

    // The same file twice, and a result merged with one of its parts: the same run twice.
    let (_, err) = exits(2, &["merge", s(&a), s(&a)]);
    assert!(
        err.contains("both hold run") && err.contains("a.json"),
        "{err}"
    );
    let (_, err) = exits(2, &["merge", s(&merged), s(&b)]);
    assert!(err.contains("both hold run"), "{err}");

    // Not a result at all: named with the field at fault.
    let junk = path(dir.path(), "junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let (_, err) = exits(2, &["merge", s(&a), s(&junk)]);
    assert!(
        err.contains("junk.json") && err.contains("schema_version"),
        "{err}"
    );

    // A different workload, one after the other: refused for the workload first (naming the
    // field), then for never overlapping; both flags merge it and say so.
    let c = path(dir.path(), "c.json");
    let mut args = workload.to_vec();
    args[8] = "7"; // --resources
    args.extend_from_slice(&["--warmup", "0s", "--duration", "300ms", "--json", s(&c)]);
    succeed(&args);
    let (_, err) = exits(2, &["merge", s(&a), s(&c)]);
    assert!(
        err.contains("c.json") && err.contains("a.json") && err.contains("resources: 50 vs 7"),
        "{err}"
    );
    let (_, err) = exits(2, &["merge", s(&a), s(&c), "--allow-mixed"]);
    assert!(
        err.contains("never all overlap") && err.contains("--allow-disjoint"),
        "{err}"
    );
    let (report, err) = exits(
        0,
        &["merge", s(&a), s(&c), "--allow-mixed", "--allow-disjoint"],
    );
    assert!(
        err.contains("warning") && err.contains("never all overlap"),
        "{err}"
    );
    assert!(
        report.contains("MERGE NOTE mixed workloads") && report.contains("MERGE NOTE disjoint"),
        "{report}"
    );
}

#[test]
fn sweeps_merge_level_by_level() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, merged) = (
        path(dir.path(), "a.json"),
        path(dir.path(), "b.json"),
        path(dir.path(), "m.json"),
    );
    for file in [&a, &b] {
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
            "0s",
            "-q",
            "--json",
            s(file),
        ]);
    }
    // One after the other: they never measured together, so only --allow-disjoint merges them.
    let (_, err) = exits(2, &["merge", s(&a), s(&b)]);
    assert!(err.contains("never all overlap"), "{err}");
    let table = succeed(&[
        "merge",
        s(&a),
        s(&b),
        "--allow-disjoint",
        "--json",
        s(&merged),
    ]);
    assert!(table.contains("merged     2 sweep results"), "{table}");
    let (ra, rb, rm) = (read_json(&a), read_json(&b), read_json(&merged));
    assert_schema_valid(&rm);
    assert_eq!(rm["kind"], "sweep");
    for level in 0..2 {
        let count =
            |r: &Value, key: &str| u(&r["levels"][level]["result"]["modes"][0]["counts"], key);
        assert_eq!(rm["levels"][level]["level"], ra["levels"][level]["level"]);
        for key in ["acquire_calls", "acquired", "attempts"] {
            assert_eq!(
                count(&rm, key),
                count(&ra, key) + count(&rb, key),
                "level {level} {key}"
            );
        }
    }
    // A sweep and a run are not one kind.
    let run = path(dir.path(), "run.json");
    succeed(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--duration",
        "200ms",
        "--warmup",
        "0s",
        "-q",
        "--json",
        s(&run),
    ]);
    let (_, err) = exits(2, &["merge", s(&a), s(&run)]);
    assert!(
        err.contains("sweep result") && err.contains("run result"),
        "{err}"
    );
}

/// The current result in the shape an older schema version wrote: version 3 kept one-second
/// intervals (`second`) with the acquire histogram alone; version 2 also had no
/// `unavailable_attempts`.
fn downgrade(current: &Value, version: u32) -> Value {
    let mut old = current.clone();
    old["schema_version"] = version.into();
    for mode in old["modes"].as_array_mut().unwrap() {
        let mode = mode.as_object_mut().unwrap();
        mode.remove("interval_ms");
        if version < 3 {
            mode["counts"]
                .as_object_mut()
                .unwrap()
                .remove("unavailable_attempts");
        }
        for i in mode["intervals"].as_array_mut().unwrap() {
            let i = i.as_object_mut().unwrap();
            let index = i.remove("index").unwrap();
            i.insert("second".into(), index);
            for key in [
                "not_acquired",
                "unavailable",
                "other_errors",
                "attempts_won",
                "clean_losses",
                "expired_attempts",
                "releases",
                "acquire_p50_us",
                "acquire_p999_us",
                "attempt_hdr",
                "release_hdr",
                "round_trip_hdr",
            ] {
                i.remove(key);
            }
            if version < 3 {
                i.remove("unavailable_attempts");
            }
        }
    }
    old
}

/// The previous schema versions (3: one-second intervals with the acquire histogram alone;
/// 2: also no `unavailable_attempts`) still merge with the current one, with a note saying
/// what they lack; any other version is refused naming it.
#[test]
fn a_result_of_the_previous_schema_versions_merges_and_an_unknown_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (current, other) = (
        path(dir.path(), "current.json"),
        path(dir.path(), "other.json"),
    );
    for file in [&current, &other] {
        succeed(&[
            "run",
            "--fanout",
            "concurrent",
            "--clients",
            "2",
            "--warmup",
            "0s",
            "--duration",
            "300ms",
            "-q",
            "--json",
            s(file),
        ]);
    }
    let current = read_json(&current);
    assert_eq!(current["schema_version"], 4);
    let other_json = read_json(&other);
    let count = |v: &Value, key: &str| u(&v["modes"][0]["counts"], key);
    for version in [3, 2] {
        let old = downgrade(&current, version);
        let file = path(dir.path(), &format!("v{version}.json"));
        std::fs::write(&file, old.to_string()).unwrap();
        let merged = path(dir.path(), "merged.json");
        // The two runs ran one after the other: their windows never overlap.
        let report = succeed(&[
            "merge",
            s(&file),
            s(&other),
            "--allow-disjoint",
            "--json",
            s(&merged),
        ]);
        assert!(
            report.contains("MERGE NOTE") && report.contains(&format!("schema version {version}")),
            "{report}"
        );
        let merged = read_json(&merged);
        assert_schema_valid(&merged);
        assert_eq!(merged["schema_version"], 4);
        assert_eq!(
            count(&merged, "acquired"),
            count(&current, "acquired") + count(&other_json, "acquired")
        );
        let intervals = merged["modes"][0]["intervals"].as_array().unwrap();
        let per_interval: u64 = intervals.iter().map(|i| u(i, "acquired")).sum();
        assert_eq!(per_interval, count(&merged, "acquired"));
        if version == 2 {
            // Version 2 had no such count: it adds nothing.
            assert_eq!(
                count(&merged, "unavailable_attempts"),
                count(&other_json, "unavailable_attempts")
            );
        }
    }

    let mut old = downgrade(&current, 3);
    old["schema_version"] = 1.into();
    let v1 = path(dir.path(), "v1.json");
    std::fs::write(&v1, old.to_string()).unwrap();
    let (_, err) = exits(2, &["merge", s(&v1), s(&other)]);
    assert!(
        err.contains("v1.json") && err.contains("schema_version: 1 is not supported"),
        "{err}"
    );
}
