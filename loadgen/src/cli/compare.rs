//! `redlock-loadgen compare` flags: the result files or the runs set side by side, and how
//! their differences are judged.

use std::path::PathBuf;

use clap::Args;

use crate::cli::values::parse_repeat;
use crate::model::capacity::slo::parse_share;

/// `compare A.json B.json [...]`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Result files; the first (A) is the baseline every other is compared with.
    #[arg(
        value_name = "RESULT.json",
        required_unless_present = "runs",
        conflicts_with = "runs"
    )]
    pub inputs: Vec<PathBuf>,
    /// Measure the sides here instead (repeatable, the first is A): each is the flags of one
    /// `redlock-loadgen run`, quoted as one argument, e.g. --run '--clients 1' --run '--clients
    /// 16'. The sides take turns, repeat by repeat (A B, then B A, …), each on the masters its
    /// flags name, and every difference is taken within a turn, so the machine's drift cancels.
    #[arg(long = "run", value_name = "'RUN FLAGS'", allow_hyphen_values = true)]
    pub runs: Vec<String>,
    /// With --run: the turns each side takes (2 to 1000; default 5).
    #[arg(long, value_name = "N", value_parser = parse_repeat)]
    pub repeat: Option<u32>,
    /// With --run: write each side's result into DIR as A.json, B.json (B1.json, B2.json, … for
    /// more sides), for `report` or another `compare`.
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// Write the comparison as one self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the comparison as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// A CI gate (repeatable): 'goodput.ratio>=0.95' (B ÷ A), or any `run` figure, judged on
    /// each B: met, not met or unclear by its 95 % interval; one not met exits 4 (see --gate).
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<crate::model::threshold::Threshold>,
    /// What fails the --threshold gate (exit 4): clear (default) only a threshold clearly not
    /// met (its 95 % interval wholly on the bad side, or the figure missing); strict also an
    /// unclear one (the interval across the bound).
    #[arg(long, value_name = "clear|strict", default_value = "clear")]
    pub gate: crate::model::gate::GatePolicy,
    /// Compare results whose workloads differ in shape (clients, rate, resources, hold, ...);
    /// the report names what differs.
    #[arg(long)]
    pub allow_different: bool,
    /// Set A's only mode against each other side's only mode when their names differ (e.g.
    /// --fanout concurrent against --fanout sequential, or redlock against --lock single); the
    /// report names the pairing. Without it modes are matched by name, and a side with no mode
    /// in common with A is refused (exit 2).
    #[arg(long)]
    pub pair_modes: bool,
    /// The noise band: a figure is called better or worse only when the whole 95 % interval
    /// of B − A lies beyond ± this share of A's value; an interval clear of 0 but inside the
    /// band reads "within the noise band" (as criterion's noise threshold). 0 turns it off.
    #[arg(long, value_name = "SHARE", default_value = "2%", value_parser = parse_share)]
    pub noise_threshold: f64,
}
