//! `--json` of a run: the full result, versioned (`loadgen/schema.json`); the model is
//! [`crate::model::result`].

use crate::model::result::to_json;
use crate::report::Report;

/// Pretty-printed JSON text of the report.
pub fn render(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(&to_json(report)).expect("a report serializes");
    text.push('\n');
    text
}
