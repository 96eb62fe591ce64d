//! The `scenarios` matrix's result (`kind: "scenarios"`): each row's verdict with its full run
//! result. Written by `scenarios --json`; not merged (its rows ran one after the other).

use serde::Serialize;

use super::header::Header;
use super::report::{FaultEvent, Report};

#[derive(Debug, Clone, Serialize)]
pub struct ScenariosResult {
    #[serde(flatten)]
    pub header: Header,
    pub rows: Vec<Outcome>,
}

/// What one row measured.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub scenario: String,
    pub command: String,
    pub expected: String,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub reason: String,
    /// (master, lock keys) still present once the TTL had passed.
    pub keys_left: Vec<(usize, u64)>,
    pub faults: Vec<FaultEvent>,
    /// The row's history file (`scenarios --history DIR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<String>,
    /// Porcupine's timeline of the history, relative to the HTML report that links it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<String>,
    pub result: Report,
}
