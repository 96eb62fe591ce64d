//! What fencing is for, shown by the load generator on real local masters: a fenced run
//! issues tokens in order, and a holder that pauses past its validity has its late write
//! stored without fencing and refused with it (the matrix's fencing rows, which run with the
//! whole matrix in history_agreement.rs).

use crate::common;

use common::{assert_schema_valid, exits, loadgen, read_json, text, u};
use serde_json::Value;

/// The fencing object of a result's only mode.
fn fencing_of(result: &Value) -> Value {
    result["modes"][0]["fencing"].clone()
}

#[test]
fn a_fenced_run_issues_tokens_in_order_and_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let out = loadgen(&[
        "run",
        "--fencing",
        "--fanout",
        "concurrent",
        "--clients",
        "4",
        "--resources",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "200ms",
        // Each storage write is bounded by the per-master timeout (50 ms by default); a
        // machine busy with other work can stall a healthy write that long, and this test is
        // about tokens and the token check, not about timeouts.
        "--instance-timeout",
        "2s",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    let line = |label: &str| {
        report
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} line in\n{report}"))
            .to_string()
    };
    assert!(line("token order violations").ends_with(" 0"), "{report}");
    assert!(line("fencing tokens issued").contains(char::is_numeric));

    let result = read_json(&json);
    assert_schema_valid(&result);
    let f = fencing_of(&result);
    assert_eq!(f["fenced"], true, "{f}");
    assert!(u(&f, "tokens_issued") > 0, "{f}");
    assert_eq!(u(&f, "token_order_violations"), 0, "{f}");
    // Every holder still valid after acquiring wrote once, through the token check. A valid
    // holder's write is never refused: a higher token exists only once its lock has expired,
    // so every refused write is a late one (on a busy machine a stalled holder may be late).
    assert!(u(&f, "storage_writes") > 0, "{f}");
    assert!(u(&f, "storage_writes") <= u(&f, "tokens_issued"), "{f}");
    assert_eq!(
        u(&f, "storage_writes_rejected"),
        u(&f, "stale_writes_rejected"),
        "{f}"
    );
    assert_eq!(u(&f, "storage_errors"), 0, "{f}");
    // Tokens count the warm-up too, acquisitions only the measured window.
    let acquired = u(&result["modes"][0]["counts"], "acquired");
    assert!(u(&f, "tokens_issued") >= acquired, "{f} vs {acquired}");
}

#[test]
fn an_unfenced_run_has_no_fencing_figures() {
    let result = common::short_run_json(&["run", "--fanout", "concurrent", "--clients", "2"]);
    assert_schema_valid(&result);
    assert!(result["modes"][0].get("fencing").is_none(), "{result}");
}

#[test]
fn fencing_and_pauses_are_refused_where_they_cannot_apply() {
    let (_, err) = exits(2, &["run", "--fencing", "--lock", "single"]);
    assert!(err.contains("--fencing") && err.contains("single"), "{err}");
    let (_, err) = exits(
        2,
        &["run", "--clients", "2", "--client-fault", "pause:2:1s@1s"],
    );
    assert!(
        err.contains("pause:2") && err.contains("only 2 clients"),
        "{err}"
    );
    let (_, err) = exits(2, &["run", "--client-fault", "pause:0:1s"]);
    assert!(err.contains("pause:0:1s"), "{err}");
}
