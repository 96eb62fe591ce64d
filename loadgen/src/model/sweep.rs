//! A sweep's result (`kind: "sweep"`): its levels are ordinary run results.

use serde::{Deserialize, Serialize};

use super::header::Header;
use super::report::Report;

/// A whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    #[serde(flatten)]
    pub header: Header,
    /// "closed" (levels are client counts) or "open" (levels are rates).
    pub load: String,
    pub levels: Vec<Level>,
}

/// One level: its label (client count or rate) and its run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub level: String,
    #[serde(rename = "result")]
    pub report: Report,
}
