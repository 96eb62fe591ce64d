//! Outages: stretches of a mode's measured window in which no lock was acquired while attempts
//! failed for want of masters (no denial: an outage, not contention). Found from the
//! intervals, their edges sharpened by each interval's first and last acquisition.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::interval::Interval;

/// One outage, on the clock of the intervals and of the fault specs (the measured window's
/// start).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    /// The last lock acquired before it, in seconds; the start of its first second when that
    /// second's predecessor acquired none.
    pub from_s: f64,
    /// The first lock acquired after it, in seconds; the end of its last second (or of the
    /// measured window) when none was acquired after it.
    pub to_s: f64,
    /// No lock was acquired again before the measured window ended.
    pub until_end: bool,
    /// Attempts that failed with no denial during its seconds.
    pub unavailable_attempts: u64,
}

/// A second with no lock acquired and at least one attempt lost to missing masters. Seconds
/// with no attempt at all (nobody tried) or only denials (contention) are not outages.
fn is_out(i: &Interval) -> bool {
    i.acquired == 0 && i.unavailable_attempts > 0
}

/// The outages of `intervals` (each `interval` long) over a measured window of `measured`:
/// each a maximal run of outage intervals (so an outage is found when it covers at least one
/// whole interval of the series).
pub fn find(intervals: &[Interval], measured: Duration, interval: Duration) -> Vec<Outage> {
    let window_s = measured.as_secs_f64();
    let step = interval.as_secs_f64().max(1e-3);
    // Intervals past the window only hold operations that were in flight at its end.
    let seconds = ((window_s / step).ceil() as usize).min(intervals.len());
    let intervals = &intervals[..seconds];
    let mut outages = Vec::new();
    let mut second = 0;
    while second < intervals.len() {
        if !is_out(&intervals[second]) {
            second += 1;
            continue;
        }
        let first = second;
        while second < intervals.len() && is_out(&intervals[second]) {
            second += 1;
        }
        let before = first.checked_sub(1);
        let before = before.and_then(|s| intervals[s].last_acquired_ms);
        let after = intervals.get(second).and_then(|i| i.first_acquired_ms);
        let outage = &intervals[first..second];
        outages.push(Outage {
            from_s: before.map_or(first as f64 * step, |ms| ms as f64 / 1e3),
            to_s: after.map_or((second as f64 * step).min(window_s), |ms| ms as f64 / 1e3),
            until_end: after.is_none() && intervals[second..].iter().all(|i| i.acquired == 0),
            unavailable_attempts: outage.iter().map(|i| i.unavailable_attempts).sum(),
        });
    }
    outages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(acquired: u64, unavailable: u64, first_last_ms: Option<(u64, u64)>) -> Interval {
        Interval {
            acquired,
            attempts: acquired + unavailable,
            unavailable_attempts: unavailable,
            first_acquired_ms: first_last_ms.map(|(f, _)| f),
            last_acquired_ms: first_last_ms.map(|(_, l)| l),
            ..Interval::default()
        }
    }

    #[test]
    fn an_outage_runs_from_the_last_lock_before_to_the_first_after() {
        let series = [
            second(10, 0, Some((10, 990))),
            second(3, 5, Some((1000, 1200))),
            second(0, 40, None),
            second(0, 40, None),
            second(7, 2, Some((4100, 4900))),
        ];
        let outages = find(&series, Duration::from_secs(5), Duration::from_secs(1));
        assert_eq!(
            outages,
            vec![Outage {
                from_s: 1.2,
                to_s: 4.1,
                until_end: false,
                unavailable_attempts: 80,
            }]
        );
    }

    #[test]
    fn an_outage_at_the_end_lasts_until_the_end_of_the_window() {
        let series = [
            second(10, 0, Some((0, 900))),
            second(0, 9, None),
            second(0, 9, None),
        ];
        let outages = find(&series, Duration::from_millis(2500), Duration::from_secs(1));
        assert_eq!(outages.len(), 1);
        assert_eq!(outages[0].from_s, 0.9);
        assert_eq!(outages[0].to_s, 2.5);
        assert!(outages[0].until_end);
    }

    #[test]
    fn contention_and_idle_seconds_are_not_outages() {
        // Only denials (another holder), or no attempt at all: no outage.
        let contended = Interval {
            attempts: 20,
            split_votes: 5,
            ..Interval::default()
        };
        let series = [
            second(4, 0, Some((100, 900))),
            contended,
            Interval::default(),
        ];
        assert!(find(&series, Duration::from_secs(3), Duration::from_secs(1)).is_empty());
    }
}
