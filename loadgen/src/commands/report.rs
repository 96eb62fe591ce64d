//! `redlock-loadgen report RESULT.json`: a saved result rendered again, exactly as the command
//! that wrote it reports (text report, `--html`, `--hlog`, `--plot`, `--csv`, `--hgrm`).

use crate::cli::ReportArgs;
use crate::commands::output::Outputs;
use crate::error::LoadgenError;
use crate::model::document::{self, Document};
use crate::render::formats::{Of, Written};
use crate::render::{capacity_table, sweep as sweep_table, text};

pub fn command(args: ReportArgs) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let doc = document::read(&args.input)?;
    let p = &outputs.percentiles;
    match &doc {
        Document::Run(report) => {
            outputs.print_report(&text::render(report, p))?;
            outputs.write(Written::Run(report), false)
        }
        Document::Sweep(sweep) => {
            outputs.refuse_for("report of a sweep", Of::Sweep)?;
            outputs.print_report(&sweep_table::table(sweep, p))?;
            outputs.write(Written::Sweep(sweep), false)
        }
        Document::Capacity(result) => {
            outputs.refuse_for("report of a capacity search", Of::Capacity)?;
            outputs.print_report(&capacity_table::render(result, p))?;
            outputs.write(Written::Capacity(result), false)
        }
    }
}
