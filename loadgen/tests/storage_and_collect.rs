//! The protected resource and `collect` facing what they cannot trust: the storage's token
//! check compares tokens exactly (a record near 2^63 planted on a real redis-server), a
//! storage that takes no write fails the run with a verdict that says so, a bad `--storage`
//! names `--storage`, and `collect` ends by its deadline whatever agent count the coordinator
//! holds, refuses an agent's oversized timings before reading them (naming the agent and the
//! field, in bounded memory), and names the stage its `--wait` ran out in.

use crate::common;

use std::process::Command;
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

/// `collect` of run `run` on `url` with at most `data_limit` bytes of data memory
/// (RLIMIT_DATA: reading a value larger than that ends it with an allocation failure):
/// (exit code, stderr).
fn collect_within(url: &str, run: &str, data_limit: u64) -> (Option<i32>, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"));
    command.args([
        "collect",
        "--coordinator",
        url,
        "--run-id",
        run,
        "--wait",
        "30s",
    ]);
    // SAFETY: the closure only calls setrlimit(2), which is async-signal-safe.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            let limit = libc::rlimit {
                rlim_cur: data_limit,
                rlim_max: data_limit,
            };
            match libc::setrlimit(libc::RLIMIT_DATA, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let out = command.output().unwrap();
    (out.status.code(), text(&out.stderr))
}

/// A timings record (`agent:n`) of `phases` phases, as an agent writes it.
fn timings(agent: u32, phases: usize) -> String {
    let phase = |p: usize| {
        format!(
            r#"{{"phase":{p},"fanout":"concurrent","planned_start_unix_us":1,"sync_rtt_us":1,"woke_late_us":1,"bound_us":1}}"#
        )
    };
    let all: Vec<String> = (1..=phases).map(phase).collect();
    format!(
        r#"{{"agent":{agent},"host":"h","phases":[{}]}}"#,
        all.join(",")
    )
}

#[test]
fn collect_refuses_oversized_agent_timings_naming_the_agent_and_the_field() {
    let coordinator = LocalMasters::start(1).unwrap();
    let url = &coordinator.urls()[0];
    let k = |name: &str| format!("redlock-loadgen-coordinator:big:{name}");
    set(url, &k("agents"), "1");
    set(url, &k("result:1"), "{}");
    // 200,000 phases (about 22 MB): refused by its size, before it is read.
    set(url, &k("agent:1"), &timings(1, 200_000));
    let unlimited = u64::MAX;
    let (code, stderr) = collect_within(url, "big", unlimited);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("run big: agent 1's timings: ")
            && stderr.contains("bytes under key redlock-loadgen-coordinator:big:agent:1")
            && stderr.contains("4096")
            && stderr.contains("phases"),
        "{stderr}"
    );
    // Within the bytes but over the phases.
    set(url, &k("agent:1"), &timings(1, 5_000));
    let (code, stderr) = collect_within(url, "big", unlimited);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("agent 1's timings: 5000 phases, at most 4096"),
        "{stderr}"
    );
    // 100 MiB of timings: refused naming the agent and the field, and never read: collect
    // refuses it with 48 MiB of data memory (reading the record would abort it).
    let size = 100u64 << 20;
    coordinator
        .command(
            0,
            &["SETRANGE", &k("agent:1"), &(size - 1).to_string(), "x"],
        )
        .unwrap();
    let (code, stderr) = collect_within(url, "big", 48 << 20);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("agent 1's timings: {size} bytes under key"))
            && stderr.contains("nothing of it was read"),
        "{stderr}"
    );
}

#[test]
fn collect_names_the_stage_its_wait_ran_out_in() {
    let coordinator = LocalMasters::start(1).unwrap();
    let url = &coordinator.urls()[0];
    set(url, "redlock-loadgen-coordinator:frozen:agents", "1");
    // A coordinator that takes connections but answers nothing: every request hangs, and
    // --wait (shorter than the 10 s bound of one request) ends the command.
    coordinator.pause(0).unwrap();
    let out = loadgen(&[
        "collect",
        "--coordinator",
        url,
        "--run-id",
        "frozen",
        "--wait",
        "1s",
    ]);
    coordinator.resume(0).unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("run frozen: collect did not finish within 1s (--wait): it was ")
            && (stderr.contains("connecting to the coordinator")
                || stderr.contains("reading run frozen's agent count"))
            && stderr.contains("no report was printed"),
        "{stderr}"
    );
}
