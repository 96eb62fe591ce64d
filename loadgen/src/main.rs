//! `redlock-loadgen`: see `redlock-loadgen --help`.

use std::process::ExitCode;

use clap::Parser;
use redlock_loadgen::{app, cli::Cli};

fn main() -> ExitCode {
    // clap exits with code 2 on bad arguments (0 for --help / --version).
    let cli = Cli::parse();
    match app::execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redlock-loadgen: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
