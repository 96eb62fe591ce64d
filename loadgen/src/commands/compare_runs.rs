//! `compare --run 'FLAGS' --run 'FLAGS' [--repeat N]`: the sides measured here, in turns.
//!
//! Two results measured by separate commands differ by whatever the machine did between them
//! as well as by their configurations, and no interval of either run can tell the two apart.
//! Here every side keeps the masters its flags name for the whole command (local ones started
//! once) and the sides take turns, one repeat at a time (A B, then B A, …, as `run --fanout
//! both --repeat N` takes its modes), so repeat r of A and repeat r of B ran next to each
//! other and a slow drift of the machine falls on both; [`crate::model::comparison`] then takes each difference repeat by repeat.

use super::output::{Dest, Writes};
use super::run::{repeat_clash, run_config};
use super::shared::{check, describe_run, say, target, Session};
use crate::cli::{parse_run_words, CompareArgs, RunArgs};
use crate::engine::config::{run_command_line, RunConfig};
use crate::engine::hooks::NoHooks;
use crate::engine::probe::require_quorum;
use crate::engine::runner::RunResult;
use crate::error::LoadgenError;
use crate::model::comparison::pair_modes;
use crate::model::report::Report;
use crate::plans::turns;
use crate::render::compare::side_label;
use crate::render::json;

/// The environment variable that gives `run` its `--coordinator` (cli.rs).
const COORDINATOR_ENV: &str = "REDLOCK_LOADGEN_COORDINATOR";
/// The turns each side takes when `--repeat` is not given.
pub const DEFAULT_TURNS: u32 = 5;
/// The most sides one command measures.
const MAX_SIDES: usize = 26;

/// One side: its label, its flags as read and what they ask to run.
struct Side {
    name: String,
    args: RunArgs,
    cfg: RunConfig,
}

/// What the sides measured: each side's result, named by its `run` command line, in order.
pub struct Measured {
    pub results: Vec<(String, Report)>,
    pub exits: SideExits,
    /// The `--results` files written or lost: finished once the comparison is printed, so a
    /// lost file never costs the measured turns their report.
    pub writes: Writes,
}

/// Each side's label and its `--allow-no-locks`: what its exit verdict needs besides its result.
pub struct SideExits(Vec<(String, bool)>);

impl SideExits {
    /// Each side's exit verdict as `run` gives it (violations, a signal, no lock won), the
    /// first that fails, naming its side; `results` are [`Measured::results`].
    pub fn check(&self, results: &[(String, Report)]) -> Result<(), LoadgenError> {
        for ((name, allow_no_locks), (_, report)) in self.0.iter().zip(results) {
            check(report, *allow_no_locks).map_err(|e| match e {
                LoadgenError::Failed(why) => LoadgenError::Failed(format!("side {name}: {why}")),
                other => other,
            })?;
        }
        Ok(())
    }
}

/// Checks every side's flags, then measures the sides in turns.
pub fn measure(args: &CompareArgs, session: &Session) -> Result<Measured, LoadgenError> {
    let turns = args.repeat.unwrap_or(DEFAULT_TURNS);
    if !(2..=MAX_SIDES).contains(&args.runs.len()) {
        return Err(LoadgenError::Usage(format!(
            "compare --run needs 2 to {MAX_SIDES} sides (one --run each); got {}",
            args.runs.len()
        )));
    }
    if turns < 2 {
        return Err(LoadgenError::Usage(format!(
            "--repeat {turns}: sides that take turns need 2 turns or more (5 or more give intervals worth reading)"
        )));
    }
    if let Some(dir) = &args.results {
        super::output::check_dir("--results", dir)?;
    }
    let sides = args
        .runs
        .iter()
        .enumerate()
        .map(|(i, flags)| side(side_label(i, args.runs.len()), flags, turns))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(dir) = &args.results {
        for s in &sides {
            super::output::check_file("--results", &dir.join(format!("{}.json", s.name)))?;
        }
    }
    // A comparison of nothing is refused before anything is measured.
    let planned: Vec<(String, Vec<String>)> = sides
        .iter()
        .map(|s| {
            let modes = s.cfg.modes().into_iter();
            let labels = modes.map(|(lock, fanout)| lock.mode_label(fanout).to_string());
            (s.name.clone(), labels.collect())
        })
        .collect();
    pair_modes(&planned, args.pair_modes).map_err(LoadgenError::Usage)?;
    let runs = session.rt.block_on(in_turns(&sides, turns, session))?;
    let mut results = Vec::with_capacity(sides.len());
    let mut writes = Writes::new(false);
    for (side, run) in sides.iter().zip(runs) {
        let report = Report::from_run(&run);
        if let Some(dir) = &args.results {
            let dest = Dest::File(dir.join(format!("{}.json", side.name)));
            writes.write(&dest, Ok(json::render(&report)));
        }
        results.push((report.config.command_line.clone(), report));
    }
    Ok(Measured {
        writes,
        results,
        exits: SideExits(
            sides
                .iter()
                .map(|s| (s.name.clone(), s.args.allow_no_locks))
                .collect(),
        ),
    })
}

/// A side's flags, split as a shell would and read as `run` reads them; refused when they
/// hold what a side cannot take. `name` is its label in the report (A, B, or B1, B2, …).
fn side(name: String, flags: &str, turns: u32) -> Result<Side, LoadgenError> {
    let bad = |why: String| LoadgenError::Usage(format!("--run {flags:?} (side {name}): {why}"));
    let words = shlex::split(flags).ok_or_else(|| bad("unbalanced quotes".into()))?;
    let args = parse_run_words(&words).map_err(|e| bad(side_parse_error(&e)))?;
    if let Some(what) = repeat_clash(&args) {
        return Err(bad(format!(
            "{what}: a side takes {turns} turns, so it holds nothing tied to one run"
        )));
    }
    if args.repeat > 1 {
        return Err(bad(
            "--repeat belongs to compare (--repeat N gives every side N turns)".into(),
        ));
    }
    if !args.thresholds.is_empty() {
        return Err(bad(
            "--threshold belongs to compare (judged on each B, or on B ÷ A with .ratio)".into(),
        ));
    }
    if args.prometheus.is_some() {
        return Err(bad("--prometheus serves one run; use `run` for it".into()));
    }
    let o = &args.output;
    if o.json.is_some() || o.csv.is_some() || o.hgrm.is_some() || o.plot.is_some() {
        return Err(bad(
            "output files belong to compare (--results DIR writes each side's result)".into(),
        ));
    }
    if o.hlog.is_some() || o.html.is_some() {
        return Err(bad(
            "output files belong to compare (--html FILE; --results DIR writes each side's result)"
                .into(),
        ));
    }
    let mut cfg = run_config(&args).map_err(|e| bad(e.to_string()))?;
    cfg.repeat = turns;
    cfg.command_line = run_command_line(&words);
    cfg.progress_label = Some(name.clone());
    Ok(Side { name, args, cfg })
}

/// Every side's masters, then the sides in turns ([`crate::plans::turns::in_turns`]). A
/// signal stops it between or within turns; what was measured is returned.
async fn in_turns(
    sides: &[Side],
    turns: u32,
    session: &Session,
) -> Result<Vec<RunResult>, LoadgenError> {
    let mut targets = Vec::with_capacity(sides.len());
    for s in sides {
        let mut t = target(&s.args.target, false)?;
        t.attach_storage(&s.cfg)?;
        t.probe_versions().await;
        require_quorum(&t, s.cfg.quorum).await?;
        say(
            s.cfg.quiet,
            &format!("{}: {}", s.name, describe_run(&s.cfg, &t)),
        );
        targets.push(t);
    }
    let planned: Vec<_> = sides.iter().map(|s| &s.cfg).zip(&targets).collect();
    let wholes = turns::in_turns(&planned, turns, &mut NoHooks, &session.signals).await?;
    wholes
        .into_iter()
        .zip(sides)
        .map(|(whole, s)| {
            whole.ok_or_else(|| {
                turns::never_ran(&session.signals, format!("side {} never ran", s.name))
            })
        })
        .collect()
}

/// Why a side's flags were refused, in one line: clap's message without its usage lines;
/// a side's `--help` points at `run`'s; a coordinator that came from the environment is named.
fn side_parse_error(e: &clap::Error) -> String {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return "a side takes `run`'s flags: see `redlock-loadgen run --help`".into();
    }
    let message = e.to_string();
    let first = message.lines().next().unwrap_or(&message).trim();
    let from_env = std::env::var_os(COORDINATOR_ENV).is_some_and(|v| !v.is_empty());
    if from_env && e.kind() == ErrorKind::MissingRequiredArgument {
        return format!(
            "{first} ({COORDINATOR_ENV} is set, which gives every side a --coordinator; sides \
             measured in turns run on their own: unset it for compare --run)"
        );
    }
    first.to_string()
}
