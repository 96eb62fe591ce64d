//! `--hgrm DIR`: one percentile-distribution file per histogram, in the classic 4-column
//! HdrHistogram layout (values in milliseconds) that the HdrHistogram plotter reads.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::hist::Hist;
use crate::report::Report;

/// Percentile ticks per halving of the distance to 100% (HdrHistogram's usual 5).
const TICKS_PER_HALF_DISTANCE: u32 = 5;
/// Values are written in milliseconds: µs ÷ 1000.
const SCALE: f64 = 1000.0;

/// The distribution of `h` as `.hgrm` text.
pub fn render(h: &Hist) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:>12} {:>14} {:>10} {:>14}\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    let mut total = 0u64;
    for v in h.inner().iter_quantiles(TICKS_PER_HALF_DISTANCE) {
        let value = v.value_iterated_to() as f64 / SCALE;
        let q = v.quantile_iterated_to();
        total += v.count_since_last_iteration();
        if q < 1.0 {
            let _ = writeln!(out, "{value:12.3} {q:2.12} {total:10} {:14.2}", 1.0 / (1.0 - q));
        } else {
            let _ = writeln!(out, "{value:12.3} {q:2.12} {total:10}");
        }
    }
    let inner = h.inner();
    let _ = writeln!(out, "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]", h.mean() / SCALE, h.stdev() / SCALE);
    let _ = writeln!(out, "#[Max     = {:12.3}, Total count    = {:12}]", h.max() as f64 / SCALE, h.count());
    let _ = writeln!(out, "#[Buckets = {:12}, SubBuckets     = {:12}]", inner.buckets(), sub_buckets(inner.sigfig()));
    out
}

/// HdrHistogram's sub-bucket count for a precision (2048 for 3 significant digits).
fn sub_buckets(sigfig: u8) -> u64 {
    (2 * 10u64.pow(u32::from(sigfig))).next_power_of_two()
}

/// Writes one file per histogram of every mode into `dir` (created if missing) and returns
/// their paths.
pub fn write_all(report: &Report, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for m in &report.modes {
        let mode = m.fanout.as_str();
        let mut files: Vec<(String, &Hist)> = vec![
            ("acquire".into(), &m.acquire),
            ("attempt".into(), &m.attempt),
            ("release".into(), &m.release),
            ("validity-margin".into(), &m.validity_margin),
        ];
        if m.extend.count() > 0 {
            files.push(("extend".into(), &m.extend));
        }
        for (i, s) in m.masters.iter().enumerate() {
            files.push((format!("master-{i}-round-trip"), &s.round_trip));
        }
        for (name, h) in files {
            let path = dir.join(format!("{mode}-{name}.hgrm"));
            std::fs::write(&path, render(h))?;
            written.push(path);
        }
    }
    Ok(written)
}
