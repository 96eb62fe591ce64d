//! Measured time windows of result files, aligned by wall clock: the merged rate over the
//! union of the windows, and the rate while every part was measuring.
//!
//! Each part's per-second series starts at its own measured window's wall-clock start; a part
//! is shifted by that start's distance from the earliest one, rounded to whole seconds (so a
//! second of the merged series may mix parts up to half a second apart).

use crate::model::limits::MAX_INTERVAL_SLOTS;
pub use crate::model::mode::overlap;
use crate::model::mode::{ModeStats, PartSeries};

/// The measured windows of `m` (`[from, to)`, ms since the Unix epoch): its parts' when it is
/// a merge, else its own.
pub fn windows(m: &ModeStats) -> Vec<(u64, u64)> {
    if m.windows_unix_ms.is_empty() {
        let from = m.measured_from_unix_ms;
        vec![(from, from + m.duration.as_millis() as u64)]
    } else {
        m.windows_unix_ms.clone()
    }
}

/// Total length of the union of `windows`, ms.
pub fn union_ms(windows: &[(u64, u64)]) -> u64 {
    let mut sorted = windows.to_vec();
    sorted.sort_unstable();
    let (mut total, mut reached) = (0, 0);
    for (from, to) in sorted {
        let from = from.max(reached);
        if to > from {
            total += to - from;
            reached = to;
        }
    }
    total
}

/// Adds `parts` (one fan-out mode each) on one wall-clock timeline: counts and histograms add
/// exactly, the per-second series are aligned by their windows' starts, and the duration is
/// the union of the windows (so rates are per second of the union).
///
/// The merged timeline stays within what one result file may hold: parts measured far apart
/// (hostile or mistaken wall-clock starts) would otherwise place their intervals millions of
/// slots apart and allocate every slot in between. A merge whose intervals would span more
/// than [`MAX_INTERVAL_SLOTS`] slots is refused, naming the part whose start is too far from
/// the earliest.
pub fn merge_modes(parts: &[(&str, &ModeStats)]) -> Result<ModeStats, String> {
    let first = parts[0].1;
    let base = parts
        .iter()
        .map(|(_, m)| m.measured_from_unix_ms)
        .min()
        .unwrap_or(0);
    let interval_ms = first.interval_ms.max(1);
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
    let mut merged = ModeStats::new(first.fanout, first.masters.len(), first.interval());
    merged.lock = first.lock;
    let mut all_windows = Vec::new();
    for &(name, m) in parts {
        merged.add_measurements(m);
        let shift = ((m.measured_from_unix_ms - base) as f64 / interval_ms as f64).round() as usize;
        let shifted = m.intervals.iter().cloned().enumerate();
        merged.add_intervals(shifted.map(|(s, i)| (s + shift, i)));
        all_windows.extend(windows(m));
        merged.part_series.extend(PartSeries::of(name, m, shift));
    }
    merged.measured_from_unix_ms = base;
    merged.duration = std::time::Duration::from_millis(union_ms(&all_windows));
    merged.windows_unix_ms = all_windows;
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use redlock_core::FanOut;

    use super::*;
    use crate::model::interval::Interval;

    fn part(from_ms: u64, per_second: &[u64]) -> ModeStats {
        let mut m = ModeStats::new(FanOut::Concurrent, 3, Duration::from_secs(1));
        m.measured_from_unix_ms = from_ms;
        m.duration = Duration::from_secs(per_second.len() as u64);
        for (s, &n) in per_second.iter().enumerate() {
            m.add_intervals([(
                s,
                Interval {
                    acquired: n,
                    ..Interval::default()
                },
            )]);
            m.counts.acquired += n;
        }
        m
    }

    #[test]
    fn two_overlapping_runs_give_the_union_rate_and_the_rate_while_both_measured() {
        // A measured 4 s at 100/s; B started 1 s later and measured 2 s at 50/s.
        let a = part(10_000, &[100, 100, 100, 100]);
        let b = part(11_000, &[50, 50]);
        let m = merge_modes(&[("a", &a), ("b", &b)]).unwrap();
        assert_eq!(m.counts.acquired, 500);
        assert_eq!(
            m.duration,
            Duration::from_secs(4),
            "union of [0,4) and [1,3)"
        );
        assert!((m.acquires_per_s() - 125.0).abs() < 1e-9);
        assert_eq!(
            m.intervals.iter().map(|i| i.acquired).collect::<Vec<_>>(),
            [100, 150, 150, 100]
        );
        assert_eq!(m.rate_while_all_measured(), Some(150.0));
        // Each part's own series stays, placed on the merged timeline.
        let parts: Vec<(&str, usize, &[u64])> = m
            .part_series
            .iter()
            .map(|p| (p.name.as_str(), p.first_index, p.acquired.as_slice()))
            .collect();
        assert_eq!(
            parts,
            [("a", 0, &[100, 100, 100, 100][..]), ("b", 1, &[50, 50][..])]
        );
        assert_eq!(overlap(&m.windows_unix_ms), Some((11_000, 13_000)));
    }

    #[test]
    fn runs_one_after_the_other_never_measured_together() {
        let a = part(0, &[10; 10]);
        let b = part(20_000, &[10; 4]);
        let m = merge_modes(&[("a", &a), ("b", &b)]).unwrap();
        assert_eq!(m.duration, Duration::from_secs(14));
        assert_eq!(overlap(&m.windows_unix_ms), None);
        assert_eq!(m.rate_while_all_measured(), None);
        assert_eq!(union_ms(&[(0, 5), (3, 8), (10, 12)]), 10);
    }
}
