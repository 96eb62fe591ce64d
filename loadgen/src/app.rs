//! The one dispatcher: every subcommand, from the parsed command line to its exit. Commands
//! that run load get one [`Session`] (the async runtime and the signal listener); `merge`,
//! `compare` of files and `scenarios --list` run without one.

use crate::cli::{Cli, Command};
use crate::commands::shared::Session;
use crate::commands::{capacity, collect, compare, merge, report, run, scenarios, sweep};
use crate::error::LoadgenError;

/// Runs the parsed command line. `Ok` means exit code 0.
pub fn execute(cli: Cli) -> Result<(), LoadgenError> {
    match cli.command.unwrap_or(Command::Run(cli.run)) {
        Command::Run(args) => run::command(args, &Session::start()?),
        Command::Sweep(args) => sweep::command(args, &Session::start()?),
        Command::Capacity(args) => capacity::command(args, &Session::start()?),
        Command::Merge(args) => merge::command(args),
        Command::Report(args) => report::command(args),
        Command::Compare(args) if !args.runs.is_empty() => {
            compare::command(args, Some(&Session::start()?))
        }
        Command::Compare(args) => compare::command(args, None),
        Command::Collect(args) => collect::command(args, &Session::start()?),
        Command::Scenarios(args) if args.list => scenarios::list(&args),
        Command::Scenarios(args) => scenarios::command(args, &Session::start()?),
        Command::NetProxy { specs } => net_proxy(&specs),
    }
}

/// The `--rtt` proxy process: a small runtime of its own (two threads, so it does not become
/// the bottleneck of what it delays).
fn net_proxy(specs: &[String]) -> Result<(), LoadgenError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| LoadgenError::Failed(format!("net-proxy: {e}")))?;
    rt.block_on(crate::engine::network::serve(specs))
}
