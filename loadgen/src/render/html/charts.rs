//! The HTML report's charts, drawn in Rust as inline SVG ([`Plot`]): figures over time with
//! the fault windows shaded and named, the percentile spectrum of each operation with the
//! fan-outs overlaid, and a sweep's curves.

use crate::hist::Hist;
use crate::model::mode::ModeStats;
use crate::model::report::Report;
use crate::model::sweep::SweepResult;
use crate::render::chart::{curve, FaultWindow, Plot, Series, XAxis, YAxis, COLOURS, PAGE_SIZE};

/// Seconds from the start of `m`'s measured window to the start of each interval, and each
/// interval's length (the last one may be cut short by the window's end).
fn interval_spans(m: &ModeStats) -> Vec<(f64, f64)> {
    let step = m.interval().as_secs_f64();
    if m.repeats.len() > 1 {
        // Repeats laid end to end: each one's last interval ends with its own window.
        return m
            .intervals
            .iter()
            .zip(crate::model::repeats::interval_seconds(m))
            .map(|(i, length)| (i.index as f64 * step, length.max(step / 10.0)))
            .collect();
    }
    let end = time_axis_end(m);
    m.intervals
        .iter()
        .map(|i| {
            let from = i.index as f64 * step;
            (from, (end - from).clamp(step / 10.0, step))
        })
        .collect()
}

/// Where the time axis of `m` ends, seconds: its measured window, or for a merged result the
/// span of its intervals (the parts' windows may lie apart).
fn time_axis_end(m: &ModeStats) -> f64 {
    let step = m.interval().as_secs_f64();
    let end = if m.windows_unix_ms.len() > 1 || m.repeats.len() > 1 {
        m.intervals.len() as f64 * step
    } else {
        m.duration.as_secs_f64()
    };
    end.max(step)
}

/// The time axis's name: the measured window, or the repeats' windows one after the other.
pub(super) fn time_axis(m: Option<&ModeStats>) -> &'static str {
    match m {
        Some(m) if m.repeats.len() > 1 => "seconds measured (the repeats laid end to end)",
        _ => "seconds into the measured window",
    }
}

/// A line's pieces: the runs of points between the gaps (`None`: an interval with no value).
fn pieces(points: impl Iterator<Item = Option<(f64, f64)>>) -> Vec<Vec<(f64, f64)>> {
    let points: Vec<_> = points.collect();
    let runs = points.split(Option::is_none).filter(|run| !run.is_empty());
    runs.map(|run| run.iter().flatten().copied().collect())
        .collect()
}

/// Locks acquired per second in each interval, per mode, with the fault windows shaded.
pub fn throughput(
    report: &Report,
    faults: &[(String, Vec<FaultWindow>)],
) -> Result<String, String> {
    let series = report.modes.iter().map(|m| {
        let spans = m.intervals.iter().zip(interval_spans(m));
        let points =
            spans.map(|(i, (from, length))| (from + length / 2.0, i.acquired as f64 / length));
        (m.label().to_string(), vec![points.collect()])
    });
    Plot {
        size: PAGE_SIZE,
        title: "Throughput over time (each mode measured on its own; shaded: faults)",
        x: time_axis(report.modes.first()),
        y: "locks acquired per second",
        x_axis: XAxis::Time(report.modes.iter().map(time_axis_end).fold(1.0, f64::max)),
        y_axis: YAxis::Zero(1.0),
        series: series.collect(),
        faults,
        ..Plot::default()
    }
    .render()
}

/// The fault windows of mode `m` among those of every mode.
fn faults_of(
    m: &ModeStats,
    faults: &[(String, Vec<FaultWindow>)],
) -> Vec<(String, Vec<FaultWindow>)> {
    faults
        .iter()
        .filter(|(mode, _)| mode == m.label())
        .cloned()
        .collect()
}

/// p50, p99 and p99.9 of the whole acquire in each interval of `m`, on a log latency axis.
pub fn latency_over_time(
    m: &ModeStats,
    faults: &[(String, Vec<FaultWindow>)],
) -> Result<String, String> {
    let spans = interval_spans(m);
    let series = [("p50", 0usize), ("p99", 1), ("p99.9", 2)].map(|(name, which)| {
        let points = m.intervals.iter().zip(&spans).map(|(i, (from, length))| {
            let us = [i.acquire_p50_us, i.acquire_p99_us, i.acquire_p999_us][which];
            // No call completed: a gap, not a zero.
            (i.acquire_calls > 0 && us > 0).then(|| (from + length / 2.0, us as f64 / 1000.0))
        });
        (format!("acquire {name}"), pieces(points))
    });
    let title = format!(
        "{}: acquire latency over time (per {} ms interval; shaded: faults)",
        m.label(),
        m.interval_ms
    );
    Plot {
        size: PAGE_SIZE,
        title: &title,
        x: time_axis(Some(m)),
        y: "acquire latency (ms, log)",
        x_axis: XAxis::Time(time_axis_end(m)),
        y_axis: YAxis::LogWide,
        series: series.into(),
        faults: &faults_of(m, faults),
        ..Plot::default()
    }
    .render()
}

/// Latency by percentile of each named histogram (the empty ones left out), overlaid on
/// HdrHistogram's log percentile axis.
pub fn spectrum<'a>(
    title: &str,
    hists: impl Iterator<Item = (String, &'a Hist)>,
) -> Result<String, String> {
    let series = hists.filter(|(_, h)| h.count() > 0);
    Plot {
        size: PAGE_SIZE,
        title,
        x: "percentile",
        y: "latency (ms, log)",
        y_axis: YAxis::LogWide,
        series: series.map(|(name, h)| (name, vec![curve(h)])).collect(),
        ..Plot::default()
    }
    .render()
}

/// A sweep: locks acquired per second and acquire p99 at each level, per mode (x: the
/// level's position, labelled by the level).
pub fn sweep_curves(sweep: &SweepResult) -> Result<[String; 2], String> {
    let mut modes: Vec<&str> = Vec::new();
    for l in &sweep.levels {
        for m in &l.report.modes {
            if !modes.contains(&m.label()) {
                modes.push(m.label());
            }
        }
    }
    let curves = |title, y, floor, f: &dyn Fn(&ModeStats) -> f64| {
        let series = modes.iter().map(|&name| {
            let levels = sweep.levels.iter().enumerate();
            let points = levels.filter_map(|(x, l)| l.report.mode(name).map(|m| (x as f64, f(m))));
            (name.to_string(), vec![points.collect()])
        });
        Plot {
            size: PAGE_SIZE,
            title,
            x: match sweep.load == "open" {
                true => "level (open-loop rate)",
                false => "level (clients)",
            },
            y,
            x_axis: XAxis::Levels(sweep.levels.iter().map(|l| l.level.clone()).collect()),
            y_axis: YAxis::Zero(floor),
            series: series.collect(),
            dots: true,
            ..Plot::default()
        }
        .render()
    };
    Ok([
        curves(
            "Sweep: throughput at each level",
            "locks acquired per second",
            1.0,
            &|m| m.acquires_per_s(),
        )?,
        curves(
            "Sweep: acquire p99 at each level",
            "acquire p99 (ms)",
            0.001,
            &|m| m.latency.acquire.quantile(0.99) as f64 / 1000.0,
        )?,
    ])
}

/// Each master's p99 round trip per interval of `m` (answered requests only), log axis.
pub fn round_trips_over_time(
    m: &ModeStats,
    faults: &[(String, Vec<FaultWindow>)],
) -> Result<Option<String>, String> {
    let spans = interval_spans(m);
    let series: Vec<_> = (0..m.masters.len())
        .map(|master| {
            let points = m
                .intervals
                .iter()
                .zip(&spans)
                .map(|(interval, (from, length))| {
                    let packed = interval.round_trip.get(master);
                    let h = packed.map(|p| p.unpack()).unwrap_or_default();
                    let p99 = h.quantile(0.99) as f64 / 1000.0;
                    (h.count() > 0).then_some((from + length / 2.0, p99))
                });
            (format!("master #{master} p99"), pieces(points))
        })
        .collect();
    if series.iter().all(|(_, s)| s.is_empty()) {
        return Ok(None);
    }
    let title = format!(
        "{}: each master's round-trip p99 over time (answered requests; shaded: faults)",
        m.label()
    );
    Plot {
        size: PAGE_SIZE,
        title: &title,
        x: time_axis(Some(m)),
        y: "round trip p99 (ms, log)",
        x_axis: XAxis::Time(time_axis_end(m)),
        y_axis: YAxis::LogWide,
        series,
        colours: &COLOURS,
        faults: &faults_of(m, faults),
        ..Plot::default()
    }
    .render()
    .map(Some)
}

/// Merged results: each part's locks acquired per second over the merged timeline of `m`.
pub fn parts_over_time(m: &ModeStats) -> Result<Option<String>, String> {
    if m.part_series.is_empty() {
        return Ok(None);
    }
    let step = m.interval().as_secs_f64();
    let series: Vec<Series> = m
        .part_series
        .iter()
        .map(|p| {
            let x = |i: usize| (p.first_index + i) as f64 * step + step / 2.0;
            let points = p.acquired.iter().enumerate();
            let points = points.map(|(i, &n)| (x(i), n as f64 / step)).collect();
            (p.name.clone(), vec![points])
        })
        .collect();
    let points = series.iter().flat_map(|(_, s)| s.iter().flatten());
    let end = points.map(|p| p.0 + step / 2.0).fold(step, f64::max);
    Plot {
        size: PAGE_SIZE,
        title: &format!("{}: each part's throughput over time", m.label()),
        x: "seconds since the earliest part started measuring",
        y: "locks acquired per second",
        x_axis: XAxis::Time(end),
        y_axis: YAxis::Zero(1.0),
        series,
        colours: &COLOURS,
        ..Plot::default()
    }
    .render()
    .map(Some)
}
