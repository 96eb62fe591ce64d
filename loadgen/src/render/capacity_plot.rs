//! `capacity --plot FILE.svg`: acquire p50 and p99 against the throughput each step reached,
//! per fan-out mode, with the objective's bounds as horizontal lines and the knee (the answer)
//! marked.

use plotters::prelude::*;

use super::percentiles::label;
use super::plot::{log_range, workload_title};
use crate::model::capacity::CapacityResult;

const PALETTE: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// (acquires/s, p50 ms, p99 ms) of a step.
type Point = (f64, f64, f64);

/// The points of each step of `fanout`, by throughput.
fn points(result: &CapacityResult, fanout: &str) -> Vec<Point> {
    let mut points: Vec<Point> = result
        .steps
        .iter()
        .filter(|s| s.fanout == fanout)
        .filter_map(|s| s.report.modes.first())
        .filter(|m| m.latency.acquire.count() > 0)
        .map(|m| {
            (
                m.acquires_per_s(),
                m.latency.acquire.quantile(0.5) as f64 / 1000.0,
                m.latency.acquire.quantile(0.99) as f64 / 1000.0,
            )
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The SVG document.
pub fn render(result: &CapacityResult) -> Result<String, String> {
    let fanouts: Vec<&str> = result.answers.iter().map(|a| a.fanout.as_str()).collect();
    let series: Vec<(&str, Vec<Point>)> = fanouts.iter().map(|&f| (f, points(result, f))).collect();
    let bounds: Vec<(String, f64)> = result
        .objective
        .slo
        .bounds
        .iter()
        .map(|b| (label(b.percentile), b.bound_us as f64 / 1000.0))
        .collect();
    let x_max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|p| p.0))
        .fold(1.0f64, f64::max)
        * 1.1;
    let (y_min, y_max) = log_range(
        series
            .iter()
            .flat_map(|(_, p)| p.iter().flat_map(|p| [p.1, p.2]))
            .chain(bounds.iter().map(|b| b.1)),
    );
    let title = match result.steps.first() {
        Some(step) => workload_title("capacity: latency against throughput", &step.report),
        None => "Redlock capacity: no step ran".to_string(),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1100, 650)).into_drawing_area();
        let e = |err: DrawingAreaErrorKind<_>| format!("drawing the plot: {err}");
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(15)
            .margin_right(40)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..x_max, (y_min..y_max).log_scale())
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("throughput reached (acquires/s)")
            .y_desc("acquire latency (ms, from the intended start)")
            .draw()
            .map_err(e)?;
        for (i, (fanout, pts)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            for (what, pick, width) in [("p50", 1usize, 1u32), ("p99", 2, 3)] {
                let line: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|p| (p.0, if pick == 1 { p.1 } else { p.2 }))
                    .collect();
                chart
                    .draw_series(LineSeries::new(line.clone(), color.stroke_width(width)))
                    .map_err(e)?
                    .label(format!("{fanout} acquire {what}"))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(width))
                    });
                chart
                    .draw_series(line.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(e)?;
            }
            // The knee: the answer's throughput and p99.
            let answer = result.answers.iter().find(|a| a.fanout == *fanout);
            let knee = answer.and_then(|a| a.rate_per_s).and_then(|rate| {
                result
                    .steps
                    .iter()
                    .rev()
                    .filter(|s| s.fanout == *fanout && s.rate == rate && s.passed)
                    .find_map(|s| s.report.modes.first())
                    .map(|m| {
                        (
                            m.acquires_per_s(),
                            m.latency.acquire.quantile(0.99) as f64 / 1000.0,
                        )
                    })
            });
            if let Some((x, y)) = knee {
                chart
                    .draw_series([EmptyElement::at((x, y))
                        + Circle::new((0, 0), 9, color.stroke_width(2))
                        + Text::new(
                            format!("{fanout} knee: {x:.0}/s"),
                            (-60, -24),
                            ("sans-serif", 13),
                        )])
                    .map_err(e)?;
            }
        }
        for (name, bound) in &bounds {
            let bound = *bound;
            chart
                .draw_series(LineSeries::new(
                    [(0.0, bound), (x_max, bound)],
                    BLACK.stroke_width(1),
                ))
                .map_err(e)?
                .label(format!("objective: {name} < {bound} ms"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
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
