//! `--hgrm DIR`: one percentile-distribution file per histogram, in the classic 4-column
//! HdrHistogram layout (values in milliseconds) that the HdrHistogram plotter reads.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::hist::Hist;
use crate::model::report::Report;

/// Percentile ticks per halving of the distance to 100% (HdrHistogram's usual 5).
const TICKS_PER_HALF_DISTANCE: u32 = 5;
/// Values are written in milliseconds: µs ÷ 1000.
const SCALE: f64 = 1000.0;

/// The distribution of `h` as `.hgrm` text.
pub fn render(h: &Hist) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in h.inner().iter_quantiles(TICKS_PER_HALF_DISTANCE) {
        let value = v.value_iterated_to() as f64 / SCALE;
        let q = v.quantile_iterated_to();
        total += v.count_since_last_iteration();
        if q < 1.0 {
            let _ = writeln!(
                out,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(out, "{value:12.3} {q:2.12} {total:10}");
        }
    }
    let inner = h.inner();
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        h.mean() / SCALE,
        h.stdev() / SCALE
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        h.max() as f64 / SCALE,
        h.count()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        inner.buckets(),
        sub_buckets(inner.sigfig())
    );
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
        let mode = m.label();
        let mut files: Vec<(String, &Hist)> = vec![
            ("acquire".into(), &m.latency.acquire),
            ("attempt".into(), &m.latency.attempt),
            ("release".into(), &m.latency.release),
            ("validity-margin".into(), &m.latency.validity_margin),
        ];
        if m.latency.extend.count() > 0 {
            files.push(("extend".into(), &m.latency.extend));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hgrm_has_the_classic_four_column_layout() {
        let mut h = Hist::new();
        for us in 1..=10_000u64 {
            h.record(us); // 1 µs .. 10 ms, uniform
        }
        let text = render(&h);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        let rows: Vec<Vec<&str>> = lines[2..]
            .iter()
            .take_while(|l| !l.starts_with('#'))
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert!(rows.len() > 20);
        let (mut last_value, mut last_q, mut last_total) = (0.0f64, -1.0f64, 0u64);
        for (i, row) in rows.iter().enumerate() {
            let value: f64 = row[0].parse().unwrap();
            let q: f64 = row[1].parse().unwrap();
            let total: u64 = row[2].parse().unwrap();
            assert!(
                value >= last_value && q > last_q && total >= last_total,
                "row {i}: {row:?}"
            );
            if i + 1 < rows.len() {
                assert_eq!(row.len(), 4, "row {i}: {row:?}");
                let inverse: f64 = row[3].parse().unwrap();
                assert!((inverse - 1.0 / (1.0 - q)).abs() < 0.01, "row {i}: {row:?}");
            } else {
                assert_eq!(row.len(), 3, "the 100% row has no 1/(1-p) column: {row:?}");
                assert_eq!(q, 1.0);
                assert_eq!(total, 10_000);
                assert!((value - 10.0).abs() < 0.02, "max ≈ 10 ms: {value}");
            }
            (last_value, last_q, last_total) = (value, q, total);
        }
        // The median of 1..10000 µs is ≈ 5 ms.
        let median = rows
            .iter()
            .find(|r| r[1].parse::<f64>().unwrap() >= 0.5)
            .unwrap();
        assert!(
            (median[0].parse::<f64>().unwrap() - 5.0).abs() < 0.01,
            "{median:?}"
        );
        let footer: Vec<&str> = lines
            .iter()
            .filter(|l| l.starts_with("#["))
            .copied()
            .collect();
        assert_eq!(footer.len(), 3);
        assert!(footer[0].starts_with("#[Mean    =") && footer[0].contains("StdDeviation   ="));
        assert!(
            footer[1].starts_with("#[Max     =")
                && footer[1].ends_with("Total count    =        10000]")
        );
        assert!(
            footer[2].starts_with("#[Buckets =")
                && footer[2].ends_with("SubBuckets     =         2048]")
        );
    }
}
