//! `compare` never compares nothing: sides whose modes share no name are refused (exit 2)
//! naming each side's modes, and set against each other only when the user asks
//! (`--pair-modes`), which the report then says. Its gate fails on a threshold clearly not
//! met, and on an unclear one only when asked (`--gate strict`), and every output leads with it.

use crate::common;

use common::{exits, read_json, succeed};
use redlock_local::LocalMasters;
use serde_json::Value;

/// One short run's result file in `dir` (400 ms, 100 ms intervals), with `flags` on top of a
/// small workload.
fn result(urls: &str, dir: &std::path::Path, name: &str, flags: &[&str]) -> String {
    result_of(urls, dir, name, flags, "400ms")
}

/// As [`result`], measured for `duration`.
fn result_of(
    urls: &str,
    dir: &std::path::Path,
    name: &str,
    flags: &[&str],
    duration: &str,
) -> String {
    let json = dir.join(format!("{name}.json"));
    let mut args = vec![
        "run",
        "--masters",
        urls,
        "--clients",
        "2",
        "--resources",
        "1000",
    ];
    args.extend(flags);
    args.extend(["--duration", duration, "--warmup", "100ms", "-q"]);
    args.extend(["--json", json.to_str().unwrap()]);
    succeed(&args);
    json.to_str().unwrap().to_string()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn sides_with_no_mode_in_common_are_refused_and_paired_only_when_asked() {
    let masters = LocalMasters::start(3).expect("redis-server is installed");
    let urls = masters.urls().join(",");
    let dir = tempfile::tempdir().unwrap();
    let concurrent = result(&urls, dir.path(), "concurrent", &["--fanout", "concurrent"]);
    let sequential = result(&urls, dir.path(), "sequential", &["--fanout", "sequential"]);
    let two_modes = result(
        &urls,
        dir.path(),
        "two",
        &["--fanout", "concurrent", "--lock", "redlock,single"],
    );
    let out = dir.path().join("compared.json");
    let out_flag = out.to_str().unwrap();
    let gate = "goodput.ratio>=0.01";

    // A gate over nothing: exit 2, each side's modes named, no result written.
    let (stdout, stderr) = exits(
        2,
        &[
            "compare",
            &concurrent,
            &sequential,
            "--threshold",
            gate,
            "--json",
            out_flag,
        ],
    );
    assert!(stdout.is_empty(), "{stdout}");
    for needle in [
        "nothing to compare: B (",
        &format!("A ({concurrent}): concurrent"),
        &format!("B ({sequential}): sequential"),
        "pass --pair-modes",
    ] {
        assert!(stderr.contains(needle), "{needle:?} in {stderr}");
    }
    assert!(!out.exists());

    // Asked for: the single modes are set against each other, and every output says so.
    let html = dir.path().join("compared.html");
    let stdout = succeed(&[
        "compare",
        &concurrent,
        &sequential,
        "--pair-modes",
        "--threshold",
        gate,
        "--json",
        out_flag,
        "--html",
        html.to_str().unwrap(),
    ]);
    let said = "modes of different names paired as asked (--pair-modes): B's sequential against A's concurrent";
    assert!(stdout.contains(said), "{stdout}");
    assert!(std::fs::read_to_string(&html).unwrap().contains(said));
    let compared = read_json(&out);
    assert_eq!(
        compared["paired_modes"],
        serde_json::json!([{"result": sequential, "side": "B", "a_mode": "concurrent", "b_mode": "sequential"}])
    );
    let figures = compared["figures"].as_array().unwrap();
    assert!(
        figures.iter().any(|f| f["figure"] == "goodput"),
        "{compared}"
    );
    assert!(figures
        .iter()
        .all(|f| f["mode"] == "concurrent" && f["b_mode"] == "sequential"));
    let judged = compared["thresholds"].as_array().unwrap();
    assert_eq!(judged.len(), 1, "{compared}");
    assert!(judged[0]["mode"]
        .as_str()
        .unwrap()
        .ends_with("sequential against A's concurrent"));

    // A mode in common is compared by name, the others left out; pairing needs one mode a side.
    succeed(&["compare", &two_modes, &concurrent, "--json", out_flag]);
    let compared = read_json(&out);
    let modes: Vec<&Value> = compared["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["mode"])
        .collect();
    assert!(
        !modes.is_empty() && modes.iter().all(|m| *m == "concurrent"),
        "{compared}"
    );
    assert!(compared.get("paired_modes").is_none(), "{compared}");
    let (_, stderr) = exits(2, &["compare", &two_modes, &sequential, "--pair-modes"]);
    assert!(stderr.contains("concurrent, single"), "{stderr}");
    assert!(
        stderr.contains("pairs sides that measure one mode each"),
        "{stderr}"
    );
}

#[test]
fn sides_measured_here_are_checked_before_anything_is_measured() {
    let masters = LocalMasters::start(3).expect("redis-server is installed");
    let urls = masters.urls().join(",");
    let dir = tempfile::tempdir().unwrap();
    let side = |fanout: &str| {
        format!(
            "--masters {urls} --fanout {fanout} --clients 2 --resources 1000 --duration 200ms \
             --warmup 100ms -q"
        )
    };
    let (concurrent, sequential) = (side("concurrent"), side("sequential"));
    let sides = dir.path().join("sides");
    std::fs::create_dir(&sides).unwrap();
    let (_, stderr) = exits(
        2,
        &[
            "compare",
            "--run",
            &concurrent,
            "--run",
            &sequential,
            "--results",
            sides.to_str().unwrap(),
        ],
    );
    assert!(
        stderr.contains("nothing to compare: B share(s) no mode with A"),
        "{stderr}"
    );
    assert!(stderr.contains("A: concurrent; B: sequential"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&sides).unwrap().count(),
        0,
        "nothing measured"
    );

    let out = dir.path().join("compared.json");
    let stdout = succeed(&[
        "compare",
        "--run",
        &concurrent,
        "--run",
        &sequential,
        "--repeat",
        "2",
        "--pair-modes",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(
        stdout.contains("B's sequential against A's concurrent"),
        "{stdout}"
    );
    let compared = read_json(&out);
    assert_eq!(compared["interleaved_repeats"], 2);
    assert_eq!(strings(&compared["results"]).len(), 2);
    assert_eq!(
        compared["paired_modes"][0]["b_mode"], "sequential",
        "{compared}"
    );
}

/// A threshold whose bound lies inside its figure's interval is unclear: the default gate
/// passes it (exit 0), `--gate strict` fails it (exit 4); one clearly not met fails either way.
/// Text, HTML and JSON lead with the gate's verdict, and identical sides are told apart.
#[test]
fn the_gate_fails_on_a_clear_miss_and_on_an_unclear_threshold_only_when_strict() {
    let masters = LocalMasters::start(3).expect("redis-server is installed");
    let urls = masters.urls().join(",");
    let dir = tempfile::tempdir().unwrap();
    // Ten intervals a run: enough for an interval of each figure.
    let flags = ["--fanout", "concurrent", "--interval", "100ms"];
    let (a, b) = (
        result_of(&urls, dir.path(), "a", &flags, "1s"),
        result_of(&urls, dir.path(), "b", &flags, "1s"),
    );
    let out = dir.path().join("compared.json");
    let out_flag = out.to_str().unwrap();
    succeed(&["compare", &a, &b, "--json", out_flag]);
    let goodput = read_json(&out)["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == "goodput")
        .map(|f| f["ratio"].clone())
        .unwrap();
    let (value, high) = (goodput["value"].as_f64().unwrap(), goodput["high"].as_f64());
    let high = high.unwrap_or_else(|| panic!("a ratio interval: {goodput}"));
    assert!(high > value, "{goodput}");
    // Above the point estimate, inside the interval: not met by the value, unclear by the interval.
    let unclear = format!("goodput.ratio>={}", value + (high - value) / 2.0);
    let met = "acquire.success>=0%";
    let html = dir.path().join("gate.html");
    let gate = |policy: &str, thresholds: &[&str], code: i32| {
        let mut args = vec!["compare", a.as_str(), b.as_str(), "--gate", policy];
        for t in thresholds {
            args.extend(["--threshold", t]);
        }
        args.extend(["--json", out_flag, "--html", html.to_str().unwrap()]);
        let (stdout, _) = exits(code, &args);
        (stdout, read_json(&out)["gate"].clone())
    };
    let (stdout, judged) = gate("clear", &[&unclear, met], 0);
    let headline = "gate: PASS (exit 0) — 1 of 2 met, 0 not met, 1 unclear; policy clear";
    assert!(stdout.starts_with(headline), "{stdout}");
    assert!(std::fs::read_to_string(&html).unwrap().contains(headline));
    assert_eq!(judged["passed"], true, "{judged}");
    assert_eq!(
        (judged["met"].as_u64(), judged["unclear"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(
        stdout.contains(&format!("unclear           {unclear}")),
        "{stdout}"
    );
    assert!(stdout.contains("B concurrent: "), "{stdout}");
    let tally = "figure(s) better, ";
    assert!(
        stdout.contains(tally) && stdout.contains(" too short to say"),
        "{stdout}"
    );
    let (stdout, judged) = gate("strict", &[&unclear, met], 4);
    assert!(
        stdout.starts_with("gate: FAIL (exit 4) — 1 of 2 met, 0 not met, 1 unclear; policy strict")
    );
    assert_eq!(judged["exit_code"], 4, "{judged}");
    let (stdout, judged) = gate("clear", &[&unclear, "goodput.ratio>=1000"], 4);
    assert!(stdout.starts_with("gate: FAIL (exit 4) — 0 of 2 met, 1 not met, 1 unclear"));
    assert_eq!(judged["not_met"], 1, "{judged}");
    let compared = read_json(&out);
    assert_eq!(compared["schema_version"], 1, "{compared}");

    // The same file twice: two sides, A and B, never two As.
    let (stdout, _) = exits(0, &["compare", &a, &a]);
    assert!(
        stdout.contains("\nB = ") && stdout.contains("B against A, concurrent"),
        "{stdout}"
    );
}
