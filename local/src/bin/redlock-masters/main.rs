//! `redlock-masters [N] [--until-signal] [--password P | --tls] [--server redis|redis8|valkey|PATH]`:
//! starts N (default 5) local `redis-server` (or `valkey-server`) masters on free loopback ports, prints their URLs on stdout, one per line,
//! then takes commands on stdin, one per line, answering each with one line (see [`control`]):
//!
//! ```text
//! pause 2      freeze master 2 (SIGSTOP)            -> ok
//! resume 2     thaw it (SIGCONT)                    -> ok
//! kill 2       kill it (SIGKILL); its data is gone  -> ok
//! restart 2    kill it and start it again, empty, on its port -> ok
//! start 2      start a killed master again on its port        -> ok
//! ```
//!
//! A command that cannot be done answers `error: <why>`. Two ways to end (docs/src/local-masters.md):
//!
//! - By default the masters stop when stdin closes (saying so on stderr), at the first failed
//!   write to stdout, or on SIGINT/SIGTERM, and this process dies (SIGKILL) when its parent
//!   does (Linux): a test harness that drives it over a pipe can never leak it. The Python
//!   tests drive their masters this way (`python/tests/conftest.py`).
//! - `--until-signal`: the masters run until SIGINT (Ctrl-C) or SIGTERM, whatever happens to
//!   stdin or to the parent: `redlock-masters --until-signal > urls.txt &` in a shell script,
//!   then `kill $!` to stop them.
//!
//! Either way the servers die with this process, whatever kills it.

mod control;

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use clap::Parser;
use redlock_local::{die_with_parent, Launch, LocalMasters, ServerKind};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

/// Local redis-server (or valkey-server) masters for trying redlock and for tests: URLs on stdout, commands
/// (pause/resume/kill/restart/start N) on stdin. Docs: docs/src/local-masters.md in the
/// redlock-suite repository (the book's "Local masters" page).
#[derive(Debug, Parser)]
#[command(name = "redlock-masters", version)]
struct Args {
    /// How many masters to start.
    #[arg(default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=256))]
    count: u16,
    /// Keep the masters until SIGINT (Ctrl-C) or SIGTERM, even after stdin closes or the
    /// parent process exits (e.g. started in the background: `redlock-masters --until-signal
    /// > urls.txt &`, stopped with `kill $!`). Without it they stop when stdin closes.
    #[arg(long)]
    until_signal: bool,
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
    /// The server the masters run: `redis`, `redis8` (`make deps-redis8`), `valkey` (`make deps-valkey`), or the
    /// path of a server binary. Default: $REDLOCK_SERVER, else redis.
    #[arg(long, value_name = "redis|redis8|valkey|PATH")]
    server: Option<ServerKind>,
}

/// TLS masters whose certificates come from a private CA generated into `dir`.
fn start_private_ca(
    launch: &Launch,
    count: usize,
    dir: &std::path::Path,
    mutual: bool,
) -> Result<LocalMasters, redlock_local::LocalError> {
    for name in ["server", "client"] {
        redlock_local::private_ca(dir, name)?;
    }
    launch.start_tls_with(
        count,
        redlock_local::TlsFiles {
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            client_ca: dir.join("client-ca.pem"),
            require_client_cert: mutual,
        },
    )
}

/// Why the masters stop.
enum End {
    /// Stdin closed (or could not be read) without `--until-signal`.
    StdinClosed(Option<io::Error>),
    /// SIGINT or SIGTERM.
    Signal(&'static str),
    /// Writing to stdout failed without `--until-signal`: whoever reads it is gone.
    StdoutGone(io::Error),
}

fn main() -> ExitCode {
    let args = Args::parse();
    // A harness that drives the masters over a pipe must never leak them; --until-signal
    // means "until a signal", whoever started it.
    if !args.until_signal {
        if let Err(e) = die_with_parent() {
            eprintln!("redlock-masters: cannot tie this process to its parent: {e}");
            return ExitCode::FAILURE;
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("redlock-masters: cannot start its event loop: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Handlers before the servers start, so no signal is missed (exec resets them in the
    // servers).
    let handlers = runtime.block_on(async {
        Ok::<_, io::Error>((
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        ))
    });
    let (mut interrupt, mut terminate) = match handlers {
        Ok(handlers) => handlers,
        Err(e) => {
            eprintln!("redlock-masters: cannot handle SIGINT and SIGTERM: {e}");
            return ExitCode::FAILURE;
        }
    };
    let count = usize::from(args.count);
    let server = match args.server.clone().map_or_else(ServerKind::from_env, Ok) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("redlock-masters: {e}");
            return ExitCode::from(2);
        }
    };
    let launch = LocalMasters::of(server);
    let started = match (&args.password, args.tls, &args.private_ca) {
        (_, _, Some(dir)) => start_private_ca(&launch, count, dir, args.mutual_tls),
        (Some(password), _, None) => launch.start_with_password(count, password),
        (None, true, None) => launch.start_tls(count),
        (None, false, None) => launch.start(count),
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
    if let Err(e) = announced {
        drop(masters);
        eprintln!("redlock-masters: cannot write the masters' URLs to stdout: {e}");
        return ExitCode::FAILURE;
    }
    if args.until_signal {
        eprintln!(
            "redlock-masters: {} running until SIGINT (Ctrl-C) or SIGTERM (kill {})",
            masters_text(count),
            std::process::id()
        );
    }
    let mut lines = read_lines(io::stdin());
    let until_signal = args.until_signal;
    let end = runtime.block_on(async {
        let mut serving = true;
        loop {
            tokio::select! {
                _ = interrupt.recv() => return End::Signal("SIGINT"),
                _ = terminate.recv() => return End::Signal("SIGTERM"),
                line = lines.recv(), if serving => {
                    let line = match line {
                        Some(Ok(line)) => line,
                        Some(Err(e)) if !until_signal => return End::StdinClosed(Some(e)),
                        None if !until_signal => return End::StdinClosed(None),
                        Some(Err(_)) | None => {
                            eprintln!(
                                "redlock-masters: stdin closed: the masters keep running until \
                                 SIGINT or SIGTERM"
                            );
                            serving = false;
                            continue;
                        }
                    };
                    let Some(answer) = control::answer(&masters, &line) else {
                        continue;
                    };
                    if let Err(e) = writeln!(out, "{answer}").and_then(|()| out.flush()) {
                        if !until_signal {
                            return End::StdoutGone(e);
                        }
                        eprintln!("redlock-masters: cannot answer on stdout ({e}): no more commands are read");
                        serving = false;
                    }
                }
            }
        }
    });
    let stopping = format!("stopping the {}", masters_text(count));
    let status = match end {
        End::StdinClosed(None) => {
            eprintln!(
                "redlock-masters: stdin closed: {stopping} (run it with --until-signal to keep \
                 them until SIGINT or SIGTERM)"
            );
            ExitCode::SUCCESS
        }
        End::StdinClosed(Some(e)) => {
            eprintln!("redlock-masters: cannot read stdin ({e}): {stopping}");
            ExitCode::FAILURE
        }
        End::Signal(name) => {
            eprintln!("redlock-masters: {name}: {stopping}");
            ExitCode::SUCCESS
        }
        // Whoever reads our stdout is gone: nothing to report to.
        End::StdoutGone(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        End::StdoutGone(e) => {
            eprintln!("redlock-masters: cannot write to stdout ({e}): {stopping}");
            ExitCode::FAILURE
        }
    };
    drop(masters);
    status
}

/// `"1 master"`, `"5 masters"`.
fn masters_text(count: usize) -> String {
    match count {
        1 => "1 master".to_string(),
        n => format!("{n} masters"),
    }
}

/// The lines of `stdin`, read by a thread of their own (a blocking read cannot be cancelled);
/// the channel closes when stdin ends or fails (after the error).
fn read_lines(stdin: io::Stdin) -> mpsc::UnboundedReceiver<io::Result<String>> {
    let (tx, lines) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in stdin.lock().lines() {
            let failed = line.is_err();
            if tx.send(line).is_err() || failed {
                return;
            }
        }
    });
    lines
}
