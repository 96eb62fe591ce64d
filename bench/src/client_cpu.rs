//! Client CPU per lock cycle in the criterion benchmarks (`parallel/*`).
//!
//! Criterion measures wall time only. The masters run in their own processes, so this
//! process's user + sys time ([`redlock_process_cpu`], every thread) over the timed part of
//! an iteration is the client's CPU. A benchmark adds it up per id with [`Tally`]; at the end
//! of its group the tally is printed and saved next to criterion's results
//! (`<criterion dir>/client-cpu/<baseline>.json`), where `bench-report` reads it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// User + sys CPU time of this process so far.
pub fn process_cpu() -> Duration {
    redlock_process_cpu::process_cpu().total()
}

/// CPU seconds and lock cycles per benchmark id.
type Totals = BTreeMap<String, (f64, u64)>;

/// CPU and cycles added up per benchmark id over a group (warm-up included: those are cycles
/// like the others).
#[derive(Debug, Default)]
pub struct Tally {
    totals: Mutex<Totals>,
}

impl Tally {
    /// Records `cycles` lock cycles that cost `cpu` of this process.
    pub fn add(&self, id: &str, cpu: Duration, cycles: u64) {
        let mut totals = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        let entry = totals.entry(id.to_string()).or_default();
        entry.0 += cpu.as_secs_f64();
        entry.1 += cycles;
    }

    /// Prints each id's CPU per cycle and merges the tally into this run's saved file (other
    /// ids, from benchmarks filtered out of this run, are kept).
    pub fn finish(&self) {
        let totals = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        for (id, (cpu, cycles)) in totals.iter() {
            if *cycles > 0 {
                println!(
                    "{id}: {:.1} µs of CPU per cycle (over {cycles} cycles)",
                    cpu * 1e6 / *cycles as f64
                );
            }
        }
        if crate::fixture::is_test_mode() {
            return;
        }
        let path = saved_path(&criterion_dir(), &baseline());
        let mut saved: Totals = read(&path).unwrap_or_default();
        saved.extend(totals.iter().map(|(k, v)| (k.clone(), *v)));
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                let text = serde_json::to_string_pretty(&saved).map_err(std::io::Error::other)?;
                std::fs::write(&path, text)
            });
        if let Err(e) = written {
            eprintln!("client CPU: cannot write {}: {e}", path.display());
        }
    }
}

/// Criterion's output directory as criterion picks it: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else `criterion` in the target directory this benchmark
/// binary was built in (`<target>/release/deps/<bench>`).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("criterion")
}

/// The baseline this run saves (`--save-baseline NAME`), else criterion's "new".
fn baseline() -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--save-baseline")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| "new".to_string())
}

fn saved_path(criterion_dir: &Path, baseline: &str) -> PathBuf {
    criterion_dir
        .join("client-cpu")
        .join(format!("{baseline}.json"))
}

fn read(path: &Path) -> Option<Totals> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The "client CPU per cycle" table of the given runs, or nothing when no run saved one.
pub fn render(criterion_dir: &Path, baselines: &[String]) -> String {
    let runs: Vec<Totals> = baselines
        .iter()
        .filter_map(|b| read(&saved_path(criterion_dir, b)))
        .collect();
    let mut ids: Vec<&String> = runs.iter().flat_map(|r| r.keys()).collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n| benchmark | client CPU per cycle (user + sys) | runs (min–max) |\n|---|---:|---:|\n",
    );
    for id in ids {
        let per_cycle: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.get(id))
            .filter(|(_, cycles)| *cycles > 0)
            .map(|(cpu, cycles)| cpu * 1e6 / *cycles as f64)
            .collect();
        let Some(mid) = crate::report::median(&per_cycle) else {
            continue;
        };
        let lo = per_cycle.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = per_cycle.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let _ = writeln!(
            out,
            "| `{id}` | {mid:.1} µs | {lo:.1} – {hi:.1} µs ({} runs) |",
            per_cycle.len()
        );
    }
    out
}
