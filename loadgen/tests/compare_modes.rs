//! `compare` never compares nothing: sides whose modes share no name are refused (exit 2)
//! naming each side's modes, and set against each other only when the user asks
//! (`--pair-modes`), which the report then says.

use crate::common;

use common::{exits, read_json, succeed};
use redlock_local::LocalMasters;
use serde_json::Value;

/// One short run's result file in `dir`, with `flags` on top of a small workload.
fn result(urls: &str, dir: &std::path::Path, name: &str, flags: &[&str]) -> String {
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
    args.extend(["--duration", "400ms", "--warmup", "100ms", "-q"]);
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
        serde_json::json!([{"result": sequential, "a_mode": "concurrent", "b_mode": "sequential"}])
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
