//! `merge`: one result from result files of several machines (or processes) that measured
//! the same workload at the same time. Counts and histograms add exactly (percentiles are
//! recomputed from the sums, never averaged); rates come from the files' own measured windows
//! aligned by wall clock ([`windows`]): over the union of the windows, and while all measured.
//!
//! Refused (exit 2, naming the files and fields): inputs that are not results, results of
//! different kinds, the same run twice (run ids), different workloads ([`compat`]) unless
//! `--allow-mixed`, and windows that never overlap unless `--allow-disjoint`. Sweeps merge
//! level by level, capacity searches step by step.

pub mod compat;
pub mod windows;

use redlock_core::FanOut;

use crate::error::LoadgenError;
use crate::model::capacity::search::{Limit, Phase};
use crate::model::capacity::{answer, Answer, CapacityResult, NoiseVerdict, Step};
use crate::model::document::Document;
use crate::model::header::{Header, Kind};
use crate::model::lock::LockAlgorithm;
use crate::model::mode::ModeStats;
use crate::model::report::Report;
use crate::model::sweep::{Level, SweepResult};

/// What `merge` may accept.
#[derive(Debug, Clone, Copy, Default)]
pub struct Allow {
    pub mixed: bool,
    pub disjoint: bool,
}

/// Merges named documents (all of one kind).
pub fn merge(parts: Vec<(String, Document)>, allow: Allow) -> Result<Document, LoadgenError> {
    let Some((first_name, first)) = parts.first() else {
        return Err(LoadgenError::Usage("merge: no result files given".into()));
    };
    if let Some((name, doc)) = parts.iter().find(|(_, d)| d.kind() != first.kind()) {
        return Err(LoadgenError::Usage(format!(
            "{first_name} is a {} result but {name} is a {} result: only results of one kind merge",
            first.kind(),
            doc.kind()
        )));
    }
    match first {
        Document::Run(_) => merge_runs(of_kind(parts, |d| d.into_run().map(|r| *r)), allow)
            .map(|r| Document::Run(Box::new(r))),
        Document::Sweep(_) => {
            merge_sweeps(of_kind(parts, Document::into_sweep), allow).map(Document::Sweep)
        }
        Document::Capacity(_) => {
            merge_capacity(of_kind(parts, Document::into_capacity), allow).map(Document::Capacity)
        }
    }
}

/// The parts as results of one kind (all are: checked by the caller).
fn of_kind<T>(parts: Vec<(String, Document)>, pick: fn(Document) -> Option<T>) -> Vec<(String, T)> {
    parts
        .into_iter()
        .filter_map(|(name, doc)| pick(doc).map(|t| (name, t)))
        .collect()
}

/// Adds run results of the same workload, mode by mode, on one wall-clock timeline. Refused:
/// a `run --repeat` result (its repeats are not on one clock with the other parts), the same
/// run in two inputs, and (unless `--allow-mixed`) workloads that differ from the first's.
pub fn merge_runs(parts: Vec<(String, Report)>, allow: Allow) -> Result<Report, LoadgenError> {
    if let Some((name, part)) = parts.iter().find(|(_, r)| r.config.repeat > 1) {
        return Err(LoadgenError::Usage(format!(
            "{name} is a run of --repeat {}: its repeats are laid end to end, not on one clock with the other parts, so it cannot be merged (`compare` reads it)",
            part.config.repeat
        )));
    }
    for (i, (name, part)) in parts.iter().enumerate() {
        for (other, earlier) in &parts[..i] {
            let ids = &part.part_run_ids;
            if let Some(id) = ids.iter().find(|id| earlier.part_run_ids.contains(id)) {
                return Err(LoadgenError::Usage(format!(
                    "{other} and {name} both hold run {id}: the same run twice would double its counts"
                )));
            }
        }
    }
    let (first_name, first) = &parts[0];
    let mut notes = Vec::new();
    for (name, part) in &parts[1..] {
        let diff = compat::differences(first, part);
        if diff.is_empty() {
            continue;
        }
        let what = format!("{name} differs from {first_name} in {}", diff.join("; "));
        if !allow.mixed {
            return Err(LoadgenError::Usage(format!(
                "{what}: results of different workloads do not add up (pass --allow-mixed to merge them anyway)"
            )));
        }
        notes.push(format!("mixed workloads: {what}"));
    }
    // Every mode of the parts, in the order first met: modes pair up by lock algorithm and
    // (for Redlock) fan-out.
    let mut mode_keys: Vec<(LockAlgorithm, FanOut)> = Vec::new();
    for m in parts.iter().flat_map(|(_, part)| &part.modes) {
        if !mode_keys.iter().any(|&(l, f)| m.same_mode(l, f)) {
            mode_keys.push((m.lock, m.fanout));
        }
    }
    let mut modes = Vec::new();
    for (lock, fanout) in mode_keys {
        modes.push(merge_mode(&parts, (lock, fanout), allow, &mut notes)?);
    }
    let mut report = Report {
        header: merged_header(Kind::Run, &parts, |r| &r.header, notes),
        part_run_ids: parts
            .iter()
            .flat_map(|(_, r)| r.part_run_ids.clone())
            .collect(),
        modes,
        comparison: None,
        against_redlock: Vec::new(),
        thresholds: Vec::new(),
        gate: None,
        faults: parts.iter().flat_map(|(_, r)| r.faults.clone()).collect(),
        ..first.clone()
    };
    report.derive();
    Ok(report)
}

/// The header of merged `parts` (`header` picks a part's), with `notes`.
fn merged_header<T>(
    kind: Kind,
    parts: &[(String, T)],
    header: fn(&T) -> &Header,
    notes: Vec<String>,
) -> Header {
    Header::merged(
        kind,
        parts.iter().map(|(n, p)| (n.as_str(), header(p))),
        notes,
    )
}

/// Item `what` of every part (`report` picks it) merged as runs; its merge notes are added
/// to `notes`.
fn merge_item<T>(
    parts: &[(String, T)],
    what: &str,
    report: impl Fn(&T) -> Report,
    (allow, notes): (Allow, &mut Vec<String>),
) -> Result<Report, LoadgenError> {
    let runs = parts
        .iter()
        .map(|(n, p)| (format!("{n} ({what})"), report(p)));
    let merged = merge_runs(runs.collect(), allow)?;
    notes.extend(merged.header.merge_notes.iter().cloned());
    Ok(merged)
}

/// One mode of every part that has it, added up on one timeline; windows that never all
/// overlap are refused unless `--allow-disjoint` (then noted in `notes`).
fn merge_mode(
    parts: &[(String, Report)],
    (lock, fanout): (LockAlgorithm, FanOut),
    allow: Allow,
    notes: &mut Vec<String>,
) -> Result<ModeStats, LoadgenError> {
    let mut of_mode: Vec<(&str, &ModeStats)> = Vec::new();
    for (name, r) in parts {
        let same = r.modes.iter().filter(|m| m.same_mode(lock, fanout));
        of_mode.extend(same.map(|m| (name.as_str(), m)));
    }
    let all_windows: Vec<(u64, u64)> = of_mode
        .iter()
        .flat_map(|(_, m)| windows::windows(m))
        .collect();
    if of_mode.len() > 1 && windows::overlap(&all_windows).is_none() {
        let names: Vec<&str> = of_mode.iter().map(|(n, _)| *n).collect();
        let what = format!(
            "{} fan-out: the measured windows of {} never all overlap",
            fanout.as_str(),
            names.join(", ")
        );
        if !allow.disjoint {
            return Err(LoadgenError::Usage(format!(
                "{what}: they did not measure at the same time, so their rates do not add up (pass --allow-disjoint to merge them anyway)"
            )));
        }
        eprintln!("redlock-loadgen: warning: {what}; the rate while all measured is undefined");
        notes.push(format!("disjoint windows: {what}"));
    }
    windows::merge_modes(&of_mode).map_err(LoadgenError::Usage)
}

/// Sweeps merge level by level (the same levels in every file).
fn merge_sweeps(
    parts: Vec<(String, SweepResult)>,
    allow: Allow,
) -> Result<SweepResult, LoadgenError> {
    let (first_name, first) = &parts[0];
    let labels: Vec<&str> = first.levels.iter().map(|l| l.level.as_str()).collect();
    for (name, part) in &parts[1..] {
        let theirs: Vec<&str> = part.levels.iter().map(|l| l.level.as_str()).collect();
        if theirs != labels || part.load != first.load {
            return Err(LoadgenError::Usage(format!(
                "{name} swept {} levels {} but {first_name} swept {} levels {}: sweeps merge level by level",
                part.load,
                theirs.join(","),
                first.load,
                labels.join(",")
            )));
        }
    }
    let mut notes = Vec::new();
    let mut levels = Vec::with_capacity(labels.len());
    for (i, label) in labels.iter().enumerate() {
        let what = format!("level {label}");
        let level = |s: &SweepResult| s.levels[i].report.clone();
        levels.push(Level {
            level: label.to_string(),
            report: merge_item(&parts, &what, level, (allow, &mut notes))?,
        });
    }
    Ok(SweepResult {
        header: merged_header(Kind::Sweep, &parts, |s| &s.header, notes),
        load: first.load.clone(),
        levels,
    })
}

/// Capacity searches merge step by step (the same fan-out, phase and rate at each step); the
/// answers are judged again on the merged steps, at the rates the files asked for together.
fn merge_capacity(
    parts: Vec<(String, CapacityResult)>,
    allow: Allow,
) -> Result<CapacityResult, LoadgenError> {
    check_same_steps(&parts)?;
    let first = &parts[0].1;
    let mut notes = Vec::new();
    let mut steps = Vec::with_capacity(first.steps.len());
    for (i, step) in first.steps.iter().enumerate() {
        let what = format!("step {}", i + 1);
        let report = |c: &CapacityResult| c.steps[i].report.clone();
        let report = merge_item(&parts, &what, report, (allow, &mut notes))?;
        steps.push(judge_step(first, step, parts.len(), report));
    }
    judge_noise_again(first, &mut steps);
    let answers = first
        .answers
        .iter()
        .map(|a| answer_again(a, first, &steps))
        .collect();
    Ok(CapacityResult {
        header: merged_header(Kind::Capacity, &parts, |c| &c.header, notes),
        objective: first.objective.clone(),
        plan: first.plan,
        warnings: first.warnings.clone(),
        answers,
        steps,
        faults: Vec::new(),
        faults_words: String::new(),
        baseline: None,
    })
}

/// Refuses searches that did not run the same steps (fan-out, phase, rate) for the same
/// objective, and searches under faults (their faults acted on one machine's own masters).
fn check_same_steps(parts: &[(String, CapacityResult)]) -> Result<(), LoadgenError> {
    if let Some((name, part)) = parts.iter().find(|(_, p)| !p.faults.is_empty()) {
        return Err(LoadgenError::Usage(format!(
            "{name} was searched under faults ({}): a search under faults does not merge (its faults acted on one machine's local masters)",
            part.faults.join(" ")
        )));
    }
    let (first_name, first) = &parts[0];
    let key = |s: &Step| format!("{} {} {}", s.fanout, s.phase.as_str(), s.rate);
    let keys: Vec<String> = first.steps.iter().map(key).collect();
    for (name, part) in &parts[1..] {
        let theirs: Vec<String> = part.steps.iter().map(key).collect();
        if theirs != keys {
            return Err(LoadgenError::Usage(format!(
                "{name} ran steps [{}] but {first_name} ran [{}]: capacity results merge step by step",
                theirs.join(", "),
                keys.join(", ")
            )));
        }
        if part.objective != first.objective {
            return Err(LoadgenError::Usage(format!(
                "{name} searched with a different objective than {first_name}"
            )));
        }
    }
    Ok(())
}

/// `step` of the first search, merged (`report`) and judged again against the objective, at
/// the rate of all `parts` together.
fn judge_step(first: &CapacityResult, step: &Step, parts: usize, report: Report) -> Step {
    let (failures, straddled) = match report.modes.first() {
        Some(m) => {
            let failures = first
                .objective
                .failures(m, m.generator.judgement.target_missed);
            let straddled = first.objective.straddled(m, &failures);
            (failures, straddled)
        }
        None => (vec!["nothing measured".into()], Vec::new()),
    };
    let rate = step.rate * parts as f64;
    let mut merged = Step::new(&step.fanout, step.phase, rate, failures, report);
    merged.straddled = straddled;
    merged.repeat_of = step.repeat_of;
    merged
}

/// The steps the search repeated for noise: their verdicts again, by the merged runs.
fn judge_noise_again(first: &CapacityResult, steps: &mut [Step]) {
    for (i, step) in first.steps.iter().enumerate() {
        if step.noise.is_none() {
            continue;
        }
        let number = first.steps[..=i]
            .iter()
            .filter(|s| s.fanout == step.fanout)
            .count() as u32;
        let runs: Vec<bool> = std::iter::once(steps[i].passed)
            .chain(
                steps
                    .iter()
                    .filter(|s| s.fanout == step.fanout && s.repeat_of == Some(number))
                    .map(|s| s.passed),
            )
            .collect();
        let passed = runs.iter().filter(|p| **p).count() as u32;
        steps[i].noise = Some(NoiseVerdict::of(runs.len() as u32, passed, 0).0);
    }
}

/// The answer `a` of the first search, judged again on the merged steps.
fn answer_again(a: &Answer, first: &CapacityResult, steps: &[Step]) -> Answer {
    // The verdicts the search would count (a repeat for noise counts with its step).
    let best = steps
        .iter()
        .filter(|s| {
            s.fanout == a.fanout && s.repeat_of.is_none() && s.counted().unwrap_or(s.passed)
        })
        .map(|s| s.rate)
        .max_by(f64::total_cmp);
    // Confirmed as the search confirms: a confirming step, or a --repeat run, passed.
    let confirmed = best.is_some_and(|r| {
        steps.iter().any(|s| {
            s.fanout == a.fanout
                && s.rate == r
                && match s.phase {
                    Phase::Confirm => s.counted() == Some(true),
                    Phase::Repeat => s.repeat_of.is_none() && s.passed,
                    _ => false,
                }
        })
    });
    let limit = if best.is_some() {
        a.limit
    } else {
        Limit::NotMet
    };
    answer(
        &a.fanout,
        steps,
        (best, confirmed, limit),
        &first.objective,
        &first.plan,
    )
}
