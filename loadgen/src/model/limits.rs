//! What a result file may hold: the limits `report`, `merge`, `collect` (on what agents store)
//! and the `--hlog`/`--hgrm` renderers rely on, so a hostile or damaged file is refused with
//! the field at fault (exit 2) within bounded memory and time instead of exhausting either.
//! The bounds are stated in `docs/src/loadgen-results.md` (each constant below says its own);
//! the file is read straight into the typed result, no JSON tree in between, and all its
//! histograms share one decoding [`Budget`] (8 × the file's size + 1 MiB inflated).

use super::mode::ModeStats;
use super::report::Report;
pub use crate::hist::decode::{
    decode_histogram, decode_histogram_v2, with_budget, Budget, MAX_DECODED_HISTOGRAM_BYTES,
    MAX_HISTOGRAM_COUNTERS, MAX_SIGNIFICANT_DIGITS,
};

/// The largest result file read (64 MiB: an hour-long run of every mode is a few MiB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Interval slots (the largest `index` + 1 of each mode, summed over the file): 262,144, three
/// days of one mode at 1 s intervals.
pub const MAX_INTERVAL_SLOTS: u64 = 1 << 18;
/// Modes of a run, levels of a sweep, steps of a search, parts of a merge, masters.
pub const MAX_ITEMS: usize = 4096;
/// The longest interval, ms (a day).
pub const MAX_INTERVAL_MS: u64 = 86_400_000;
/// 9999-12-31T23:59:59.999Z in ms since the Unix epoch: the latest wall-clock time read.
pub const MAX_UNIX_MS: u64 = 253_402_300_799_999;

/// `Ok` when `ok`, else the error `message` gives.
fn check(ok: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(message())
    }
}

/// A file of `size` bytes is readable (the message gives both figures).
pub fn check_file_size(size: u64) -> Result<(), String> {
    check(size <= MAX_FILE_BYTES, || {
        let mib = MAX_FILE_BYTES >> 20;
        format!("{size} bytes: a result file holds at most {MAX_FILE_BYTES} bytes ({mib} MiB)")
    })
}

/// Checks a file's runs against the stated limits before anything is derived from them; the
/// error names the field at fault.
pub fn check_runs<'a>(runs: impl IntoIterator<Item = &'a Report>) -> Result<(), String> {
    let mut slots = 0u64;
    for (r, report) in runs.into_iter().enumerate() {
        check(r < MAX_ITEMS, || {
            format!("more than {MAX_ITEMS} runs (levels or steps)")
        })?;
        too_many("modes", report.modes.len())?;
        too_many("masters", report.masters.len())?;
        for (k, m) in report.modes.iter().enumerate() {
            check_mode(m).map_err(|e| format!("modes[{k}].{e}"))?;
            let last = m.intervals.iter().map(|i| i.index as u64).max();
            slots = slots.saturating_add(last.map_or(0, |i| i.saturating_add(1)));
            check(slots <= MAX_INTERVAL_SLOTS, || {
                let index = last.unwrap_or(0);
                format!("modes[{k}].intervals: index {index} is beyond what a file may hold ({MAX_INTERVAL_SLOTS} interval slots in all)")
            })?;
        }
    }
    Ok(())
}

fn too_many(field: &str, n: usize) -> Result<(), String> {
    check(n <= MAX_ITEMS, || {
        format!("{field}: {n} entries (at most {MAX_ITEMS})")
    })
}

/// A wall-clock time in ms before the year 10000.
fn time(field: &str, ms: u64) -> Result<(), String> {
    check(ms <= MAX_UNIX_MS, || {
        format!("{field}: {ms} is after the year 9999")
    })
}

fn check_mode(m: &ModeStats) -> Result<(), String> {
    let interval_ms = m.interval_ms;
    check((1..=MAX_INTERVAL_MS).contains(&interval_ms), || {
        format!("interval_ms: {interval_ms} is not from 1 to {MAX_INTERVAL_MS}")
    })?;
    time("measured_from_unix_ms", m.measured_from_unix_ms)?;
    for &(from, to) in &m.windows_unix_ms {
        time("windows_unix_ms", from)?;
        time("windows_unix_ms", to)?;
        check(from <= to, || {
            format!("windows_unix_ms: [{from}, {to}] ends before it starts")
        })?;
    }
    let longest_ms = u128::from(MAX_INTERVAL_MS) * u128::from(MAX_INTERVAL_SLOTS as u32);
    check(m.duration.as_millis() <= longest_ms, || {
        format!("duration_s: {} s is out of range", m.duration.as_secs())
    })?;
    too_many("masters", m.masters.len())?;
    too_many("part_series", m.part_series.len())?;
    check_repeats(m)?;
    too_many("vote_patterns", m.vote_patterns.len())?;
    for (p, part) in m.part_series.iter().enumerate() {
        let first = part.first_index;
        check((first as u64) < MAX_INTERVAL_SLOTS, || {
            format!("part_series[{p}].first_index: {first} is not below {MAX_INTERVAL_SLOTS}")
        })?;
    }
    for (n, i) in m.intervals.iter().enumerate() {
        let index = i.index;
        check((index as u64) < MAX_INTERVAL_SLOTS, || {
            format!("intervals[{n}].index: {index} is not below {MAX_INTERVAL_SLOTS}")
        })?;
        check(i.round_trip.len() <= MAX_ITEMS, || {
            format!("intervals[{n}].round_trip_hdr: more than {MAX_ITEMS} masters")
        })?;
        for f in &i.failures {
            let master = f.master;
            check(master < MAX_ITEMS, || {
                format!("intervals[{n}].failures: master {master} is out of range")
            })?;
        }
        for (field, ms) in [
            ("first_acquired_ms", i.first_acquired_ms),
            ("last_acquired_ms", i.last_acquired_ms),
        ] {
            let ms = ms.unwrap_or(0);
            check(ms <= MAX_UNIX_MS, || {
                format!("intervals[{n}].{field}: {ms} is out of range")
            })?;
        }
    }
    Ok(())
}

/// `run --repeat` spans: each starts where the one before ended (the first at 0), none reaches
/// past the intervals the file holds (every figure taken per repeat indexes them), each with a
/// measured time and start in range.
fn check_repeats(m: &ModeStats) -> Result<(), String> {
    too_many("repeats", m.repeats.len())?;
    let slots = m.intervals.iter().map(|i| i.index.saturating_add(1)).max();
    let slots = slots.unwrap_or(0);
    let longest = MAX_INTERVAL_MS as f64 / 1000.0 * MAX_INTERVAL_SLOTS as f64;
    let mut next = 0usize;
    for (r, repeat) in m.repeats.iter().enumerate() {
        let (first, intervals) = (repeat.first_interval, repeat.intervals);
        check(first == next, || {
            format!("repeats[{r}].first_interval: {first} is not where the repeat before it ended ({next})")
        })?;
        let end = next.checked_add(intervals).filter(|&end| end <= slots);
        check(end.is_some(), || {
            format!("repeats[{r}].intervals: {intervals} reach past the {slots} intervals the mode holds")
        })?;
        next = end.unwrap_or(next);
        let duration_s = repeat.duration_s;
        check((0.0..=longest).contains(&duration_s), || {
            format!("repeats[{r}].duration_s: {duration_s} is not a measured time from 0 to {longest} s")
        })?;
        time(
            &format!("repeats[{r}].measured_from_unix_ms"),
            repeat.measured_from_unix_ms,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_sizes_above_the_limit_are_refused_with_both_figures() {
        assert!(check_file_size(MAX_FILE_BYTES).is_ok());
        let e = check_file_size(MAX_FILE_BYTES + 1).unwrap_err();
        assert!(
            e.contains(&(MAX_FILE_BYTES + 1).to_string()) && e.contains("64 MiB"),
            "{e}"
        );
    }
}
