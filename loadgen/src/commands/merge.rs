//! `redlock-loadgen merge`: result files of runs that measured at the same time, combined into
//! one result of the same kind ([`crate::merge`]), reported like the command that wrote them.

use super::shared::refuse_run_only_outputs;
use crate::cli::MergeArgs;
use crate::error::LoadgenError;
use crate::model::document::{self, Document};
use crate::output::Outputs;
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
    let p = &outputs.percentiles;
    match crate::merge::merge(parts, allow)? {
        Document::Run(report) => {
            outputs.print_report(&text::render(&report, p))?;
            super::run::write_outputs(&report, &outputs, false)?;
            match report.violations() {
                0 => Ok(()),
                n => Err(LoadgenError::Violations(n)),
            }
        }
        Document::Sweep(sweep) => {
            refuse_run_only_outputs("merge of sweeps", &outputs)?;
            let mut head = format!(
                "merged     {} sweep results: {}\n",
                sweep.merged_from.len(),
                sweep.merged_from.join(", ")
            );
            for note in &sweep.merge_notes {
                head.push_str(&format!("MERGE NOTE {note}\n"));
            }
            outputs.print_report(&(head + &sweep_table::table(&sweep, p)))?;
            super::sweep::write_sweep_outputs(&sweep, &outputs, false)?;
            let violations: u64 = sweep.levels.iter().map(|l| l.report.violations()).sum();
            match violations {
                0 => Ok(()),
                n => Err(LoadgenError::Violations(n)),
            }
        }
        Document::Capacity(result) => {
            refuse_run_only_outputs("merge of capacity results", &outputs)?;
            let mut head = format!(
                "merged     {} capacity results: {} (rates asked are the parts' sum)\n",
                result.merged_from.len(),
                result.merged_from.join(", ")
            );
            for note in &result.merge_notes {
                head.push_str(&format!("MERGE NOTE {note}\n"));
            }
            outputs.print_report(&(head + &capacity_table::render(&result, p)))?;
            super::capacity::write_outputs(&result, &outputs, false)?;
            let violations: u64 = result.steps.iter().map(|s| s.report.violations()).sum();
            match violations {
                0 => Ok(()),
                n => Err(LoadgenError::Violations(n)),
            }
        }
    }
}
