//! What the SVG charts (`--plot` of a run and of a capacity search) share: the canvas, the
//! title, the margins and axes, the palette, labelled lines with their legend, the log axis
//! range, the workload title and drawing errors. Pure SVG: no font files needed.

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;

use crate::model::report::Report;

/// Colours of the series, in order.
pub const PALETTE: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// A chart being drawn.
pub type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A drawing error, in words.
pub fn error<E: std::error::Error + Send + Sync>(err: DrawingAreaErrorKind<E>) -> String {
    format!("drawing the plot: {err}")
}

/// The axes of a chart: their descriptions, how x labels read, and room on the right for the
/// last x label.
#[derive(Debug, Clone, Copy)]
pub struct Axes<'a> {
    pub x: &'a str,
    pub y: &'a str,
    pub x_labels: Option<fn(&f64) -> String>,
    pub margin_right: u32,
}

/// One chart as an SVG document: `title` over the `x` × `y` ranges, series drawn by `draw`,
/// the legend in the upper left.
pub fn svg<X, Y>(
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
    svg_sized((1100, 650), title, axes, x, y, draw)
}

/// [`svg`] on a canvas of `size` pixels.
pub fn svg_sized<X, Y>(
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
        if let Some(labels) = &axes.x_labels {
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
}
