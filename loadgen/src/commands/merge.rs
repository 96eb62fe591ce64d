//! `redlock-loadgen merge`: result files of runs that measured at the same time, combined into
//! one result of the same kind ([`crate::merge`]), reported like the command that wrote them.

use crate::cli::MergeArgs;
use crate::commands::output::Outputs;
use crate::error::LoadgenError;
use crate::model::document::{self, Document};
use crate::model::header::Header;
use crate::render::formats::{Of, Written};
use crate::render::{capacity_table, sweep as sweep_table, text};

pub fn command(args: MergeArgs) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let mut parts = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        parts.push((path.display().to_string(), document::read(path)?));
    }
    let allow = crate::merge::Allow {
        mixed: args.allow_mixed,
        disjoint: args.allow_disjoint,
    };
    match print_merged(&crate::merge::merge(parts, allow)?, &outputs, None)? {
        0 => Ok(()),
        n => Err(LoadgenError::Violations(n)),
    }
}

/// Prints a merged result like the command that wrote its parts and writes its files;
/// returns its mutual-exclusion violations. `collect` prints the same, with one more
/// top-level field in `--json` (`extra`: its `coordination`).
pub fn print_merged(
    merged: &Document,
    outputs: &Outputs,
    extra: Option<(&str, serde_json::Value)>,
) -> Result<u64, LoadgenError> {
    let p = &outputs.percentiles;
    // With an extra field, `--json` is written below; the other files by the kind's writer.
    let files = &Outputs {
        json: outputs.json.clone().filter(|_| extra.is_none()),
        ..outputs.clone()
    };
    let violations = match merged {
        Document::Run(report) => {
            outputs.print_report(&text::render(report, p))?;
            files.write(Written::Run(report), false)?;
            report.violations()
        }
        Document::Sweep(sweep) => {
            outputs.refuse_for("merge of sweeps", Of::Sweep)?;
            let head = merged_head(&sweep.header, "sweep results", "");
            outputs.print_report(&(head + &sweep_table::table(sweep, p)))?;
            files.write(Written::Sweep(sweep), false)?;
            sweep.levels.iter().map(|l| l.report.violations()).sum()
        }
        Document::Capacity(result) => {
            outputs.refuse_for("merge of capacity results", Of::Capacity)?;
            let why = " (rates asked are the parts' sum)";
            let head = merged_head(&result.header, "capacity results", why);
            outputs.print_report(&(head + &capacity_table::render(result, p)))?;
            files.write(Written::Capacity(result), false)?;
            result.steps.iter().map(|s| s.report.violations()).sum()
        }
    };
    if let (Some((name, value)), Some(dest)) = (extra, &outputs.json) {
        let mut doc = merged.to_value();
        if let Some(fields) = doc.as_object_mut() {
            fields.insert(name.to_string(), value);
        }
        dest.write(&document::to_text(&doc))?;
    }
    Ok(violations)
}

/// The lines above a merged sweep's or search's table: what it was merged from, its notes.
fn merged_head(header: &Header, what: &str, why: &str) -> String {
    let from = &header.merged_from;
    let mut head = format!(
        "merged     {} {what}: {}{why}\n",
        from.len(),
        from.join(", ")
    );
    for note in &header.merge_notes {
        head.push_str(&format!("MERGE NOTE {note}\n"));
    }
    head
}
