//! Many agents, coordinated through a coordinator Redis: 3 agent processes on 5 local masters
//! wait at the barrier until the last joins, start at one planned instant of the coordinator's
//! clock, and `collect` prints their exact merge; a missing agent ends the run for everybody
//! after the join timeout; `capacity --agents 2` searches as one; `collect` checks 2 × 1M
//! windows and stops on SIGTERM. Every process is bounded and
//! stopped (killed at a generous deadline, then the test fails).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use redlock_local::resp::Reply;
use redlock_local::LocalMasters;
use serde_json::Value;

const DEADLINE: Duration = Duration::from_secs(120);

/// What most tests here start from: masters, a coordinator Redis (its own server, never one
/// of the masters), their URLs, and a directory for the agents' stderr.
/// A test holds the whole `Site`, so its servers and directory last until the test ends.
struct Site {
    masters: LocalMasters,
    coordinator: LocalMasters,
    urls: String,
    coord: String,
    dir: tempfile::TempDir,
}

fn site(masters: usize) -> Site {
    let masters = LocalMasters::start(masters).expect("redis-server is installed");
    let coordinator = LocalMasters::start(1).unwrap();
    let (urls, coord) = (masters.urls().join(","), coordinator.urls()[0].clone());
    let dir = tempfile::tempdir().unwrap();
    Site {
        masters,
        coordinator,
        urls,
        coord,
        dir,
    }
}

/// An agent process; its stderr goes to a file (read after it ended).
struct Agent {
    child: Child,
    stderr: PathBuf,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(dir: &Path, name: &str, args: &[&str]) -> Agent {
    let stderr = dir.join(format!("{name}.stderr"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"));
    // Some agents are signalled: start them as a shell would, whatever this process ignores.
    let child = redlock_local::with_default_signals(&mut command)
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    Agent { child, stderr }
}

/// Waits (bounded) for the agent to end; returns its exit code and stderr.
fn finish(agent: &mut Agent) -> (i32, String) {
    let status = redlock_local::wait_for_exit(&mut agent.child, "an agent", DEADLINE);
    let stderr = std::fs::read_to_string(&agent.stderr).unwrap();
    (status.code().unwrap_or(-1), stderr)
}

fn get(coordinator: &LocalMasters, key: &str) -> Option<String> {
    match coordinator.command(0, &["GET", key]).unwrap() {
        Reply::Bulk(b) => Some(String::from_utf8(b).unwrap()),
        _ => None,
    }
}

/// Polls (generous bound) until `n` agents arrived at the first barrier of `run`.
fn wait_arrived(coordinator: &LocalMasters, run: &str, n: u64) {
    let key = format!("redlock-loadgen-coordinator:{run}:phase:1:arrived");
    redlock_local::eventually_blocking(&format!("{n} agents to arrive"), DEADLINE, || {
        get(coordinator, &key).and_then(|v| v.parse().ok()) == Some(n)
    });
}

fn agent_info(coordinator: &LocalMasters, run: &str, n: u32) -> Value {
    let text = get(
        coordinator,
        &format!("redlock-loadgen-coordinator:{run}:agent:{n}"),
    )
    .expect("the agent stored its timings");
    serde_json::from_str(&text).unwrap()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn no_lock_keys_on(coordinator: &LocalMasters) {
    let keys = coordinator
        .command(0, &["KEYS", "redlock-loadgen:*"])
        .unwrap();
    assert_eq!(
        keys,
        Reply::Array(Vec::new()),
        "the coordinator never holds lock keys"
    );
}

#[test]
fn three_agents_start_together_and_collect_adds_them_up() {
    let site = site(5);
    let json: Vec<PathBuf> = (0..3)
        .map(|i| site.dir.path().join(format!("a{i}.json")))
        .collect();
    let args = |i: usize| -> Vec<String> {
        [
            "run",
            "--masters",
            &site.urls,
            "--coordinator",
            &site.coord,
            "--agents",
            "3",
            "--run-id",
            "together",
            "--fanout",
            "both",
            "--clients",
            "2",
            "--resources",
            "3",
            "--hold",
            "1ms",
            "--warmup",
            "200ms",
            "--duration",
            "1s",
            "-q",
            "--threshold",
            "violations==0",
            "--json",
            json[i].to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let (a0, a1, a2) = (args(0), args(1), args(2));
    let mut first = spawn(site.dir.path(), "a0", &strs(&a0));
    let mut second = spawn(site.dir.path(), "a1", &strs(&a1));
    wait_arrived(&site.coordinator, "together", 2);
    // Two are in, the third is not: nobody may start (no start planned, no lock taken).
    assert!(first.child.try_wait().unwrap().is_none(), "agent 1 waits");
    assert!(second.child.try_wait().unwrap().is_none(), "agent 2 waits");
    assert_eq!(
        get(
            &site.coordinator,
            "redlock-loadgen-coordinator:together:phase:1:start"
        ),
        None
    );
    let mut third = spawn(site.dir.path(), "a2", &strs(&a2));
    for agent in [&mut first, &mut second, &mut third] {
        let (code, stderr) = finish(agent);
        assert_eq!(code, 0, "{stderr}");
    }

    // One planned start per phase, the same on every agent; the measured windows (on the
    // coordinator's clock) begin at the same whole second.
    let infos: Vec<Value> = (1..=3)
        .map(|n| agent_info(&site.coordinator, "together", n))
        .collect();
    let results: Vec<Value> = json.iter().map(|p| read_json(p)).collect();
    for phase in 0..2 {
        let planned: Vec<u64> = infos
            .iter()
            .map(|i| u(&i["phases"][phase], "planned_start_unix_us"))
            .collect();
        assert!(planned.windows(2).all(|w| w[0] == w[1]), "{planned:?}");
        let measured: Vec<u64> = results
            .iter()
            .map(|r| u(&r["modes"][phase], "measured_from_unix_ms"))
            .collect();
        assert!(measured.windows(2).all(|w| w[0] == w[1]), "{measured:?}");
        assert_eq!(measured[0] * 1000, planned[0] + 200_000);
        assert_eq!(measured[0] % 1000, 0, "on a whole second");
        // Reported, not asserted: how late each agent's timer fired (scheduling noise).
        let late: Vec<u64> = infos
            .iter()
            .map(|i| u(&i["phases"][phase], "woke_late_us"))
            .collect();
        eprintln!("phase {}: timers fired late by {late:?} µs", phase + 1);
    }
    no_lock_keys_on(&site.coordinator);

    // Each agent judged its own part.
    for r in &results {
        let judged = r["thresholds"].as_array().unwrap();
        assert_eq!(judged.len(), 2, "one verdict per mode: {judged:?}");
        assert!(judged.iter().all(|t| t["passed"] == true), "{judged:?}");
    }

    // `collect` gates on the whole run: no acquire takes less than 1 µs, so it exits 4, after
    // the merged report that lists both verdicts per mode.
    let merged = site.dir.path().join("merged.json");
    let (report, _) = exits(
        4,
        &[
            "collect",
            "--coordinator",
            &site.coord,
            "--run-id",
            "together",
            "--wait",
            "30s",
            "--threshold",
            "violations==0",
            "--threshold",
            "acquire.p50<1us",
            "--json",
            merged.to_str().unwrap(),
        ],
    );
    assert!(report.contains("thresholds"), "{report}");
    for n in 1..=3 {
        assert!(report.contains(&format!("agent {n} ")), "{report}");
    }
    assert!(report.contains("0 certain overlap(s)"), "{report}");
    let all = read_json(&merged);
    assert_schema_valid(&all);
    let judged = all["thresholds"].as_array().unwrap();
    assert_eq!(judged.len(), 4, "{judged:?}");
    assert_eq!(
        judged.iter().filter(|t| t["passed"] == false).count(),
        2,
        "acquire.p50<1us fails in both modes: {judged:?}"
    );
    for (m, mode) in all["modes"].as_array().unwrap().iter().enumerate() {
        for (key, _) in mode["counts"].as_object().unwrap() {
            let sum: u64 = results
                .iter()
                .map(|r| u(&r["modes"][m]["counts"], key))
                .sum();
            assert_eq!(u(&mode["counts"], key), sum, "mode {m} counts.{key}");
        }
        let mut sum = hist(&results[0]["modes"][m]["latency"]["acquire"]);
        for r in &results[1..] {
            sum.add(&hist(&r["modes"][m]["latency"]["acquire"]));
        }
        assert_eq!(hist(&mode["latency"]["acquire"]), sum);
        assert_consistent(mode, 5, 6);
    }
    // The JSON also says how the agents started and what the cross-agent check found, and
    // stays a result `merge` reads (it refuses agent 1's run twice, naming it).
    let c = &all["coordination"];
    assert_eq!(c["run_id"], "together");
    assert_eq!(c["agents"].as_array().unwrap().len(), 3);
    for (n, info) in c["agents"].as_array().unwrap().iter().enumerate() {
        assert_eq!(u(info, "agent"), n as u64 + 1);
        assert_eq!(info["phases"], infos[n]["phases"]);
    }
    assert_eq!(u(&c["cross_agent"], "certain_overlaps"), 0);
    let windows: u64 = results
        .iter()
        .flat_map(|r| r["modes"].as_array().unwrap().iter())
        .map(|m| u(&m["counts"], "windows_checked"))
        .sum();
    assert_eq!(u(&c["cross_agent"], "windows"), windows);
    let (_, stderr) = exits(
        2,
        &["merge", merged.to_str().unwrap(), json[0].to_str().unwrap()],
    );
    assert!(stderr.contains("both hold run"), "{stderr}");
}

#[test]
fn a_missing_agent_ends_the_run_for_everybody() {
    let site = site(5);
    let args = [
        "run",
        "--masters",
        &site.urls,
        "--coordinator",
        &site.coord,
        "--agents",
        "3",
        "--run-id",
        "short",
        "--join-timeout",
        "2s",
        "--fanout",
        "concurrent",
        "--duration",
        "1s",
        "-q",
    ];
    let mut agents = [
        spawn(site.dir.path(), "a0", &args),
        spawn(site.dir.path(), "a1", &args),
    ];
    for agent in &mut agents {
        let (code, stderr) = finish(agent);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("only 2 of 3 agents joined within 2s (--join-timeout)"),
            "{stderr}"
        );
    }
    // Nothing was loaded, and a late third agent does not start alone.
    let keys = site.masters.command(0, &["DBSIZE"]).unwrap();
    assert_eq!(keys, Reply::Integer(0));
    let (_, stderr) = exits(1, &args);
    assert!(stderr.contains("was given up: only 2 of 3"), "{stderr}");
    let (_, stderr) = exits(
        1,
        &["collect", "--coordinator", &site.coord, "--run-id", "short"],
    );
    assert!(stderr.contains("was given up"), "{stderr}");
}

fn capacity_args<'a>(urls: &'a str, coord: &'a str, run: &'a str) -> Vec<&'a str> {
    vec![
        "capacity",
        // Mechanics at low rates: the percentiles may rest on few calls.
        "--min-calls",
        "1",
        "--masters",
        urls,
        "--coordinator",
        coord,
        "--agents",
        "2",
        "--run-id",
        run,
        "--fanout",
        "concurrent",
        "--start-rate",
        "100",
        "--max-steps",
        "2",
        "--warmup",
        "0s",
        "--duration",
        "1s",
        "--clients",
        "8",
        "--slo",
        "p99<5s",
        "--min-success",
        "50%",
        "-q",
    ]
}

#[test]
fn capacity_runs_every_step_on_both_agents_at_half_the_rate() {
    let site = site(5);
    let json: Vec<PathBuf> = (0..2)
        .map(|i| site.dir.path().join(format!("c{i}.json")))
        .collect();
    let mut agents: Vec<Agent> = (0..2)
        .map(|i| {
            let mut args = capacity_args(&site.urls, &site.coord, "cap");
            args.extend(["--json", json[i].to_str().unwrap()]);
            spawn(site.dir.path(), &format!("c{i}"), &args)
        })
        .collect();
    let codes: Vec<(i32, String)> = agents.iter_mut().map(finish).collect();
    let parts: Vec<Value> = json.iter().map(|p| read_json(p)).collect();
    for ((code, stderr), part) in codes.iter().zip(&parts) {
        // A busy machine decides the steps (capacity's rule): then no rate is claimed, and the
        // agent says so and exits 1; otherwise the lax objective is met.
        match part["answers"][0]["status"].as_str() {
            Some("no-answer") => {
                assert_eq!(*code, 1, "{stderr}");
                assert!(
                    stderr.contains("no answer on this machine (concurrent)"),
                    "{stderr}"
                );
            }
            _ => assert_eq!(*code, 0, "{stderr}"),
        }
    }
    // Both agents took the same steps, each at half the rate asked.
    let steps = |v: &Value| -> Vec<(String, f64)> {
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["phase"].as_str().unwrap().to_string(),
                    f(s, "rate_asked_per_s"),
                )
            })
            .collect()
    };
    assert_eq!(steps(&parts[0]), steps(&parts[1]));
    assert_eq!(steps(&parts[0])[0].1, 50.0, "{:?}", steps(&parts[0]));
    let merged = site.dir.path().join("merged.json");
    let report = succeed(&[
        "collect",
        "--coordinator",
        &site.coord,
        "--run-id",
        "cap",
        "--json",
        merged.to_str().unwrap(),
    ]);
    assert!(report.contains("merged     2 capacity results"), "{report}");
    let all = read_json(&merged);
    assert_schema_valid(&all);
    for (i, step) in all["steps"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            f(step, "rate_asked_per_s"),
            2.0 * f(&parts[0]["steps"][i], "rate_asked_per_s")
        );
        let calls: u64 = parts
            .iter()
            .map(|p| {
                u(
                    &p["steps"][i]["result"]["modes"][0]["counts"],
                    "acquire_calls",
                )
            })
            .sum();
        assert_eq!(
            u(&step["result"]["modes"][0]["counts"], "acquire_calls"),
            calls
        );
    }
    no_lock_keys_on(&site.coordinator);

    // One of two: the one that came gives up after the join timeout, saying so.
    let mut args = capacity_args(&site.urls, &site.coord, "cap-alone");
    args.extend(["--join-timeout", "2s"]);
    let (_, stderr) = exits(1, &args);
    assert!(
        stderr.contains("only 1 of 2 agents joined within 2s"),
        "{stderr}"
    );
}

/// The negative control of the cross-agent check: two agents that believe they share masters
/// but each load their own hold "the same" lock at the same time. Each agent's own check
/// cannot see it; `collect` does, names the tokens, and exits 3.
#[test]
fn agents_on_different_masters_are_caught_by_the_cross_agent_check() {
    let mine = LocalMasters::start(3).expect("redis-server is installed");
    let theirs = LocalMasters::start(3).unwrap();
    let coordinator = LocalMasters::start(1).unwrap();
    let coord = coordinator.urls()[0].clone();
    let dir = tempfile::tempdir().unwrap();
    let mut agents: Vec<Agent> = [mine.urls().join(","), theirs.urls().join(",")]
        .iter()
        .enumerate()
        .map(|(i, urls)| {
            let args = [
                "run",
                "--masters",
                urls,
                "--coordinator",
                &coord,
                "--agents",
                "2",
                "--run-id",
                "split-brain",
                "--fanout",
                "concurrent",
                "--clients",
                "2",
                "--resources",
                "1",
                "--hold",
                "50ms",
                "--warmup",
                "0s",
                "--duration",
                "1s",
                "-q",
            ];
            spawn(dir.path(), &format!("s{i}"), &args)
        })
        .collect();
    for agent in &mut agents {
        let (code, stderr) = finish(agent);
        assert_eq!(code, 0, "each agent alone saw no violation: {stderr}");
    }
    let (report, _) = exits(
        3,
        &[
            "collect",
            "--coordinator",
            &coord,
            "--run-id",
            "split-brain",
        ],
    );
    assert!(
        report.contains("CERTAIN OVERLAP resource 0: agent "),
        "{report}"
    );
    assert!(!report.contains(" 0 certain overlap(s)"), "{report}");
}

/// A windows record as agents store it (bound 0): `bound`, `truncated`, then per window its
/// resource, start, end and token.
fn windows_record(windows: impl Iterator<Item = (u64, u64, u8)>) -> Vec<u8> {
    let mut out = vec![0u8; 9];
    for (start, end, token) in windows {
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&start.to_le_bytes());
        out.extend_from_slice(&end.to_le_bytes());
        out.extend_from_slice(&[token; 20]);
    }
    out
}

/// Two agents' 1,000,000 windows each on one resource, taking turns 1 µs apart, with one
/// planted overlap: `collect` finds exactly that one (the check is a sweep, not a comparison
/// of every pair); SIGTERM ends it at any stage with 143; and windows beyond their limit are
/// refused naming the agent and the field.
#[test]
fn two_million_windows_are_checked_and_sigterm_ends_collect() {
    let site = site(3);
    let args = [
        "run",
        "--masters",
        &site.urls,
        "--coordinator",
        &site.coord,
        "--agents",
        "2",
        "--run-id",
        "big",
        "--fanout",
        "concurrent",
        "--warmup",
        "0s",
        "--duration",
        "500ms",
        "-q",
    ];
    let mut pair = [
        spawn(site.dir.path(), "b0", &args),
        spawn(site.dir.path(), "b1", &args),
    ];
    for agent in &mut pair {
        let (code, stderr) = finish(agent);
        assert_eq!(code, 0, "{stderr}");
    }
    const N: u64 = 1_000_000;
    let first = windows_record((0..N).map(|i| (10 * i, 10 * i + 4, 1)));
    let second = windows_record((0..N).map(|i| match i {
        777 => (7_770, 7_778, 0xab), // over agent 1's [7770, 7774]
        _ => (10 * i + 5, 10 * i + 9, 2),
    }));
    let key = |name: &str| format!("redlock-loadgen-coordinator:big:{name}");
    for (n, record) in [(1, first), (2, second)] {
        let name = key(&format!("windows:{n}:1"));
        let set = [b"SET".as_slice(), name.as_bytes(), &record];
        assert_eq!(
            site.coordinator.command(0, &set).unwrap(),
            Reply::Status("OK".into())
        );
    }
    let collect = ["collect", "--coordinator", &site.coord, "--run-id", "big"];
    let (report, _) = exits(3, &collect);
    assert!(
        report.contains("2000000 windows, 1 certain overlap(s), 0 pair(s) undecidable"),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "CERTAIN OVERLAP resource 0: agent 1 token {} held it [7770, 7774] µs and agent 2 token {} [7770, 7778] µs",
            "01".repeat(20),
            "ab".repeat(20)
        )),
        "{report}"
    );
    // Once it is reading or checking the windows, SIGTERM ends it (or it finished first).
    let mut stopped = spawn(site.dir.path(), "collect", &collect);
    redlock_local::eventually_blocking("collect to check the windows", DEADLINE, || {
        std::fs::read_to_string(&stopped.stderr)
            .unwrap()
            .contains("checking mutual exclusion across the 2 agents")
    });
    // SAFETY: kill(2) on our own child's pid (not waited for yet).
    let sent = unsafe { libc::kill(stopped.child.id() as i32, libc::SIGTERM) };
    assert_eq!(sent, 0);
    let (code, stderr) = finish(&mut stopped);
    assert!(
        (code == 143 && stderr.contains("collect stopped by SIGTERM while "))
            || (code == 3 && stderr.contains("1 overlapping ownership window pair(s)")),
        "exit {code}: {stderr}"
    );
    // One byte beyond the most windows an agent keeps: refused before it is read.
    let name = key("windows:2:1");
    site.coordinator
        .command(0, &["SETRANGE", &name, "80000009", "x"])
        .unwrap();
    let (_, stderr) = exits(1, &collect);
    assert!(
        stderr.contains(&format!(
            "run big: agent 2's windows of phase 1: 80000010 bytes under key {name}, more than the 80000009 bytes read (2000000 windows)"
        )),
        "{stderr}"
    );
}

/// Ctrl-C while waiting for the others ends the wait at once (exit 130) and gives the run up
/// for everybody, instead of holding the others until the join timeout.
#[test]
fn an_interrupted_agent_gives_the_run_up() {
    let site = site(3);
    let args = [
        "run",
        "--masters",
        &site.urls,
        "--coordinator",
        &site.coord,
        "--agents",
        "2",
        "--run-id",
        "stopped",
        "--join-timeout",
        "10m",
        "--fanout",
        "concurrent",
        "--duration",
        "1s",
        "-q",
    ];
    let mut agent = spawn(site.dir.path(), "a0", &args);
    wait_arrived(&site.coordinator, "stopped", 1);
    // SAFETY: kill(2) on our own child's pid (still running: not waited for yet).
    let sent = unsafe { libc::kill(agent.child.id() as i32, libc::SIGINT) };
    assert_eq!(sent, 0);
    let (code, stderr) = finish(&mut agent);
    assert_eq!(code, 130, "{stderr}");
    let (_, stderr) = exits(1, &args);
    assert!(
        stderr.contains(
            "was given up: an agent was interrupted by SIGINT while waiting (1 of 2 agents joined)"
        ),
        "{stderr}"
    );
}

/// The run id agents joined, from the line they print when joining.
fn joined_run(stderr: &str) -> String {
    let at = stderr
        .find("joined run ")
        .expect("the agent says which run it joined")
        + 11;
    stderr[at..].split_whitespace().next().unwrap().to_string()
}

/// Without `--run-id`, agents join the run the coordinator has open; a run given up is closed,
/// so the next agents open a new one instead of failing on the old one.
#[test]
fn without_a_run_id_agents_join_the_open_run() {
    let site = site(3);
    let args = [
        "run",
        "--masters",
        &site.urls,
        "--coordinator",
        &site.coord,
        "--agents",
        "2",
        "--join-timeout",
        "2s",
        "--fanout",
        "concurrent",
        "--warmup",
        "0s",
        "--duration",
        "1s",
        "-q",
    ];
    let mut pair = [
        spawn(site.dir.path(), "p0", &args),
        spawn(site.dir.path(), "p1", &args),
    ];
    let mut ids = Vec::new();
    for agent in &mut pair {
        let (code, stderr) = finish(agent);
        assert_eq!(code, 0, "{stderr}");
        ids.push(joined_run(&stderr));
    }
    assert_eq!(ids[0], ids[1], "both joined the open run");
    let (_, alone) = exits(1, &args);
    assert!(alone.contains("only 1 of 2 agents joined"), "{alone}");
    let (_, again) = exits(1, &args);
    assert!(again.contains("only 1 of 2 agents joined"), "{again}");
    let runs = [ids[0].clone(), joined_run(&alone), joined_run(&again)];
    assert!(
        runs[0] != runs[1] && runs[1] != runs[2],
        "a new run each time: {runs:?}"
    );
}
