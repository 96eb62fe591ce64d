//! `bench-report`: prints the Markdown tables of the benchmarks page from criterion's saved runs.
//!
//! `cargo run -p redlock-bench --bin bench-report -- --baseline run1 --baseline run2`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Turn criterion's saved results into the results and ratios tables of docs/src/benchmarks.md.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Criterion's output directory [default: $CRITERION_HOME, else $CARGO_TARGET_DIR/criterion,
    /// else target/criterion].
    #[arg(long)]
    criterion_dir: Option<PathBuf>,
    /// A saved criterion baseline (one per run, `--save-baseline NAME`); repeat for several
    /// runs. Without it, the latest results ("new") are used.
    #[arg(long = "baseline")]
    baselines: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let baselines = if args.baselines.is_empty() {
        vec!["new".to_string()]
    } else {
        args.baselines
    };
    // Where criterion itself writes, in the same order of preference.
    let dir = args.criterion_dir.unwrap_or_else(|| {
        std::env::var_os("CRITERION_HOME")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("CARGO_TARGET_DIR").map(|t| PathBuf::from(t).join("criterion"))
            })
            .unwrap_or_else(|| PathBuf::from("target/criterion"))
    });
    let runs: Result<Vec<_>, _> = baselines
        .iter()
        .map(|b| redlock_bench::report::load(&dir, b))
        .collect();
    match runs {
        Ok(runs) => {
            print!("{}", redlock_bench::report::render(&runs));
            print!("{}", redlock_bench::client_cpu::render(&dir, &baselines));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-report: {e}");
            ExitCode::FAILURE
        }
    }
}
