//! The HTML report's charts, drawn in Rust as inline SVG ([`super::super::chart`]): figures
//! over time with the fault windows shaded and named, the percentile spectrum of each
//! operation with the fan-outs overlaid, and a sweep's curves.

use plotters::prelude::*;

use crate::model::mode::ModeStats;
use crate::model::report::Report;
use crate::model::sweep::SweepResult;
use crate::render::chart::{self, log_range, Axes, Chart, PALETTE};
use crate::render::plot::{curve, percentile_label, X_MAX};

/// Width and height of a chart, px (scaled down to the page's width).
const SIZE: (u32, u32) = (1100, 420);

/// A log latency axis from the powers of ten `lo` and `hi` ([`log_range`]): at least two
/// decades (over one decade plotters labels odd fractions), starting just below its lowest
/// power of ten so that one gets its label too.
fn log_axis(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let lo = if hi / lo < 99.0 { lo / 10.0 } else { lo };
    lo * 0.999..hi
}

/// A fault window of one mode, seconds into its measured window: (from, to, what).
pub type FaultWindow = (f64, f64, String);

/// A named line drawn in pieces (a gap where an interval has no value).
type Segmented = (String, Vec<Vec<(f64, f64)>>);

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

/// Locks acquired per second in each interval, per mode, with the fault windows shaded.
pub fn throughput(
    report: &Report,
    faults: &[(String, Vec<FaultWindow>)],
) -> Result<String, String> {
    let mut series = Vec::new();
    let mut x_max = 1.0f64;
    let mut y_max = 1.0f64;
    for m in &report.modes {
        let points: Vec<(f64, f64)> = m
            .intervals
            .iter()
            .zip(interval_spans(m))
            .map(|(i, (from, length))| (from + length / 2.0, i.acquired as f64 / length))
            .collect();
        x_max = x_max.max(time_axis_end(m));
        y_max = points.iter().map(|p| p.1).fold(y_max, f64::max);
        series.push((m.label().to_string(), points));
    }
    let axes = Axes {
        x: time_axis(report.modes.first()),
        y: "locks acquired per second",
        x_labels: None,
        margin_right: 30,
    };
    chart::svg_sized(
        SIZE,
        "Throughput over time (each mode measured on its own; shaded: faults)",
        axes,
        0f64..x_max,
        0f64..y_max * 1.15,
        |c| {
            shade_faults(c, faults, (0.0, y_max * 1.15))?;
            for (i, (label, points)) in series.into_iter().enumerate() {
                chart::line(c, points, PALETTE[i % PALETTE.len()], 2, label)?;
            }
            Ok(())
        },
    )
}

/// p50, p99 and p99.9 of the whole acquire in each interval of `m`, on a log latency axis.
pub fn latency_over_time(m: &ModeStats, faults: &[FaultWindow]) -> Result<String, String> {
    let spans = interval_spans(m);
    let series: Vec<Segmented> = [("p50", 0usize), ("p99", 1), ("p99.9", 2)]
        .into_iter()
        .map(|(name, which)| {
            let mut segments = vec![Vec::new()];
            for (i, (from, length)) in m.intervals.iter().zip(&spans) {
                let us = [i.acquire_p50_us, i.acquire_p99_us, i.acquire_p999_us][which];
                if i.acquire_calls == 0 || us == 0 {
                    // No call completed: a gap, not a zero.
                    segments.push(Vec::new());
                    continue;
                }
                if let Some(last) = segments.last_mut() {
                    last.push((from + length / 2.0, us as f64 / 1000.0));
                }
            }
            segments.retain(|s| !s.is_empty());
            (format!("acquire {name}"), segments)
        })
        .collect();
    let (y_min, y_max) = log_range(
        series
            .iter()
            .flat_map(|(_, s)| s.iter().flatten().map(|p| p.1)),
    );
    let axes = Axes {
        x: time_axis(Some(m)),
        y: "acquire latency (ms, log)",
        x_labels: None,
        margin_right: 30,
    };
    let title = format!(
        "{}: acquire latency over time (per {} ms interval; shaded: faults)",
        m.label(),
        m.interval_ms
    );
    let named = [(m.label().to_string(), faults.to_vec())];
    chart::svg_sized(
        SIZE,
        &title,
        axes,
        0f64..time_axis_end(m),
        log_axis(y_min, y_max).log_scale(),
        |c| {
            shade_faults(c, &named, (log_axis(y_min, y_max).start, y_max))?;
            draw_segmented(c, series, &PALETTE)
        },
    )
}

/// Draws each series as its line segments (gaps where an interval had no data), one colour
/// per series from `colours`, labelled once in the legend.
fn draw_segmented<X, Y>(
    c: &mut Chart<'_, '_, X, Y>,
    series: Vec<Segmented>,
    colours: &[RGBColor],
) -> Result<(), String>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    for (i, (label, segments)) in series.into_iter().enumerate() {
        let color = colours[i % colours.len()];
        let mut label = Some(label);
        for points in segments {
            match label.take() {
                Some(l) => chart::line(c, points, color, 2, l)?,
                None => {
                    c.draw_series(LineSeries::new(points, color.stroke_width(2)))
                        .map_err(chart::error)?;
                }
            }
        }
    }
    Ok(())
}

/// Shades each fault window and writes what it was at its top left.
fn shade_faults<X, Y>(
    c: &mut Chart<'_, '_, X, Y>,
    faults: &[(String, Vec<FaultWindow>)],
    (y_lo, y_hi): (f64, f64),
) -> Result<(), String>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    let shade = RGBColor(255, 140, 0);
    // One label under the other when several modes' windows are drawn on one chart.
    let step = (y_hi - y_lo) * 0.07;
    for (k, (mode, windows)) in faults.iter().enumerate() {
        let label_y = if k == 0 { y_hi } else { y_hi - step * k as f64 };
        for (from, to, what) in windows {
            c.draw_series(std::iter::once(Rectangle::new(
                [(*from, y_lo), (*to, y_hi)],
                shade.mix(0.18).filled(),
            )))
            .map_err(chart::error)?;
            let text = if faults.len() > 1 {
                format!("{what} ({mode})")
            } else {
                what.clone()
            };
            c.draw_series(std::iter::once(Text::new(
                text,
                (*from, label_y),
                ("sans-serif", 14).into_font().color(&RGBColor(150, 70, 0)),
            )))
            .map_err(chart::error)?;
        }
    }
    Ok(())
}

/// Latency by percentile of one operation (`what`: acquire, attempt, release), every mode
/// overlaid, on HdrHistogram's log percentile axis.
pub fn spectrum(report: &Report, what: &str) -> Result<Option<String>, String> {
    let series: Vec<(String, Vec<(f64, f64)>)> = report
        .modes
        .iter()
        .filter_map(|m| {
            let h = match what {
                "acquire" => &m.latency.acquire,
                "attempt" => &m.latency.attempt,
                _ => &m.latency.release,
            };
            (h.count() > 0).then(|| (m.label().to_string(), curve(h)))
        })
        .collect();
    if series.is_empty() {
        return Ok(None);
    }
    let (y_min, y_max) = log_range(series.iter().flat_map(|(_, p)| p.iter().map(|p| p.1)));
    let axes = Axes {
        x: "percentile",
        y: "latency (ms, log)",
        x_labels: Some(percentile_label),
        margin_right: 60,
    };
    chart::svg_sized(
        SIZE,
        &format!("{what} latency by percentile"),
        axes,
        (1f64..X_MAX).log_scale(),
        log_axis(y_min, y_max).log_scale(),
        |c| {
            for (i, (label, points)) in series.into_iter().enumerate() {
                chart::line(c, points, PALETTE[i % PALETTE.len()], 2, label)?;
            }
            Ok(())
        },
    )
    .map(Some)
}

/// A sweep: locks acquired per second and acquire p99 at each level, per mode (x: the
/// level's position, labelled by the level).
pub fn sweep_curves(sweep: &SweepResult) -> Result<[String; 2], String> {
    let labels: Vec<String> = sweep.levels.iter().map(|l| l.level.clone()).collect();
    let mut modes: Vec<String> = Vec::new();
    for l in &sweep.levels {
        for m in &l.report.modes {
            if !modes.iter().any(|x| x == m.label()) {
                modes.push(m.label().to_string());
            }
        }
    }
    let figure = |f: &dyn Fn(&ModeStats) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        modes
            .iter()
            .map(|name| {
                let points = sweep
                    .levels
                    .iter()
                    .enumerate()
                    .filter_map(|(x, l)| l.report.mode(name).map(|m| (x as f64, f(m))))
                    .collect();
                (name.clone(), points)
            })
            .collect()
    };
    let throughput = figure(&|m| m.acquires_per_s());
    let p99 = figure(&|m| m.latency.acquire.quantile(0.99) as f64 / 1000.0);
    let x_max = (labels.len().max(2) - 1) as f64;
    let level_label = |x: &f64| -> String {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 {
            LEVEL_LABELS.with(|l| l.borrow().get(i as usize).cloned().unwrap_or_default())
        } else {
            String::new()
        }
    };
    LEVEL_LABELS.with(|l| *l.borrow_mut() = labels.clone());
    let axes = |y| Axes {
        x: if sweep.load == "open" {
            "level (open-loop rate)"
        } else {
            "level (clients)"
        },
        y,
        x_labels: Some(level_label),
        margin_right: 40,
    };
    let y_max = throughput
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.1))
        .fold(1.0f64, f64::max);
    let a = chart::svg_sized(
        SIZE,
        "Sweep: throughput at each level",
        axes("locks acquired per second"),
        0f64..x_max,
        0f64..y_max * 1.15,
        |c| draw_all(c, throughput),
    )?;
    let p99_max = p99
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.1))
        .fold(0.001f64, f64::max);
    let b = chart::svg_sized(
        SIZE,
        "Sweep: acquire p99 at each level",
        axes("acquire p99 (ms)"),
        0f64..x_max,
        0f64..p99_max * 1.15,
        |c| draw_all(c, p99),
    )?;
    Ok([a, b])
}

thread_local! {
    /// The sweep's level names, for the x labels (plotters takes a plain `fn` formatter).
    static LEVEL_LABELS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn draw_all<X, Y>(
    c: &mut Chart<'_, '_, X, Y>,
    series: Vec<(String, Vec<(f64, f64)>)>,
) -> Result<(), String>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    for (i, (label, points)) in series.into_iter().enumerate() {
        c.draw_series(
            points
                .iter()
                .map(|&p| Circle::new(p, 4, PALETTE[i % PALETTE.len()].filled())),
        )
        .map_err(chart::error)?;
        chart::line(c, points, PALETTE[i % PALETTE.len()], 2, label)?;
    }
    Ok(())
}

/// Colours of the masters' lines (more than the shared palette: up to eight masters apart).
const MASTER_COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Each master's p99 round trip per interval of `m` (answered requests only), log axis.
pub fn round_trips_over_time(
    m: &ModeStats,
    faults: &[FaultWindow],
) -> Result<Option<String>, String> {
    let spans = interval_spans(m);
    let n_masters = m.masters.len();
    let mut series: Vec<Segmented> = (0..n_masters)
        .map(|i| (format!("master #{i} p99"), vec![Vec::new()]))
        .collect();
    for (interval, (from, length)) in m.intervals.iter().zip(&spans) {
        for (master, (_, segments)) in series.iter_mut().enumerate() {
            let h = interval
                .round_trip
                .get(master)
                .map(|p| p.unpack())
                .unwrap_or_default();
            if h.count() == 0 {
                segments.push(Vec::new());
            } else if let Some(last) = segments.last_mut() {
                last.push((from + length / 2.0, h.quantile(0.99) as f64 / 1000.0));
            }
        }
    }
    for (_, segments) in &mut series {
        segments.retain(|s| !s.is_empty());
    }
    if series.iter().all(|(_, s)| s.is_empty()) {
        return Ok(None);
    }
    let (y_min, y_max) = log_range(
        series
            .iter()
            .flat_map(|(_, s)| s.iter().flatten().map(|p| p.1)),
    );
    let axes = Axes {
        x: time_axis(Some(m)),
        y: "round trip p99 (ms, log)",
        x_labels: None,
        margin_right: 30,
    };
    let title = format!(
        "{}: each master's round-trip p99 over time (answered requests; shaded: faults)",
        m.label()
    );
    let named = [(m.label().to_string(), faults.to_vec())];
    chart::svg_sized(
        SIZE,
        &title,
        axes,
        0f64..time_axis_end(m),
        log_axis(y_min, y_max).log_scale(),
        |c| {
            shade_faults(c, &named, (log_axis(y_min, y_max).start, y_max))?;
            draw_segmented(c, series, &MASTER_COLOURS)
        },
    )
    .map(Some)
}

/// Merged results: each part's locks acquired per second over the merged timeline of `m`.
pub fn parts_over_time(m: &ModeStats) -> Result<Option<String>, String> {
    if m.part_series.is_empty() {
        return Ok(None);
    }
    let step = m.interval().as_secs_f64();
    let series: Vec<(String, Vec<(f64, f64)>)> = m
        .part_series
        .iter()
        .map(|p| {
            let points = p
                .acquired
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    (
                        (p.first_index + i) as f64 * step + step / 2.0,
                        n as f64 / step,
                    )
                })
                .collect();
            (p.name.clone(), points)
        })
        .collect();
    let x_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.0 + step / 2.0))
        .fold(step, f64::max);
    let y_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.1))
        .fold(1.0, f64::max);
    let axes = Axes {
        x: "seconds since the earliest part started measuring",
        y: "locks acquired per second",
        x_labels: None,
        margin_right: 30,
    };
    chart::svg_sized(
        SIZE,
        &format!("{}: each part's throughput over time", m.label()),
        axes,
        0f64..x_max,
        0f64..y_max * 1.15,
        |c| {
            for (i, (label, points)) in series.into_iter().enumerate() {
                chart::line(
                    c,
                    points,
                    MASTER_COLOURS[i % MASTER_COLOURS.len()],
                    2,
                    label,
                )?;
            }
            Ok(())
        },
    )
    .map(Some)
}
