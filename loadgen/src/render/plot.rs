//! `--plot FILE.svg`: latency by percentile for each mode's whole acquire and single attempt,
//! on a log percentile axis (as the HdrHistogram plotter draws it) and a log latency axis.

use super::chart::{self, Plot, PLOT_SIZE};
use crate::hist::Hist;
use crate::model::percentiles::Percentiles;
use crate::model::report::Report;
use crate::render::written::{not_taken, Written};

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
