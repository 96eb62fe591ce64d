//! The whole fault matrix, run once in `make test`: `redlock-loadgen scenarios --fanout
//! concurrent --history DIR`, every row on its own fresh local masters (the clock rows on
//! Valkey under libfaketime, as the command picks), as `make reliability` runs it.
//!
//! From that one run: the command passes every row and says so on its last line; the load
//! generator's own checker and the independent one (loadgen/history-check, on Porcupine)
//! agree on every row's history, both flagging exactly the rows expected to break; a flagged
//! row's timeline is linked from the HTML report; each history holds the windows the run
//! counted; a planted overlap is flagged by both; and the facts each row is there to show
//! (fault actions, counts, keys left) are read from its JSON row.
//!
//! The matrix runs once, in one test, and each check of this file reads that run; its files
//! stay in the target directory's tmp folder for a look after a failure. The Go checker is
//! the one HISTORY_CHECK names, else built here (common/history.rs).

use crate::common;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::history::{history_check, own_flags, porcupine, windows};
use common::{assert_schema_valid, read_json, u};
use redlock_loadgen::engine::checker::count_violations;
use redlock_loadgen::plans::faults::scenarios::{matrix, Expect};
use serde_json::{json, Value};

/// The one run of the matrix: where its files are, what it printed and how it exited.
struct MatrixRun {
    dir: PathBuf,
    checker: PathBuf,
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

impl MatrixRun {
    /// The rows of its `--json` result, in matrix order.
    fn rows(&self) -> Vec<Value> {
        let path = self.dir.join("scenarios.json");
        assert!(
            path.is_file(),
            "no --json result (exit {:?}):\n{}\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
        read_json(&path)["rows"].as_array().unwrap().clone()
    }

    fn row(&self, name: &str) -> Value {
        self.rows()
            .into_iter()
            .find(|r| r["scenario"] == name)
            .unwrap_or_else(|| panic!("no row {name:?} in {}", self.dir.display()))
    }
}

/// `target/tmp/fault-matrix-<pid>`, kept for people to look at: one per process, so that
/// copies of the suite running at once never share one; those of finished processes go.
fn matrix_dir() -> PathBuf {
    let parent = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix("fault-matrix-")
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = parent.join(format!("fault-matrix-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `redlock-loadgen scenarios` over the whole matrix, as `make reliability` runs it.
fn matrix_run() -> MatrixRun {
    let checker = history_check();
    let dir = matrix_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(["scenarios", "--fanout", "concurrent", "--quiet"])
        .arg("--history")
        .arg(dir.join("histories"))
        .arg("--json")
        .arg(dir.join("scenarios.json"))
        .arg("--html")
        .arg(dir.join("report.html"))
        .env("HISTORY_CHECK", &checker)
        .output()
        .unwrap();
    MatrixRun {
        dir,
        checker,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
    }
}

/// The mode's counts of a row (each row runs one mode).
fn counts(row: &Value) -> &Value {
    &row["result"]["modes"][0]["counts"]
}

fn actions(row: &Value) -> Vec<&str> {
    row["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect()
}

/// Whether a row's expected outcome is a break both checkers must flag (an overlap, a stale
/// write stored, tokens out of order); every other row must be clean in both.
fn must_be_flagged(expect: Expect) -> bool {
    match expect {
        Expect::Detected
        | Expect::OverlapFenced
        | Expect::Broken
        | Expect::TwoHolders
        | Expect::StaleAccepted
        | Expect::TokensOutOfOrder => true,
        Expect::Live
        | Expect::Unavailable
        | Expect::Safe
        | Expect::NoViolation
        | Expect::Down
        | Expect::Stuck
        | Expect::Recovers
        | Expect::StaleRejected
        | Expect::TokensInOrder => false,
    }
}

/// Through the binary, as `make reliability` runs it: every row of the matrix once, in
/// matrix order, each passing; the table ends with the line CI tooling reads and the exit
/// code is 0; `--json` keeps every row with its full result.
fn the_whole_matrix_runs_once_and_every_row_meets_its_expectation(run: &MatrixRun) {
    let names: Vec<&str> = matrix().iter().map(|s| s.name).collect();
    let summary = format!("{} passed, 0 failed", names.len());
    assert_eq!(
        (run.code, run.stdout.lines().last()),
        (Some(0), Some(summary.as_str())),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let result = read_json(&run.dir.join("scenarios.json"));
    assert_schema_valid(&result);
    assert_eq!(result["kind"], "scenarios");
    let rows = run.rows();
    let ran: Vec<&str> = rows
        .iter()
        .map(|r| r["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(ran, names);
    for (row, name) in rows.iter().zip(&names) {
        assert_eq!(row["passed"], true, "{name}: {}", row["reason"]);
        assert!(
            run.stdout.contains(&format!("| {name} ")),
            "{name}: {}",
            run.stdout
        );
    }
}

/// Every row's history judged by both checkers: the same verdict on each, and exactly the
/// rows whose expected outcome is a break flagged. On a disagreement both verdicts of every
/// row are printed.
fn both_checkers_agree_on_every_row_and_flag_exactly_the_breaking_rows(run: &MatrixRun) {
    let page = std::fs::read_to_string(run.dir.join("report.html")).unwrap();
    let mut verdicts = Vec::new();
    let mut wrong = Vec::new();
    for (row, scenario) in run.rows().iter().zip(matrix()) {
        let name = scenario.name;
        assert_eq!(row["scenario"], name);
        let history = PathBuf::from(row["history"].as_str().expect("each row names its history"));
        let own = own_flags(row);
        let started = Instant::now();
        let (report, illegal) = porcupine(&run.checker, &history);
        let checked_in = started.elapsed();
        let text = std::fs::read_to_string(&history).unwrap();
        let expected = must_be_flagged(scenario.expect);
        let own_verdict = if own.is_empty() {
            "clean".to_string()
        } else {
            own.join(", ")
        };
        verdicts.push(format!(
            "{name}: expected {}; own checker: {own_verdict}; Porcupine ({} events, {} bytes, {checked_in:.1?}): {report}",
            if expected { "flagged" } else { "clean" },
            text.lines().count(),
            text.len(),
        ));
        let own_flagged = !own.is_empty();
        if illegal != own_flagged || illegal != expected {
            wrong.push(name);
        }
        // A flagged row's timeline is drawn beside the HTML report and linked from it.
        match row["timeline"].as_str() {
            Some(timeline) => {
                assert!(
                    run.dir.join(timeline).is_file(),
                    "{name}: {timeline} missing"
                );
                assert!(
                    page.contains(&format!("href=\"{timeline}\"")),
                    "{name}: no link"
                );
            }
            None => assert!(own.is_empty(), "{name}: flagged but no timeline"),
        }
        // The history holds the windows the own checker counted, no more, no fewer.
        assert_eq!(
            count_violations(&mut windows(&text)),
            u(counts(row), "violations"),
            "{name}: the history's windows give another violation count than the run"
        );
    }
    // Each row's size and checker time, for the record (`-- --nocapture` shows them).
    eprintln!("{}", verdicts.join("\n"));
    assert!(
        wrong.is_empty(),
        "rows {wrong:?}: the checkers disagree, or flag a row they should not (or miss one):\n{}",
        verdicts.join("\n")
    );
}

/// A second holder planted inside the first lease of the healthy row's history.
fn a_planted_overlap_is_flagged_by_both_checkers(run: &MatrixRun) {
    let path = PathBuf::from(run.row("no faults")["history"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(count_violations(&mut windows(&text)), 0);
    assert!(
        !porcupine(&run.checker, &path).1,
        "the healthy history is flagged"
    );
    let first = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["f"] == "acquire" && e["type"] == "ok")
        .unwrap();
    let (key, at) = (first["key"].clone(), first["time"].as_u64().unwrap());
    let planted_lines = [
        json!({"index": 1_000_000, "process": 999, "type": "invoke", "f": "acquire", "key": key, "value": null, "time": at}),
        json!({"index": 1_000_001, "process": 999, "type": "ok", "f": "acquire", "key": key,
               "value": {"token": "planted", "fence": null, "valid_until": at + 2}, "time": at + 1}),
    ];
    let planted = run.dir.join("planted.jsonl");
    let mut edited = text.clone();
    for line in &planted_lines {
        edited.push_str(&format!("{line}\n"));
    }
    std::fs::write(&planted, &edited).unwrap();
    let own = count_violations(&mut windows(&edited));
    let (report, illegal) = porcupine(&run.checker, &planted);
    assert!(
        own > 0 && illegal,
        "planted overlap: own checker {own} violation(s); Porcupine {report}"
    );
}

/// The healthy run and the largest minority killed: locks won, no violation, no fault for
/// the first, both masters killed (and started again) for the second, no key left by either.
fn no_faults_and_two_masters_killed_acquire_without_violations(run: &MatrixRun) {
    let healthy = run.row("no faults");
    assert_eq!(healthy["faults"], json!([]));
    let killed = run.row("2 killed");
    assert_eq!(
        actions(&killed),
        ["killed m0, m1", "started m0, m1 again (empty)"]
    );
    for row in [&healthy, &killed] {
        let c = counts(row);
        assert_eq!(u(c, "violations"), 0, "{}: {c}", row["scenario"]);
        assert!(u(c, "acquired") > 0, "{}: {c}", row["scenario"]);
        assert_eq!(row["keys_left"], json!([]), "{}", row["scenario"]);
    }
}

/// The negative control: the checker must see the two holders a restart without persistence
/// creates (the first holds m0..m2 only; m0 comes back empty and a contender wins m0, m3, m4).
fn an_immediate_restart_of_a_holders_master_is_detected_as_a_violation(run: &MatrixRun) {
    let row = run.row("control: restart");
    assert_eq!(
        actions(&row),
        [
            "killed m3, m4",
            "started m3, m4 again (empty)",
            "restarted m0 at once (empty)"
        ]
    );
    assert!(u(counts(&row), "violations") > 0, "{}", counts(&row));
    assert_eq!(row["keys_left"], json!([]));
}

/// SETNX then EXPIRE: a holder that dies in between leaves a key without a TTL, and nobody
/// ever gets the lock again. Redlock's holder dying the same way only costs one TTL.
fn a_crash_between_setnx_and_expire_leaves_a_stuck_lock_where_redlock_recovers(run: &MatrixRun) {
    let stuck = run.row("setnx-expire: crash");
    let c = counts(&stuck);
    assert_eq!(
        (u(c, "crashed_clients"), u(c, "acquired_after_crash")),
        (1, 0),
        "{c}"
    );
    assert_eq!(
        stuck["keys_left"],
        json!([[0, 1]]),
        "the stuck key stays on its master"
    );
    let recovered = run.row("redlock: crash");
    let c = counts(&recovered);
    assert_eq!(u(c, "crashed_clients"), 1, "{c}");
    assert!(u(c, "acquired_after_crash") > 0, "{c}");
    assert_eq!(u(c, "violations"), 0, "{c}");
    assert_eq!(recovered["keys_left"], json!([]));
}

/// SETNX / GET / GETSET with a client whose clock runs ahead: it takes over live locks, and
/// the holders it robbed delete its lock when they release.
fn clocks_that_disagree_give_setnx_getset_two_holders_and_foreign_deletes(run: &MatrixRun) {
    let row = run.row("setnx-getset: clocks");
    let c = counts(&row);
    assert!(u(c, "violations") > 0, "{c}");
    assert!(u(c, "foreign_releases") > 0, "{c}");
}

/// One master restarting empty hands the lock to a second holder.
fn a_single_master_restarting_empty_gives_the_lock_twice(run: &MatrixRun) {
    let row = run.row("single: restart");
    assert_eq!(actions(&row), ["restarted m0 at once (empty)"]);
    assert!(u(counts(&row), "violations") > 0, "{}", counts(&row));
    assert_eq!(row["keys_left"], json!([]));
}

/// A fencing row's fencing figures; its lock keys all expired.
fn fencing_of_row(run: &MatrixRun, name: &str) -> Value {
    let row = run.row(name);
    assert_eq!(row["keys_left"], json!([]), "{name}");
    row["result"]["modes"][0]["fencing"].clone()
}

/// What fencing is for: a holder paused past its validity writes late; without fencing the
/// storage keeps the stale write, with fencing it refuses it by token.
fn a_paused_holder_s_late_write_is_stored_without_fencing_and_refused_with_it(run: &MatrixRun) {
    let f = fencing_of_row(run, "redlock: holder pause");
    assert_eq!(f["fenced"], false, "{f}");
    assert!(u(&f, "stale_writes_accepted") > 0, "{f}");
    assert_eq!(u(&f, "stale_writes_rejected"), 0, "{f}");
    assert_eq!(u(&f, "tokens_issued"), 0, "{f}");

    let f = fencing_of_row(run, "redlock fenced: holder pause");
    assert_eq!(f["fenced"], true, "{f}");
    assert_eq!(u(&f, "stale_writes_accepted"), 0, "{f}");
    assert!(u(&f, "stale_writes_rejected") > 0, "{f}");
    assert_eq!(u(&f, "token_order_violations"), 0, "{f}");
    assert!(u(&f, "tokens_issued") > 0, "{f}");
}

/// Fencing's assumption: two quorums share a master that kept its counter. Quorums of 3 of 5
/// meeting only in an emptied master issue tokens out of order; quorums of 4 of 5 share 3
/// masters, and with 2 of them emptied the order holds.
fn token_order_breaks_only_when_the_quorums_share_no_master_that_kept_its_counter(run: &MatrixRun) {
    let f = fencing_of_row(run, "fenced: quorums meet in an emptied master");
    assert!(u(&f, "token_order_violations") > 0, "{f}");
    let f = fencing_of_row(run, "fenced 4 of 5: two shared masters emptied");
    assert_eq!(u(&f, "token_order_violations"), 0, "{f}");
    assert!(u(&f, "tokens_issued") > 0, "{f}");
}

/// Runs each check on the one run; every check runs even when one before it failed (its
/// message is printed as it fails), and the test fails naming each check that did.
macro_rules! checks {
    ($($check:ident),* $(,)?) => {
        [$((stringify!($check), $check as fn(&MatrixRun))),*]
    };
}

/// The matrix is run once and every check above reads that run. One test rather than one per
/// check: a test waiting for another's run would hold a test thread idle for the two minutes
/// the matrix takes, while the other tests of the binary could use it.
#[test]
fn the_fault_matrix_run_once_meets_every_check() {
    let run = matrix_run();
    let checks = checks![
        the_whole_matrix_runs_once_and_every_row_meets_its_expectation,
        both_checkers_agree_on_every_row_and_flag_exactly_the_breaking_rows,
        a_planted_overlap_is_flagged_by_both_checkers,
        no_faults_and_two_masters_killed_acquire_without_violations,
        an_immediate_restart_of_a_holders_master_is_detected_as_a_violation,
        a_crash_between_setnx_and_expire_leaves_a_stuck_lock_where_redlock_recovers,
        clocks_that_disagree_give_setnx_getset_two_holders_and_foreign_deletes,
        a_single_master_restarting_empty_gives_the_lock_twice,
        a_paused_holder_s_late_write_is_stored_without_fencing_and_refused_with_it,
        token_order_breaks_only_when_the_quorums_share_no_master_that_kept_its_counter,
    ];
    let failed: Vec<&str> = checks
        .iter()
        .filter(|(name, check)| {
            let failed = std::panic::catch_unwind(AssertUnwindSafe(|| check(&run))).is_err();
            if failed {
                eprintln!("check {name} FAILED (its message is just above)");
            }
            failed
        })
        .map(|(name, _)| *name)
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} checks of the matrix failed (each one's message is above; files in {}):\n{}",
        failed.len(),
        checks.len(),
        run.dir.display(),
        failed.join("\n")
    );
}

/// A fenced run of both fan-out modes in one history: each mode starts from emptied local
/// masters (its fencing counters begin again at 1), so its keys are named by the mode and the
/// independent checker takes each mode as a system of its own; it agrees with the run's own
/// checks (0 violations, tokens in order) instead of reading the second mode's first token as
/// one that went back.
#[test]
fn a_fenced_run_of_both_modes_is_one_legal_history_per_mode() {
    let checker = history_check();
    let dir = tempfile::tempdir().unwrap();
    let (history, json) = (dir.path().join("h.jsonl"), dir.path().join("r.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(["run", "--fencing", "--clients", "4", "--resources", "2"])
        .args([
            "--duration",
            "2s",
            "--warmup",
            "500ms",
            "--quiet",
            "--history",
        ])
        .arg(&history)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = read_json(&json);
    let modes = result["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 2, "both fan-out modes ran");
    for m in modes {
        assert_eq!(u(&m["counts"], "violations"), 0);
        assert_eq!(m["fencing"]["token_order_violations"], 0);
    }
    let text = std::fs::read_to_string(&history).unwrap();
    let keys: std::collections::BTreeSet<String> = text
        .lines()
        .filter_map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["key"]
                .as_str()
                .map(String::from)
        })
        .collect();
    let modes_named: std::collections::BTreeSet<&str> =
        keys.iter().filter_map(|k| k.split('/').next()).collect();
    assert_eq!(
        modes_named.into_iter().collect::<Vec<_>>(),
        ["concurrent", "sequential"],
        "{keys:?}"
    );
    let (report, illegal) = porcupine(&checker, &history);
    assert!(
        !illegal,
        "the independent checker found the fenced history illegal: {report}"
    );
}
