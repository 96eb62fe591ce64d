//! `redlock-loadgen compare A.json B.json [...]`: results side by side with a verdict per
//! figure ([`crate::model::comparison`]), as text, `--json` and `--html`; with `--run`, the
//! sides are measured first, in turns ([`super::compare_runs`]).

use super::compare_runs;
use super::output::{Outputs, Writes};
use super::shared::Session;
use crate::cli::CompareArgs;
use crate::error::LoadgenError;
use crate::model::comparison::{compare, pair_modes, Judging, Pairing};
use crate::model::document::{self, Document};
use crate::model::report::Report;
use crate::render::compare::{self as render, side_label};
use crate::render::formats::Written;

/// `session` is there when the sides are to be measured (`--run`).
pub fn command(args: CompareArgs, session: Option<&Session>) -> Result<(), LoadgenError> {
    let outputs = Outputs::json_and_html(&args.json, &args.html)?;
    let (results, pairing, side_exits, mut writes) = match session {
        Some(session) => {
            let measured = compare_runs::measure(&args, session)?;
            let turns = args.repeat.unwrap_or(compare_runs::DEFAULT_TURNS);
            (
                measured.results,
                Pairing::InTurns(turns),
                Some(measured.exits),
                measured.writes,
            )
        }
        None => (
            read_results(&args)?,
            Pairing::Apart,
            None,
            Writes::new(false),
        ),
    };
    let sides: Vec<(String, Vec<String>)> = results
        .iter()
        .enumerate()
        .map(|(i, (name, report))| {
            let modes = report.modes.iter().map(|m| m.label().to_string());
            (side_name(i, results.len(), name, pairing), modes.collect())
        })
        .collect();
    let pairs = pair_modes(&sides, args.pair_modes).map_err(LoadgenError::Usage)?;
    let judging = Judging {
        thresholds: &args.thresholds,
        policy: args.gate,
        noise_band: args.noise_threshold,
    };
    let result = compare(&results, &pairs, judging, pairing);
    let shape: Vec<String> = result
        .config_diff
        .iter()
        .filter(|d| d.shape)
        .map(|d| format!("{} ({})", d.key, d.values.join(" vs ")))
        .collect();
    // Sides measured here differ as their flags say; files may differ by accident.
    if !shape.is_empty() && !args.allow_different && pairing == Pairing::Apart {
        return Err(LoadgenError::Usage(format!(
            "the workloads differ in shape: {}; pass --allow-different to compare them anyway",
            shape.join(", ")
        )));
    }
    outputs.print_report(&render::text(&result))?;
    let named: Vec<(&str, &Report)> = results.iter().map(|(n, r)| (n.as_str(), r)).collect();
    outputs.write_into(&mut writes, Written::Compare(&result, &named));
    writes.finish()?;
    if let Some(exits) = &side_exits {
        exits.check(&results)?;
    }
    crate::commands::run::check_thresholds(result.gate.as_ref())
}

/// How side `i` of `n` is named in a refusal: its label, and its file when read from one.
fn side_name(i: usize, n: usize, name: &str, pairing: Pairing) -> String {
    match pairing {
        Pairing::Apart => format!("{} ({name})", side_label(i, n)),
        Pairing::InTurns(_) => side_label(i, n),
    }
}

/// The result files, each a result of `run`, `merge` or `collect`, named by its path.
fn read_results(args: &CompareArgs) -> Result<Vec<(String, Report)>, LoadgenError> {
    if let Some(flag) = [
        args.repeat.map(|_| "--repeat"),
        args.results.as_ref().map(|_| "--results"),
    ]
    .into_iter()
    .flatten()
    .next()
    {
        return Err(LoadgenError::Usage(format!(
            "{flag} goes with --run (sides measured here); results read from files were measured already"
        )));
    }
    let paths = &args.inputs;
    if paths.len() < 2 {
        return Err(LoadgenError::Usage(format!(
            "compare needs 2 results or more (A, then each B to set against it); got {}",
            paths.len()
        )));
    }
    let mut results = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        match document::read(path)? {
            Document::Run(report) => results.push((name, *report)),
            other => {
                return Err(LoadgenError::Usage(format!(
                    "{name} is a {} result; compare takes results of run, merge or collect",
                    other.kind()
                )))
            }
        }
    }
    Ok(results)
}
