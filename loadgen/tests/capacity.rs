//! `capacity` with a short, bounded configuration: the search runs its steps, answers per
//! fan-out mode, and its JSON (every step kept) validates against the committed schema.

mod common;

use common::*;
use redlock_loadgen::model::capacity::search::{Plan, Search};

#[test]
fn a_short_capacity_search_answers_and_keeps_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let (json, plot, csv) = (
        dir.path().join("capacity.json"),
        dir.path().join("capacity.svg"),
        dir.path().join("capacity.csv"),
    );
    // A lax objective and a low ceiling (at most 4 steps of 0.7 s). Whether a step passes
    // depends on how busy the machine is, so the test replays the search from the verdicts
    // the file records instead of expecting particular ones.
    let out = loadgen(&[
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
    let report = text(&out.stdout);
    assert!(
        report.contains("asked/s") && report.contains("bracket"),
        "{report}"
    );
    let result = read_json(&json);
    assert_schema_valid(&result);
    assert_eq!(result["kind"], "capacity");
    let steps = result["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 4, "{}", steps.len());

    // The steps are exactly what the search asks for, given each step's verdict.
    let mut search = Search::new(serde_json::from_value::<Plan>(result["search"].clone()).unwrap());
    for step in steps {
        let (phase, rate) = search.next_step().expect("no step beyond the search's end");
        assert_eq!(step["phase"], phase.as_str());
        assert_eq!(f(step, "rate_asked_per_s"), rate);
        let passed = step["passed"].as_bool().unwrap();
        assert_eq!(passed, step["failures"].as_array().unwrap().is_empty());
        search.record(phase, rate, passed);
        let r = &step["result"];
        assert_eq!(r["config"]["load"], "open");
        assert_eq!(
            r["config"]["resources"], 10_000,
            "capacity's default workload"
        );
        assert_eq!(r["config"]["rate_per_s"].as_f64(), Some(rate));
        assert_consistent(&r["modes"][0], 3, 32);
    }
    assert_eq!(
        search.next_step(),
        None,
        "the search ended where the file ends"
    );
    let (rate, confirmed, _) = search.answer();
    let answer = &result["answers"][0];
    assert_eq!(answer["fanout"], "concurrent");
    assert_eq!(answer["rate_per_s"].as_f64(), rate);
    assert_eq!(answer["confirmed"].as_bool(), Some(confirmed));
    assert!(
        report.contains(answer["statement"].as_str().unwrap()),
        "{report}"
    );
    // Exit 1 exactly when no rate met the objective.
    assert_eq!(out.status.code(), Some(if rate.is_some() { 0 } else { 1 }));

    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("objective: p99"),
        "the plot draws the objective"
    );
    // The answer is marked when there is one: as the knee, or as a floor when the search
    // stopped at --max-rate or at the generator's limit.
    let mark = if answer["limit"] == "max-rate" {
        "(--max-rate reached)"
    } else if answer["generator_limited"] == true {
        "(generator-bound)"
    } else {
        "knee:"
    };
    assert_eq!(svg.contains(mark), rate.is_some(), "{mark} in the plot");
    let csv = std::fs::read_to_string(&csv).unwrap();
    // One row per step, then one per answer.
    assert_eq!(csv.lines().count(), 1 + steps.len() + 1, "{csv}");
}

/// A planner's view of a search the step budget cut short: one client holding each lock
/// 200 ms can start at most 5 acquires/s, so 6/s misses its rate whatever the machine (a sixth
/// of its slots never start), while 3/s leaves the client idle 40 % of the time and meets a
/// 1 s p99 with an acquire that takes about a millisecond (a loaded machine's late starts
/// would have to reach a second to fail it). With two steps the answer is 3/s, unconfirmed: it
/// states the bracket and the flags that narrow it, prints a `run` command that reproduces
/// its step (run here: same workload), and the CSV has the verdicts in a column of their own
/// and the answer as a row.
#[test]
fn a_search_cut_short_states_its_bracket_and_how_to_reproduce_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("c.json"), dir.path().join("c.csv"));
    let out = loadgen(&[
        "capacity",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--slo",
        "p99<1s",
        "--start-rate",
        "3",
        "--min-rate",
        "1",
        "--max-steps",
        "2",
        "--clients",
        "1",
        "--hold",
        "200ms",
        "--duration",
        "2s",
        "--warmup",
        "200ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let report = text(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{report}\n{}",
        out.status,
        text(&out.stderr)
    );
    let result = read_json(&json);
    assert_schema_valid(&result);
    let steps = result["steps"].as_array().unwrap();
    let verdicts: Vec<(f64, bool)> = steps
        .iter()
        .map(|s| (f(s, "rate_asked_per_s"), s["passed"].as_bool().unwrap()))
        .collect();
    assert_eq!(verdicts, [(3.0, true), (6.0, false)], "{report}");
    // 6/s failed for the reason the workload guarantees: slots one client could not start.
    let missed = &steps[1];
    let counts = &missed["result"]["modes"][0]["counts"];
    assert!(counts["dropped_slots"].as_u64().unwrap() > 0, "{counts}");
    assert!(
        missed["failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().starts_with("rate missed")),
        "{missed}"
    );

    let answer = &result["answers"][0];
    assert_eq!(answer["rate_per_s"], 3.0);
    assert_eq!(answer["confirmed"], false);
    assert_eq!(answer["highest_passed_per_s"], 3.0);
    assert_eq!(answer["lowest_failed_per_s"], 6.0);
    let narrow = answer["narrow_with"].as_str().unwrap();
    assert!(
        narrow.starts_with("--start-rate 3 --max-rate 6 --max-steps "),
        "{narrow}"
    );
    // The narrower search runs this answer's mode only.
    let mode = answer["fanout"].as_str().unwrap();
    assert!(narrow.ends_with(&format!(" --fanout {mode}")), "{narrow}");
    let statement = answer["statement"].as_str().unwrap();
    assert!(
        statement.contains("3/s passed, 6/s failed") && statement.contains(narrow),
        "{statement}"
    );
    let reproduce = answer["reproduce"].as_str().unwrap();
    assert!(
        report.contains(&format!("reproduce: {reproduce}")),
        "{report}"
    );

    // The reproducer runs the answer's step again: same workload, timing and seed.
    let flags: Vec<&str> = reproduce
        .strip_prefix("redlock-loadgen ")
        .expect("a redlock-loadgen command")
        .split_whitespace()
        .collect();
    let again_json = dir.path().join("again.json");
    let mut args = flags.clone();
    args.extend(["-q", "--json", again_json.to_str().unwrap()]);
    let again = loadgen(&args);
    assert!(
        again.status.success(),
        "{reproduce}: {}",
        text(&again.stderr)
    );
    let again = read_json(&again_json);
    let (step_config, run_config) = (&steps[0]["result"]["config"], &again["config"]);
    for key in [
        "fanouts",
        "load",
        "clients",
        "rate_per_s",
        "resources",
        "key_dist",
        "hold_min_us",
        "hold_max_us",
        "ttl_ms",
        "retry_count",
        "retry_delay_ms",
        "instance_timeout_ms",
        "quorum",
        "duration_s",
        "warmup_s",
        "seed",
    ] {
        assert_eq!(step_config[key], run_config[key], "{key}: {reproduce}");
    }
    assert_eq!(again["masters"].as_array().unwrap().len(), 3, "{reproduce}");

    let csv = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let column = |name: &str| rows[0].iter().position(|c| *c == name).unwrap();
    let (row, phase, rate, verdict) = (
        column("row"),
        column("phase"),
        column("rate"),
        column("verdict"),
    );
    let cells: Vec<[&str; 4]> = rows[1..]
        .iter()
        .map(|r| [r[row], r[phase], r[rate], r[verdict]])
        .collect();
    assert_eq!(
        cells,
        [
            ["step", "bracket", "3", "pass"],
            ["step", "bracket", "6", "fail"],
            ["answer", "", "3", "unconfirmed"],
        ],
        "{csv}"
    );
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

/// `--repeat N` runs the answer's step N more times once the search is over (outside the step
/// budget) and reports the spread across every run at that rate; a passing repeat confirms it.
#[test]
fn repeats_of_the_answer_give_its_spread() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let out = loadgen(&[
        "capacity",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--slo",
        "p99<1s",
        "--start-rate",
        "3",
        "--min-rate",
        "1",
        "--max-steps",
        "1",
        "--repeat",
        "2",
        "--clients",
        "1",
        "--hold",
        "200ms",
        "--duration",
        "1s",
        "--warmup",
        "200ms",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{}\n{report}", out.status);
    let result = read_json(&json);
    assert_schema_valid(&result);
    let steps = result["steps"].as_array().unwrap();
    let phases: Vec<(&str, f64)> = steps
        .iter()
        .map(|s| (s["phase"].as_str().unwrap(), f(s, "rate_asked_per_s")))
        .collect();
    assert_eq!(phases, [("bracket", 3.0), ("repeat", 3.0), ("repeat", 3.0)]);
    let answer = &result["answers"][0];
    assert_eq!(answer["rate_per_s"], 3.0, "{report}");
    let repeat_passed = steps[1..].iter().any(|s| s["passed"] == true);
    assert_eq!(answer["confirmed"], repeat_passed);
    let spread = &answer["spread"];
    assert_eq!(spread["runs"], 3);
    let passed = steps.iter().filter(|s| s["passed"] == true).count();
    assert_eq!(spread["passed"].as_u64(), Some(passed as u64));
    for figure in ["acquire_p99_ms", "success_rate"] {
        let r = &spread[figure];
        assert!(
            f(r, "min") <= f(r, "median") && f(r, "median") <= f(r, "max"),
            "{figure}: {r}"
        );
    }
    let p99s: Vec<f64> = steps
        .iter()
        .map(|s| {
            hist(&s["result"]["modes"][0]["latency"]["acquire"]).quantile(0.99) as f64 / 1000.0
        })
        .collect();
    let max = p99s.iter().cloned().fold(0.0, f64::max);
    assert!(
        (f(&spread["acquire_p99_ms"], "max") - max).abs() < 0.001,
        "{spread} vs {p99s:?}"
    );
    assert!(report.contains("3 runs at that rate"), "{report}");
}
