//! `capacity` with a short, bounded configuration: the search runs its steps, answers per
//! fan-out mode, and its JSON (every step kept) validates against the committed schema.

use crate::common;

use common::*;
use redlock_loadgen::model::capacity::search::{Phase, Plan, Search};
use redlock_loadgen::model::capacity::{grouped, CapacityResult, NoiseVerdict, Step};

/// Whether the machine was busy during `step` by the rule capacity applies: its generator,
/// using at least 5 % of the cores, waited for a core at least half of its ready time.
fn busy(step: &serde_json::Value) -> bool {
    use redlock_loadgen::model::generator::{CPU_CONTENDED, JUDGED_FROM_CORE_SHARE};
    let generator = &step["result"]["modes"][0]["generator"];
    let cpu = &generator["cpu"];
    let (wait, used) = (f(cpu, "wait_s"), f(cpu, "user_s") + f(cpu, "sys_s"));
    f(generator, "core_share") >= JUDGED_FROM_CORE_SHARE && wait / (wait + used) >= CPU_CONTENDED
}

/// An answer that abstains says so first and names the wait that decided it.
fn assert_no_answer_names_the_wait(answer: &serde_json::Value, report: &str) {
    assert_eq!(answer["status"], "no-answer", "{answer}");
    assert_eq!(answer["rate_per_s"], serde_json::Value::Null);
    let statement = answer["statement"].as_str().unwrap();
    assert!(
        statement.contains(": no answer on this machine (at ")
            && statement.contains("the generator waited for a core ")
            && statement.ends_with("— no rate is claimed; measure on a quieter machine"),
        "{statement}"
    );
    assert!(report.contains(statement), "{report}");
    assert!(report.contains("! a busy machine: "), "{report}");
}

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
        // Mechanics at low rates: the percentiles may rest on few calls.
        "--min-calls",
        "1",
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
    // Repeats of a step too close to call are outside the step budget.
    let searched = steps.iter().filter(|s| s["repeat_of"].is_null()).count();
    assert!(searched > 0 && searched <= 4, "{searched}");

    // The steps are exactly what the search asks for, given the verdict it counted for each.
    let typed: CapacityResult = serde_json::from_value(result.clone()).unwrap();
    let mut search = Search::new(serde_json::from_value::<Plan>(result["search"].clone()).unwrap());
    for (step, typed) in steps.iter().zip(&typed.steps) {
        let passed = step["passed"].as_bool().unwrap();
        assert_eq!(passed, step["failures"].as_array().unwrap().is_empty());
        if typed.repeat_of.is_none() {
            let (phase, rate) = search.next_step().expect("no step beyond the search's end");
            assert_eq!(step["phase"], phase.as_str());
            assert_eq!(f(step, "rate_asked_per_s"), rate);
            search.record(phase, rate, typed.counted().unwrap());
        }
        let r = &step["result"];
        assert_eq!(r["config"]["load"], "open");
        assert_eq!(
            r["config"]["resources"], 10_000,
            "capacity's default workload"
        );
        assert_eq!(r["config"]["rate_per_s"].as_f64(), Some(typed.rate));
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
    // The answer's block opens with its status, then the objective and the reproducer.
    let status = answer["status"].as_str().unwrap();
    assert!(
        [
            "confirmed",
            "unconfirmed",
            "machine-floor",
            "max-rate-floor",
            "not-met",
            "no-answer"
        ]
        .contains(&status),
        "{status}"
    );
    let objective = answer["objective"].as_str().unwrap();
    assert!(
        objective.starts_with("p99<5s and success ≥ 50.000%"),
        "{objective}"
    );
    assert!(
        report.contains(&format!("    objective: {objective}\n")),
        "{report}"
    );

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
        "(a floor set by this machine)"
    } else {
        "knee:"
    };
    assert_eq!(svg.contains(mark), rate.is_some(), "{mark} in the plot");
    let csv = std::fs::read_to_string(&csv).unwrap();
    // One row per step, then one per answer.
    assert_eq!(csv.lines().count(), 1 + steps.len() + 1, "{csv}");
    // Each step's row carries the 95 % intervals its JSON `estimates` hold.
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let column = |name: &str| rows[0].iter().position(|c| *c == name).expect(name);
    for (step, row) in steps.iter().zip(&rows[1..]) {
        let estimates = &step["result"]["modes"][0]["estimates"];
        for (figure, key, unit) in [
            ("goodput", "goodput", 1.0),
            ("acquire_success", "acquire_success", 1.0),
            ("acquire_p99_ms", "acquire_p99_us", 1000.0),
        ] {
            for end in ["low", "high"] {
                let cell: f64 = row[column(&format!("{figure}_{end}"))].parse().unwrap();
                assert_eq!(cell, f(&estimates[key], end) / unit, "{figure} {end}");
            }
        }
    }
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
    let (json, csv, page) = (
        dir.path().join("c.json"),
        dir.path().join("c.csv"),
        dir.path().join("c.html"),
    );
    let out = loadgen(&[
        "capacity",
        // Mechanics at low rates: the percentiles may rest on few calls.
        "--min-calls",
        "1",
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
        "--html",
        page.to_str().unwrap(),
    ]);
    let report = text(&out.stdout);
    let result = read_json(&json);
    assert_schema_valid(&result);
    let steps = result["steps"].as_array().unwrap();
    if busy(&steps[0]) {
        // The machine decided the first step: nothing above it can answer, and nothing is
        // claimed (what the run recorded decides what is asserted).
        assert_eq!(out.status.code(), Some(1), "{report}");
        assert_no_answer_names_the_wait(&result["answers"][0], &report);
        return;
    }
    assert!(
        out.status.success(),
        "{}\n{report}\n{}",
        out.status,
        text(&out.stderr)
    );
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
    // One client cannot start 6 acquires/s of 200 ms holds: the step above the answer was
    // the generator's limit, so the answer is a floor this machine set, said first.
    let judgement = &missed["result"]["modes"][0]["generator"];
    assert_eq!(judgement["generator_bound"], true, "{judgement}");
    assert_eq!(answer["status"], "machine-floor");
    let statement = answer["statement"].as_str().unwrap();
    assert!(
        statement.starts_with(
            "concurrent: a floor set by this machine (the next rate up, 6/s, was generator-bound; NOT confirmed by a repeat) — 3 acquires/s"
        ),
        "{statement}"
    );
    let generator_reason = answer["generator_reason"].as_str().unwrap();
    assert!(
        generator_reason.starts_with("generator-bound at 6/s: "),
        "{generator_reason}"
    );
    assert!(
        report.contains(&format!(
            "  {statement}\n    {generator_reason}\n    objective: p99<1s and success ≥ 99.900%"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "    narrow: 3/s passed, 6/s failed, so the capacity lies between them: add {narrow} to the same command\n"
        )),
        "{report}"
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
            ["answer", "", "3", "machine-floor"],
        ],
        "{csv}"
    );
    // The answer's row says why, as the answer does, and what bracket it knows.
    let answer_row = csv.lines().last().unwrap();
    assert!(
        answer_row.contains("\"the next rate up, 6/s, was generator-bound; NOT confirmed by a repeat; between 3 (passed) and 6 (failed)\""),
        "{answer_row}"
    );

    // The page shows what the text shows: the answer's block, the search's own settings (not
    // the first step's), late and dropped slots, the generator's CPU, the `!` reasons and the
    // local-masters warning.
    let dom = common::browser::check_in_browser(&page, "capacity-floor", 1);
    assert!(dom.contains(&escape(statement)), "the statement: {dom}");
    assert!(dom.contains(&escape("narrow: 3/s passed, 6/s failed")));
    assert!(dom.contains(&escape(reproduce)), "the reproducer");
    for (setting, value) in [
        ("objective", "p99<1s and success ≥ 99.900%"),
        ("start rate (/s)", "3"),
        ("min rate (/s)", "1"),
        ("max steps (per mode)", "2"),
        ("noise repeats (per straddling step)", "2"),
        ("fan-out modes", "concurrent"),
        ("masters", "3 local (started by this command)"),
        ("clients", "1"),
    ] {
        assert!(
            dom.contains(&format!(
                "<td>{}</td><td>{}</td>",
                escape(setting),
                escape(value)
            )),
            "{setting} = {value}: {dom}"
        );
    }
    assert!(dom.contains("late / dropped") && dom.contains("generator CPU"));
    let dropped = counts["dropped_slots"].as_u64().unwrap();
    let late = counts["late_starts"].as_u64().unwrap();
    assert!(
        dom.contains(&format!("<td>{late} / {dropped}</td>")),
        "{dom}"
    );
    for reason in judgement["reasons"].as_array().unwrap() {
        let reason = escape(reason.as_str().unwrap());
        assert!(
            dom.contains(&format!("<span class=\"bad\">!</span> {reason}")),
            "{reason}: {dom}"
        );
    }
    assert!(
        dom.contains("warning: the masters are local (started by this command)"),
        "{dom}"
    );
    assert_eq!(result["warnings"].as_array().unwrap().len(), 1);
}

/// Text as the page's DOM holds it.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// p99 below 1 µs cannot be met, and a p99 needs 1,000 calls: with 300 ms steps the search
/// starts and stays at 3,334/s (never halving to rates whose p99 would be a few calls'
/// latency), misses there and says so — or, when this machine decided that step, abstains.
/// A --max-rate below that floor is refused before anything runs.
#[test]
fn an_objective_no_rate_meets_exits_1_and_the_search_stays_where_a_p99_has_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let args = [
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
        "--max-rate",
        "4000",
        "--duration",
        "300ms",
        "--warmup",
        "0s",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    let (out, err) = exits(1, &args);
    let result = read_json(&json);
    assert_eq!(result["search"]["min_rate"], 3334.0);
    assert_eq!(result["search"]["min_rate_from_calls"], true);
    let steps = result["steps"].as_array().unwrap();
    assert!(
        steps.iter().all(|s| f(s, "rate_asked_per_s") == 3334.0),
        "{result}"
    );
    let lowest = &steps[0];
    let decided_by_machine =
        busy(lowest) || lowest["result"]["modes"][0]["generator"]["generator_bound"] == true;
    if decided_by_machine {
        assert_eq!(result["answers"][0]["status"], "no-answer");
        assert!(
            err.contains("no answer on this machine (concurrent)"),
            "{err}"
        );
    } else {
        assert!(
            out.contains(
                "concurrent: not met — no rate met p99<1µs and success ≥ 99.900% (not even 3,334/s, the lowest rate whose step holds the 1,000 calls a p99 needs)"
            ),
            "{out}"
        );
        assert!(err.contains("no rate met the objective"), "{err}");
    }

    let mut too_low = args.to_vec();
    let at = too_low.iter().position(|a| *a == "4000").unwrap();
    too_low[at] = "1000";
    let (_, err) = exits(2, &too_low);
    assert!(
        err.contains("--max-rate 1000 is below 3334/s, the lowest rate at which a 300ms step holds the 1,000 calls a p99 needs"),
        "{err}"
    );
}

/// `--repeat N` runs the answer's step N more times once the search is over (outside the step
/// budget) and reports the spread across every run at that rate; a passing repeat confirms it.
#[test]
fn repeats_of_the_answer_give_its_spread() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let out = loadgen(&[
        "capacity",
        // Mechanics at low rates: the percentiles may rest on few calls.
        "--min-calls",
        "1",
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
    assert!(
        report.contains("    spread: 3 runs at that rate"),
        "{report}"
    );
}

/// A step whose 95 % interval of an objective's figure contains the bound runs again before
/// its verdict counts. One resource held 10–190 ms (seeded) with no retry: an acquire that
/// finds it held fails, so about half succeed at 20/s, fewer at 30 and 40/s, and with 1 s
/// steps of 100 ms intervals each success interval is wide enough to hold 40 % at one rate or
/// another. Five steps let the bisection close in on the rate where success is 40 %, where a
/// step's interval holds the bound whatever the machine's pace (three steps, 20, 40 and 30/s,
/// once all missed it while another copy of the suite ran). What the test checks is what the file records: which steps straddled (by their
/// own intervals), their repeats, the majority each counted, the search those verdicts drive,
/// and the answer's words about it.
#[test]
fn a_step_too_close_to_call_is_repeated_and_the_majority_counts() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let out = loadgen(&[
        "capacity",
        // Mechanics at low rates: the percentiles may rest on few calls.
        "--min-calls",
        "1",
        "--spawn",
        "3",
        "--fanout",
        "concurrent",
        "--slo",
        "p99<5s",
        "--min-success",
        "40%",
        "--start-rate",
        "20",
        "--min-rate",
        "5",
        "--max-rate",
        "80",
        "--max-steps",
        "5",
        "--clients",
        "16",
        "--resources",
        "1",
        "--hold",
        "10ms..190ms",
        "--retry-count",
        "0",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let report = text(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{report}");
    let raw = read_json(&json);
    assert_schema_valid(&raw);
    let result: CapacityResult = serde_json::from_value(raw).unwrap();
    let budget = result.plan.noise_repeats;
    assert_eq!(budget, 2, "the default");
    let min = result.objective.min_success;

    // Which steps straddled follows from each step's own recorded success interval (p99 is
    // nowhere near 5 s).
    for s in &result.steps {
        let m = &s.report.modes[0];
        // 1 s steps are cut into 100 ms intervals, so every step has its 95 % intervals.
        assert_eq!(m.interval_ms, 100);
        assert!(m.intervals.len() >= 10, "{}", m.intervals.len());
        let estimates = m.estimates.as_ref().unwrap();
        let e = redlock_loadgen::model::catalog::estimate(estimates, "acquire.success").unwrap();
        let (low, high) = e.interval().expect("10 intervals give an interval");
        let inside = low < min && min <= high;
        let other_failure = s.failures.iter().any(|f| !f.starts_with("success "));
        assert_eq!(
            !s.straddled.is_empty(),
            inside && !other_failure,
            "step at {} ({low}..{high}): {:?}",
            s.rate,
            s.straddled
        );
    }

    // Each straddling search step is followed by its repeats, exactly as many as it took the
    // majority to settle, and the step records that majority.
    let mut search = Search::new(result.plan);
    let mut i = 0;
    let mut noisy = 0;
    let number = |i: usize| i as u32 + 1; // one mode: numbers are positions
    while i < result.steps.len() {
        let s = &result.steps[i];
        assert!(s.repeat_of.is_none(), "a repeat without its step: {i}");
        let (phase, rate) = search.next_step().expect("the search asked for this step");
        assert_eq!((s.phase, s.rate), (phase, rate));
        let repeats: Vec<&Step> = result.steps[i + 1..]
            .iter()
            .take_while(|r| r.repeat_of == Some(number(i)))
            .collect();
        if s.straddled.is_empty() {
            assert!(
                repeats.is_empty() && s.noise.is_none(),
                "step {}",
                number(i)
            );
        } else {
            noisy += 1;
            let runs: Vec<bool> = std::iter::once(s.passed)
                .chain(repeats.iter().map(|r| r.passed))
                .collect();
            assert!(runs.len() as u32 <= 1 + budget);
            for r in &repeats {
                assert_eq!((r.phase, r.rate), (Phase::Repeat, s.rate));
            }
            let passes = |k: usize| runs[..k].iter().filter(|p| **p).count() as u32;
            // Unsettled after every shorter prefix, settled after all of them.
            for k in 1..runs.len() {
                assert!(!NoiseVerdict::of(k as u32, passes(k), budget + 1 - k as u32).1);
            }
            let n = runs.len() as u32;
            let (verdict, settled) = NoiseVerdict::of(n, passes(runs.len()), budget + 1 - n);
            assert!(settled);
            assert_eq!(s.noise, Some(verdict), "step {}", number(i));
            assert_eq!(verdict.counted_passed, 2 * verdict.passed > verdict.runs);
            if n > 1 {
                assert!(
                    report.contains(&format!(
                        "~ step {} counted as {} ({} of {n} runs passed)",
                        number(i),
                        if verdict.counted_passed {
                            "a pass"
                        } else {
                            "a failure"
                        },
                        verdict.passed
                    )),
                    "{report}"
                );
                assert!(report.contains(&format!("(repeat of step {})", number(i))));
            }
        }
        search.record(phase, rate, s.counted().unwrap());
        i += 1 + repeats.len();
    }
    assert_eq!(
        search.next_step(),
        None,
        "the search ended where the file ends"
    );
    // Five steps close in on the rate where success is 40 %, where an interval holds the bound
    // — unless the machine was busy: a step it decided fails by that rule, which no interval
    // covers (recorded in the step), and the bisection goes elsewhere.
    let busy_steps: Vec<&Step> = result
        .steps
        .iter()
        .filter(|s| {
            let m = &s.report.modes[0];
            redlock_loadgen::model::generator::machine_bound(m).is_some()
        })
        .collect();
    for s in &busy_steps {
        assert!(
            s.failures
                .iter()
                .any(|f| f.starts_with("bound by this machine: "))
                && s.straddled.is_empty(),
            "{:?}",
            s.failures
        );
    }
    assert!(
        noisy > 0 || !busy_steps.is_empty(),
        "no step straddled 40 % on a machine that was never busy: {report}"
    );

    // The answer says where noise decided a verdict it rests on.
    let answer = &result.answers[0];
    assert_eq!(answer.rate_per_s, search.answer().0);
    let ends = answer
        .rate_per_s
        .into_iter()
        .chain(answer.lowest_failed_per_s);
    for rate in ends {
        let counted = result
            .steps
            .iter()
            .rev()
            .find(|s| s.rate == rate && s.repeat_of.is_none() && !s.straddled.is_empty());
        let said = answer
            .noise
            .iter()
            .find(|l| l.contains(&format!("at {}/s ", grouped(rate))));
        match counted.and_then(|s| s.noise) {
            Some(v) if v.runs > 1 => {
                let line = said.expect("the answer names the noisy step");
                assert!(
                    line.starts_with("decided by noise: ")
                        && line.contains(&format!("passed {} of {} runs", v.passed, v.runs)),
                    "{line}"
                );
                assert!(report.contains(&format!("    {line}\n")), "{report}");
            }
            Some(_) => assert!(said.unwrap().starts_with("noise may have decided it: ")),
            None => assert!(said.is_none(), "{said:?}"),
        }
    }
}
