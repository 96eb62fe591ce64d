//! `redlock-loadgen report RESULT.json`: a saved result rendered again, exactly as the command
//! that wrote it reports (text report, `--html`, `--hlog`, `--plot`, `--csv`, `--hgrm`).

use super::shared::refuse_run_only_outputs;
use crate::cli::ReportArgs;
use crate::commands::output::Outputs;
use crate::error::LoadgenError;
use crate::model::document::{self, Document};
use crate::render::{capacity_table, sweep as sweep_table, text};

pub fn command(args: ReportArgs) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let doc = document::read(&args.input)?;
    let p = &outputs.percentiles;
    match &doc {
        Document::Run(report) => {
            outputs.print_report(&text::render(report, p))?;
            super::run::write_outputs(report, &outputs, false)
        }
        Document::Sweep(sweep) => {
            refuse_run_only_outputs("report of a sweep", &outputs)?;
            outputs.print_report(&sweep_table::table(sweep, p))?;
            super::sweep::write_sweep_outputs(sweep, &outputs, false)
        }
        Document::Capacity(result) => {
            refuse_run_only_outputs("report of a capacity search", &outputs)?;
            outputs.print_report(&capacity_table::render(result, p))?;
            super::capacity::write_outputs(result, &outputs, false)
        }
    }
}
