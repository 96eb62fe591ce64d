//! `--plot FILE.svg`: latency by percentile for each mode's whole acquire and single attempt,
//! on a log percentile axis (as the HdrHistogram plotter draws it) and a log latency axis.
//! Pure SVG: no font files needed.

use plotters::prelude::*;

use crate::hist::Hist;
use crate::model::report::Report;

/// The percentile axis runs to 99.999% (1/(1-p) = 10^5).
const X_MAX: f64 = 1e5;

/// (1/(1-q), latency ms) points of `h`, HdrHistogram-plotter style.
fn curve(h: &Hist) -> Vec<(f64, f64)> {
    h.inner()
        .iter_quantiles(5)
        .map(|v| {
            let q = v.quantile_iterated_to().min(1.0 - 1.0 / X_MAX);
            (1.0 / (1.0 - q), v.value_iterated_to() as f64 / 1000.0)
        })
        .collect()
}

fn percentile_label(x: &f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / x);
    let text = format!("{p:.3}");
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
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
    let h = report;
    let c = &h.config;
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
        h.masters.len(),
        if h.local_masters { "local " } else { "" },
        c.resources,
        c.key_dist,
        c.ttl_ms,
        c.retry_count,
        c.retry_delay_ms,
        c.instance_timeout_ms
    )
}

/// The SVG document.
pub fn render(report: &Report) -> Result<String, String> {
    let mut series = Vec::new();
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    for m in &report.modes {
        for (what, h) in [
            ("acquire", &m.latency.acquire),
            ("attempt", &m.latency.attempt),
        ] {
            if h.count() > 0 {
                series.push((format!("{} {what}", m.label()), curve(h)));
            }
        }
    }
    // Both axes logarithmic: medians of ~0.1 ms and retry tails of ~100s of ms stay readable.
    let (y_min, y_max) = log_range(
        series
            .iter()
            .flat_map(|(_, points)| points.iter().map(|p| p.1)),
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 650)).into_drawing_area();
        let e = |err: DrawingAreaErrorKind<_>| format!("drawing the plot: {err}");
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                workload_title("acquire latency by percentile", report),
                ("sans-serif", 15),
            )
            .margin(15)
            // Room on the right so the last percentile label (99.999%) is not clipped.
            .margin_right(60)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((1f64..X_MAX).log_scale(), (y_min..y_max).log_scale())
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("percentile")
            .y_desc("latency (ms)")
            .x_label_formatter(&percentile_label)
            .draw()
            .map_err(e)?;
        for (i, (label, points)) in series.into_iter().enumerate() {
            let color = palette[i % palette.len()];
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))
                .map_err(e)?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_axis_labels_read_as_percentiles() {
        assert_eq!(percentile_label(&1.0), "0%");
        assert_eq!(percentile_label(&10.0), "90%");
        assert_eq!(percentile_label(&1000.0), "99.9%");
    }

    #[test]
    fn the_latency_axis_covers_every_value_with_a_tick_beyond() {
        assert_eq!(log_range([0.09, 590.0].into_iter()), (0.01, 1000.0));
        assert_eq!(log_range([5.0].into_iter()), (1.0, 10.0));
        assert_eq!(log_range(std::iter::empty()), (0.001, 1.0));
    }
}
