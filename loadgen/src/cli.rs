//! Command-line interface (clap derive). Parsing only: values are checked here and turned into
//! a [`crate::config::RunConfig`] by [`crate::config`].

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{HoldSpec, KeyDist};

/// Contended Redlock load across N masters: latency histograms, quorum success, split votes,
/// sequential vs concurrent fan-out side by side, and a mutual-exclusion check.
///
/// With no arguments: starts 5 local redis-server masters, runs a short contended workload in
/// both fan-out modes and prints the side-by-side report. The `run` flags may also be given
/// without the word `run`.
#[derive(Debug, Parser)]
#[command(
    name = "redlock-loadgen",
    version,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one workload (in each selected fan-out mode) and report it.
    Run(RunArgs),
    /// One run per load level: the throughput-vs-latency table for capacity planning.
    Sweep(SweepArgs),
    /// Combine result files (from several machines) into one report by adding histograms.
    Merge(MergeArgs),
    /// Run the fixed fault matrix (negative controls included) and print one verdict table.
    Scenarios(crate::faults::scenarios::ScenariosArgs),
}

/// Where the masters are.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Existing masters to load, comma-separated (redis://[user:password@]host:port[/db]).
    #[arg(long, value_name = "URL,...", value_delimiter = ',', num_args = 1.., value_parser = parse_url)]
    pub masters: Vec<String>,
    /// Start N local redis-server masters on free loopback ports (default 5).
    #[arg(long, value_name = "N", conflicts_with = "masters", value_parser = clap::value_parser!(u32).range(1..=99))]
    pub spawn: Option<u32>,
}

/// Which fan-out modes to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FanoutChoice {
    Sequential,
    Concurrent,
    /// Both, one after the other, compared side by side.
    Both,
}

/// The workload and client settings shared by `run` and `sweep`.
#[derive(Debug, Clone, Args)]
pub struct WorkloadArgs {
    /// Fan-out mode(s) to measure.
    #[arg(long, value_enum, default_value = "both")]
    pub fanout: FanoutChoice,
    /// Resources (lock keys) the clients compete for; 1 = maximum contention.
    #[arg(long, value_name = "K", default_value = "1", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub resources: u32,
    /// How clients pick a resource: uniform, or zipf[:EXPONENT] (default exponent 1.0).
    #[arg(long, value_name = "DIST", default_value = "uniform", value_parser = KeyDist::parse)]
    pub key_dist: KeyDist,
    /// Time inside the lock: a duration (5ms) or a uniform range (1ms..5ms).
    #[arg(long, value_name = "D|MIN..MAX", default_value = "0s", value_parser = HoldSpec::parse)]
    pub hold: HoldSpec,
    /// Extend each held lock this many times during its hold (measures extend latency).
    #[arg(long, value_name = "N", default_value = "0", value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub extend: u32,
    /// Lock TTL.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub ttl: Duration,
    /// Retries after a lost attempt.
    #[arg(long, value_name = "N", default_value = "3")]
    pub retry_count: u32,
    /// Upper bound of the jittered delay between attempts (each delay is drawn from [D/2, D]).
    #[arg(long, value_name = "DURATION", default_value = "200ms", value_parser = parse_duration)]
    pub retry_delay: Duration,
    /// Per-master request timeout.
    #[arg(long, value_name = "DURATION", default_value = "50ms", value_parser = parse_duration)]
    pub instance_timeout: Duration,
    /// Votes needed to win (default: majority of the masters).
    #[arg(long, value_name = "Q", value_parser = clap::value_parser!(u32).range(1..))]
    pub quorum: Option<u32>,
    /// Measured time per fan-out mode (run: 10s; sweep: 5s per level).
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub duration: Option<Duration>,
    /// Warm-up before each measurement, not counted (run: 2s; sweep: 1s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub warmup: Option<Duration>,
    /// Seed of the workload's random choices (resources, hold times); printed in the report.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Files to write besides the text report.
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Write the full result (config, counts, per-second series, base64 HdrHistograms) as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one .hgrm percentile-distribution file per histogram into this directory.
    #[arg(long, value_name = "DIR")]
    pub hgrm: Option<PathBuf>,
    /// Draw latency-by-percentile curves of the modes as an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Closed loop: C workers, each acquire → hold → release → repeat. With --rate: the number
    /// of workers the open-loop schedule is spread over.
    #[arg(long, value_name = "C", default_value = "16", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub clients: u32,
    /// Open loop at R acquires/s (latency from each operation's intended start).
    #[arg(long, value_name = "R", value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Inject a fault into the local masters (repeatable), times from each mode's start:
    /// kill:N@T[-T2], pause:N@T1-T2, restart:N@T, restart-delayed:N@T, latency:N:D@T1-T2,
    /// blackhole:N@T[-T2], expire:N@T. N = the first N masters, or mI,mJ for chosen ones.
    #[arg(long = "fault", value_name = "SPEC", value_parser = crate::faults::FaultSpec::parse)]
    pub faults: Vec<crate::faults::FaultSpec>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Closed-loop levels: client counts, comma-separated.
    #[arg(long, value_name = "C,...", value_delimiter = ',', required_unless_present = "rate", conflicts_with = "rate", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub clients: Vec<u32>,
    /// Open-loop levels: acquires/s, comma-separated.
    #[arg(long, value_name = "R,...", value_delimiter = ',', value_parser = parse_rate)]
    pub rate: Vec<f64>,
    /// Workers the open-loop levels are spread over.
    #[arg(long, value_name = "N", default_value = "64", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub workers: u32,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Write every level's full result as one JSON file (an array of run results).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Result files written by `run --json`.
    #[arg(value_name = "FILE", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// The longest duration any flag accepts (keeps every deadline computation far from overflow).
const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// Durations like `10s`, `500ms`, `1m30s`, `250us` (a bare `0` is zero), at most 30 days.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{text:?} is not a duration ({e}); write e.g. 10s, 500ms, 1m"))?;
    if d > MAX_DURATION {
        return Err(format!(
            "{text:?}: longer than the 30 days any flag accepts"
        ));
    }
    Ok(d)
}

fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("{text:?}: must be longer than zero"));
    }
    Ok(d)
}

fn parse_rate(text: &str) -> Result<f64, String> {
    let rate: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of acquires per second"))?;
    if !rate.is_finite() || !(0.001..=10_000_000.0).contains(&rate) {
        return Err(format!(
            "{text:?}: must be a rate between 0.001 and 10000000 per second"
        ));
    }
    Ok(rate)
}

fn parse_url(text: &str) -> Result<String, String> {
    let url = text.trim();
    if url.is_empty() {
        return Err("empty master URL".into());
    }
    if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
        return Err(format!(
            "{:?}: a master URL starts with redis:// or rediss://",
            redlock_core::redact_url(url)
        ));
    }
    Ok(url.to_string())
}
