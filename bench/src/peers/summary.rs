//! Medians over runs, ranges, and ratios to the best peer (each ratio taken inside one run,
//! where both sides ran on the same masters under the same load), as Markdown tables.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{Driver, Kind, Outcome, Plan, Sample, WORKLOADS};

/// Every outcome: `results[run][workload][driver name]`.
pub type Results = Vec<BTreeMap<&'static str, BTreeMap<&'static str, Outcome>>>;

fn measured<'a>(
    results: &'a Results,
    workload: &str,
    driver: &str,
) -> impl Iterator<Item = (usize, &'a Sample)> + 'a {
    let (workload, driver) = (workload.to_string(), driver.to_string());
    results.iter().enumerate().filter_map(move |(run, r)| {
        match r.get(workload.as_str())?.get(driver.as_str())? {
            Outcome::Measured(s) => Some((run, s)),
            _ => None,
        }
    })
}

/// Median, min and max of `values` (NaN-free), or None when empty.
pub fn spread(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let mid = v.len() / 2;
    let median = if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    };
    Some((median, v[0], v[v.len() - 1]))
}

/// A number with thousands separators above 1,000, else 3 significant digits.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    if v.abs() >= 1000.0 {
        let digits = format!("{:.0}", v.abs());
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if v < 0.0 {
            out.insert(0, '-');
        }
        out
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// "median (min–max)", or the median alone for one run.
fn cell(values: &[f64], format: fn(f64) -> String) -> String {
    match spread(values) {
        None => "—".to_string(),
        Some((m, _, _)) if values.len() == 1 => format(m),
        Some((m, lo, hi)) => format!("{} ({}–{})", format(m), format(lo), format(hi)),
    }
}

fn ratio(v: f64) -> String {
    if v.is_finite() && v < 0.1 {
        format!("{v:.3}")
    } else if v.is_finite() {
        format!("{v:.2}")
    } else {
        "—".to_string()
    }
}

/// The best peer of one run and workload: the highest rate, and the lowest CPU per cycle.
fn best_peers(
    drivers: &[Driver],
    run: &BTreeMap<&'static str, Outcome>,
) -> (Option<(&'static str, f64)>, Option<f64>) {
    let peers = drivers.iter().filter(|d| d.kind == Kind::Peer);
    let samples: Vec<(&'static str, &Sample)> = peers
        .filter_map(|d| match run.get(d.name)? {
            Outcome::Measured(s) if s.ok > 0 => Some((d.name, s)),
            _ => None,
        })
        .collect();
    let rate = samples
        .iter()
        .map(|(n, s)| (*n, s.rate()))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let cpu = samples
        .iter()
        .map(|(_, s)| s.cpu_per_cycle_us())
        .min_by(|a, b| a.total_cmp(b));
    (rate, cpu)
}

/// The Markdown tables of every workload, then what was skipped or failed.
pub fn render(plan: &Plan, drivers: &[Driver], results: &Results) -> String {
    let mut out = String::new();
    for workload in WORKLOADS {
        let _ = writeln!(out, "\n#### {}\n", plan.describe(workload));
        let _ = writeln!(
            out,
            "| driver | surface | {} | ÷ best peer | acquire p50 / p99 (µs) | release p50 / p99 (µs) | client CPU / cycle (µs) | ÷ best peer's CPU | masters' CPU / cycle (µs) | failed acquires | keys left |",
            if workload == "w3" { "acquisitions/s" } else { "cycles/s" }
        );
        let _ = writeln!(
            out,
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        let mut best_names = Vec::new();
        for (run, r) in results.iter().enumerate() {
            if let Some(run_results) = r.get(workload) {
                if let (Some((name, _)), _) = best_peers(drivers, run_results) {
                    best_names.push(format!("run {}: {name}", run + 1));
                }
            }
        }
        for driver in drivers {
            let samples: Vec<(usize, &Sample)> = measured(results, workload, driver.name).collect();
            if samples.is_empty() {
                continue;
            }
            let pick =
                |f: fn(&Sample) -> f64| samples.iter().map(|(_, s)| f(s)).collect::<Vec<_>>();
            let (mut rate_ratios, mut cpu_ratios) = (Vec::new(), Vec::new());
            for (run, s) in &samples {
                let Some(run_results) = results[*run].get(workload) else {
                    continue;
                };
                let (best_rate, best_cpu) = best_peers(drivers, run_results);
                if let Some((_, best)) = best_rate {
                    rate_ratios.push(s.rate() / best);
                }
                if let Some(best) = best_cpu {
                    cpu_ratios.push(s.cpu_per_cycle_us() / best);
                }
            }
            let name = match driver.kind {
                Kind::Project => format!("**{}**", driver.name),
                Kind::Peer => driver.name.to_string(),
                Kind::Reference => format!("_{}_", driver.name),
            };
            let failed: u64 = samples.iter().map(|(_, s)| s.acquire_failed).sum();
            let keys: u64 = samples.iter().map(|(_, s)| s.keys_left).sum();
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {} / {} | {} / {} | {} | {} | {} | {failed} | {keys} |",
                driver.surface,
                cell(&pick(Sample::rate), number),
                cell(&rate_ratios, ratio),
                cell(&pick(|s| s.acquire_p50_us), number),
                cell(&pick(|s| s.acquire_p99_us), number),
                cell(&pick(|s| s.release_p50_us), number),
                cell(&pick(|s| s.release_p99_us), number),
                cell(&pick(Sample::cpu_per_cycle_us), number),
                cell(&cpu_ratios, ratio),
                cell(&pick(Sample::masters_cpu_per_cycle_us), number),
            );
        }
        if !best_names.is_empty() {
            let _ = writeln!(out, "\nBest peer by rate: {}.", best_names.join(", "));
        }
    }
    let notes = problems(drivers, results);
    if !notes.is_empty() {
        let _ = writeln!(out, "\nNot measured:\n");
        for note in notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    let errors = error_notes(drivers, results);
    if !errors.is_empty() {
        let _ = writeln!(out, "\nErrors the drivers reported (first few):\n");
        for note in errors {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

/// One line per skipped or failed (driver, workload), runs merged when the reason repeats.
fn problems(drivers: &[Driver], results: &Results) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for driver in drivers {
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (run, r) in results.iter().enumerate() {
            for workload in WORKLOADS {
                let what = match r.get(workload).and_then(|w| w.get(driver.name)) {
                    Some(Outcome::Skipped(reason)) => format!("skipped: {reason}"),
                    Some(Outcome::Failed(reason)) => format!("failed: {reason}"),
                    _ => continue,
                };
                seen.entry(what)
                    .or_default()
                    .push(format!("{workload} run {}", run + 1));
            }
        }
        for (what, wheres) in seen {
            notes.push(format!("`{}` ({}) {what}", driver.name, wheres.join(", ")));
        }
    }
    notes
}

fn error_notes(drivers: &[Driver], results: &Results) -> Vec<String> {
    let mut notes = Vec::new();
    for driver in drivers {
        for workload in WORKLOADS {
            let mut errors: Vec<&str> = measured(results, workload, driver.name)
                .flat_map(|(_, s)| s.errors.iter().map(String::as_str))
                .collect();
            errors.sort_unstable();
            errors.dedup();
            errors.truncate(3);
            if !errors.is_empty() {
                notes.push(format!(
                    "`{}` {workload}: {}",
                    driver.name,
                    errors.join("; ")
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::peers::driver::percentile_us;

    #[test]
    fn nearest_rank_percentiles() {
        let ns: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentile_us(&ns, 0.50), 50.0);
        assert_eq!(percentile_us(&ns, 0.99), 99.0);
        assert_eq!(percentile_us(&[7000], 0.99), 7.0);
        assert!(percentile_us(&[], 0.5).is_nan());
    }

    #[test]
    fn spread_is_median_min_max() {
        assert_eq!(spread(&[3.0, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(spread(&[4.0, 1.0]), Some((2.5, 1.0, 4.0)));
        assert_eq!(spread(&[f64::NAN]), None);
    }

    #[test]
    fn numbers_read_like_the_tables() {
        assert_eq!(number(12807.4), "12,807");
        assert_eq!(number(1_320_377.0), "1,320,377");
        assert_eq!(number(45.23), "45.2");
        assert_eq!(number(8.123), "8.12");
        assert_eq!(ratio(0.0042), "0.004");
        assert_eq!(ratio(1.472), "1.47");
    }
}
