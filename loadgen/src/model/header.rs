//! What every result file starts with, whatever its kind: the schema version, the kind, the
//! tool, the run id, when it started, whether a signal cut it short, and what it was merged
//! from. Flattened into [`super::report::Report`], [`super::sweep::SweepResult`],
//! [`super::capacity::CapacityResult`] and the scenarios result.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::signals::Signal;

/// Version of the result format written; bumped on any change an older reader would have to
/// refuse (a new counter is not one: readers keep counters they do not know).
pub const SCHEMA_VERSION: u32 = 4;

/// Versions `merge` (and `collect`) read. Version 2 had no `unavailable_attempts`: its
/// attempts that failed without a denial were counted as split votes or clean losses.
/// Versions 2 and 3 kept one-second intervals with the acquire histogram alone (`second`,
/// no `interval_ms`, no attempt, release or round-trip histograms per interval).
pub const READABLE_SCHEMA_VERSIONS: [u32; 3] = [2, 3, 4];

named! {
    /// What a result file holds.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Kind {
        Run = "run",
        Sweep = "sweep",
        Capacity = "capacity",
        Scenarios = "scenarios",
    }
}

/// Versions of the tools that produced a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    pub core_version: String,
}

impl ToolInfo {
    pub fn current() -> ToolInfo {
        ToolInfo {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
            // The core is a path dependency of the same workspace version.
            core_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The fields every result shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub schema_version: u32,
    pub kind: Kind,
    pub tool: ToolInfo,
    /// Random id of the run (a merged result: of the merge).
    pub run_id: String,
    pub started_unix_s: u64,
    /// True when a signal ended the run early.
    pub interrupted: bool,
    /// The signal that did (null when none did).
    pub interrupted_by: Option<Signal>,
    /// Files this result was merged from (empty for a single run).
    pub merged_from: Vec<String>,
    /// What a merge had to accept (`--allow-mixed`, `--allow-disjoint`, an older schema), in
    /// words.
    pub merge_notes: Vec<String>,
}

impl Header {
    /// The header of a new result of this tool.
    pub fn new(kind: Kind, run_id: String, started_unix_s: u64) -> Header {
        Header {
            schema_version: SCHEMA_VERSION,
            kind,
            tool: ToolInfo::current(),
            run_id,
            started_unix_s,
            interrupted: false,
            interrupted_by: None,
            merged_from: Vec::new(),
            merge_notes: Vec::new(),
        }
    }

    /// Records the signal that ended the run early (if any).
    pub fn interrupt(&mut self, by: Option<Signal>) {
        self.interrupted = by.is_some();
        self.interrupted_by = by;
    }

    /// The header of a merge of `parts` (named headers): a new run id, the earliest start,
    /// the first interruption, and every part's merge notes followed by `notes` (each once).
    pub fn merged<'a>(
        kind: Kind,
        parts: impl IntoIterator<Item = (&'a str, &'a Header)>,
        notes: impl IntoIterator<Item = String>,
    ) -> Header {
        let mut header = Header::new(kind, new_run_id(), u64::MAX);
        for (name, part) in parts {
            header.merged_from.push(name.to_string());
            header.started_unix_s = header.started_unix_s.min(part.started_unix_s);
            if header.interrupted_by.is_none() {
                header.interrupt(part.interrupted_by);
            }
            header.interrupted |= part.interrupted;
            header.note(part.merge_notes.iter().cloned());
        }
        if header.started_unix_s == u64::MAX {
            header.started_unix_s = 0;
        }
        header.note(notes);
        header
    }

    /// Adds merge notes, each once.
    pub fn note(&mut self, notes: impl IntoIterator<Item = String>) {
        for note in notes {
            if !self.merge_notes.contains(&note) {
                self.merge_notes.push(note);
            }
        }
    }
}
/// Seconds since the Unix epoch, now.
pub fn unix_now_s() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH);
    since.map_or(0, |d| d.as_secs())
}

/// 128 random bits, hex.
pub fn new_run_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}
