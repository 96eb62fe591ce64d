//! A result file of any kind: `run` (also what `merge` writes for runs), `sweep`, `capacity`.
//! Every kind carries `schema_version` and `kind` (`loadgen/schema.json`).

use std::path::Path;

use super::capacity::{CapacityJson, CapacityResult};
use super::result::{self as json, SCHEMA_VERSION};
use super::sweep::{SweepJson, SweepResult};
use crate::error::LoadgenError;
use crate::report::Report;

/// One parsed result file.
#[derive(Debug, Clone)]
pub enum Document {
    Run(Box<Report>),
    Sweep(SweepResult),
    Capacity(CapacityResult),
}

impl Document {
    pub fn kind(&self) -> &'static str {
        match self {
            Document::Run(_) => "run",
            Document::Sweep(_) => "sweep",
            Document::Capacity(_) => "capacity",
        }
    }
}

/// Parses a result file's text; the error names the field at fault.
pub fn parse(text: &str) -> Result<Document, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if !value.is_object() {
        return Err("not a redlock-loadgen result: the top level is not an object".into());
    }
    match value.get("schema_version") {
        Some(v) if v.as_u64() == Some(u64::from(SCHEMA_VERSION)) => {}
        Some(v) => {
            return Err(format!(
                "field schema_version: {v} is not supported (this redlock-loadgen reads {SCHEMA_VERSION})"
            ))
        }
        None => return Err("no field schema_version: not a redlock-loadgen result".into()),
    }
    let kind = value
        .get("kind")
        .and_then(|k| k.as_str())
        .ok_or("no field kind: not a redlock-loadgen result")?
        .to_string();
    let field = |e: serde_json::Error| format!("not a redlock-loadgen {kind} result: {e}");
    match kind.as_str() {
        "run" => json::from_value(value).map(|r| Document::Run(Box::new(r))),
        "sweep" => {
            let j: SweepJson = serde_json::from_value(value).map_err(field)?;
            SweepResult::from_json(j).map(Document::Sweep)
        }
        "capacity" => {
            let j: CapacityJson = serde_json::from_value(value).map_err(field)?;
            CapacityResult::from_json(j).map(Document::Capacity)
        }
        other => Err(format!(
            "field kind: {other:?} is not one of run, sweep, capacity"
        )),
    }
}

/// Reads one result file (a bad file is a usage error naming it).
pub fn read(path: &Path) -> Result<Document, LoadgenError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadgenError::Usage(format!("{}: {e}", path.display())))?;
    parse(&text).map_err(|e| LoadgenError::Usage(format!("{}: {e}", path.display())))
}
