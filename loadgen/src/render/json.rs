//! `--json`: the result itself, serialised (`loadgen/schema.json`; the model is
//! [`crate::model`]).

use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::render::written::Written;

/// Pretty-printed JSON text of a run's result.
pub fn render(report: &Report) -> String {
    crate::model::document::to_text(report)
}

/// `--json` of any result.
pub fn write(written: &Written<'_>, _: &Percentiles) -> Result<String, String> {
    Ok(match written {
        Written::Run(report) => render(report),
        Written::Sweep(sweep) => crate::model::document::to_text(sweep),
        Written::Capacity(result) => crate::model::document::to_text(result),
        Written::Compare(result, _) => crate::model::document::to_text(result),
        Written::Scenarios(result) => crate::model::document::to_text(result),
    })
}
