//! Reads criterion's saved results (`target/criterion/**/<baseline>/{benchmark,estimates}.json`)
//! and renders the Markdown tables of the benchmarks page (docs/src/benchmarks.md): every benchmark's median with its spread,
//! and the ratios and targets users compare.
//!
//! With several runs (one criterion baseline per run), each figure is the median of the
//! runs' medians, shown with the range of those medians; each ratio is taken within a run
//! (both sides measured under the same conditions), then the median across runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One benchmark's result in one run. Times are nanoseconds per criterion iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Median time per iteration.
    pub median_ns: f64,
    /// Median absolute deviation of the per-sample times.
    pub mad_ns: f64,
    /// 95% confidence interval of the median.
    pub median_ci_ns: (f64, f64),
    /// Elements one iteration processes (lock cycles), when the benchmark declares it.
    pub elements: Option<u64>,
}

impl Measurement {
    /// Elements (lock cycles) per second at the median.
    pub fn per_second(&self) -> f64 {
        self.elements.unwrap_or(1) as f64 * 1e9 / self.median_ns
    }
}

/// All results of one run (one criterion baseline), by full id (`group/function/parameter`).
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Baseline name.
    pub name: String,
    /// Results by benchmark id.
    pub results: BTreeMap<String, Measurement>,
}

#[derive(Deserialize)]
struct SavedId {
    full_id: String,
    throughput: Option<SavedThroughput>,
}

#[derive(Deserialize)]
enum SavedThroughput {
    Elements(u64),
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct SavedEstimate {
    point_estimate: f64,
    confidence_interval: SavedInterval,
}

#[derive(Deserialize)]
struct SavedInterval {
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Deserialize)]
struct SavedEstimates {
    median: SavedEstimate,
    median_abs_dev: SavedEstimate,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Every `<baseline>/benchmark.json` under `dir`.
fn find_saved(dir: &Path, baseline: &str, found: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if !path.is_dir() {
            continue;
        }
        let saved = path.join("benchmark.json");
        if path.file_name().is_some_and(|n| n == baseline) && saved.is_file() {
            found.push(saved);
        } else {
            find_saved(&path, baseline, found)?;
        }
    }
    Ok(())
}

/// Loads run `baseline` from criterion's output directory (`target/criterion`).
pub fn load(criterion_dir: &Path, baseline: &str) -> Result<Run, String> {
    let mut saved = Vec::new();
    find_saved(criterion_dir, baseline, &mut saved)?;
    if saved.is_empty() {
        return Err(format!(
            "no results saved as {baseline:?} under {} (run the benchmarks first, e.g. `make bench`)",
            criterion_dir.display()
        ));
    }
    let mut run = Run {
        name: baseline.to_string(),
        results: BTreeMap::new(),
    };
    for path in saved {
        let id: SavedId = read_json(&path)?;
        let estimates: SavedEstimates = read_json(&path.with_file_name("estimates.json"))?;
        let elements = match id.throughput {
            Some(SavedThroughput::Elements(n)) => Some(n),
            _ => None,
        };
        run.results.insert(
            id.full_id,
            Measurement {
                median_ns: estimates.median.point_estimate,
                mad_ns: estimates.median_abs_dev.point_estimate,
                median_ci_ns: (
                    estimates.median.confidence_interval.lower_bound,
                    estimates.median.confidence_interval.upper_bound,
                ),
                elements,
            },
        );
    }
    Ok(run)
}

/// A figure derived from one run's results.
#[derive(Debug, Clone, Copy)]
pub enum Figure {
    /// Median time of the first over the second (same run).
    TimeRatio(&'static str, &'static str),
    /// Lock cycles per second of one benchmark (from its declared throughput).
    Rate(&'static str),
    /// Cycles per second of the first over the second (same run).
    RateRatio(&'static str, &'static str),
    /// (first − second) / 2 in microseconds: the cost added per call when one iteration
    /// makes two calls (acquire and release).
    PerCallOverheadUs(&'static str, &'static str),
}

impl Figure {
    fn eval(self, run: &Run) -> Option<f64> {
        let get = |id: &str| run.results.get(id);
        match self {
            Figure::TimeRatio(a, b) => Some(get(a)?.median_ns / get(b)?.median_ns),
            Figure::Rate(a) => Some(get(a)?.per_second()),
            Figure::RateRatio(a, b) => Some(get(a)?.per_second() / get(b)?.per_second()),
            Figure::PerCallOverheadUs(a, b) => {
                Some((get(a)?.median_ns - get(b)?.median_ns) / 2.0 / 1e3)
            }
        }
    }
}

/// A target a figure is held against.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// The figure must be at most this.
    AtMost(f64),
    /// The figure must be at least this.
    AtLeast(f64),
    /// No pass/fail: shown for context (e.g. "close to 5").
    About(f64),
}

impl Target {
    fn describe(self) -> String {
        match self {
            Target::AtMost(v) => format!("≤ {}", number(v)),
            Target::AtLeast(v) => format!("≥ {}", number(v)),
            Target::About(v) => format!("≈ {}", number(v)),
        }
    }
    fn verdict(self, value: f64) -> &'static str {
        match self {
            Target::AtMost(v) if value <= v => "met",
            Target::AtLeast(v) if value >= v => "met",
            Target::About(_) => "—",
            _ => "**not met**",
        }
    }
}

/// One row of the ratios table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// What the figure means, for a reader.
    pub label: &'static str,
    /// How it is computed.
    pub figure: Figure,
    /// What it is held against, if anything.
    pub target: Option<Target>,
}

/// The figures the benchmarks page quotes. The one target a criterion figure judges is the C
/// ABI's added cost; the others are stated against the same run's peers and floor, and judged by
/// `make bench-peers` (`peers::targets`).
pub const ROWS: &[Row] = &[
    Row {
        label: "serial acquire+release cycles/s, 5 masters, concurrent",
        figure: Figure::Rate("acquire_release/concurrent/5"),
        target: None,
    },
    Row {
        label: "serial acquire+release cycles/s, 5 masters, sequential",
        figure: Figure::Rate("acquire_release/sequential/5"),
        target: None,
    },
    Row {
        label: "concurrent / sequential time, 1 master",
        figure: Figure::TimeRatio(
            "acquire_release/concurrent/1",
            "acquire_release/sequential/1",
        ),
        target: None,
    },
    Row {
        label: "concurrent / sequential time, 3 masters",
        figure: Figure::TimeRatio(
            "acquire_release/concurrent/3",
            "acquire_release/sequential/3",
        ),
        target: None,
    },
    Row {
        label: "concurrent / sequential time, 5 masters",
        figure: Figure::TimeRatio(
            "acquire_release/concurrent/5",
            "acquire_release/sequential/5",
        ),
        target: None,
    },
    Row {
        label: "concurrent / sequential time, 7 masters",
        figure: Figure::TimeRatio(
            "acquire_release/concurrent/7",
            "acquire_release/sequential/7",
        ),
        target: None,
    },
    Row {
        label: "sequential / concurrent time, 5 masters (speed-up)",
        figure: Figure::TimeRatio(
            "acquire_release/sequential/5",
            "acquire_release/concurrent/5",
        ),
        target: None,
    },
    Row {
        label: "try_acquire: concurrent / sequential time, 5 masters",
        figure: Figure::TimeRatio(
            "attempt/concurrent/5/try_acquire",
            "attempt/sequential/5/try_acquire",
        ),
        target: None,
    },
    Row {
        label: "acquire+release (5, concurrent) / SET+DEL pair on one master",
        figure: Figure::TimeRatio("acquire_release/concurrent/5", "baseline/set_roundtrip"),
        target: None,
    },
    Row {
        label: "acquire+release (5, sequential) / SET+DEL pair on one master",
        figure: Figure::TimeRatio("acquire_release/sequential/5", "baseline/set_roundtrip"),
        target: None,
    },
    Row {
        label: "try_acquire (5, concurrent) / one SET round trip",
        figure: Figure::TimeRatio("attempt/concurrent/5/try_acquire", "baseline/set_only"),
        target: None,
    },
    Row {
        label: "16 tasks, one client, 5 masters, concurrent: cycles/s",
        figure: Figure::Rate("parallel/concurrent/16"),
        target: None,
    },
    Row {
        label: "64 tasks, one client, 5 masters, concurrent: cycles/s",
        figure: Figure::Rate("parallel/concurrent/64"),
        target: None,
    },
    Row {
        label: "16 tasks, one client, 5 masters, sequential: cycles/s",
        figure: Figure::Rate("parallel/sequential/16"),
        target: None,
    },
    Row {
        label: "parallel scaling, concurrent: cycles/s with 16 tasks / with 1 task",
        figure: Figure::RateRatio("parallel/concurrent/16", "parallel/concurrent/1"),
        target: None,
    },
    Row {
        label: "C ABI / Rust blocking API time, acquire+release",
        figure: Figure::TimeRatio(
            "ffi/acquire_release/c_abi",
            "ffi/acquire_release/rust_blocking",
        ),
        target: None,
    },
    Row {
        label: "C ABI overhead per call (µs)",
        figure: Figure::PerCallOverheadUs(
            "ffi/acquire_release/c_abi",
            "ffi/acquire_release/rust_blocking",
        ),
        target: Some(Target::AtMost(2.0)),
    },
    Row {
        label: "one master +2 ms: sequential acquire+release / same with no delay",
        figure: Figure::TimeRatio(
            "slow_master/sequential/5/acquire_release",
            "slow_master/sequential/5/acquire_release_all_fast",
        ),
        target: None,
    },
    Row {
        label: "one master +2 ms: concurrent acquire+release / same with no delay",
        figure: Figure::TimeRatio(
            "slow_master/concurrent/5/acquire_release",
            "slow_master/concurrent/5/acquire_release_all_fast",
        ),
        target: None,
    },
    Row {
        label: "one master +2 ms: concurrent / sequential time, acquire+release",
        figure: Figure::TimeRatio(
            "slow_master/concurrent/5/acquire_release",
            "slow_master/sequential/5/acquire_release",
        ),
        target: None,
    },
    Row {
        label: "one master +2 ms: concurrent / sequential time, try_acquire",
        figure: Figure::TimeRatio(
            "slow_master/concurrent/5/try_acquire",
            "slow_master/sequential/5/try_acquire",
        ),
        target: None,
    },
];

/// Median of `values` (NaN-free); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn range(values: &[f64]) -> (f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max)
}

/// A time in the unit that suits it.
pub fn duration(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

fn number(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders the results table and the ratios table for `runs` (Markdown).
pub fn render(runs: &[Run]) -> String {
    let mut out = String::new();
    let many = runs.len() > 1;
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    let _ = writeln!(out, "Runs: {}.\n", names.join(", "));

    let mut ids: Vec<&String> = runs.iter().flat_map(|r| r.results.keys()).collect();
    ids.sort();
    ids.dedup();
    let _ = writeln!(
        out,
        "| benchmark | median | spread (MAD) | 95% CI of median | cycles/s |{}",
        if many {
            " run medians (min–max) |"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|{}",
        if many { "---:|" } else { "" }
    );
    for id in ids {
        let all: Vec<&Measurement> = runs.iter().filter_map(|r| r.results.get(id)).collect();
        let medians: Vec<f64> = all.iter().map(|m| m.median_ns).collect();
        let mid = median(&medians).expect("at least one run has it");
        // The run whose median is closest to the median of runs supplies the spread.
        let typical = all
            .iter()
            .min_by(|a, b| {
                (a.median_ns - mid)
                    .abs()
                    .total_cmp(&(b.median_ns - mid).abs())
            })
            .expect("non-empty");
        let rate = typical.elements.unwrap_or(1) as f64 * 1e9 / mid;
        let _ = write!(
            out,
            "| `{id}` | {} | ± {} | {} – {} | {} |",
            duration(mid),
            duration(typical.mad_ns),
            duration(typical.median_ci_ns.0),
            duration(typical.median_ci_ns.1),
            number(rate),
        );
        if many {
            let (lo, hi) = range(&medians);
            let _ = write!(
                out,
                " {} – {} ({} runs) |",
                duration(lo),
                duration(hi),
                medians.len()
            );
        }
        out.push('\n');
    }

    let _ = writeln!(
        out,
        "\n| figure | value | {}target | verdict |",
        if many { "runs (min–max) | " } else { "" }
    );
    let _ = writeln!(out, "|---|---:|{}---|---|", if many { "---:|" } else { "" });
    for row in ROWS {
        let values: Vec<f64> = runs.iter().filter_map(|r| row.figure.eval(r)).collect();
        let target = row
            .target
            .map(Target::describe)
            .unwrap_or_else(|| "—".into());
        match median(&values) {
            None => {
                let _ = writeln!(
                    out,
                    "| {} | missing: not measured in {} | {}{target} | — |",
                    row.label,
                    if many { "these runs" } else { "this run" },
                    if many { "— | " } else { "" },
                );
            }
            Some(value) => {
                let verdict = row.target.map(|t| t.verdict(value)).unwrap_or("—");
                let spread = if many {
                    let (lo, hi) = range(&values);
                    format!("{} – {} | ", number(lo), number(hi))
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {spread}{target} | {verdict} |",
                    row.label,
                    number(value)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, entries: &[(&str, f64, Option<u64>)]) -> Run {
        Run {
            name: name.into(),
            results: entries
                .iter()
                .map(|&(id, median_ns, elements)| {
                    let m = Measurement {
                        median_ns,
                        mad_ns: 1.0,
                        median_ci_ns: (median_ns, median_ns),
                        elements,
                    };
                    (id.to_string(), m)
                })
                .collect(),
        }
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn figures_come_from_one_run() {
        let r = run(
            "a",
            &[
                ("x", 200_000.0, Some(1)),
                ("y", 100_000.0, Some(16)),
                ("z", 196_000.0, None),
            ],
        );
        assert_eq!(Figure::TimeRatio("x", "y").eval(&r), Some(2.0));
        assert_eq!(Figure::Rate("y").eval(&r), Some(160_000.0));
        assert_eq!(Figure::Rate("x").eval(&r), Some(5_000.0));
        assert_eq!(Figure::RateRatio("y", "x").eval(&r), Some(32.0));
        assert_eq!(Figure::PerCallOverheadUs("x", "z").eval(&r), Some(2.0));
        assert_eq!(Figure::TimeRatio("x", "missing").eval(&r), None);
    }

    #[test]
    fn render_takes_median_across_runs_and_marks_missing_figures() {
        let runs = [
            run(
                "run1",
                &[
                    ("acquire_release/concurrent/5", 100_000.0, Some(1)),
                    ("baseline/set_roundtrip", 100_000.0, Some(1)),
                ],
            ),
            run(
                "run2",
                &[
                    ("acquire_release/concurrent/5", 300_000.0, Some(1)),
                    ("baseline/set_roundtrip", 100_000.0, Some(1)),
                ],
            ),
            run(
                "run3",
                &[
                    ("acquire_release/concurrent/5", 120_000.0, Some(1)),
                    ("baseline/set_roundtrip", 100_000.0, Some(1)),
                ],
            ),
        ];
        let text = render(&runs);
        assert!(
            text.contains("| `acquire_release/concurrent/5` | 120.0 µs |"),
            "{text}"
        );
        assert!(text.contains("100.0 µs – 300.0 µs (3 runs)"), "{text}");
        // Context, not a target: the serial targets are judged against the peers' floor.
        assert!(
            text.contains("SET+DEL pair on one master | 1.20 | 1.00 – 3.00 | — | — |"),
            "{text}"
        );
        assert!(
            text.contains("C ABI overhead per call (µs) | missing"),
            "{text}"
        );
    }

    #[test]
    fn the_c_abi_is_the_one_criterion_target_and_is_judged_under_2_us() {
        let judged: Vec<&str> = ROWS
            .iter()
            .filter(|r| r.target.is_some())
            .map(|r| r.label)
            .collect();
        assert_eq!(judged, ["C ABI overhead per call (µs)"]);
        let abi = |c_abi_ns: f64| {
            let runs = [run(
                "run1",
                &[
                    ("ffi/acquire_release/c_abi", c_abi_ns, Some(1)),
                    ("ffi/acquire_release/rust_blocking", 100_000.0, Some(1)),
                ],
            )];
            let text = render(&runs);
            let row = text
                .lines()
                .find(|l| l.starts_with("| C ABI overhead per call (µs) |"))
                .map(str::to_string);
            row.unwrap_or_else(|| panic!("{text}"))
        };
        // Two calls per cycle: 3 µs more per cycle is 1.5 µs per call, 5 µs is 2.5.
        assert_eq!(
            abi(103_000.0),
            "| C ABI overhead per call (µs) | 1.50 | ≤ 2.00 | met |"
        );
        assert_eq!(
            abi(105_000.0),
            "| C ABI overhead per call (µs) | 2.50 | ≤ 2.00 | **not met** |"
        );
    }
}
