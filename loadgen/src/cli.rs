//! Command-line interface (clap derive). Parsing only: values are checked here and turned into
//! a [`crate::engine::config::RunConfig`] by [`crate::engine::config`].

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::LazyLock;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::engine::faults::client::WorkerFault;
use crate::error::EXIT_CODES_HELP;
use crate::model::capacity::slo::{parse_share, Slo};
use crate::model::lock::LockList;
use crate::model::percentiles::Percentiles;
use crate::model::values::{parse_duration, HoldSpec, KeyDist};
pub use compare::CompareArgs;
pub use values::{parse_clients, parse_rate, parse_repeat, MAX_CLIENTS, MAX_MEASURED, MAX_REPEATS};
use values::{
    parse_coordinator_url, parse_interval, parse_measured_duration, parse_run_id, parse_warmup,
    FanoutChoice, MasterUrl,
};

pub mod compare;
pub mod translate;
pub mod values;

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
    args_conflicts_with_subcommands = true,
    after_help = EXIT_CODES_HELP
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
    #[command(after_help = EXIT_CODES_HELP)]
    Run(RunArgs),
    /// One run per load level: the throughput-vs-latency table.
    #[command(after_help = EXIT_CODES_HELP)]
    Sweep(SweepArgs),
    /// The highest open-loop acquire rate within a latency objective, per fan-out mode.
    ///
    /// Brackets (doubling from --start-rate until a step misses the objective, or halving until
    /// one meets it), bisects to --precision, then confirms the answer by repeating it. Each step
    /// is a bounded open-loop run (--warmup 1s + --duration 3s by default, plus at most 1 s of
    /// grace); at most --max-steps (10) steps per fan-out mode, so with the defaults the search
    /// takes at most about 60 s per mode, about 2 minutes for both. Default workload: 10000
    /// resources (throughput, not contention), no hold.
    #[command(after_help = EXIT_CODES_HELP)]
    Capacity(CapacityArgs),
    /// Combine result files of runs that measured the same workload at the same time.
    ///
    /// Counts and histograms add; rates come from the files' measured windows aligned by wall
    /// clock (over their union, and while all measured). Sweeps merge level by level,
    /// capacity results step by step.
    #[command(after_help = EXIT_CODES_HELP)]
    Merge(MergeArgs),
    /// Wait for every agent of a coordinated run (`run`/`capacity --coordinator`) and print
    /// their merge (exactly as `merge`), one line per agent, and the cross-agent safety check.
    #[command(after_help = EXIT_CODES_HELP)]
    Collect(CollectArgs),
    /// Render a saved result (`--json` of run, sweep, capacity, merge or collect) again: its
    /// text report, and the files asked for (--html, --hlog, --plot, --csv, --hgrm).
    #[command(after_help = EXIT_CODES_HELP)]
    Report(ReportArgs),
    /// Run the fixed fault matrix (negative controls included) and print one verdict table.
    #[command(after_help = EXIT_CODES_HELP)]
    Scenarios(ScenariosArgs),
    /// Set results (`--json` of run, merge or collect) side by side against the first: what
    /// differs in their configurations, then each headline figure of each mode with B − A, the
    /// 95 % interval of that difference and a verdict (better / worse / no clear difference).
    #[command(after_help = EXIT_CODES_HELP)]
    Compare(CompareArgs),
    /// The proxy process of `--rtt` (started by the generator itself): PORT=RTT per master.
    #[command(hide = true)]
    NetProxy {
        #[arg(required = true)]
        specs: Vec<String>,
    },
}

/// Where the masters are.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Existing masters to load, comma-separated (redis://[user:password@]host:port[/db]; also
    /// from REDLOCK_LOADGEN_MASTERS, which keeps passwords off the command line).
    #[arg(long, value_name = "URL,...", value_delimiter = ',', num_args = 1.., env = "REDLOCK_LOADGEN_MASTERS", hide_env_values = true, value_parser = MasterUrl)]
    pub masters: Vec<String>,
    /// Start N local redis-server masters on free loopback ports (default 5).
    #[arg(long, value_name = "N", conflicts_with = "masters", value_parser = clap::value_parser!(u32).range(1..=99))]
    pub spawn: Option<u32>,
    /// The server the local masters run: redis, redis8 (Redis 8.6.3), valkey, or the path of a server binary
    /// (default: $REDLOCK_SERVER, else redis).
    #[arg(
        long,
        value_name = "redis|redis8|valkey|PATH",
        conflicts_with = "masters"
    )]
    pub server: Option<redlock_local::ServerKind>,
    /// Network distance to the local masters: same-zone (0.3 ms ± 0.05 ms), cross-zone (1.5 ms
    /// ± 0.3 ms), loopback (nothing added), a round trip such as 1ms±0.2ms, or one per master
    /// (comma-separated). Added by a proxy process whose CPU is measured apart.
    #[arg(long, value_name = "PROFILE", conflicts_with = "masters", value_parser = crate::engine::network::NetworkProfile::parse)]
    pub rtt: Option<crate::engine::network::NetworkProfile>,
}

/// The workload and client settings shared by `run` and `sweep`.
#[derive(Debug, Clone, Args)]
pub struct WorkloadArgs {
    /// Lock algorithm(s), comma-separated, measured side by side: redlock, single (SET NX PX
    /// with a Lua release, on the first master), setnx-expire, setnx-getset (the legacy SETNX
    /// patterns, on the first master). Baselines, not products: see the book's "Why Redlock".
    #[arg(long, value_name = "ALG,...", default_value = "redlock", value_parser = LockList::parse)]
    pub lock: LockList,
    /// Fan-out mode(s) to measure.
    #[arg(long, value_enum, default_value = "both")]
    pub fanout: FanoutChoice,
    /// Resources (lock keys) the clients compete for; 1 = maximum contention (default: 1 for
    /// run and sweep, 10000 for capacity).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub resources: Option<u32>,
    /// How clients pick a resource: uniform, or zipf[:EXPONENT] (default exponent 1.0).
    #[arg(long, value_name = "DIST", default_value = "uniform", value_parser = KeyDist::from_str)]
    pub key_dist: KeyDist,
    /// Time inside the lock: a duration (5ms, 250us) or a uniform range (1ms..5ms); holds
    /// shorter than a millisecond are honoured.
    #[arg(long, value_name = "D|MIN..MAX", default_value = "0s", value_parser = HoldSpec::from_str)]
    pub hold: HoldSpec,
    /// Extend each held lock this many times during its hold (measures extend latency).
    #[arg(long, value_name = "N", default_value = "0", value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub extend: u32,
    /// Lock TTL.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub ttl: Duration,
    /// Retries after a lost attempt.
    #[arg(long, value_name = "N", default_value_t = redlock_core::DEFAULT_RETRY_COUNT)]
    pub retry_count: u32,
    /// Upper bound of the jittered delay between attempts (each delay is drawn from [D/2, D]).
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_RETRY_DELAY.as_str(), value_parser = parse_duration)]
    pub retry_delay: Duration,
    /// Per-master request timeout.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_INSTANCE_TIMEOUT.as_str(), value_parser = parse_duration)]
    pub instance_timeout: Duration,
    /// Votes needed to win (default: majority of the masters).
    #[arg(long, value_name = "Q", value_parser = clap::value_parser!(u32).range(1..))]
    pub quorum: Option<u32>,
    /// Measured time per fan-out mode (run: 10s; sweep: 5s per level; capacity: 3s per
    /// step), at most 1h. A run ends at most 1 s (plus one release) after it.
    #[arg(long, value_name = "DURATION", value_parser = parse_measured_duration)]
    pub duration: Option<Duration>,
    /// Warm-up before each measurement, not counted (run: 2s; sweep and capacity: 1s), at
    /// most 10m.
    #[arg(long, value_name = "DURATION", value_parser = parse_warmup)]
    pub warmup: Option<Duration>,
    /// Length of one interval of the over-time figures (counts and latency histograms per
    /// interval, in the JSON, `--hlog` and `--html`), 100ms to 1m.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Seed of the workload's random choices (resources, hold times); printed in the report.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Files to write besides the text report (checked before anything runs).
#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Write the full result (config, counts, per-second series, base64 HdrHistograms) as JSON
    /// (`-`: standard output; the text report then goes to standard error).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the summary rows (one per mode, level or step) as CSV (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write one .hgrm percentile-distribution file per histogram into this directory.
    #[arg(long, value_name = "DIR")]
    pub hgrm: Option<PathBuf>,
    /// Draw an SVG plot (run, merge: latency by percentile; capacity: latency against
    /// throughput with the objective and the knee).
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Write the per-interval latency histograms as an HdrHistogram interval log (run, merge,
    /// collect; read by HistogramLogProcessor and HistogramLogAnalyzer).
    #[arg(long, value_name = "FILE.hlog")]
    pub hlog: Option<PathBuf>,
    /// Write a self-contained HTML report (charts inline, nothing fetched when viewed).
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
    /// Latency columns of the tables, e.g. 50,90,99,99.9,99.99 (default 50,90,99,99.9).
    #[arg(long, value_name = "P,...", value_parser = Percentiles::parse)]
    pub percentiles: Option<Percentiles>,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Closed loop: C clients, each acquire → hold → release → repeat. With --rate: the
    /// clients that run the open-loop schedule (a free client takes the next slot).
    #[arg(long, value_name = "C", default_value = "16", value_parser = parse_clients)]
    pub clients: u32,
    /// Open loop at R acquires/s (latency from each operation's intended start).
    #[arg(long, value_name = "R", value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Exit 0 even when a fan-out mode won no lock at all (otherwise exit 1).
    #[arg(long)]
    pub allow_no_locks: bool,
    /// A CI gate (repeatable): FIGURE OP VALUE, e.g. 'acquire.p99<10ms', 'acquire.success>=99.9%',
    /// 'violations==0', 'goodput>=2000'; judged on every mode by the measured value's 95 %
    /// interval: met, not met or unclear; one not met exits 4 (see --gate).
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<crate::model::threshold::Threshold>,
    /// What fails the --threshold gate (exit 4): clear (default) only a threshold clearly not
    /// met (its 95 % interval wholly on the bad side, or the figure missing); strict also an
    /// unclear one (the interval across the bound).
    #[arg(long, value_name = "clear|strict", default_value = "clear")]
    pub gate: crate::model::gate::GatePolicy,
    /// Inject a fault into the local masters (repeatable): kill:N@T[-T2], pause:N@T1-T2, restart:N@T, restart-delayed:N@T, latency:N:D@T1-T2,
    /// blackhole:N@T[-T2], expire:N@T. N = the first N masters, or mI,mJ for chosen ones.
    /// Times count from the start of each mode's measured window (after --warmup), the clock
    /// of the per-second intervals and of the outage line; a fault at 0s is in place from the
    /// mode's start, warm-up included. A time may count from the mode's first lock granted
    /// instead: lock, lock+500ms (e.g. kill:m3,m4@0s-lock+500ms).
    #[arg(long = "fault", value_name = "SPEC", value_parser = crate::engine::faults::master::FaultSpec::parse)]
    pub faults: Vec<crate::engine::faults::master::FaultSpec>,
    /// Break the load clients themselves (repeatable; times from the measured window's start,
    /// as --fault): crash@T (the first client to win the
    /// lock at or after T dies holding it; setnx-expire: between SETNX and EXPIRE),
    /// clock:C:±OFFSET (client C's wall clock is off; read by setnx-getset),
    /// pause:C:D@T (the first lock client C holds at or after T, it stops for D between its
    /// validity check and its write to the --storage).
    #[arg(long = "client-fault", value_name = "SPEC", value_parser = WorkerFault::parse)]
    pub client_faults: Vec<WorkerFault>,
    /// Write every operation (acquire, extend, release, write) and every fault window as JSON
    /// lines in Jepsen's shape, for an independent checker (loadgen/history-check). About
    /// 165 bytes a line, 4 to 6 lines per lock cycle.
    #[arg(long, value_name = "FILE.jsonl")]
    pub history: Option<PathBuf>,
    #[command(flatten)]
    pub history_limit: HistoryLimitArgs,
    /// Measure every mode N times, the modes' order reversed every second time, repeat r with
    /// seed + r; the figures are over all repeats and their 95 % intervals are Student's t over
    /// the repeats' own figures (the noise between runs, which one run's intervals cannot see).
    #[arg(long, value_name = "N", default_value = "1", value_parser = parse_repeat)]
    pub repeat: u32,
    /// Redlock with fencing tokens: the report adds the tokens issued and the token order
    /// violations, and holders write through the storage's token check.
    #[arg(long)]
    pub fencing: bool,
    /// Each holder writes to the protected resource a second time at the end of its hold,
    /// just before it releases (if its lock is still valid): a critical section that writes
    /// at both ends.
    #[arg(long)]
    pub write_at_release: bool,
    /// The protected resource, a Redis each holder writes (resource, token) to while it
    /// believes it holds the lock (default with --fencing or a pause: one more local
    /// redis-server). Writes carry a token check only with --fencing.
    #[arg(long, value_name = "URL", value_parser = MasterUrl)]
    pub storage: Option<String>,
    /// Serve the running figures at http://ADDR/metrics in the Prometheus text format while
    /// the run lasts (HOST:PORT, e.g. 127.0.0.1:9464; :PORT listens on every interface).
    #[arg(long, value_name = "ADDR", value_parser = crate::exporter::server::parse_listen_address)]
    pub prometheus: Option<std::net::SocketAddr>,
    /// After the run, keep serving its final figures until one scrape has collected them, for
    /// at most this long (set it above the scrape interval). Default: stop with the run.
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration, requires = "prometheus")]
    pub prometheus_linger: Duration,
    #[command(flatten)]
    pub agents: AgentArgs,
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
    #[arg(long, value_name = "C,...", value_delimiter = ',', required_unless_present = "rate", conflicts_with = "rate", value_parser = parse_clients)]
    pub clients: Vec<u32>,
    /// Open-loop levels: acquires/s, comma-separated.
    #[arg(long, value_name = "R,...", value_delimiter = ',', value_parser = parse_rate)]
    pub rate: Vec<f64>,
    /// Clients that run each open-loop level's schedule.
    #[arg(long, value_name = "N", default_value = "64", value_parser = parse_clients)]
    pub workers: u32,
    /// Exit 0 even when a level won no lock at all (otherwise exit 1).
    #[arg(long)]
    pub allow_no_locks: bool,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// `--json` keeps every level's full result; `--csv` one row per level and mode.
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct MergeArgs {
    /// Result files written by `run`, `sweep` or `capacity --json` (all of one kind).
    #[arg(value_name = "FILE", num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// Merge results of different workloads anyway (the report says which fields differ).
    #[arg(long)]
    pub allow_mixed: bool,
    /// Merge results whose measured windows never overlapped (flagged in the report).
    #[arg(long)]
    pub allow_disjoint: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result file written by `--json`.
    #[arg(value_name = "RESULT.json")]
    pub input: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `run` and `capacity` flags for many agents (see [`crate::plans::coordinator`]).
#[derive(Debug, Clone, Default, Args)]
pub struct AgentArgs {
    /// Coordinate with other agents through this Redis (redis://[user:password@]host:port[/db];
    /// also from REDLOCK_LOADGEN_COORDINATOR). It only holds the run's bookkeeping, never lock keys.
    #[arg(long, value_name = "URL", env = "REDLOCK_LOADGEN_COORDINATOR", hide_env_values = true, requires = "agents", value_parser = parse_coordinator_url)]
    pub coordinator: Option<String>,
    /// Agents in the run: everybody waits until this many joined, then all start together.
    #[arg(long, value_name = "N", requires = "coordinator", value_parser = clap::value_parser!(u32).range(1..=crate::plans::coordinator::MAX_AGENTS as i64))]
    pub agents: Option<u32>,
    /// The run to join (letters, digits, '.', '_', '-'); default: the run the coordinator has
    /// open (the first agent opens one and prints its id).
    #[arg(long, value_name = "ID", requires = "coordinator", value_parser = parse_run_id)]
    pub run_id: Option<String>,
    /// How long an agent waits for the others at each start (a missing agent ends the run
    /// for everybody after this).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub join_timeout: Duration,
}

/// `redlock-loadgen collect` flags.
#[derive(Debug, Clone, Args)]
pub struct CollectArgs {
    /// The coordinator the agents ran with (also from REDLOCK_LOADGEN_COORDINATOR).
    #[arg(long, value_name = "URL", env = "REDLOCK_LOADGEN_COORDINATOR", hide_env_values = true, value_parser = parse_coordinator_url)]
    pub coordinator: String,
    /// The run to collect (the agents print it when they join).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: String,
    /// Bounds the whole command: waiting for every agent's result, reading, merging and
    /// checking them (when it runs out: exit 1 naming the stage).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub wait: Duration,
    /// A CI gate on the whole run (repeatable, as `run --threshold`): judged on the merged
    /// result's modes; one not met exits 4 (see --gate).
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<crate::model::threshold::Threshold>,
    /// What fails the --threshold gate (exit 4): clear (default) only a threshold clearly not
    /// met (its 95 % interval wholly on the bad side, or the figure missing); strict also an
    /// unclear one (the interval across the bound).
    #[arg(long, value_name = "clear|strict", default_value = "clear")]
    pub gate: crate::model::gate::GatePolicy,
    #[command(flatten)]
    pub output: OutputArgs,
}

// The client flags' defaults are the core's (`--help` shows them as flag values).
static DEFAULT_RETRY_DELAY: LazyLock<String> =
    LazyLock::new(|| humantime::format_duration(redlock_core::DEFAULT_RETRY_DELAY).to_string());
static DEFAULT_INSTANCE_TIMEOUT: LazyLock<String> = LazyLock::new(|| {
    humantime::format_duration(redlock_core::DEFAULT_INSTANCE_TIMEOUT).to_string()
});

/// `redlock-loadgen capacity` flags.
#[derive(Debug, Clone, Args)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// The latency objective on the whole acquire (from the intended start), e.g. 'p99<10ms'
    /// or 'p99<10ms,p99.9<50ms'.
    #[arg(long, value_name = "pP<D,...", default_value = "p99<10ms", value_parser = Slo::parse)]
    pub slo: Slo,
    /// Acquire success rate a step must reach (acquired ÷ acquire calls).
    #[arg(long, value_name = "SHARE", default_value = "99.9%", value_parser = parse_share)]
    pub min_success: f64,
    /// First rate tried (acquires/s).
    #[arg(long, value_name = "R", default_value = "1000", value_parser = parse_rate)]
    pub start_rate: f64,
    /// Lowest rate tried when even the start rate misses the objective.
    #[arg(long, value_name = "R", default_value = "10", value_parser = parse_rate)]
    pub min_rate: f64,
    /// Highest rate tried.
    #[arg(long, value_name = "R", default_value = "200000", value_parser = parse_rate)]
    pub max_rate: f64,
    /// Stop bisecting when the passing and failing rates are this close (relative).
    #[arg(long, value_name = "SHARE", default_value = "5%", value_parser = parse_share)]
    pub precision: f64,
    /// Steps per fan-out mode (the confirming repeat included).
    #[arg(long, value_name = "N", default_value = "10", value_parser = clap::value_parser!(u32).range(1..=50))]
    pub max_steps: u32,
    /// Once the search is over, run the answer's step N more times and report the spread
    /// (min/median/max of p99 and success) across every run at that rate (not counted in
    /// --max-steps; each takes one step's time).
    #[arg(long, value_name = "N", default_value = "0", value_parser = clap::value_parser!(u32).range(0..=20))]
    pub repeat: u32,
    /// When a step's 95 % interval of an objective's figure (acquire p50/p90/p99/p99.9 or
    /// success) contains the bound, run that rate up to N more times before its verdict
    /// counts; the majority of the runs decides, a tie fails (not counted in --max-steps).
    #[arg(long, value_name = "N", default_value = "2", value_parser = clap::value_parser!(u32).range(0..=10))]
    pub noise_repeats: u32,
    /// The acquire calls a step needs. By default each percentile of --slo needs 10 calls at
    /// or beyond it (p50: 20, p99: 1,000, p99.9: 10,000), and the search stays at or above the
    /// rate whose --duration gives them. Lower it only to try the search out: the answer says
    /// its percentiles rest on fewer calls.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub min_calls: Option<u64>,
    /// Clients the open-loop schedule of each step is spread over (enough that a free one is
    /// there when a slot comes due: rate × acquire latency).
    #[arg(long, value_name = "C", default_value = "512", value_parser = parse_clients)]
    pub clients: u32,
    /// Search for the safe capacity under a fault schedule (repeatable; the specs of `run
    /// --fault`, timed from each step's measured window): a step passes only when it meets
    /// the objective with no safety violation while the faults act. Local masters only.
    #[arg(long = "fault", value_name = "SPEC", value_parser = crate::engine::faults::master::FaultSpec::parse)]
    pub faults: Vec<crate::engine::faults::master::FaultSpec>,
    /// With --fault: search without the faults first, and show that capacity beside the
    /// safe one.
    #[arg(long, requires = "faults")]
    pub baseline: bool,
    /// Redlock with fencing tokens (as `run --fencing`): holders write through the storage's
    /// token check, and a step with a token-order violation or a stale write accepted fails.
    #[arg(long)]
    pub fencing: bool,
    #[command(flatten)]
    pub agents: AgentArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `redlock-loadgen scenarios` flags.
#[derive(Debug, Clone, Args)]
pub struct ScenariosArgs {
    /// Run only these rows (names as in the table, comma-separated, e.g. "no faults,2 killed").
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Fan-out mode(s) to run the matrix in.
    #[arg(long, value_enum, default_value = "both")]
    pub fanout: FanoutChoice,
    /// Print each row's `redlock-loadgen run` command line and exit.
    #[arg(long)]
    pub list: bool,
    /// The server every row's local masters run: redis, redis8, valkey, or the path of a server
    /// binary (default: $REDLOCK_SERVER, else redis).
    #[arg(long, value_name = "redis|redis8|valkey|PATH")]
    pub server: Option<redlock_local::ServerKind>,
    /// Write each row's history (every operation and fault window, JSON lines, as `run
    /// --history`) into this directory (created if missing), one file per row and fan-out:
    /// the row's name in lower case, runs of other characters as `-`, then `-sequential` or
    /// `-concurrent` and `.jsonl`.
    #[arg(long, value_name = "DIR")]
    pub history: Option<PathBuf>,
    #[command(flatten)]
    pub history_limit: HistoryLimitArgs,
    /// Write every row (expectation, verdict, fault log, full result) as one JSON array.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report: the verdicts, each row's throughput over time with
    /// its faults shaded.
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The bound on a `--history`.
#[derive(Debug, Clone, Copy, Args)]
pub struct HistoryLimitArgs {
    /// The most events a history may hold; a run that makes more fails at its end (the cut
    /// file proves nothing).
    #[arg(long, value_name = "N", default_value_t = crate::engine::history::DEFAULT_LIMIT, value_parser = clap::value_parser!(u64).range(1..))]
    pub history_limit: u64,
}

/// A `redlock-loadgen run` command line without the program name (a scenario's row).
#[derive(Debug, Parser)]
#[command(name = "redlock-loadgen run", no_binary_name = true)]
struct RunLine {
    #[command(flatten)]
    run: RunArgs,
}

/// Parses the words of a `run` command line (without `run`) exactly as `redlock-loadgen run`
/// would.
pub fn parse_run_words<I, T>(words: I) -> Result<RunArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    RunLine::try_parse_from(words).map(|line| line.run)
}
