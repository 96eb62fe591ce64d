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
    let windows = report.modes.iter().map(|m| {
        // A merged result's parts started at different times: fault times, counted from
        // each part's own start, have no single place on its timeline.
        let on_one_clock = m.windows_unix_ms.len() <= 1;
        let mine = report
            .faults
            .iter()
            .filter(|e| on_one_clock && e.fanout == m.label());
        (
            m.label().to_string(),
            windows_of(mine.collect(), m.duration.as_secs_f64()),
        )
    });
    windows.collect()
}

/// The windows of the fault `events` of a mode whose measured window lasted `end` seconds.
fn windows_of(events: Vec<&FaultEvent>, end: f64) -> Vec<FaultWindow> {
    // When fault event `e` was applied, seconds into its mode's measured window.
    let at_s = |e: &FaultEvent| e.at_ms / 1000.0;
    let heal = events
        .iter()
        .find(|e| e.fault == END_OF_MODE)
        .map(|e| at_s(e));
    let mut specs: Vec<&str> = Vec::new();
    for e in &events {
        if e.fault != END_OF_MODE && !specs.contains(&e.fault.as_str()) {
            specs.push(&e.fault);
        }
    }
    let windows = specs.into_iter().map(|spec| {
        let times: Vec<f64> = events
            .iter()
            .filter(|e| e.fault == spec)
            .map(|e| at_s(e))
            .collect();
        let from = times.first().copied().unwrap_or(0.0).clamp(0.0, end);
        let to = match times[..] {
            [_, .., last] => last,
            _ => heal.unwrap_or(end),
        };
        let to = to.clamp(from, end);
        // A window too thin to see is drawn as a thin band.
        let to = if to - from < end / 200.0 {
            (from + end / 200.0).min(end)
        } else {
            to
        };
        (from, to, spec.to_string())
    });
    windows.collect()
}
