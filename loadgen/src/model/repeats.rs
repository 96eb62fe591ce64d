//! A mode measured several times by `run --repeat N`: its repeats laid end to end in one
//! [`ModeStats`], each remembered as a span of the intervals, so the intervals of every figure
//! can be taken across the repeats (Student's t over the repeats' own figures, see
//! [`super::uncertainty`]) rather than within one stretch of time.

use std::ops::Range;

use super::mode::{ModeStats, Repeat};

/// The spans of the intervals that were measured together: one per repeat, or the whole
/// series for a single run.
pub fn segments(m: &ModeStats) -> Vec<Range<usize>> {
    if m.repeats.len() < 2 {
        return std::iter::once(0..m.intervals.len()).collect();
    }
    m.repeats.iter().map(Repeat::span).collect()
}

/// The length of each interval in seconds: the interval length, except the last of each
/// repeat, which ends with that repeat's measured window.
pub fn interval_seconds(m: &ModeStats) -> Vec<f64> {
    let step = m.interval().as_secs_f64();
    let durations: Vec<f64> = match m.repeats.len() {
        0 | 1 => vec![m.duration.as_secs_f64()],
        _ => m.repeats.iter().map(|r| r.duration_s).collect(),
    };
    let mut seconds = vec![step; m.intervals.len()];
    for (span, total) in segments(m).into_iter().zip(durations) {
        let n = span.len();
        if let Some(last) = span.last() {
            let left = total - (n - 1) as f64 * step;
            if left > 0.0 {
                seconds[last] = left.min(step);
            }
        }
    }
    seconds
}

/// `m` as one repeat, its intervals from `first_interval` on.
fn repeat_of(m: &ModeStats, first_interval: usize) -> Repeat {
    Repeat {
        first_interval,
        intervals: m.intervals.len(),
        duration_s: m.duration.as_secs_f64(),
        measured_from_unix_ms: m.measured_from_unix_ms,
        jain_index: m.fairness_index(),
    }
}

/// Lays `next` (the same mode, measured again) after what `whole` holds: counts, histograms
/// and masters add; each client's locks add to its own; the intervals follow the ones already
/// there, with their lock times moved along; the measured time adds up.
pub fn append(whole: &mut ModeStats, next: &ModeStats) {
    if whole.repeats.is_empty() {
        whole.repeats.push(repeat_of(whole, 0));
    }
    let offset = whole.intervals.len();
    let shift_ms = offset as u64 * whole.interval_ms;
    // Clients are the same clients again: their counts add place by place (`add_measurements`
    // appends them, as for the shards of one run).
    let mut per_worker = std::mem::take(&mut whole.fairness.acquired_per_worker);
    whole.add_measurements(next);
    let theirs = std::mem::take(&mut whole.fairness.acquired_per_worker);
    super::add_each(&mut per_worker, &theirs, |mine, n| *mine += n);
    whole.fairness.acquired_per_worker = per_worker;
    whole.add_intervals(next.intervals.iter().map(|i| {
        let mut moved = i.clone();
        moved.index = i.index + offset;
        moved.first_acquired_ms = i.first_acquired_ms.map(|ms| ms + shift_ms);
        moved.last_acquired_ms = i.last_acquired_ms.map(|ms| ms + shift_ms);
        (moved.index, moved)
    }));
    whole.repeats.push(repeat_of(next, offset));
    whole.duration += next.duration;
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use redlock_core::FanOut;

    use super::*;
    use crate::model::interval::Interval;

    fn mode(acquired: &[u64], duration_ms: u64) -> ModeStats {
        let mut m = ModeStats::new(FanOut::Concurrent, 3, Duration::from_millis(100));
        m.duration = Duration::from_millis(duration_ms);
        m.counts.acquired = acquired.iter().sum();
        m.fairness.acquired_per_worker = vec![m.counts.acquired, 1];
        m.add_intervals(acquired.iter().enumerate().map(|(index, &n)| {
            (
                index,
                Interval {
                    index,
                    acquired: n,
                    first_acquired_ms: Some(index as u64 * 100 + 10),
                    ..Interval::default()
                },
            )
        }));
        m
    }

    #[test]
    fn repeats_follow_each_other_and_keep_their_spans_and_lengths() {
        let mut whole = mode(&[5, 6, 7], 250);
        append(&mut whole, &mode(&[8, 9], 200));
        assert_eq!(whole.intervals.len(), 5);
        assert_eq!(whole.counts.acquired, 35);
        assert_eq!(whole.duration, Duration::from_millis(450));
        assert_eq!(whole.fairness.acquired_per_worker, vec![35, 2]);
        assert_eq!(segments(&whole), vec![0..3, 3..5]);
        let i = &whole.intervals[3];
        assert_eq!(
            (i.index, i.acquired, i.first_acquired_ms),
            (3, 8, Some(310))
        );
        let secs = interval_seconds(&whole);
        let expected = [0.1, 0.1, 0.05, 0.1, 0.1];
        for (s, e) in secs.iter().zip(expected) {
            assert!((s - e).abs() < 1e-9, "{secs:?}");
        }
    }

    #[test]
    fn a_single_run_is_one_segment_whose_last_interval_ends_with_the_window() {
        let m = mode(&[1, 2, 3], 230);
        assert_eq!(segments(&m), vec![0..3]);
        let secs = interval_seconds(&m);
        assert!((secs[2] - 0.03).abs() < 1e-9, "{secs:?}");
    }
}
