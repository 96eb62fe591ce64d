//! A sweep's result (`kind: "sweep"`): its levels are ordinary run results.

use serde::{Deserialize, Serialize};

use super::result::{self as json, ResultJson, SCHEMA_VERSION};
use crate::report::{Report, ToolInfo};
use crate::signals::Signal;

/// A whole sweep.
#[derive(Debug, Clone)]
pub struct SweepResult {
    pub run_id: String,
    pub started_unix_s: u64,
    pub interrupted_by: Option<Signal>,
    /// "closed" (levels are client counts) or "open" (levels are rates).
    pub load: String,
    pub merged_from: Vec<String>,
    pub merge_notes: Vec<String>,
    pub levels: Vec<Level>,
}

/// One level: its label (client count or rate) and its run.
#[derive(Debug, Clone)]
pub struct Level {
    pub level: String,
    pub report: Report,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepJson {
    pub schema_version: u32,
    /// Always "sweep".
    pub kind: String,
    pub tool: ToolInfo,
    pub run_id: String,
    pub started_unix_s: u64,
    pub interrupted: bool,
    pub interrupted_by: Option<Signal>,
    pub load: String,
    pub merged_from: Vec<String>,
    pub merge_notes: Vec<String>,
    pub levels: Vec<LevelJson>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LevelJson {
    pub level: String,
    pub result: ResultJson,
}

impl SweepResult {
    pub fn to_json(&self) -> SweepJson {
        SweepJson {
            schema_version: SCHEMA_VERSION,
            kind: "sweep".into(),
            tool: ToolInfo::current(),
            run_id: self.run_id.clone(),
            started_unix_s: self.started_unix_s,
            interrupted: self.interrupted_by.is_some(),
            interrupted_by: self.interrupted_by,
            load: self.load.clone(),
            merged_from: self.merged_from.clone(),
            merge_notes: self.merge_notes.clone(),
            levels: self
                .levels
                .iter()
                .map(|l| LevelJson {
                    level: l.level.clone(),
                    result: json::to_json(&l.report),
                })
                .collect(),
        }
    }

    pub fn from_json(j: SweepJson) -> Result<SweepResult, String> {
        let mut levels = Vec::with_capacity(j.levels.len());
        for l in j.levels {
            let report =
                json::from_result(l.result).map_err(|e| format!("level {}: {e}", l.level))?;
            levels.push(Level {
                level: l.level,
                report,
            });
        }
        Ok(SweepResult {
            run_id: j.run_id,
            started_unix_s: j.started_unix_s,
            interrupted_by: j.interrupted_by,
            load: j.load,
            merged_from: j.merged_from,
            merge_notes: j.merge_notes,
            levels,
        })
    }
}
