//! What the SVG charts (`--plot` and the HTML pages) share: the canvas, the title, the margins
//! and axes, the palettes, labelled lines with their legend, the log axis range, the shaded
//! fault windows, the workload title and drawing errors; [`Plot`] draws a chart of named
//! lines from its series and the kinds of its axes. Pure SVG: no font files needed.

use std::ops::Range;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;

use crate::hist::Hist;
use crate::model::report::Report;

/// Colours of the series, in order: eight apart (the masters' lines, the merged parts).
pub const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// The palette of most charts: the first four [`COLOURS`].
pub const PALETTE: &[RGBColor] = COLOURS.split_at(4).0;

/// A `--plot` file's canvas, px.
pub const PLOT_SIZE: (u32, u32) = (1100, 650);
/// A page's chart, px (scaled down to the page's width).
pub const PAGE_SIZE: (u32, u32) = (1100, 420);

/// A chart being drawn.
pub type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A drawing error, in words.
pub fn error<E: std::error::Error + Send + Sync>(err: DrawingAreaErrorKind<E>) -> String {
    format!("drawing the plot: {err}")
}

/// How the labels of an axis read.
pub(crate) type Labels<'a> = &'a dyn Fn(&f64) -> String;

/// The axes of a chart: their descriptions, how x labels read, and room on the right for the
/// last x label.
#[derive(Clone, Copy)]
pub(crate) struct Axes<'a> {
    pub x: &'a str,
    pub y: &'a str,
    pub x_labels: Option<Labels<'a>>,
    pub margin_right: u32,
}

/// One chart as an SVG document of `size` pixels: `title` over the `x` × `y` ranges, series
/// drawn by `draw`, the legend in the upper left.
pub(crate) fn svg<X, Y>(
    size: (u32, u32),
    title: &str,
    axes: Axes<'_>,
    x: X,
    y: Y,
    draw: impl FnOnce(&mut Chart<'_, '_, X::CoordDescType, Y::CoordDescType>) -> Result<(), String>,
) -> Result<String, String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(15)
            .margin_right(axes.margin_right)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(x, y)
            .map_err(error)?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(axes.x).y_desc(axes.y);
        if let Some(labels) = axes.x_labels {
            mesh.x_label_formatter(labels);
        }
        mesh.draw().map_err(error)?;
        draw(&mut chart)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(error)?;
        root.present().map_err(error)?;
    }
    Ok(svg)
}

/// A line through `points`, `width` px wide, with its entry in the legend.
pub fn line<X, Y>(
    chart: &mut Chart<'_, '_, X, Y>,
    points: Vec<(f64, f64)>,
    color: RGBColor,
    width: u32,
    label: String,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(width)))
        .map_err(error)?
        .label(label)
        .legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(width))
        });
    Ok(())
}

/// A log axis range from powers of ten below the smallest and above the largest value, so
/// the axis has a labelled tick beyond every value drawn.
pub fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| v.is_finite() && *v > 0.0) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi <= 0.0 {
        return (0.001, 1.0);
    }
    let lo = 10f64.powf(lo.max(0.001).log10().floor());
    let mut hi = 10f64.powf(hi.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

/// The percentile axis runs to 99.999% (1/(1-p) = 10^5).
pub const X_MAX: f64 = 1e5;

/// (1/(1-q), latency ms) points of `h`, HdrHistogram-plotter style.
pub fn curve(h: &Hist) -> Vec<(f64, f64)> {
    h.inner()
        .iter_quantiles(5)
        .map(|v| {
            let q = v.quantile_iterated_to().min(1.0 - 1.0 / X_MAX);
            (1.0 / (1.0 - q), v.value_iterated_to() as f64 / 1000.0)
        })
        .collect()
}

pub fn percentile_label(x: &f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / x);
    let text = format!("{p:.3}");
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// A fault window of one mode, seconds into its measured window: (from, to, what).
pub type FaultWindow = (f64, f64, String);

/// A named line, drawn in pieces (a gap where an interval has no value).
pub type Series = (String, Vec<Vec<(f64, f64)>>);

/// The x axis of a [`Plot`].
#[derive(Debug, Clone, Default)]
pub enum XAxis {
    /// From 0 to the given end (seconds).
    Time(f64),
    /// HdrHistogram's log percentile axis, to 99.999 %.
    #[default]
    Percentile,
    /// A sweep's levels, at 0, 1, …, labelled by their names.
    Levels(Vec<String>),
}

/// The y axis of a [`Plot`].
#[derive(Debug, Clone, Copy, Default)]
pub enum YAxis {
    /// From 0 to 15 % above the largest value, itself at least the given floor.
    Zero(f64),
    /// Log, over [`log_range`] of the values.
    #[default]
    Log,
    /// Log over at least two decades (over one plotters labels odd fractions), starting just
    /// below its lowest power of ten so that one gets its label too.
    LogWide,
}

/// A chart of named lines, every series in its colour, 2 px wide, the fault windows shaded.
#[derive(Debug, Default)]
pub struct Plot<'a> {
    pub size: (u32, u32),
    pub title: &'a str,
    pub x: &'a str,
    pub y: &'a str,
    pub x_axis: XAxis,
    pub y_axis: YAxis,
    pub series: Vec<Series>,
    /// The series' colours, in turn ([`PALETTE`] when empty).
    pub colours: &'a [RGBColor],
    /// A dot at every point.
    pub dots: bool,
    /// The fault windows of each mode (named by mode when more than one).
    pub faults: &'a [(String, Vec<FaultWindow>)],
}

impl Plot<'_> {
    /// The SVG document.
    pub fn render(mut self) -> Result<String, String> {
        let ys = || {
            self.series
                .iter()
                .flat_map(|(_, s)| s.iter().flatten().map(|p| p.1))
        };
        let x_axis = std::mem::take(&mut self.x_axis);
        // A sweep's level at each whole x, its name (none between levels).
        let level = |x: &f64| match &x_axis {
            XAxis::Levels(names) if (x - x.round()).abs() < 1e-6 && x.round() >= 0.0 => {
                names.get(x.round() as usize).cloned().unwrap_or_default()
            }
            _ => String::new(),
        };
        let (x, x_labels, margin_right): (Range<f64>, Option<Labels>, u32) = match &x_axis {
            XAxis::Time(end) => (0.0..*end, None, 30),
            XAxis::Percentile => (1.0..X_MAX, Some(&percentile_label), 60),
            XAxis::Levels(names) => (0.0..(names.len().max(2) - 1) as f64, Some(&level), 40),
        };
        let y = match self.y_axis {
            YAxis::Zero(floor) => 0.0..ys().fold(floor, f64::max) * 1.15,
            YAxis::Log => {
                let (lo, hi) = log_range(ys());
                lo..hi
            }
            YAxis::LogWide => {
                let (lo, hi) = log_range(ys());
                let lo = if hi / lo < 99.0 { lo / 10.0 } else { lo };
                lo * 0.999..hi
            }
        };
        let axes = Axes {
            x: self.x,
            y: self.y,
            x_labels,
            margin_right,
        };
        let (size, title, shade) = (self.size, self.title, (y.start, y.end));
        let x_log = matches!(x_axis, XAxis::Percentile);
        match (x_log, matches!(self.y_axis, YAxis::Zero(_))) {
            (false, true) => svg(size, title, axes, x, y, |c| self.draw(c, shade)),
            (false, false) => svg(size, title, axes, x, y.log_scale(), |c| self.draw(c, shade)),
            (true, true) => svg(size, title, axes, x.log_scale(), y, |c| self.draw(c, shade)),
            (true, false) => svg(size, title, axes, x.log_scale(), y.log_scale(), |c| {
                self.draw(c, shade)
            }),
        }
    }

    /// The fault windows, then each series (its dots, then its line; only its first piece
    /// named in the legend).
    fn draw<X, Y>(self, c: &mut Chart<'_, '_, X, Y>, y: (f64, f64)) -> Result<(), String>
    where
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        shade_faults(c, self.faults, y)?;
        let colours = if self.colours.is_empty() {
            PALETTE
        } else {
            self.colours
        };
        for (i, (label, segments)) in self.series.into_iter().enumerate() {
            let colour = colours[i % colours.len()];
            let mut label = Some(label);
            for points in segments {
                if self.dots {
                    let dots = points.iter().map(|&p| Circle::new(p, 4, colour.filled()));
                    c.draw_series(dots).map_err(error)?;
                }
                match label.take() {
                    Some(l) => line(c, points, colour, 2, l)?,
                    None => {
                        c.draw_series(LineSeries::new(points, colour.stroke_width(2)))
                            .map_err(error)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Shades each fault window between `y_lo` and `y_hi` and writes what it was at its top left.
fn shade_faults<X, Y>(
    c: &mut Chart<'_, '_, X, Y>,
    faults: &[(String, Vec<FaultWindow>)],
    (y_lo, y_hi): (f64, f64),
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let shade = RGBColor(255, 140, 0);
    // One label under the other when several modes' windows are drawn on one chart.
    let step = (y_hi - y_lo) * 0.07;
    for (k, (mode, windows)) in faults.iter().enumerate() {
        let label_y = if k == 0 { y_hi } else { y_hi - step * k as f64 };
        for (from, to, what) in windows {
            let band = Rectangle::new([(*from, y_lo), (*to, y_hi)], shade.mix(0.18).filled());
            c.draw_series(std::iter::once(band)).map_err(error)?;
            let text = if faults.len() > 1 {
                format!("{what} ({mode})")
            } else {
                what.clone()
            };
            let font = ("sans-serif", 14).into_font().color(&RGBColor(150, 70, 0));
            c.draw_series(std::iter::once(Text::new(text, (*from, label_y), font)))
                .map_err(error)?;
        }
    }
    Ok(())
}

/// A title carrying the workload and client settings of `report`.
pub fn workload_title(what: &str, report: &Report) -> String {
    let c = &report.config;
    let load = match c.rate_per_s {
        Some(rate) => format!("open loop {rate}/s over {} clients", c.clients),
        None => format!("closed loop {} clients", c.clients),
    };
    let hold = if c.hold_min_us == c.hold_max_us {
        format!("{} ms", c.hold_min_us as f64 / 1000.0)
    } else {
        format!(
            "{}..{} ms",
            c.hold_min_us as f64 / 1000.0,
            c.hold_max_us as f64 / 1000.0
        )
    };
    format!(
        "Redlock {what} — {} {}masters, {load}, {} resource(s) {}, hold {hold}, ttl {} ms; retry {} × ≤{} ms, timeout {} ms",
        report.masters.len(),
        if report.local_masters { "local " } else { "" },
        c.resources,
        c.key_dist,
        c.ttl_ms,
        c.retry_count,
        c.retry_delay_ms,
        c.instance_timeout_ms
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latency_axis_covers_every_value_with_a_tick_beyond() {
        assert_eq!(log_range([0.09, 590.0].into_iter()), (0.01, 1000.0));
        assert_eq!(log_range([5.0].into_iter()), (1.0, 10.0));
        assert_eq!(log_range(std::iter::empty()), (0.001, 1.0));
    }

    #[test]
    fn percentile_axis_labels_read_as_percentiles() {
        assert_eq!(percentile_label(&1.0), "0%");
        assert_eq!(percentile_label(&10.0), "90%");
        assert_eq!(percentile_label(&1000.0), "99.9%");
    }
}
