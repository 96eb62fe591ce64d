//! `--hlog FILE`: the per-interval histograms as an HdrHistogram interval log, the format
//! HdrHistogram's `HistogramLogProcessor` and HistogramLogAnalyzer read. Values are µs.
//!
//! Every interval of every mode writes its acquire histogram untagged (so the log read without
//! `-tag` holds every acquire call of the result) and each histogram tagged
//! `<mode>.<histogram>`: `concurrent.acquire`, `concurrent.attempt`, `concurrent.release`,
//! `concurrent.round_trip.m0` … (`sequential.…` for the other fan-out, the algorithm's name
//! for a baseline). Timestamps are seconds since the earliest measured window's start
//! (`BaseTime` and `StartTime`); empty histograms are left out.

use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;

use crate::hist::Hist;
use crate::model::mode::ModeStats;
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::render::written::{not_taken, Written};

/// The log's text.
pub fn render(report: &Report) -> Result<Vec<u8>, String> {
    render_modes(&report.header.run_id, &report.modes)
}

/// The log of `modes` (of the result `run_id`).
pub fn render_modes(run_id: &str, modes: &[ModeStats]) -> Result<Vec<u8>, String> {
    let base_ms = modes.iter().map(|m| m.measured_from_unix_ms).min();
    let base_ms = base_ms.unwrap_or(0);
    let base = UNIX_EPOCH
        .checked_add(Duration::from_millis(base_ms))
        .ok_or_else(|| format!("measured_from_unix_ms {base_ms} is beyond this system's clock"))?;
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    {
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment(&format!(
                "redlock-loadgen {} run {}: per-interval latency histograms in microseconds",
                env!("CARGO_PKG_VERSION"),
                run_id
            ))
            .add_comment("untagged: acquire of every mode; tagged <mode>.<histogram>")
            .with_start_time(base)
            .with_base_time(base)
            .with_max_value_divisor(1.0)
            .begin_log_with(&mut out, &mut serializer)
            .map_err(|e| format!("writing the interval log: {e}"))?;
        let mut modes: Vec<_> = modes.iter().collect();
        modes.sort_by_key(|m| m.measured_from_unix_ms);
        for m in modes {
            let step = m.interval();
            let offset = Duration::from_millis(m.measured_from_unix_ms - base_ms);
            let label = m.label();
            for interval in &m.intervals {
                let start = u32::try_from(interval.index)
                    .ok()
                    .and_then(|index| step.checked_mul(index))
                    .and_then(|at| offset.checked_add(at))
                    .ok_or_else(|| {
                        format!(
                            "{label}: interval {} of {} ms is beyond what an interval log can hold",
                            interval.index, m.interval_ms
                        )
                    })?;
                let tagged = [
                    ("acquire", &interval.acquire),
                    ("attempt", &interval.attempt),
                    ("release", &interval.release),
                ];
                let tagged = tagged.map(|(what, h)| (Some(format!("{label}.{what}")), h));
                let round_trips = interval.round_trip.iter().enumerate();
                let round_trips =
                    round_trips.map(|(i, h)| (Some(format!("{label}.round_trip.m{i}")), h));
                let named = std::iter::once((None, &interval.acquire))
                    .chain(tagged)
                    .chain(round_trips);
                for (name, packed) in named {
                    let h: Hist = packed.unpack();
                    if h.count() == 0 {
                        continue;
                    }
                    let tag = name.as_deref().map(|name| {
                        Tag::new(name).ok_or_else(|| format!("{name:?} is not a valid tag"))
                    });
                    log.write_histogram(h.inner(), start, step, tag.transpose()?)
                        .map_err(|e| format!("writing the interval log: {e}"))?;
                }
            }
        }
    }
    Ok(out)
}

/// `--hlog` of a run.
pub fn write(written: &Written<'_>, _: &Percentiles) -> Result<String, String> {
    match written {
        Written::Run(report) => {
            render(report).map(|log| String::from_utf8_lossy(&log).into_owned())
        }
        _ => Err(not_taken("--hlog", written)),
    }
}

#[cfg(test)]
mod tests {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use redlock_core::FanOut;

    use super::*;
    use crate::hist::PackedHist;
    use crate::model::interval::Interval;

    #[test]
    fn each_interval_is_written_untagged_and_tagged_at_its_time() {
        let mut mode = ModeStats::new(FanOut::Concurrent, 1, Duration::from_secs(1));
        mode.measured_from_unix_ms = 1_700_000_000_000;
        mode.interval_ms = 500;
        let mut h = Hist::new();
        h.record(250);
        h.record(900);
        let interval = Interval {
            acquire: PackedHist::pack(&h),
            round_trip: vec![PackedHist::pack(&h)],
            ..Interval::default()
        };
        mode.add_intervals([(3, interval)]);
        let text = render_modes("r1", &[mode]).unwrap();
        let mut seen = Vec::new();
        for entry in IntervalLogIterator::new(&text) {
            if let LogEntry::Interval(i) = entry.unwrap() {
                seen.push((
                    i.tag().map(|t| t.as_str().to_string()),
                    i.start_timestamp(),
                    i.duration(),
                ));
            }
        }
        let at = Duration::from_millis(1500);
        let length = Duration::from_millis(500);
        assert_eq!(
            seen,
            [
                (None, at, length),
                (Some("concurrent.acquire".into()), at, length),
                (Some("concurrent.round_trip.m0".into()), at, length),
            ]
        );
    }
}
