//! `sweep`: one run per load level, printed as a throughput-vs-latency table per fan-out mode,
//! and kept as one result (`kind: "sweep"`) whose levels are ordinary run results.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::render::json::{self, ResultJson, SCHEMA_VERSION};
use crate::render::percentiles::Percentiles;
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

    /// The whole table: the header line, then every level's rows.
    pub fn table(&self, p: &Percentiles) -> String {
        let mut out = header(self.load == "open", p);
        out.push('\n');
        for l in &self.levels {
            out.push_str(&rows(&l.level, &l.report, p));
        }
        out
    }
}

/// The table's header line.
pub fn header(open_loop: bool, p: &Percentiles) -> String {
    let mut out = format!(
        "{:>9} {:<11}{:>11}{:>11}{:>9}{:>9}{:>7}",
        if open_loop { "rate/s" } else { "clients" },
        "fanout",
        "started/s",
        "acquires/s",
        "success",
        "quorum",
        "split"
    );
    for label in p.labels() {
        let _ = write!(out, "{:>10}", format!("{label} ms"));
    }
    let _ = write!(
        out,
        "{:>11}{:>11}{:>15}{:>10}{:>6}",
        "att p50 ms", "att p99 ms", "late/dropped", "gen CPU", "viol"
    );
    out
}

/// One row per mode of a level's report (a `!` after the CPU: generator-bound).
pub fn rows(level: &str, report: &Report, p: &Percentiles) -> String {
    let mut out = String::new();
    for m in &report.modes {
        let ms = |h: &crate::hist::Hist, q: f64| format!("{:.3}", h.quantile(q) as f64 / 1000.0);
        // Quorum and split votes: Redlock only (a single master casts no vote).
        let (quorum, split) = if m.lock.votes() {
            (
                format!("{:.2}%", 100.0 * m.quorum_success_rate()),
                m.counts.split_votes.to_string(),
            )
        } else {
            ("n/a".to_string(), "n/a".to_string())
        };
        let _ = write!(
            out,
            "{level:>9} {:<11}{:>11.0}{:>11.0}{:>8.2}%{:>9}{:>7}",
            m.label(),
            m.started_per_s(),
            m.acquires_per_s(),
            100.0 * m.acquire_success_rate(),
            quorum,
            split,
        );
        for cell in p.cells_ms(&m.acquire) {
            let _ = write!(out, "{cell:>10}");
        }
        let bound = if report.judge(m).generator_bound {
            "!"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:>11}{:>11}{:>15}{:>10}{:>6}",
            ms(&m.attempt, 0.5),
            ms(&m.attempt, 0.99),
            format!("{}/{}", m.counts.late_starts, m.counts.dropped_slots),
            format!("{:.0}%{bound}", 100.0 * m.cpu.core_share()),
            m.counts.violations
        );
    }
    out
}

/// The legend under a table.
pub const LEGEND: &str = "started/s: acquire calls started per second; late/dropped: open-loop \
slots started > 1 ms late / never started; gen CPU: the generator's share of the machine's \
cores (! = generator-bound: that row measures this machine, not the masters)";
