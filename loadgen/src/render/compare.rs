//! `compare`'s text: the configuration diff, then one table per compared result and mode.

use std::fmt::Write as _;

use crate::model::comparison::{CompareResult, FigureComparison, Verdict};
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
        .map(|b| (format!("{} {}", b.side, b.mode), b.wait_share))
        .collect()
}

/// Why a verdict between results measured once may be the runs' own movement.
pub const SINGLE_RUN_WHY: &str = "The intervals of a single run hold the noise within it, not what moves between two runs of the same command, so a verdict may be that movement.";
/// How to get a verdict between runs that the machine's drift does not decide.
pub const IN_TURNS_HINT: &str = "compare --run 'FLAGS A' --run 'FLAGS B'";
/// What that does.
pub const IN_TURNS_WHY: &str =
    "the sides then take turns, repeat by repeat, and each difference is taken within a turn.";

/// What a verdict between single runs rests on, and how to get one between runs (empty when
/// every result was repeated).
pub fn single_runs_text(result: &CompareResult) -> String {
    match result.single_runs.as_slice() {
        [] => String::new(),
        runs => format!(
            "measured once: {}. {SINGLE_RUN_WHY} Measure both with `{IN_TURNS_HINT}`: {IN_TURNS_WHY}",
            runs.join(", ")
        ),
    }
}

pub use crate::model::comparison::side_label;

/// How the sides of `compare --run` were measured (empty for results read from files).
pub fn in_turns_text(result: &CompareResult) -> String {
    match result.interleaved_repeats {
        Some(n) => format!(
            "measured here in turns, {n} repeats a side (A B, then B A, …), each side on the masters its flags name: every B − A is Student's t over the repeats' own differences and every B ÷ A over the logarithms of their own ratios (a geometric interval, never reaching 0), so what the machine did between repeats moved both sides and cancels."
        ),
        None => String::new(),
    }
}

/// The modes set against each other by `--pair-modes` (empty when modes met by name).
pub fn paired_modes_text(result: &CompareResult) -> String {
    let pairs: Vec<String> = result
        .paired_modes
        .iter()
        .map(|p| format!("{}'s {} against A's {}", p.side, p.b_mode, p.a_mode))
        .collect();
    match pairs.as_slice() {
        [] => String::new(),
        _ => format!(
            "modes of different names paired as asked (--pair-modes): {}.",
            pairs.join(", ")
        ),
    }
}

/// A compared figure's mode: A's, and B's where `--pair-modes` set another against it.
pub fn mode_text(f: &FigureComparison) -> String {
    match &f.b_mode {
        Some(b) => format!("{} (B: {b})", f.mode),
        None => f.mode.clone(),
    }
}

pub fn text(result: &CompareResult) -> String {
    let mut out = String::new();
    let n = result.results.len();
    if let Some(gate) = &result.gate {
        let _ = writeln!(out, "{}\n", gate.headline());
    }
    for (i, name) in result.results.iter().enumerate() {
        let _ = writeln!(out, "{} = {name}", side_label(i, n));
    }
    let turns = in_turns_text(result);
    if !turns.is_empty() {
        let _ = writeln!(out, "\n= {turns}");
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
    for (mark, note) in [
        ("=", paired_modes_text(result)),
        ("!", busy_machine_text(&busy_runs(result))),
        ("~", single_runs_text(result)),
    ] {
        if !note.is_empty() {
            let _ = writeln!(out, "\n{mark} {note}");
        }
    }
    let mut current = (String::new(), String::new());
    for f in &result.figures {
        if (f.side.clone(), f.mode.clone()) != current {
            current = (f.side.clone(), f.mode.clone());
            let head = format!(
                "{:<18} {:<32} {:<32} {:<40} verdict",
                "figure", "A", "B", "B − A"
            );
            let _ = writeln!(
                out,
                "\n{} against A, {} (95 % intervals)\n  {head}",
                f.side,
                mode_text(f)
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
    let _ = writeln!(out, "\n{}", tally_text(result));
    out.push_str(&thresholds_block(&result.thresholds, result.gate.as_ref()));
    out
}

/// `3 figure(s) better, 1 worse, 2 within the ±2 % noise band, 8 with no clear difference at
/// 95 %, 0 too short to say`.
pub fn tally_text(result: &CompareResult) -> String {
    let count = |v: Verdict| result.figures.iter().filter(|f| f.verdict == v).count();
    format!(
        "{} figure(s) better, {} worse, {} within the {} noise band, {} with no clear difference at 95 %, {} too short to say",
        count(Verdict::Better),
        count(Verdict::Worse),
        count(Verdict::WithinNoise),
        noise_band_text(result.noise_band),
        count(Verdict::NoClearDifference),
        count(Verdict::TooShort)
    )
}

/// `±2 %` (a share of A's value), or `(none)` when turned off.
pub fn noise_band_text(band: f64) -> String {
    if band > 0.0 {
        // 2 % prints "2", 0.5 % "0.5": no trailing zeros.
        let percent = format!("{:.3}", band * 100.0);
        format!("±{} %", percent.trim_end_matches('0').trim_end_matches('.'))
    } else {
        "(no)".into()
    }
}
