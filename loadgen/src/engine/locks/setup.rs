//! What the load workers of one mode lock with: the algorithm's client, its key names and the
//! workers' faults.

use std::sync::Arc;

use super::baseline::Baseline;
use super::LockAlgorithm;
use crate::engine::faults::client::{CrashPlan, PausePlan, WorkerFaults};

/// Lock key of resource `index` for `algorithm`. Redlock keeps the shared names (several
/// generators pointed at the same masters contend for the same locks); each baseline gets
/// its own, so a key one algorithm left behind never blocks another.
pub fn key(algorithm: LockAlgorithm, index: u32) -> String {
    match algorithm {
        LockAlgorithm::Redlock => format!("redlock-loadgen:{index}"),
        other => format!("redlock-loadgen:{}:{index}", other.as_str()),
    }
}

/// What the workers of a mode lock with, and their faults.
#[derive(Debug, Clone, Default)]
pub struct LockSetup {
    /// `None`: Redlock.
    pub baseline: Option<Arc<Baseline>>,
    /// The "holder dies" fault, shared by the workers.
    pub crash: Option<Arc<CrashPlan>>,
    /// (worker index, clock offset in ms).
    pub clock_offsets: Vec<(u32, i64)>,
    /// (worker index, its holder pause).
    pub pauses: Vec<(u32, Arc<PausePlan>)>,
}

impl LockSetup {
    /// The faults of worker `index`.
    pub fn faults_of(&self, index: u32) -> WorkerFaults {
        WorkerFaults {
            clock_offset_ms: self
                .clock_offsets
                .iter()
                .filter(|(c, _)| *c == index)
                .map(|(_, ms)| *ms)
                .sum(),
            crash: self.crash.clone(),
            pauses: self
                .pauses
                .iter()
                .filter(|(c, _)| *c == index)
                .map(|(_, plan)| Arc::clone(plan))
                .collect(),
        }
    }
}
