//! `--plot FILE.svg`: latency by percentile for each mode's whole acquire and single attempt,
//! on a log percentile axis (as the HdrHistogram plotter draws it) and a log latency axis.

use super::chart::{self, curve, Plot, PLOT_SIZE};
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::render::written::{not_taken, Written};

/// The SVG document. Both axes logarithmic: medians of ~0.1 ms and retry tails of ~100s of
/// ms stay readable.
pub fn render(report: &Report) -> Result<String, String> {
    let mut series = Vec::new();
    for m in &report.modes {
        for (what, h) in [
            ("acquire", &m.latency.acquire),
            ("attempt", &m.latency.attempt),
        ] {
            if h.count() > 0 {
                series.push((format!("{} {what}", m.label()), vec![curve(h)]));
            }
        }
    }
    Plot {
        size: PLOT_SIZE,
        title: &chart::workload_title("acquire latency by percentile", report),
        x: "percentile",
        y: "latency (ms)",
        series,
        ..Plot::default()
    }
    .render()
}

/// `--plot` of a run (its latency curves) or a capacity search (its steps).
pub fn write(written: &Written<'_>, _: &Percentiles) -> Result<String, String> {
    match written {
        Written::Run(report) => render(report),
        Written::Capacity(result) => super::capacity_plot::render(result),
        _ => Err(not_taken("--plot", written)),
    }
}
