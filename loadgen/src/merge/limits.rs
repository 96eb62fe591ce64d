//! The merged timeline stays within what one result file may hold: parts measured far apart
//! (hostile or mistaken wall-clock starts) would otherwise place their intervals millions of
//! slots apart and allocate every slot in between.

use crate::model::limits::MAX_INTERVAL_SLOTS;
use crate::model::mode::ModeStats;

/// Refuses a merge whose intervals would span more than [`MAX_INTERVAL_SLOTS`] slots, naming
/// the part whose start is too far from the earliest.
pub fn check_timeline(parts: &[(&str, &ModeStats)]) -> Result<(), String> {
    let Some(first) = parts.first() else {
        return Ok(());
    };
    let base = parts
        .iter()
        .map(|(_, m)| m.measured_from_unix_ms)
        .min()
        .unwrap_or(0);
    let interval_ms = first.1.interval_ms.max(1);
    for (name, m) in parts {
        let shift = (m.measured_from_unix_ms - base).div_ceil(interval_ms);
        let slots = shift.saturating_add(m.intervals.len() as u64);
        if slots > MAX_INTERVAL_SLOTS {
            return Err(format!(
                "{name}: measured_from_unix_ms {} is {} ms after the earliest part's start: the merged intervals would span {slots} slots of {interval_ms} ms (at most {MAX_INTERVAL_SLOTS})",
                m.measured_from_unix_ms,
                m.measured_from_unix_ms - base
            ));
        }
    }
    Ok(())
}
