//! A result file of any kind: `run` (also what `merge` writes for runs), `sweep`, `capacity`.
//! Every kind carries `schema_version` and `kind` (`loadgen/schema.json`).

use std::io::Read as _;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::capacity::CapacityResult;
use super::header::{Header, Kind, READABLE_SCHEMA_VERSIONS, SCHEMA_VERSION};
use super::limits;
use super::report::Report;
use super::sweep::SweepResult;
use crate::error::LoadgenError;

/// One parsed result file.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    Run(Box<Report>),
    Sweep(SweepResult),
    Capacity(CapacityResult),
}

/// `$body` with `$doc`'s result, whatever its kind, bound to `$x`.
macro_rules! each {
    ($doc:expr, $x:ident => $body:expr) => {
        match $doc {
            Document::Run($x) => $body,
            Document::Sweep($x) => $body,
            Document::Capacity($x) => $body,
        }
    };
}

impl Document {
    pub fn header(&self) -> &Header {
        each!(self, d => &d.header)
    }

    fn header_mut(&mut self) -> &mut Header {
        each!(self, d => &mut d.header)
    }

    pub fn into_run(self) -> Option<Box<Report>> {
        match self {
            Document::Run(r) => Some(r),
            _ => None,
        }
    }

    pub fn into_sweep(self) -> Option<SweepResult> {
        match self {
            Document::Sweep(s) => Some(s),
            _ => None,
        }
    }

    pub fn into_capacity(self) -> Option<CapacityResult> {
        match self {
            Document::Capacity(c) => Some(c),
            _ => None,
        }
    }

    pub fn kind(&self) -> &'static str {
        self.header().kind.as_str()
    }

    /// The document as a JSON value (what `--json` writes).
    pub fn to_value(&self) -> serde_json::Value {
        each!(self, d => serde_json::to_value(d).expect("a result serializes"))
    }

    /// Every run inside (the run itself, a sweep's levels, a search's steps).
    fn runs_mut(&mut self) -> Vec<&mut Report> {
        match self {
            Document::Run(r) => vec![r.as_mut()],
            Document::Sweep(s) => s.levels.iter_mut().map(|l| &mut l.report).collect(),
            Document::Capacity(c) => c.steps.iter_mut().map(|s| &mut s.report).collect(),
        }
    }
}

/// Pretty-printed JSON text of a result, newline-terminated.
pub fn to_text(result: &impl Serialize) -> String {
    serde_json::to_string_pretty(result).expect("a result serializes") + "\n"
}

/// Parses a result file's text; the error names the field at fault. Derived figures are
/// recomputed, not read. The text is read straight into the result (no JSON tree in between)
/// within the limits of [`limits`], checked before anything is derived.
pub fn parse(text: &str) -> Result<Document, String> {
    limits::with_budget(text.len(), || parse_within_limits(text))
}

fn parse_within_limits(text: &str) -> Result<Document, String> {
    /// The two fields that say what the rest is (everything else skipped unread).
    #[derive(serde::Deserialize)]
    struct Probe {
        schema_version: Option<serde_json::Value>,
        kind: Option<serde_json::Value>,
    }
    let probe: Probe = serde_json::from_str(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => {
            "not a redlock-loadgen result: the top level is not an object".to_string()
        }
        _ => format!("not JSON: {e}"),
    })?;
    let not_a_result = |field| format!("no field {field}: not a redlock-loadgen result");
    let version = probe
        .schema_version
        .ok_or_else(|| not_a_result("schema_version"))?;
    let version = readable_version(&version)?;
    let kind = probe.kind.as_ref().and_then(|k| k.as_str());
    let kind = kind.ok_or_else(|| not_a_result("kind"))?.to_string();
    fn read<T: DeserializeOwned>(kind: &str, text: &str) -> Result<T, String> {
        let mut json = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut json).map_err(|e| {
            let field = e.path().to_string();
            let e = e.into_inner();
            if field == "." {
                format!("not a redlock-loadgen {kind} result: {e}")
            } else {
                format!("not a redlock-loadgen {kind} result: field {field}: {e}")
            }
        })
    }
    let mut doc = match kind.as_str() {
        "run" => Document::Run(Box::new(read(&kind, text)?)),
        "sweep" => Document::Sweep(read(&kind, text)?),
        "capacity" => Document::Capacity(read(&kind, text)?),
        "scenarios" => {
            return Err(
                "a scenarios result does not merge (its rows ran one after the other)".into(),
            )
        }
        other => {
            return Err(format!(
                "field kind: {other:?} is not one of run, sweep, capacity"
            ))
        }
    };
    let runs = doc.runs_mut().into_iter().map(|r| &*r);
    limits::check_runs(runs).map_err(|e| format!("field {e}"))?;
    for run in doc.runs_mut() {
        let held = run.header.kind;
        if held != Kind::Run {
            return Err(format!(
                "a {kind} result holds a {held} result where a run result belongs"
            ));
        }
        run.header.schema_version = SCHEMA_VERSION;
        run.derive();
    }
    if version != SCHEMA_VERSION {
        let header = doc.header_mut();
        header.schema_version = SCHEMA_VERSION;
        let run = header.run_id.clone();
        let mut notes = vec![format!(
            "run {run} was written with schema version {version}: its intervals hold the acquire histogram alone (no attempt, release or round-trip histograms per interval)"
        )];
        if version < 3 {
            notes.push(format!(
                "run {run} was written with schema version {version}: its attempts that failed without a denial (an outage) count as split votes or clean losses, not as unavailable attempts"
            ));
        }
        header.note(notes);
    }
    Ok(doc)
}

/// The schema version of a file, if this tool reads it.
fn readable_version(v: &serde_json::Value) -> Result<u32, String> {
    v.as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| READABLE_SCHEMA_VERSIONS.contains(n))
        .ok_or_else(|| {
            let names = READABLE_SCHEMA_VERSIONS.map(|n| n.to_string());
            let readable = match names.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            };
            format!("field schema_version: {v} is not supported (this redlock-loadgen reads {readable})")
        })
}

/// Reads one result file (a bad file, or one above [`limits::MAX_FILE_BYTES`], is a usage
/// error naming it; a larger file is refused before it is read).
pub fn read(path: &Path) -> Result<Document, LoadgenError> {
    let bad = |e: String| LoadgenError::Usage(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    if let Ok(meta) = file.metadata() {
        limits::check_file_size(meta.len()).map_err(bad)?;
    }
    // A file that grows while read (or a pipe) stops at the limit all the same.
    let mut text = String::new();
    file.take(limits::MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| bad(e.to_string()))?;
    limits::check_file_size(text.len() as u64).map_err(bad)?;
    parse(&text).map_err(bad)
}
