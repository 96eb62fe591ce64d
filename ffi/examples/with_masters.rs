//! Runs a program against 5 fresh local `redis-server` masters on free loopback ports:
//! `cargo run -p redlock-ffi --example with_masters -- ./basic [args...]` appends the masters'
//! URLs to the arguments (and sets REDLOCK_MASTERS to them, comma-separated), waits for the
//! program, kills the masters and exits with the program's status. Used by `make test-ffi`
//! to run the examples built against an installed libredlock; handy to try them by hand.

use std::process::{Command, ExitCode};

use redlock_local::LocalMasters;

const USAGE: &str = "usage: with_masters PROGRAM [ARGS...]

Starts 5 local redis-server masters on free loopback ports, runs PROGRAM with ARGS followed by
the masters' URLs (also in REDLOCK_MASTERS, comma-separated), kills the masters and exits with
PROGRAM's status. For masters that stay up, see redlock-masters --until-signal.";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let program = match args.next() {
        Some(flag) if flag == "--help" || flag == "-h" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(program) => program,
        None => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let masters = match LocalMasters::start(5) {
        Ok(masters) => masters,
        Err(e) => {
            eprintln!("with_masters: cannot start 5 local masters: {e}");
            return ExitCode::from(2);
        }
    };
    let urls = masters.urls();
    let status = Command::new(&program)
        .args(args)
        .args(&urls)
        .env("REDLOCK_MASTERS", urls.join(","))
        .status();
    drop(masters); // kill them before reporting
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => {
            eprintln!("with_masters: {program} failed: {status}");
            ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1).max(1))
        }
        Err(e) => {
            eprintln!("with_masters: cannot run {program}: {e}");
            ExitCode::from(2)
        }
    }
}
