//! The generator under abuse: unreachable masters fail fast with each master's cause, signals
//! end a run with its partial report and stopped masters, overload is counted and flagged,
//! long holds are cut at the end, "no lock won" is a failure, bad output paths cost no run.
//! Every child process here ends by itself; waits are bounded by generous deadlines.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use redlock_local::LocalMasters;

#[test]
fn unreachable_masters_fail_fast_naming_each_cause() {
    let urls: Vec<String> = closed_ports(3)
        .iter()
        .map(|p| format!("redis://127.0.0.1:{p}"))
        .collect();
    let (report, err) = exits(1, &["--masters", &urls.join(","), "--duration", "1m", "-q"]);
    assert!(report.is_empty(), "nothing was measured: {report}");
    assert!(
        err.contains("only 0 of 3 masters could be reached"),
        "{err}"
    );
    for (i, url) in urls.iter().enumerate() {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("m{i} {url}")))
            .unwrap_or_else(|| panic!("no cause for m{i}: {err}"));
        assert!(line.to_lowercase().contains("refused"), "{line}");
    }

    // A wrong password: the cause is the server's refusal, and the password is not printed.
    let masters = LocalMasters::start_with_password(3, "right-pass").unwrap();
    let wrong: Vec<String> = (0..3)
        .map(|i| {
            format!(
                "redis://:S3cretWrong@127.0.0.1:{}",
                masters.port(i).unwrap()
            )
        })
        .collect();
    let (_, err) = exits(
        1,
        &["--masters", &wrong.join(","), "--duration", "1m", "-q"],
    );
    assert!(!err.contains("S3cretWrong"), "password printed: {err}");
    assert!(
        err.contains("m2 redis://:***@127.0.0.1")
            && (err.contains("WRONGPASS") || err.to_lowercase().contains("auth")),
        "{err}"
    );
}

/// Spawns a long run on 3 local masters whose stderr is read line by line.
fn long_run(extra: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"));
    // Signalled by the tests: start it as a shell would, whatever this process ignores.
    let mut child = redlock_local::with_default_signals(&mut command)
        .args([
            "run",
            "--spawn",
            "3",
            "--fanout",
            "concurrent",
            "--clients",
            "2",
            "--warmup",
            "0s",
            "--duration",
            "10m",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for a stderr line containing `needle` (generous bound).
fn wait_for_line(rx: &mpsc::Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(e) => panic!("no stderr line with {needle:?}: {e}"),
        }
    }
}

/// Waits for the child to exit (generous bound); kills it if it does not.
fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    redlock_local::wait_for_exit(child, "the run after the signal", Duration::from_secs(60))
}

fn listening(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

#[test]
fn sigint_sigterm_and_sighup_each_end_a_run_with_its_partial_report() {
    for (signal, name, code) in [
        (libc::SIGINT, "SIGINT", 130),
        (libc::SIGTERM, "SIGTERM", 143),
        (libc::SIGHUP, "SIGHUP", 129),
    ] {
        let (mut child, rx) = long_run(&[]);
        // The masters are up and the load is running.
        wait_for_line(&rx, "concurrent fan-out: load running");
        // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let status = wait_exit(&mut child);
        assert_eq!(status.code(), Some(code), "{name}");
        let mut report = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut report).unwrap();
        assert!(
            report.contains(&format!("INTERRUPTED ({name})")) && report.contains("acquire calls"),
            "{name}: {report}"
        );
        // Every master of the report's "masters" line was stopped.
        let line = report.lines().find(|l| l.starts_with("masters")).unwrap();
        let ports: Vec<u16> = line
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("redis://127.0.0.1:"))
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(ports.len(), 3, "{line}");
        for port in ports {
            assert!(!listening(port), "{name}: master on {port} still runs");
        }
    }
}

#[test]
fn open_loop_overload_counts_what_ran_and_is_flagged_generator_bound() {
    // 2 clients cannot start a million acquires a second: the generator says so, counts every
    // operation that ran in the measured window, and skips the warm-up's backlog.
    let out = loadgen(&[
        "run",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--rate",
        "1000000",
        "--clients",
        "2",
        "--resources",
        "100",
        "--warmup",
        "300ms",
        "--duration",
        "700ms",
        "--json",
        "-",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        // Too few clients, or (on a machine with few cores) a saturated CPU: either way it
        // is the generator.
        err.contains("generator-bound")
            && (err.contains("raise --clients") || err.contains("the generator used")),
        "{err}"
    );
    assert!(
        err.contains("GENERATOR-BOUND"),
        "the report (on stderr with --json -): {err}"
    );
    let result: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("--json - writes the JSON to stdout");
    assert_schema_valid(&result);
    let mode = &result["modes"][0];
    let c = &mode["counts"];
    assert!(u(c, "acquire_calls") > 0, "what ran was counted: {c}");
    assert!(u(c, "warmup_slots_skipped") > 0, "{c}");
    assert!(
        u(c, "dropped_slots") > 0 && u(c, "late_no_free_client") > 0,
        "{c}"
    );
    assert_eq!(mode["generator"]["generator_bound"], true);
    assert_eq!(mode["generator"]["target_missed"], true);
    assert_consistent(mode, 3, 2);
}

#[test]
fn long_holds_are_cut_at_the_end_and_every_lock_is_released() {
    let masters = LocalMasters::start(3).unwrap();
    let urls = masters.urls().join(",");
    // Holds of 10 minutes in a 300 ms run: the grace cuts them and the locks are released.
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args([
            "run",
            "--masters",
            &urls,
            "--fanout",
            "concurrent",
            "--clients",
            "3",
            "--resources",
            "3",
            "--hold",
            "10m",
            "--ttl",
            "20m",
            "--warmup",
            "0s",
            "--duration",
            "300ms",
            "-q",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_exit(&mut child);
    assert!(status.success(), "{status}");
    assert!(started.elapsed() < Duration::from_secs(60));
    for i in 0..3 {
        assert_eq!(
            masters.key_count(i).unwrap(),
            0,
            "master {i} still holds a lock"
        );
    }
}

#[test]
fn a_run_that_never_wins_a_lock_fails_unless_allowed() {
    let masters = LocalMasters::start(3).unwrap();
    // Another process holds the only resource on every master for the whole run.
    for i in 0..3 {
        masters
            .command(
                i,
                &["SET", "redlock-loadgen:0", "someone-else", "PX", "600000"],
            )
            .unwrap();
    }
    let urls = masters.urls().join(",");
    let args = [
        "run",
        "--masters",
        &urls,
        "--fanout",
        "concurrent",
        "--clients",
        "2",
        "--resources",
        "1",
        "--retry-count",
        "0",
        "--warmup",
        "0s",
        "--duration",
        "300ms",
        "-q",
    ];
    let (report, err) = exits(1, &args);
    assert!(report.contains("acquire errors: not acquired"), "{report}");
    assert!(
        err.contains("no lock was won") && err.contains("--allow-no-locks"),
        "{err}"
    );
    let mut allowed = args.to_vec();
    allowed.push("--allow-no-locks");
    exits(0, &allowed);
}

#[test]
fn unwritable_outputs_are_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let f = file.to_str().unwrap();
    let mut cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--json", d], "--json"),
        (vec!["--json", "/nonexistent/x.json"], "/nonexistent"),
        (vec!["--hgrm", f], "--hgrm"),
        (vec!["--csv", "/nonexistent/x.csv"], "--csv"),
        (vec!["--json", "-", "--csv", "-"], "standard output"),
    ];
    if std::path::Path::new("/dev/full").exists() {
        cases.push((vec!["--plot", "/dev/full"], "/dev/full"));
    }
    for (extra, needle) in cases {
        // Unreachable masters: had the outputs not been checked first, this would exit 1.
        let mut args = vec!["run", "--masters", "redis://127.0.0.1:1", "-q"];
        args.extend(extra.iter().copied());
        let (_, err) = exits(2, &args);
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
}

/// The core checks the client settings; the generator only names its flags: a usage error
/// (exit 2) naming the flag and the value, before any measurement.
#[test]
fn settings_the_core_refuses_are_usage_errors_naming_the_flag() {
    let (report, err) = exits(
        2,
        &["--spawn", "1", "--ttl", "1ms", "--duration", "1s", "-q"],
    );
    assert!(report.is_empty(), "nothing was measured: {report}");
    assert!(
        err.contains("--ttl 1ms: must be longer than the clock-drift allowance"),
        "{err}"
    );
    let (_, err) = exits(
        2,
        &["--spawn", "3", "--quorum", "1", "--duration", "1s", "-q"],
    );
    assert!(
        err.contains("--quorum 1: must be between 2 (majority) and 3 (all masters)"),
        "{err}"
    );
}
