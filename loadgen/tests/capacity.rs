//! `capacity` with a short, bounded configuration: the search runs its steps, answers per
//! fan-out mode, and its JSON (every step kept) validates against the committed schema.

mod common;

use common::*;

#[test]
fn a_short_capacity_search_answers_and_keeps_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let (json, plot, csv) = (
        dir.path().join("capacity.json"),
        dir.path().join("capacity.svg"),
        dir.path().join("capacity.csv"),
    );
    // A lax objective, so the answer does not depend on how busy the machine is: 200/s passes,
    // 400/s (the ceiling) passes and is confirmed by a repeat — 3 steps of 0.7 s.
    let out = succeed(&[
        "capacity",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--slo",
        "p99<5s",
        "--min-success",
        "50%",
        "--start-rate",
        "200",
        "--max-rate",
        "400",
        "--max-steps",
        "4",
        "--clients",
        "32",
        "--duration",
        "500ms",
        "--warmup",
        "200ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(
        out.contains("asked/s") && out.contains("bracket") && out.contains("confirm"),
        "{out}"
    );
    assert!(
        out.contains("concurrent: 400 acquires/s within p99<5s"),
        "{out}"
    );
    let result = read_json(&json);
    assert_schema_valid(&result);
    assert_eq!(result["kind"], "capacity");
    let steps = result["steps"].as_array().unwrap();
    let asked: Vec<(String, f64)> = steps
        .iter()
        .map(|s| {
            (
                s["phase"].as_str().unwrap().to_string(),
                f(s, "rate_asked_per_s"),
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            ("bracket".to_string(), 200.0),
            ("bracket".to_string(), 400.0),
            ("confirm".to_string(), 400.0)
        ]
    );
    for step in steps {
        assert_eq!(step["passed"], true, "{}", step["failures"]);
        let r = &step["result"];
        assert_eq!(r["config"]["load"], "open");
        assert_eq!(
            r["config"]["resources"], 10_000,
            "capacity's default workload"
        );
        assert_eq!(r["modes"].as_array().unwrap().len(), 1);
        assert_consistent(&r["modes"][0], 3, 32);
    }
    let answer = &result["answers"][0];
    assert_eq!(answer["fanout"], "concurrent");
    assert_eq!(f(answer, "rate_per_s"), 400.0);
    assert_eq!(answer["confirmed"], true);
    assert_eq!(answer["limit"], "max-rate");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("knee") && svg.contains("objective: p99"),
        "plot lacks the knee or SLO"
    );
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + steps.len(), "{csv}");
}

#[test]
fn an_objective_no_rate_meets_exits_1_with_the_answer_in_words() {
    // p99 below 1 µs cannot be met: the search halves down to --min-rate and stops.
    let (out, err) = exits(
        1,
        &[
            "capacity",
            "--spawn",
            "3",
            "--fanout",
            "concurrent",
            "--slo",
            "p99<1us",
            "--start-rate",
            "100",
            "--min-rate",
            "50",
            "--duration",
            "300ms",
            "--warmup",
            "0s",
            "-q",
        ],
    );
    assert!(out.contains("concurrent: no rate met p99<1µs"), "{out}");
    assert!(err.contains("no rate met the objective"), "{err}");
}
