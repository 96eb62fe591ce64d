//! `capacity --plot FILE.svg`: acquire p50 and p99 against the throughput each step reached,
//! per fan-out mode, with the objective's bounds as horizontal lines and the knee (the answer)
//! marked. Steps that met the objective are filled dots, steps that missed it crosses.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{self, log_range, Axes, Chart, PALETTE, PLOT_SIZE};
use crate::model::capacity::search::Limit;
use crate::model::capacity::{Answer, CapacityResult};
use crate::model::percentiles::label;

/// (acquires/s, p50 ms, p99 ms, met the objective) of a step.
type Point = (f64, f64, f64, bool);

/// The points of each step of `fanout`, by throughput.
fn points(result: &CapacityResult, fanout: &str) -> Vec<Point> {
    let mut points: Vec<Point> = result
        .steps
        .iter()
        .filter(|s| s.fanout == fanout)
        .filter_map(|s| s.report.modes.first().map(|m| (m, s.passed)))
        .filter(|(m, _)| m.latency.acquire.count() > 0)
        .map(|(m, passed)| {
            (
                m.acquires_per_s(),
                m.latency.acquire.quantile(0.5) as f64 / 1000.0,
                m.latency.acquire.quantile(0.99) as f64 / 1000.0,
                passed,
            )
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The SVG document.
pub fn render(result: &CapacityResult) -> Result<String, String> {
    let series: Vec<(&Answer, Vec<Point>)> = result
        .answers
        .iter()
        .map(|a| (a, points(result, &a.fanout)))
        .collect();
    let bounds: Vec<(String, f64)> = result
        .objective
        .slo
        .bounds
        .iter()
        .map(|b| (label(b.percentile), b.bound_us as f64 / 1000.0))
        .collect();
    let points = || series.iter().flat_map(|(_, p)| p);
    let x_max = points().map(|p| p.0).fold(1.0f64, f64::max) * 1.1;
    let ys = points().flat_map(|p| [p.1, p.2]);
    let (y_min, y_max) = log_range(ys.chain(bounds.iter().map(|b| b.1)));
    let axes = Axes {
        x: "throughput reached (acquires/s)",
        y: "acquire latency (ms, from the intended start)",
        x_labels: None,
        margin_right: 40,
    };
    let (x, y) = (0f64..x_max, (y_min..y_max).log_scale());
    chart::svg(PLOT_SIZE, &title(result), axes, x, y, |c| {
        for (i, (answer, pts)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            draw_steps(c, &answer.fanout, pts, color)?;
            draw_knee(c, result, answer, color)?;
        }
        for (name, bound) in bounds {
            let line = vec![(0.0, bound), (x_max, bound)];
            let label = format!("objective: {name} < {bound} ms");
            chart::line(c, line, BLACK, 1, label)?;
        }
        Ok(())
    })
}

/// The p50 and p99 lines of one fan-out's steps, each step a dot (met) or a cross (missed).
fn draw_steps<X, Y>(
    c: &mut Chart<'_, '_, X, Y>,
    fanout: &str,
    pts: &[Point],
    color: RGBColor,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (what, width) in [("p50", 1u32), ("p99", 3)] {
        let line: Vec<(f64, f64)> = pts
            .iter()
            .map(|p| (p.0, if width == 1 { p.1 } else { p.2 }))
            .collect();
        let label = format!("{fanout} acquire {what}");
        chart::line(c, line.clone(), color, width, label)?;
        let (met, missed): (Vec<_>, Vec<_>) = line.into_iter().zip(pts).partition(|(_, p)| p.3);
        let size = width as i32;
        let dots = met
            .into_iter()
            .map(|(p, _)| Circle::new(p, 3 + size, color.filled()));
        c.draw_series(dots).map_err(chart::error)?;
        let cross = |(p, _)| Cross::new(p, 4 + size, color.stroke_width(2));
        c.draw_series(missed.into_iter().map(cross))
            .map_err(chart::error)?;
    }
    Ok(())
}

/// The knee of one fan-out (the answer's throughput and p99), ringed and labelled.
fn draw_knee<X, Y>(
    c: &mut Chart<'_, '_, X, Y>,
    result: &CapacityResult,
    answer: &Answer,
    color: RGBColor,
) -> Result<(), String>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let fanout = &answer.fanout;
    let knee = answer.rate_per_s.and_then(|rate| {
        let steps = result.steps.iter().rev();
        let mut at_rate = steps.filter(|s| &s.fanout == fanout && s.rate == rate && s.passed);
        at_rate.find_map(|s| s.report.modes.first())
    });
    let Some(m) = knee else {
        return Ok(());
    };
    let (x, y) = (
        m.acquires_per_s(),
        m.latency.acquire.quantile(0.99) as f64 / 1000.0,
    );
    // A search stopped by --max-rate or by this machine found a floor, not the knee: say so
    // where the eye lands.
    let text = if answer.limit == Limit::MaxRate {
        format!("{fanout}: ≥ {x:.0}/s (--max-rate reached)")
    } else if answer.generator_limited {
        format!("{fanout}: ≥ {x:.0}/s (a floor set by this machine)")
    } else {
        format!("{fanout} knee: {x:.0}/s")
    };
    // Right-aligned to the point: the answer often sits at the right edge.
    let font = ("sans-serif", 13)
        .into_font()
        .into_text_style(c.plotting_area());
    let text = Text::new(
        text,
        (-12, -14),
        font.pos(Pos::new(HPos::Right, VPos::Bottom)),
    );
    let ring = Circle::new((0, 0), 9, color.stroke_width(2));
    c.draw_series([EmptyElement::at((x, y)) + ring + text])
        .map_err(chart::error)?;
    Ok(())
}

/// A title short enough for the chart's width: the workload in a few words; the full
/// configuration is in the JSON and the text report.
fn title(result: &CapacityResult) -> String {
    let Some(step) = result.steps.first() else {
        return "Redlock capacity: no step ran".to_string();
    };
    let r = &step.report;
    // What the steps ran under, when it was not five healthy masters on loopback.
    let network = r
        .network
        .as_ref()
        .map_or(String::new(), |n| format!(", --rtt {}", n.profile));
    let faults = match result.faults.is_empty() {
        true => String::new(),
        false => format!(", safe under {}", result.faults.join(" ")),
    };
    format!(
        "Redlock capacity ({}{faults}): {} {}masters{network}, {} resources, {} clients; dot = met, cross = missed",
        result.objective.slo,
        r.masters.len(),
        if r.local_masters { "local " } else { "" },
        r.config.resources,
        r.config.clients,
    )
}
