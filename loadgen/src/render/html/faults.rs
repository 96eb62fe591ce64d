//! Where the faults of a run were in force, on each mode's measured-window clock, for the
//! over-time charts to shade.

use crate::model::report::FaultEvent;
use crate::model::report::Report;
use crate::render::chart::FaultWindow;

/// The fault log's name for the clean-up that ends every fault when a mode ends.
const END_OF_MODE: &str = "end of mode";

/// The fault windows of each mode, seconds into its measured window: each fault spec from its
/// first action to its last (or to the mode's clean-up, or the window's end).
pub fn fault_windows(report: &Report) -> Vec<(String, Vec<FaultWindow>)> {
    let mut out: Vec<(String, Vec<FaultWindow>)> = Vec::new();
    for m in &report.modes {
        // A merged result's parts started at different times: fault times, counted from
        // each part's own start, have no single place on its timeline.
        if m.windows_unix_ms.len() > 1 {
            out.push((m.label().to_string(), Vec::new()));
            continue;
        }
        let end = m.duration.as_secs_f64();
        let events: Vec<&FaultEvent> = report
            .faults
            .iter()
            .filter(|e| e.fanout == m.label())
            .collect();
        let heal = events
            .iter()
            .find(|e| e.fault == END_OF_MODE)
            .map(|e| at_s(e));
        let mut windows = Vec::new();
        let mut specs: Vec<&str> = Vec::new();
        for e in &events {
            if e.fault != END_OF_MODE && !specs.contains(&e.fault.as_str()) {
                specs.push(&e.fault);
            }
        }
        for spec in specs {
            let times: Vec<f64> = events
                .iter()
                .filter(|e| e.fault == spec)
                .map(|e| at_s(e))
                .collect();
            let from = times.first().copied().unwrap_or(0.0).clamp(0.0, end);
            let last = times.last().copied().unwrap_or(from);
            let to = if times.len() > 1 {
                last
            } else {
                heal.unwrap_or(end)
            };
            let to = to.clamp(from, end);
            // A window too thin to see is drawn as a thin band.
            let to = if to - from < end / 200.0 {
                (from + end / 200.0).min(end)
            } else {
                to
            };
            windows.push((from, to, spec.to_string()));
        }
        out.push((m.label().to_string(), windows));
    }
    out
}

/// When fault event `e` was applied, seconds into its mode's measured window.
fn at_s(e: &FaultEvent) -> f64 {
    e.at_ms / 1000.0
}
