//! `scenarios` refuses a row it does not have. The rows themselves run once, the whole matrix
//! in one `scenarios` run, in history_agreement.rs.

use std::process::Command;

#[test]
fn an_unknown_row_is_refused_with_the_names_that_exist() {
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args(["scenarios", "--only", "4 killed"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("\"4 killed\"") && stderr.contains("3 killed"),
        "{stderr}"
    );
}
