//! `--json`: the result itself, serialised (`loadgen/schema.json`; the model is
//! [`crate::model`]).

use crate::model::report::Report;

/// Pretty-printed JSON text of a run's result.
pub fn render(report: &Report) -> String {
    crate::model::document::to_text(report)
}
