//! The two checkers of a `--history` file: the independent one (loadgen/history-check, on
//! Porcupine) run as a program, and the own checker's count of overlapping ownership windows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use redlock_loadgen::engine::checker::{token_bytes, Window};
use serde_json::Value;

/// The Go checker HISTORY_CHECK names (`make test-rust` builds it with `make history-check`);
/// without HISTORY_CHECK, built here with `go build` (Go 1.19 or later: `make deps-go`).
pub fn history_check() -> PathBuf {
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
pub fn porcupine(checker: &Path, history: &Path) -> (Value, bool) {
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

/// What the own checker's figures flag in a `scenarios` row: an overlap, a stale write
/// stored, or fencing tokens out of order.
pub fn own_flags(row: &Value) -> Vec<String> {
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
pub fn windows(history: &str) -> Vec<Window> {
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
