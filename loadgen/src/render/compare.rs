//! `compare`'s text: the configuration diff, then one table per compared result and mode.

use std::fmt::Write as _;

use crate::model::comparison::CompareResult;
use crate::render::uncertainty::{busy_machine_text, estimate_text, thresholds_block, value_text};

/// B − A in the figure's reading unit, with its interval.
pub fn difference_text(figure: &str, d: &crate::model::uncertainty::Estimate) -> String {
    let signed = |x: f64| {
        let t = value_text(figure, x.abs());
        if x < 0.0 {
            format!("−{t}")
        } else {
            format!("+{t}")
        }
    };
    match d.interval() {
        Some((low, high)) => format!(
            "{} (95 % {} to {})",
            signed(d.value),
            signed(low),
            signed(high)
        ),
        None => format!("{} (too short to say)", signed(d.value)),
    }
}

/// The compared runs measured on a busy machine, named "RESULT mode".
pub fn busy_runs(result: &CompareResult) -> Vec<(String, f64)> {
    result
        .busy_machine
        .iter()
        .map(|b| (format!("{} {}", b.result, b.mode), b.wait_share))
        .collect()
}

/// Why a verdict between results measured once may be the runs' own movement.
pub const SINGLE_RUN_WHY: &str = "The intervals of a single run hold the noise within it, not what moves between two runs of the same command, so a verdict may be that movement.";
/// How to get intervals that span runs.
pub const REPEAT_HINT: &str = "run --repeat 5";

/// What a verdict between single runs rests on, and how to get one between runs (empty when
/// every result was repeated).
pub fn single_runs_text(result: &CompareResult) -> String {
    match result.single_runs.as_slice() {
        [] => String::new(),
        runs => format!(
            "measured once: {}. {SINGLE_RUN_WHY} Measure each side with `{REPEAT_HINT}` for intervals taken across runs.",
            runs.join(", ")
        ),
    }
}

pub fn text(result: &CompareResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A = {}", result.results[0]);
    for (i, name) in result.results.iter().enumerate().skip(1) {
        let _ = writeln!(
            out,
            "B{} = {name}",
            if result.results.len() > 2 {
                i.to_string()
            } else {
                String::new()
            }
        );
    }
    if result.config_diff.is_empty() {
        out.push_str("\nconfiguration: the same\n");
    } else {
        out.push_str("\nconfiguration differences\n");
        for d in &result.config_diff {
            let _ = writeln!(
                out,
                "  {:<22}{}{}",
                d.key,
                d.values.join("  |  "),
                if d.shape {
                    ""
                } else {
                    "  (not the workload's shape)"
                }
            );
        }
    }
    let busy = busy_machine_text(&busy_runs(result));
    if !busy.is_empty() {
        let _ = writeln!(out, "\n! {busy}");
    }
    let single = single_runs_text(result);
    if !single.is_empty() {
        let _ = writeln!(out, "\n~ {single}");
    }
    let mut current = (String::new(), String::new());
    for f in &result.figures {
        if (f.result.clone(), f.mode.clone()) != current {
            current = (f.result.clone(), f.mode.clone());
            let _ = writeln!(
                out,
                "\n{} against A, {} (95 % intervals)\n  {:<18} {:<32} {:<32} {:<40} verdict",
                f.result, f.mode, "figure", "A", "B", "B − A"
            );
        }
        let _ = writeln!(
            out,
            "  {:<18} {:<32} {:<32} {:<40} {}",
            f.figure,
            estimate_text(&f.figure, &f.a),
            estimate_text(&f.figure, &f.b),
            difference_text(&f.figure, &f.difference),
            f.verdict.as_str()
        );
    }
    out.push_str(&thresholds_block(&result.thresholds));
    out
}
