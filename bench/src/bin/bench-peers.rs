//! `bench-peers`: runs W1/W2/W3 through this project's surfaces and the peers, interleaved on
//! the same masters, and prints the side-by-side tables of the benchmarks page (docs/src/benchmarks.md). Use `make
//! bench-peers` (which builds every driver first); see `redlock_bench::peers`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use redlock_bench::peers::driver::{self, Paths};
use redlock_bench::peers::masters::{GivenMasters, Masters};
use redlock_bench::peers::summary::{self, Results};
use redlock_bench::peers::targets;
use redlock_bench::peers::{Kind, Outcome, Plan, WORKLOADS};
use redlock_local::LocalMasters;

/// This project's Rust, C and Python surfaces and other Redlock libraries, side by side.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Full runs (fresh masters each); the tables show medians and ranges over runs.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Masters per run, started on this machine for each run.
    #[arg(long, default_value_t = 5)]
    masters: usize,
    /// Measure against these masters instead of starting them: comma-separated redis:// URLs,
    /// e.g. of masters on other hosts. They must hold no key; every key on them is deleted
    /// between drivers.
    #[arg(long, value_delimiter = ',', conflicts_with = "masters")]
    master_urls: Vec<String>,
    /// W1: serial cycles.
    #[arg(long, default_value_t = 2000)]
    w1_cycles: usize,
    /// W2: cycles per task.
    #[arg(long, default_value_t = 500)]
    w2_cycles: usize,
    /// W2 and W3: tasks sharing one client.
    #[arg(long, default_value_t = 16)]
    tasks: usize,
    /// W3: seconds.
    #[arg(long, default_value_t = 10.0)]
    w3_seconds: f64,
    /// Lock TTL in seconds.
    #[arg(long, default_value_t = 10.0)]
    ttl: f64,
    /// Only these drivers (comma-separated names; default: all).
    #[arg(long, value_delimiter = ',')]
    drivers: Vec<String>,
    /// Repository root (where bench/peers/driver.py is).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Cargo's target directory (release drivers, the C driver, skip notes).
    #[arg(long, default_value = "target")]
    target_dir: PathBuf,
    /// The benchmark virtualenv's Python [default: ROOT/bench/peers/.venv/bin/python].
    #[arg(long)]
    python: Option<PathBuf>,
    /// Where to write every run's figures as JSON.
    #[arg(long, default_value = "target/bench-peers/results.json")]
    json_out: PathBuf,
    /// Exit non-zero when one of this project's drivers was skipped or failed (smoke test).
    #[arg(long)]
    strict: bool,
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_string())
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_else(|| "?".to_string());
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let redis = std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!("{cpus} CPUs ({model}); {redis}")
}

fn main() -> ExitCode {
    let args = Args::parse();
    let given = if args.master_urls.is_empty() {
        None
    } else {
        match GivenMasters::connect(&args.master_urls) {
            Ok(given) => Some(given),
            Err(e) => {
                eprintln!("bench-peers: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    let plan = Plan {
        runs: args.runs.max(1),
        masters: given
            .as_ref()
            .map_or(args.masters.max(1), |g| g.addresses().len()),
        w1_cycles: args.w1_cycles.max(1),
        w2_cycles: args.w2_cycles.max(1),
        tasks: args.tasks.max(1),
        w3_seconds: args.w3_seconds,
        ttl_seconds: args.ttl,
    };
    let paths = Paths {
        python: args
            .python
            .clone()
            .unwrap_or_else(|| driver::default_python(&args.root)),
        root: args.root.clone(),
        target: args.target_dir.clone(),
    };
    let mut drivers = driver::all(&paths);
    if !args.drivers.is_empty() {
        let unknown: Vec<&String> = args
            .drivers
            .iter()
            .filter(|n| !drivers.iter().any(|d| d.name == n.as_str()))
            .collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = drivers.iter().map(|d| d.name).collect();
            eprintln!(
                "bench-peers: unknown driver(s) {unknown:?}; known: {}",
                known.join(", ")
            );
            return ExitCode::FAILURE;
        }
        drivers.retain(|d| args.drivers.iter().any(|n| n == d.name));
    }
    println!(
        "bench-peers: {} run(s), {} masters, W1 {} cycles, W2 {} tasks x {} cycles, W3 {} tasks x {} s, TTL {} s",
        plan.runs, plan.masters, plan.w1_cycles, plan.tasks, plan.w2_cycles, plan.tasks,
        plan.w3_seconds, plan.ttl_seconds
    );
    println!("machine: {}", machine());
    match &given {
        Some(given) => println!(
            "masters: given ({}), flushed between drivers; their CPU from INFO cpu",
            given.addresses().join(", ")
        ),
        None => println!("masters: started on this machine for each run"),
    }
    let mut results: Results = Vec::new();
    for run in 0..plan.runs {
        println!(
            "== run {} of {}: {}, load {}",
            run + 1,
            plan.runs,
            timestamp(),
            load()
        );
        let masters = match &given {
            Some(given) => Masters::Given(given),
            None => match LocalMasters::start(plan.masters) {
                Ok(m) => Masters::Local(Box::new(m)),
                Err(e) => {
                    eprintln!("bench-peers: cannot start {} masters: {e}", plan.masters);
                    return ExitCode::FAILURE;
                }
            },
        };
        let urls = masters.urls().join(",");
        // A different driver goes first in each run, so no driver always runs on fresh masters.
        let mut order = drivers.clone();
        let shift = run % order.len().max(1);
        order.rotate_left(shift);
        let mut by_workload = BTreeMap::new();
        for workload in WORKLOADS {
            let mut flags = plan.flags(workload);
            flags.extend(["--masters".to_string(), urls.clone()]);
            let limit = Duration::from_secs_f64(plan.w3_seconds + 300.0);
            let mut by_driver = BTreeMap::new();
            for d in &order {
                let masters_before = masters.cpu_used();
                let mut outcome = driver::run(d, &flags, limit);
                let masters_used = masters
                    .cpu_used()
                    .zip(masters_before)
                    .map(|(after, before)| after.saturating_sub(before));
                let keys = masters.key_count().unwrap_or_else(|e| {
                    eprintln!("bench-peers: cannot count the keys left: {e}");
                    0
                });
                if let Err(e) = masters.flush_all() {
                    eprintln!("bench-peers: FLUSHALL failed: {e}");
                }
                if let Outcome::Measured(s) = &mut outcome {
                    s.keys_left = keys;
                    s.masters_cpu_s = masters_used.map_or(f64::NAN, |used| used.as_secs_f64());
                }
                println!("  {workload} {:<21} {}", d.name, one_line(&outcome));
                by_driver.insert(d.name, outcome);
            }
            by_workload.insert(workload, by_driver);
        }
        results.push(by_workload);
    }
    println!("load at the end: {}", load());
    print!("{}", summary::render(&plan, &drivers, &results));
    print!("{}", targets::render(&plan, &drivers, &results));
    if let Err(e) = write_json(&args.json_out, &results) {
        eprintln!("bench-peers: cannot write {}: {e}", args.json_out.display());
    }
    let project_missing = results.iter().any(|r| {
        r.values().any(|w| {
            w.iter().any(|(name, o)| {
                let project = drivers
                    .iter()
                    .any(|d| d.name == *name && d.kind == Kind::Project);
                project && !matches!(o, Outcome::Measured(s) if s.ok > 0)
            })
        })
    });
    if args.strict && project_missing {
        eprintln!("bench-peers: one of this project's drivers was skipped, failed or completed no cycle (--strict)");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn one_line(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Measured(s) => format!(
            "{:>9.0}/s  acquire p50 {:>7.0} µs p99 {:>8.0} µs  CPU {:>6.1} µs/cycle (masters {:>6.1})  failed {}  keys left {}",
            s.rate(),
            s.acquire_p50_us,
            s.acquire_p99_us,
            s.cpu_per_cycle_us(),
            s.masters_cpu_per_cycle_us(),
            s.acquire_failed,
            s.keys_left
        ),
        Outcome::Skipped(reason) => format!("skipped: {reason}"),
        Outcome::Failed(reason) => format!("FAILED: {reason}"),
    }
}

fn timestamp() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%FT%TZ"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn write_json(path: &PathBuf, results: &Results) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(results).map_err(std::io::Error::other)?;
    std::fs::write(path, text)
}
