//! `--plot FILE.svg`: latency by percentile for each mode's whole acquire and single attempt,
//! on a log percentile axis (as the HdrHistogram plotter draws it) and a log latency axis.
//! Pure SVG: no font files needed.

use plotters::prelude::*;

use crate::hist::Hist;
use crate::report::Report;

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
        for (what, h) in [("acquire", &m.acquire), ("attempt", &m.attempt)] {
            if h.count() > 0 {
                series.push((format!("{} {what}", m.fanout.as_str()), curve(h)));
            }
        }
    }
    // Both axes logarithmic: medians of ~0.1 ms and retry tails of ~100s of ms stay readable.
    let values = || {
        series
            .iter()
            .flat_map(|(_, points)| points.iter().map(|p| p.1))
    };
    let y_max = values().fold(0.001f64, f64::max) * 1.5;
    let y_min = values()
        .fold(f64::INFINITY, f64::min)
        .clamp(0.001, y_max / 10.0)
        / 1.5;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, 600)).into_drawing_area();
        let e = |err: DrawingAreaErrorKind<_>| format!("drawing the plot: {err}");
        root.fill(&WHITE).map_err(e)?;
        let title = format!(
            "Redlock latency by percentile — {} masters, {} clients, {} resource(s)",
            report.header.masters.len(),
            report.header.config.clients,
            report.header.config.resources
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(15)
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
}
