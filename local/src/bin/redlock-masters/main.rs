//! `redlock-masters [N] [--password P | --tls]`: starts N (default 5) local `redis-server`
//! masters on free loopback ports, prints their URLs on stdout, one per line, then takes
//! commands on stdin, one per line, answering each with one line (see [`control`]):
//!
//! ```text
//! pause 2      freeze master 2 (SIGSTOP)            -> ok
//! resume 2     thaw it (SIGCONT)                    -> ok
//! kill 2       kill it (SIGKILL); its data is gone  -> ok
//! restart 2    kill it and start it again, empty, on its port -> ok
//! start 2      start a killed master again on its port        -> ok
//! ```
//!
//! A command that cannot be done answers `error: <why>`. The masters stop when stdin closes
//! (or at the first failed write to stdout), and die with this process whatever kills it;
//! this process dies (SIGKILL) when its parent does (Linux). The Python tests drive their
//! masters through it (`python/tests/conftest.py`).

mod control;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use redlock_local::{die_with_parent, LocalMasters};

/// Local redis-server masters for tests, driven over stdin (see the crate's README section).
#[derive(Debug, Parser)]
#[command(name = "redlock-masters", version)]
struct Args {
    /// How many masters to start.
    #[arg(default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=256))]
    count: u16,
    /// Masters require this password (`requirepass`); their URLs carry it.
    #[arg(long, conflicts_with = "tls")]
    password: Option<String>,
    /// Masters speak TLS only, with a throw-away self-signed certificate (URLs end `#insecure`).
    #[arg(long)]
    tls: bool,
    /// Masters speak TLS only with certificates from a private CA generated into DIR
    /// (`server-ca.pem`, `server.pem`, `client-ca.pem`, `client.pem`, `client.key`; see
    /// `redlock_local::private_ca`). Clients must trust `server-ca.pem` (`?ssl_ca_certs=`).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["tls", "password"])]
    private_ca: Option<std::path::PathBuf>,
    /// With --private-ca: masters require a client certificate signed by `client-ca.pem`.
    #[arg(long, requires = "private_ca")]
    mutual_tls: bool,
}

/// TLS masters whose certificates come from a private CA generated into `dir`.
fn start_private_ca(
    count: usize,
    dir: &std::path::Path,
    mutual: bool,
) -> Result<LocalMasters, redlock_local::LocalError> {
    for name in ["server", "client"] {
        redlock_local::private_ca(dir, name)?;
    }
    LocalMasters::start_tls_with(
        count,
        redlock_local::TlsFiles {
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            client_ca: dir.join("client-ca.pem"),
            require_client_cert: mutual,
        },
    )
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(e) = die_with_parent() {
        eprintln!("redlock-masters: cannot tie this process to its parent: {e}");
        return ExitCode::FAILURE;
    }
    let count = usize::from(args.count);
    let started = match (&args.password, args.tls, &args.private_ca) {
        (_, _, Some(dir)) => start_private_ca(count, dir, args.mutual_tls),
        (Some(password), _, None) => LocalMasters::start_with_password(count, password),
        (None, true, None) => LocalMasters::start_tls(count),
        (None, false, None) => LocalMasters::start(count),
    };
    let masters = match started {
        Ok(masters) => masters,
        Err(e) => {
            eprintln!("redlock-masters: cannot start {count} local masters: {e}");
            return ExitCode::FAILURE;
        }
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let announced = masters
        .urls()
        .iter()
        .try_for_each(|url| writeln!(out, "{url}"))
        .and_then(|()| out.flush());
    let served = announced.and_then(|()| control::serve(&masters, io::stdin().lock(), &mut out));
    drop(masters); // stop them before reporting
    match served {
        Ok(()) => ExitCode::SUCCESS,
        // Whoever reads our stdout is gone: nothing to report to, the masters are stopped.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redlock-masters: {e}");
            ExitCode::FAILURE
        }
    }
}
