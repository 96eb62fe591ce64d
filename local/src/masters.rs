//! Real `redis-server` or `valkey-server` masters on free loopback ports, for tests,
//! benchmarks and the load generator (which server: [`ServerKind`], [`SERVER_ENV`]).
//!
//! Each server runs with `--save "" --appendonly no` in a temporary directory with its own log.
//! Every process started is killed by pid when [`LocalMasters`] is dropped, also during a
//! panic's unwinding, and (Linux) by the kernel when the process that started it dies in any
//! other way, SIGTERM, SIGHUP or SIGKILL included, paused or not; the temporary directory a
//! killed process leaves behind is removed by the next `LocalMasters` started. Individual
//! masters can be paused (SIGSTOP), resumed, killed and restarted (empty: no persistence) to
//! inject faults.

mod clock;

pub use crate::error::LocalError;
mod lifetime;
mod process;
mod server;
mod tls;

use process::{free_port, ping, tail, Server};

use std::fmt;
use std::io::Write;
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::resp::{self, Decoder, Reply};

pub use clock::FAKETIME_LIB_ENV;
pub use lifetime::die_with_parent;
use server::Server as Kind;
pub use server::{Server as ServerKind, SERVER_ENV};
pub use tls::{private_ca, TlsFiles};

/// How long [`LocalMasters::shift_clock`] waits for a running master to show its new clock.
const CLOCK_TAKE_LIMIT: Duration = Duration::from_secs(5);

// Here rather than in `server.rs`: the child module stays free of its parent's error type.
impl Kind {
    /// The server [`SERVER_ENV`] names; Redis when it is unset or empty.
    pub fn from_env() -> Result<Kind, LocalError> {
        match std::env::var(SERVER_ENV) {
            Ok(value) if !value.trim().is_empty() => {
                value.parse().map_err(|reason| LocalError::BadServer {
                    value: format!("{SERVER_ENV}={value}"),
                    reason,
                })
            }
            _ => Ok(Kind::Redis),
        }
    }
}

/// How long a server may take to answer PING after it was started.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// A set of local masters (`redis-server` or `valkey-server`).
pub struct LocalMasters {
    binary: PathBuf,
    password: Option<String>,
    /// Serve TLS only (`--port 0 --tls-port P`) with these certificates.
    tls: Option<TlsFiles>,
    /// URLs end in `#insecure` (a throw-away self-signed certificate: nothing to verify).
    insecure: bool,
    /// The libfaketime library every master runs under (`None`: real clocks).
    fake_clock: Option<PathBuf>,
    /// More arguments for every server ([`Launch::with_server_args`]).
    server_args: Vec<String>,
    dir: tempfile::TempDir,
    servers: Vec<Mutex<Server>>,
}

/// How masters speak, as asked for by the constructors.
enum Tls {
    Off,
    SelfSigned,
    Files(TlsFiles),
}

impl fmt::Debug for LocalMasters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let urls: Vec<String> = (0..self.len())
            .filter_map(|i| self.url_showing(i, "***").ok())
            .collect();
        f.debug_struct("LocalMasters")
            .field("urls", &urls)
            .field("dir", &self.dir.path())
            .finish()
    }
}

impl LocalMasters {
    /// Starts `n` masters of the server [`SERVER_ENV`] names (Redis by default) and waits
    /// until each answers PING.
    pub fn start(n: usize) -> Result<Self, LocalError> {
        Self::of(Kind::from_env()?).start(n)
    }

    /// Starts `n` masters that require `password` (`requirepass`); their URLs carry it.
    pub fn start_with_password(n: usize, password: &str) -> Result<Self, LocalError> {
        Self::of(Kind::from_env()?).start_with_password(n, password)
    }

    /// Starts `n` masters that speak TLS only, with a fresh self-signed certificate; their
    /// URLs are `rediss://127.0.0.1:PORT/#insecure` (no verification: the cert is throw-away).
    /// Needs the `openssl` command. [`command`](Self::command) is not available on them.
    pub fn start_tls(n: usize) -> Result<Self, LocalError> {
        Self::of(Kind::from_env()?).start_tls(n)
    }

    /// Starts `n` masters that speak TLS only with the certificates of `files` (e.g. from a
    /// private CA, or requiring client certificates); their URLs are `rediss://127.0.0.1:PORT/`,
    /// to which the caller adds what to trust (`?ssl_ca_certs=...`).
    /// [`command`](Self::command) is not available on them.
    pub fn start_tls_with(n: usize, files: TlsFiles) -> Result<Self, LocalError> {
        Self::of(Kind::from_env()?).start_tls_with(n, files)
    }

    /// Masters of a chosen server, whatever [`SERVER_ENV`] says: e.g.
    /// `LocalMasters::of(ServerKind::Valkey).start(5)`.
    pub fn of(server: ServerKind) -> Launch {
        Launch {
            server,
            fake_clock: false,
            server_args: Vec::new(),
        }
    }

    fn start_with_options(
        launch: &Launch,
        n: usize,
        password: Option<String>,
        tls: Tls,
    ) -> Result<Self, LocalError> {
        let server = &launch.server;
        let binary = server.binary();
        match Command::new(&binary)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LocalError::NotInstalled {
                    server: server.to_string(),
                    binary: binary.display().to_string(),
                    hint: server.install_hint(),
                })
            }
            Err(e) => return Err(e.into()),
        }
        let fake_clock = if launch.fake_clock {
            clock::check_server(&binary)?;
            Some(clock::library()?)
        } else {
            None
        };
        lifetime::sweep_abandoned_dirs(&std::env::temp_dir());
        let dir = tempfile::Builder::new()
            .prefix(lifetime::DIR_PREFIX)
            .tempdir()?;
        lifetime::claim_dir(dir.path())?;
        let insecure = matches!(tls, Tls::SelfSigned);
        let tls = match tls {
            Tls::Off => None,
            Tls::SelfSigned => Some(tls::self_signed(dir.path())?),
            Tls::Files(files) => Some(files),
        };
        let mut masters = LocalMasters {
            binary,
            password,
            tls,
            insecure,
            fake_clock,
            server_args: launch.server_args.clone(),
            dir,
            servers: Vec::with_capacity(n),
        };
        for index in 0..n {
            let server = masters.spawn_on_free_port(index)?;
            masters.servers.push(Mutex::new(server));
        }
        Ok(masters)
    }

    /// The server binary these masters run.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    fn log_path(&self, index: usize) -> PathBuf {
        self.dir.path().join(format!("master-{index}.log"))
    }

    /// Picks a free port and starts there; another process may grab the port between the
    /// probe and the bind, so a bind failure tries a new port (a few times).
    fn spawn_on_free_port(&self, index: usize) -> Result<Server, LocalError> {
        let mut last = None;
        for _ in 0..5 {
            let port = free_port()?;
            match self.spawn(index, port) {
                Ok(server) => return Ok(server),
                Err(e @ LocalError::StartFailed { .. }) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("at least one try"))
    }

    fn spawn(&self, index: usize, port: u16) -> Result<Server, LocalError> {
        let log = self.log_path(index);
        let data_dir = self.dir.path().join(format!("data-{index}"));
        std::fs::create_dir_all(&data_dir)?;
        let mut command = Command::new(&self.binary);
        if let Some(password) = &self.password {
            command.arg("--requirepass").arg(password);
        }
        if let Some(files) = &self.tls {
            command.args(["--port", "0", "--tls-port", &port.to_string()]);
            files.add_server_args(&mut command);
        } else {
            command.arg("--port").arg(port.to_string());
        }
        command
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--protected-mode", "yes", "--daemonize", "no"])
            .args(&self.server_args)
            .arg("--dir")
            .arg(&data_dir)
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(library) = &self.fake_clock {
            // A master started again keeps the offset its clock had (as a real machine would).
            let file = clock::offset_file(self.dir.path(), index);
            if !file.exists() {
                clock::write_offset(self.dir.path(), index, 0)?;
            }
            clock::add_env(&mut command, library, &file);
        }
        let child = lifetime::spawn_tied_to_process(command)?;
        let mut server = Server {
            port,
            child: Some(child),
            paused: false,
            clock_offset_ms: 0,
        };
        let started = Instant::now();
        loop {
            let ready = if self.tls.is_some() {
                std::fs::read_to_string(&log)
                    .is_ok_and(|text| text.contains("Ready to accept connections"))
            } else {
                ping(port, self.password.as_deref())
            };
            if ready {
                return Ok(server);
            }
            let exited = server
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            let reason = match exited {
                Some(status) => format!("exited with {status}"),
                None if started.elapsed() > READY_TIMEOUT => {
                    format!("no answer to PING within {READY_TIMEOUT:?}")
                }
                None => {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
            };
            server.kill();
            return Err(LocalError::StartFailed {
                binary: self.binary.display().to_string(),
                port,
                reason,
                log: log.display().to_string(),
                tail: tail(&log),
            });
        }
    }

    fn server(&self, index: usize) -> Result<MutexGuard<'_, Server>, LocalError> {
        let server = self.servers.get(index).ok_or(LocalError::NoSuchMaster {
            index,
            count: self.servers.len(),
        })?;
        // A panic while holding the lock cannot leave a Server half-updated: recover it.
        Ok(server.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Number of masters.
    pub fn len(&self) -> usize {
        self.servers.len()
    }
    /// True when no master was started.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
    /// `redis://127.0.0.1:PORT` of every master, in order.
    pub fn urls(&self) -> Vec<String> {
        (0..self.len()).filter_map(|i| self.url(i).ok()).collect()
    }
    /// `redis://127.0.0.1:PORT` of master `index` (`redis://:PASSWORD@…` with a password).
    pub fn url(&self, index: usize) -> Result<String, LocalError> {
        self.url_showing(index, self.password.as_deref().unwrap_or_default())
    }
    /// The URL of master `index` with `password` in place of its password (`***` for output).
    fn url_showing(&self, index: usize, password: &str) -> Result<String, LocalError> {
        let port = self.port(index)?;
        Ok(match (&self.password, &self.tls) {
            (_, Some(_)) if self.insecure => format!("rediss://127.0.0.1:{port}/#insecure"),
            (_, Some(_)) => format!("rediss://127.0.0.1:{port}/"),
            (Some(_), None) => format!("redis://:{password}@127.0.0.1:{port}"),
            (None, None) => format!("redis://127.0.0.1:{port}"),
        })
    }
    /// Port of master `index`.
    pub fn port(&self, index: usize) -> Result<u16, LocalError> {
        Ok(self.server(index)?.port)
    }
    /// Pid of master `index`, if it runs.
    pub fn pid(&self, index: usize) -> Result<Option<i32>, LocalError> {
        Ok(self.server(index)?.pid())
    }
    /// True if master `index` runs and is not paused.
    pub fn is_up(&self, index: usize) -> Result<bool, LocalError> {
        let s = self.server(index)?;
        Ok(s.child.is_some() && !s.paused)
    }
    /// The temporary directory holding the masters' logs and data (removed on drop).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Freezes master `index` with SIGSTOP: connections stay open, nothing is answered.
    pub fn pause(&self, index: usize) -> Result<(), LocalError> {
        let mut s = self.server(index)?;
        s.signal(libc::SIGSTOP)?;
        s.paused = s.child.is_some();
        Ok(())
    }
    /// Thaws a paused master with SIGCONT.
    pub fn resume(&self, index: usize) -> Result<(), LocalError> {
        let mut s = self.server(index)?;
        s.signal(libc::SIGCONT)?;
        s.paused = false;
        Ok(())
    }
    /// Kills master `index` (SIGKILL) and reaps it. Its data is gone.
    pub fn kill(&self, index: usize) -> Result<(), LocalError> {
        self.server(index)?.kill();
        Ok(())
    }
    /// Starts master `index` again on its port (empty), if it is not running.
    pub fn start_again(&self, index: usize) -> Result<(), LocalError> {
        let mut s = self.server(index)?;
        if s.child.is_none() {
            let offset = s.clock_offset_ms;
            *s = self.spawn(index, s.port)?;
            s.clock_offset_ms = offset;
        }
        Ok(())
    }
    /// Kills master `index` and starts it again at once on the same port, empty (a restart
    /// without persistence).
    pub fn restart(&self, index: usize) -> Result<(), LocalError> {
        let mut s = self.server(index)?;
        s.kill();
        let offset = s.clock_offset_ms;
        *s = self.spawn(index, s.port)?;
        s.clock_offset_ms = offset;
        Ok(())
    }

    /// True when the masters run with a fake clock ([`Launch::with_fake_clock`]).
    pub fn has_fake_clock(&self) -> bool {
        self.fake_clock.is_some()
    }

    /// Jumps master `index`'s wall clock by `by_ms` (negative: back) and returns its new
    /// offset from the real clock, in ms. Only on masters started
    /// [`with_fake_clock`](Launch::with_fake_clock).
    ///
    /// A running master has taken the jump when this returns: libfaketime can answer a clock
    /// call or two after the offset file changed with the old offset (seen on about a third of
    /// jumps), so the master's own `TIME` is read until it shows the new offset (at most 5 s).
    /// A killed or paused master reads its new offset when it runs again.
    pub fn shift_clock(&self, index: usize, by_ms: i64) -> Result<i64, LocalError> {
        let (old, offset, running) = {
            let mut s = self.server(index)?;
            if self.fake_clock.is_none() {
                return Err(LocalError::NoFakeClock {
                    binary: self.binary.display().to_string(),
                    reason:
                        "these masters were not started with a fake clock (Launch::with_fake_clock)"
                            .into(),
                });
            }
            let old = s.clock_offset_ms;
            let offset = old.saturating_add(by_ms);
            clock::write_offset(self.dir.path(), index, offset)?;
            s.clock_offset_ms = offset;
            (old, offset, s.child.is_some() && !s.paused)
        };
        if running && offset != old {
            self.await_clock(index, old, offset)?;
        }
        Ok(offset)
    }

    /// Reads master `index`'s `TIME` until its wall clock is nearer `offset` than `old` (ms
    /// from the real clock, which the master and this process share).
    fn await_clock(&self, index: usize, old: i64, offset: i64) -> Result<(), LocalError> {
        let deadline = Instant::now() + CLOCK_TAKE_LIMIT;
        let shown = loop {
            let before = clock::real_now_ms();
            let reply = self.command(index, &["TIME"])?;
            let after = clock::real_now_ms();
            let master_ms =
                clock::time_reply_ms(&reply).ok_or_else(|| unexpected(index, "TIME", &reply))?;
            let shown = master_ms - (before + after) / 2;
            if clock::nearer_new(shown, old, offset) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                break shown;
            }
            // Poll, not spin: each try is a new connection.
            std::thread::sleep(Duration::from_millis(1));
        };
        Err(LocalError::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "master #{index} still showed a clock offset of {} ms {CLOCK_TAKE_LIMIT:?} after its offset file said {offset} ms",
                shown
            ),
        )))
    }

    /// Master `index`'s wall clock offset from the real one, in ms (0 without a fake clock).
    pub fn clock_offset_ms(&self, index: usize) -> Result<i64, LocalError> {
        Ok(self.server(index)?.clock_offset_ms)
    }

    /// Runs one command on master `index` over a fresh connection and returns its reply
    /// (test helper: e.g. `["GET", key]`, `["DBSIZE"]`; an error reply is a [`Reply::Error`]).
    /// Arguments are bytes: a key need not be UTF-8 (a fencing counter's is not).
    pub fn command<A: AsRef<[u8]>>(&self, index: usize, args: &[A]) -> Result<Reply, LocalError> {
        if self.tls.is_some() {
            return Err(LocalError::Io(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "command() speaks plain TCP; these masters are TLS-only",
            )));
        }
        let port = self.port(index)?;
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
        stream.set_read_timeout(Some(Duration::from_secs(2)))?;
        let mut decoder = Decoder::default();
        if let Some(password) = &self.password {
            stream.write_all(&resp::encode(&["AUTH", password]))?;
            let reply = decoder.read(&mut stream)?;
            if reply != Reply::Status("OK".into()) {
                return Err(unexpected(index, "AUTH", &reply));
            }
        }
        stream.write_all(&resp::encode(args))?;
        Ok(decoder.read(&mut stream)?)
    }

    /// How many keys master `index` holds (`DBSIZE`).
    pub fn key_count(&self, index: usize) -> Result<u64, LocalError> {
        let reply = self.command(index, &["DBSIZE"])?;
        reply
            .as_integer()
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| unexpected(index, "DBSIZE", &reply))
    }

    /// The value of `key` on master `index` (`GET`), `None` where it does not exist.
    pub fn get(&self, index: usize, key: &str) -> Result<Option<String>, LocalError> {
        match self.command(index, &["GET", key])? {
            Reply::Nil => Ok(None),
            Reply::Bulk(value) => Ok(Some(String::from_utf8_lossy(&value).into_owned())),
            other => Err(unexpected(index, "GET", &other)),
        }
    }

    /// The running masters (indices) on which `key` holds `value`.
    pub fn holders(&self, key: &str, value: &str) -> Result<Vec<usize>, LocalError> {
        self.running_where(|i| Ok(self.get(i, key)?.as_deref() == Some(value)))
    }

    /// The running masters (indices) on which `key` exists at all.
    pub fn with_key(&self, key: &str) -> Result<Vec<usize>, LocalError> {
        self.running_where(|i| Ok(self.get(i, key)?.is_some()))
    }

    fn running_where(
        &self,
        mut keep: impl FnMut(usize) -> Result<bool, LocalError>,
    ) -> Result<Vec<usize>, LocalError> {
        let mut found = Vec::new();
        for i in 0..self.len() {
            if self.is_up(i)? && keep(i)? {
                found.push(i);
            }
        }
        Ok(found)
    }

    /// Deletes every key on every running master.
    pub fn flush_all(&self) -> Result<(), LocalError> {
        for i in 0..self.len() {
            if self.is_up(i)? {
                self.command(i, &["FLUSHALL"])?;
            }
        }
        Ok(())
    }
}

/// Local masters of a chosen server, ready to start: see [`LocalMasters::of`].
#[derive(Debug, Clone)]
pub struct Launch {
    server: ServerKind,
    fake_clock: bool,
    /// More arguments for every server, after the ones every master gets.
    server_args: Vec<String>,
}

impl Launch {
    /// Runs every master under libfaketime, so [`LocalMasters::shift_clock`] can jump its wall
    /// clock. Starting fails when libfaketime is missing, or the server is built with jemalloc
    /// (it hangs under libfaketime: use Valkey, `make deps-valkey`).
    pub fn with_fake_clock(mut self) -> Launch {
        self.fake_clock = true;
        self
    }
    /// Starts every master with these arguments too (configuration directives as
    /// `redis-server` takes them: `["--rename-command", "DELIFEQ", ""]`), after the ones
    /// every master gets.
    pub fn with_server_args<I, S>(mut self, args: I) -> Launch
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.server_args.extend(args.into_iter().map(Into::into));
        self
    }
    /// Starts `n` masters; see [`LocalMasters::start`].
    pub fn start(&self, n: usize) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, None, Tls::Off)
    }
    /// Starts `n` masters that require `password`; see [`LocalMasters::start_with_password`].
    pub fn start_with_password(
        &self,
        n: usize,
        password: &str,
    ) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, Some(password.to_string()), Tls::Off)
    }
    /// Starts `n` TLS-only masters, self-signed; see [`LocalMasters::start_tls`].
    pub fn start_tls(&self, n: usize) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, None, Tls::SelfSigned)
    }
    /// Starts `n` TLS-only masters with `files`; see [`LocalMasters::start_tls_with`].
    pub fn start_tls_with(&self, n: usize, files: TlsFiles) -> Result<LocalMasters, LocalError> {
        LocalMasters::start_with_options(self, n, None, Tls::Files(files))
    }
}

/// A reply that makes no sense for `command`.
fn unexpected(index: usize, command: &str, reply: &Reply) -> LocalError {
    LocalError::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("{command} on master #{index}: unexpected reply {reply}"),
    ))
}

impl Drop for LocalMasters {
    fn drop(&mut self) {
        for server in &mut self.servers {
            server.get_mut().unwrap_or_else(|p| p.into_inner()).kill();
        }
    }
}
