//! The protected resource and `collect` facing what they cannot trust: the storage's token
//! check compares tokens exactly (a record near 2^63 planted on a real redis-server), a
//! storage that takes no write fails the run with a verdict that says so, a bad `--storage`
//! names `--storage`, and `collect` ends by its deadline whatever agent count the coordinator
//! holds.

mod common;

use std::time::Duration;

use common::{closed_ports, exits, loadgen, text};
use redlock_loadgen::engine::storage::{Storage, Written};
use redlock_local::LocalMasters;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn set(url: &str, key: &str, value: &str) {
    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
    redis::cmd("SET")
        .arg(key)
        .arg(value)
        .query::<()>(&mut con)
        .unwrap();
}

#[test]
fn the_fenced_write_compares_tokens_exactly_near_2_63() {
    let masters = LocalMasters::start(1).unwrap();
    let url = &masters.urls()[0];
    let storage = Storage::new(url, true, Duration::from_secs(5)).unwrap();
    let record = storage.record(0);
    let rt = runtime();
    // Doubles are 2,048 apart here: as Lua numbers these tokens would all be equal.
    let planted = (1u64 << 63) + 1024;
    set(url, &record, &planted.to_string());
    for stale in [planted - 1, planted - 1000, 1u64 << 63] {
        assert_eq!(
            rt.block_on(storage.write(0, &stale.to_string())),
            Written::Refused,
            "a write of {stale} after {planted} was stored"
        );
    }
    assert_eq!(
        rt.block_on(storage.write(0, &planted.to_string())),
        Written::Stored
    );
    assert_eq!(
        rt.block_on(storage.write(0, &(planted + 1).to_string())),
        Written::Stored
    );
    assert_eq!(
        rt.block_on(storage.write(0, &planted.to_string())),
        Written::Refused
    );
    // Fewer digits is smaller, whatever the digits; leading zeros on a record do not count.
    set(url, &record, "0009007199254740993");
    assert_eq!(
        rt.block_on(storage.write(0, "9007199254740992")),
        Written::Refused
    );
    assert_eq!(rt.block_on(storage.write(0, "999")), Written::Refused);
    assert_eq!(
        rt.block_on(storage.write(0, "9007199254740993")),
        Written::Stored
    );
    // A record that is not a token is an error, never overwritten.
    set(url, &record, "abc");
    assert!(matches!(
        rt.block_on(storage.write(0, "5")),
        Written::Failed(_)
    ));
}

/// A fenced run writing to `storage`: (exit code, text report, stderr).
fn fenced_run(storage: &str) -> (Option<i32>, String, String) {
    let out = loadgen(&[
        "run",
        "--fencing",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--storage",
        storage,
        "--duration",
        "500ms",
        "--warmup",
        "100ms",
        "-q",
    ]);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_storage_that_takes_no_write_fails_the_run_and_the_verdict_says_so() {
    let closed = format!("redis://127.0.0.1:{}", closed_ports(1)[0]);
    let guarded = LocalMasters::start_with_password(1, "right-pw").unwrap();
    let port = guarded.port(0).unwrap();
    let wrong_password = format!("redis://:wrong-pw@127.0.0.1:{port}");
    for storage in [closed, wrong_password] {
        let (code, report, stderr) = fenced_run(&storage);
        assert_eq!(code, Some(1), "{storage}: {report}\n{stderr}");
        let verdict = report
            .lines()
            .find(|l| l.starts_with("stale writes accepted"))
            .unwrap_or_else(|| panic!("no stale-write line in\n{report}"));
        assert!(
            verdict.contains("UNKNOWN: the storage took no write"),
            "{verdict}"
        );
        assert!(
            stderr.contains("--storage") && stderr.contains("took none of the"),
            "{stderr}"
        );
        assert!(!stderr.contains("wrong-pw"), "{stderr}");
    }
}

#[test]
fn a_malformed_storage_url_names_storage_not_masters() {
    let (_, stderr) = exits(2, &["run", "--fencing", "--storage", "http://nowhere"]);
    assert!(stderr.contains("'--storage <URL>'"), "{stderr}");
    assert!(!stderr.contains("--masters"), "{stderr}");
    let (_, stderr) = exits(2, &["run", "--masters", "http://nowhere"]);
    assert!(stderr.contains("'--masters <URL,...>'"), "{stderr}");
}

#[test]
fn collect_refuses_an_agent_count_beyond_any_run_and_ends_by_its_deadline() {
    let coordinator = LocalMasters::start(1).unwrap();
    let url = &coordinator.urls()[0];
    set(url, "redlock-loadgen-coordinator:huge:agents", "4294967295");
    let (_, stderr) = exits(
        1,
        &[
            "collect",
            "--coordinator",
            url,
            "--run-id",
            "huge",
            "--wait",
            "2s",
        ],
    );
    assert!(
        stderr.contains("4294967295") && stderr.contains("not 1 to 1000"),
        "{stderr}"
    );
    // A count within range whose agents never stored anything: the wait ends at --wait.
    set(url, "redlock-loadgen-coordinator:late:agents", "1000");
    let (_, stderr) = exits(
        1,
        &[
            "collect",
            "--coordinator",
            url,
            "--run-id",
            "late",
            "--wait",
            "1s",
        ],
    );
    assert!(
        stderr.contains("only 0 of 1000 agents stored a result within 1s (--wait)"),
        "{stderr}"
    );
}
