//! Two checkers, one verdict: a bounded subset of the `scenarios` matrix runs with
//! `--history`, and for every row the load generator's own checker and the independent one
//! (loadgen/history-check, on Porcupine) must agree: both clean on the rows expected to hold,
//! both flagging the rows expected to break. A planted overlap is flagged by both.
//!
//! The Go checker is the one HISTORY_CHECK names (`make test-rust` builds it with
//! `make history-check` and passes it); without HISTORY_CHECK the test builds it itself with
//! `go build` (Go 1.19 or later: `make deps-go` installs it), and fails saying so if it cannot.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_schema_valid, read_json};
use redlock_loadgen::engine::checker::{count_violations, token_bytes, Window};
use serde_json::{json, Value};

/// The rows checked: holds and breaks of every kind the model knows (overlap, stale write,
/// token order), real clock jumps included. About a minute on a quiet machine.
const ROWS: &str = "no faults,control: expire,control: delayed restart,clock: minority jumps,clock: shared master jumps,clock: shared master jumps (fenced),single: restart,redlock: holder pause,redlock fenced: holder pause,fenced: quorums meet in an emptied master";

fn history_check() -> PathBuf {
    let path = match std::env::var_os("HISTORY_CHECK") {
        Some(path) => PathBuf::from(path),
        None => build_history_check(),
    };
    assert!(
        path.is_file(),
        "{} is missing: run `make history-check`",
        path.display()
    );
    path
}

/// Builds loadgen/history-check into this test's target directory.
fn build_history_check() -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("history-check");
    let exe = std::env::current_exe().expect("test executable path");
    let out = exe
        .parent()
        .expect("target/<profile>/deps")
        .join("history-check");
    let built = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(&source)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "go build in {}: {e}: install Go with `make deps-go`",
                source.display()
            )
        });
    assert!(
        built.status.success(),
        "go build in {}: {}",
        source.display(),
        String::from_utf8_lossy(&built.stderr)
    );
    out
}

/// Porcupine's verdict on `history`: its report, and whether it found the history illegal.
fn porcupine(checker: &Path, history: &Path) -> (Value, bool) {
    let out = Command::new(checker).arg(history).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "history-check on {}: {e}\n{}",
            history.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let illegal = match (out.status.code(), report["verdict"].as_str()) {
        (Some(0), Some("ok")) => false,
        (Some(1), Some("illegal")) => true,
        other => panic!("history-check on {}: {other:?} {report}", history.display()),
    };
    (report, illegal)
}

/// What the own checker's figures flag in a row: an overlap, a stale write stored, or
/// fencing tokens out of order.
fn own_flags(row: &Value) -> Vec<String> {
    let mut flags = Vec::new();
    for mode in row["result"]["modes"].as_array().unwrap() {
        let c = &mode["counts"];
        let f = &mode["fencing"];
        for (name, value) in [
            ("violations", &c["violations"]),
            ("stale writes accepted", &f["stale_writes_accepted"]),
            ("token order violations", &f["token_order_violations"]),
        ] {
            if value.as_u64().unwrap_or(0) > 0 {
                flags.push(format!("{value} {name}"));
            }
        }
    }
    flags
}

/// The ownership windows a history records (what the own checker counts): from an acquire's
/// `ok` to the earlier of its release's invoke and its validity.
fn windows(history: &str) -> Vec<Window> {
    let mut leases: Vec<(String, u64, u64)> = Vec::new();
    let mut by_token: HashMap<String, usize> = HashMap::new();
    for line in history.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        let token = e["value"]["token"].as_str().unwrap_or_default().to_string();
        let lease = by_token.get(&token).copied();
        match (e["f"].as_str(), e["type"].as_str(), lease) {
            (Some("acquire"), Some("ok"), _) => {
                let until = e["value"]["valid_until"].as_u64().unwrap();
                by_token.insert(token.clone(), leases.len());
                leases.push((token, e["time"].as_u64().unwrap(), until));
            }
            (Some("extend"), Some("ok"), Some(i)) => {
                let until = e["value"]["valid_until"].as_u64().unwrap();
                leases[i].2 = leases[i].2.max(until);
            }
            (Some("release"), Some("invoke"), Some(i)) => {
                leases[i].2 = leases[i].2.min(e["time"].as_u64().unwrap());
            }
            _ => {}
        }
    }
    leases
        .into_iter()
        .map(|(token, start_ns, end_ns)| Window {
            resource: 0,
            start_ns,
            end_ns,
            token: token_bytes(&token),
        })
        .collect()
}

#[test]
fn own_checker_and_porcupine_agree_on_every_row_and_on_a_planted_overlap() {
    let checker = history_check();
    let dir = tempfile::tempdir().unwrap();
    let histories = dir.path().join("histories");
    let json_path = dir.path().join("scenarios.json");
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args([
            "scenarios",
            "--fanout",
            "concurrent",
            "--quiet",
            "--only",
            ROWS,
        ])
        .arg("--history")
        .arg(&histories)
        .arg("--json")
        .arg(&json_path)
        .arg("--html")
        .arg(dir.path().join("report.html"))
        .env("HISTORY_CHECK", &checker)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let result = read_json(&json_path);
    assert_schema_valid(&result);
    let rows = result["rows"].as_array().unwrap();
    assert_eq!(rows.len(), ROWS.split(',').count());
    let mut disagreements = Vec::new();
    let mut flagged_rows = 0;
    for row in rows {
        let name = row["scenario"].as_str().unwrap();
        let history = PathBuf::from(row["history"].as_str().expect("each row names its history"));
        let own = own_flags(row);
        let (report, illegal) = porcupine(&checker, &history);
        let own_flagged = !own.is_empty();
        if illegal != own_flagged {
            disagreements.push(format!(
                "{name}: own checker: {}; Porcupine: {report}",
                if own.is_empty() {
                    "clean".into()
                } else {
                    own.join(", ")
                }
            ));
        }
        flagged_rows += usize::from(illegal);
        // A flagged row's timeline is drawn beside the HTML report and linked from it.
        if let Some(timeline) = row["timeline"].as_str() {
            assert!(
                dir.path().join(timeline).is_file(),
                "{name}: {timeline} missing"
            );
            let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
            assert!(
                page.contains(&format!("href=\"{timeline}\"")),
                "{name}: no link"
            );
        } else {
            assert!(own.is_empty(), "{name}: flagged but no timeline");
        }
        // The history holds the windows the own checker counted, no more, no fewer.
        let text = std::fs::read_to_string(&history).unwrap();
        let counted: u64 = row["result"]["modes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["counts"]["violations"].as_u64().unwrap())
            .sum();
        assert_eq!(
            count_violations(&mut windows(&text)),
            counted,
            "{name}: the history's windows give another violation count than the run"
        );
    }
    assert!(
        disagreements.is_empty(),
        "the checkers disagree:\n{}",
        disagreements.join("\n")
    );
    assert!(
        flagged_rows >= 5,
        "{flagged_rows} row(s) flagged: the breaking rows must be"
    );

    // Plant a second holder inside the first lease of the healthy run.
    let healthy = rows.iter().find(|r| r["scenario"] == "no faults").unwrap();
    let path = PathBuf::from(healthy["history"].as_str().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(count_violations(&mut windows(&text)), 0);
    assert!(
        !porcupine(&checker, &path).1,
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
    let planted = dir.path().join("planted.jsonl");
    let mut edited = text.clone();
    for line in &planted_lines {
        edited.push_str(&format!("{line}\n"));
    }
    std::fs::write(&planted, &edited).unwrap();
    let own = count_violations(&mut windows(&edited));
    let (report, illegal) = porcupine(&checker, &planted);
    assert!(
        own > 0 && illegal,
        "planted overlap: own checker {own} violation(s); Porcupine {report}"
    );
}
