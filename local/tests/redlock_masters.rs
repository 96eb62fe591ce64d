//! The `redlock-masters` binary, as the Python tests drive it: URLs on stdout, one command
//! per stdin line answered by one line, masters gone when stdin closes or the process dies;
//! and as a user starts it in the background: `--until-signal` keeps them until SIGINT or
//! SIGTERM.

use crate::common;

use std::io::Write;
use std::net::{Ipv4Addr, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use redlock_local::resp::{self, Decoder, Reply};
use redlock_local::{eventually_blocking, wait_for_exit, with_default_signals};

/// Bound for anything that should take milliseconds (busy CI machine): never a speed claim.
const PATIENCE: Duration = Duration::from_secs(30);
/// How long a paused master is given to (wrongly) answer.
const SILENCE: Duration = Duration::from_millis(300);

/// A running `redlock-masters`, its stdin, and its stdout and stderr lines.
struct Masters {
    process: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    errors: mpsc::Receiver<String>,
}

impl Masters {
    fn start(args: &[&str]) -> Masters {
        Masters::start_with(args, Stdio::piped())
    }

    /// Started with `stdin` (`Stdio::null()`: closed from the start, as for a job a shell
    /// script runs in the background).
    fn start_with(args: &[&str], stdin: Stdio) -> Masters {
        let mut command = Command::new(env!("CARGO_BIN_EXE_redlock-masters"));
        // Signalled by some tests: start it as a shell would, whatever this process ignores.
        let mut process = with_default_signals(&mut command)
            .args(args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start redlock-masters");
        let lines = common::stdout_lines(&mut process);
        let errors = common::stderr_lines(&mut process);
        let stdin = process.stdin.take();
        Masters {
            process,
            stdin,
            lines,
            errors,
        }
    }

    /// Waits (bounded) for a line on stderr that contains `words`.
    fn says(&self, words: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.errors.recv_timeout(left) {
                Ok(line) if line.contains(words) => return line,
                Ok(_) => {}
                Err(e) => panic!("redlock-masters never said {words:?} on stderr: {e}"),
            }
        }
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
        let sent = unsafe { libc::kill(self.process.id() as libc::pid_t, signal) };
        assert_eq!(sent, 0, "kill: {}", std::io::Error::last_os_error());
    }

    fn line(&self) -> String {
        self.lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("no line from redlock-masters within {PATIENCE:?}: {e}"))
    }

    fn urls(&self, n: usize) -> Vec<String> {
        (0..n).map(|_| self.line()).collect()
    }

    fn say(&mut self, command: &str) -> String {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{command}").expect("write a command");
        stdin.flush().expect("flush");
        self.line()
    }

    /// Waits (bounded) for the process to end; its exit status.
    fn wait(&mut self) -> std::process::ExitStatus {
        wait_for_exit(&mut self.process, "redlock-masters", PATIENCE)
    }
}

impl Drop for Masters {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn port(url: &str) -> u16 {
    url.rsplit(':').next().unwrap().parse().expect("a port")
}

/// PING on `port`: `Some(reply)`, or `None` when the connection is refused or nothing answers
/// within `wait`.
fn ping(port: u16, wait: Duration) -> Option<Reply> {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).ok()?;
    stream.set_read_timeout(Some(wait)).unwrap();
    stream.write_all(&resp::encode(&["PING"])).ok()?;
    Decoder::default().read(&mut stream).ok()
}

fn pong() -> Option<Reply> {
    Some(Reply::Status("PONG".into()))
}

fn refused(port: u16) -> bool {
    TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err()
}

fn eventually_refused(port: u16) {
    eventually_blocking(
        &format!("port {port} to refuse connections"),
        PATIENCE,
        || refused(port),
    );
}

#[test]
fn prints_urls_obeys_commands_and_stops_its_masters_when_stdin_closes() {
    let mut masters = Masters::start(&["2"]);
    let urls = masters.urls(2);
    let ports: Vec<u16> = urls.iter().map(|u| port(u)).collect();
    for (url, &port) in urls.iter().zip(&ports) {
        assert_eq!(url, &format!("redis://127.0.0.1:{port}"));
        assert_eq!(ping(port, PATIENCE), pong(), "{url}");
    }

    assert_eq!(masters.say("pause 0"), "ok");
    assert_eq!(ping(ports[0], SILENCE), None, "a paused master answered");
    assert_eq!(masters.say("resume 0"), "ok");
    assert_eq!(ping(ports[0], PATIENCE), pong());

    assert_eq!(masters.say("kill 1"), "ok");
    assert!(refused(ports[1]), "a killed master accepts connections");
    assert_eq!(masters.say("start 1"), "ok");
    assert_eq!(
        ping(ports[1], PATIENCE),
        pong(),
        "started again on its port"
    );
    assert_eq!(masters.say("restart 1"), "ok");
    assert_eq!(ping(ports[1], PATIENCE), pong(), "restarted on its port");

    let unknown = masters.say("stop 1");
    assert!(
        unknown.starts_with("error: ") && unknown.contains("\"stop 1\""),
        "{unknown}"
    );
    let missing = masters.say("pause 7");
    assert!(missing.contains("no local master #7"), "{missing}");

    drop(masters.stdin.take());
    masters.says("stdin closed: stopping the 2 masters (run it with --until-signal");
    assert!(masters.wait().success());
    for port in ports {
        eventually_refused(port);
    }
}

#[test]
fn started_with_stdin_closed_it_says_why_it_stops() {
    let mut masters = Masters::start_with(&["1"], Stdio::null());
    let port = port(&masters.line());
    masters.says("stdin closed: stopping the 1 master (run it with --until-signal");
    assert!(masters.wait().success());
    eventually_refused(port);
}

#[test]
fn until_signal_keeps_its_masters_with_stdin_closed_and_stops_them_on_sigterm_or_sigint() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGINT, "SIGINT")] {
        let mut masters = Masters::start_with(&["2", "--until-signal"], Stdio::null());
        let ports: Vec<u16> = masters.urls(2).iter().map(|u| port(u)).collect();
        masters.says("2 masters running until SIGINT (Ctrl-C) or SIGTERM");
        masters.says("stdin closed: the masters keep running");
        // Stdin's end is behind it: still running, masters still answering.
        assert!(masters.process.try_wait().unwrap().is_none(), "{name}");
        for &port in &ports {
            assert_eq!(ping(port, PATIENCE), pong(), "{name}: port {port}");
        }
        masters.signal(signal);
        masters.says(&format!("{name}: stopping the 2 masters"));
        assert!(masters.wait().success(), "{name}");
        for port in ports {
            eventually_refused(port);
        }
    }
}

#[test]
fn killing_it_kills_its_masters() {
    let mut masters = Masters::start(&["1", "--password", "pw-1"]);
    let url = masters.line();
    assert!(url.starts_with("redis://:pw-1@127.0.0.1:"), "{url}");
    let port = port(&url);
    masters.process.kill().expect("SIGKILL");
    masters.wait();
    eventually_refused(port);
}

#[test]
fn a_bad_count_is_refused_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-masters"))
        .arg("0")
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("'0'"), "{stderr}");
}

/// `INFO server` of the master on `port`: its text.
fn info_server(port: u16) -> String {
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream
        .write_all(&resp::encode(&["INFO", "server"]))
        .unwrap();
    let reply = Decoder::default().read(&mut stream).expect("INFO");
    reply.as_text().expect("INFO text").to_string()
}

#[test]
fn server_picks_what_the_masters_run_whatever_the_environment_says() {
    for (server, name) in [
        ("valkey", "server_name:valkey"),
        ("redis", "redis_version:7."),
    ] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_redlock-masters"));
        // The flag wins over REDLOCK_SERVER.
        let other = if server == "valkey" {
            "redis"
        } else {
            "valkey"
        };
        command.env("REDLOCK_SERVER", other);
        let mut process = command
            .args(["5", "--server", server])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start redlock-masters");
        let lines = common::stdout_lines(&mut process);
        for _ in 0..5 {
            let url = lines.recv_timeout(PATIENCE).expect("a URL");
            let info = info_server(port(&url));
            assert!(info.contains(name), "{server}: {info}");
            if server == "redis" {
                assert!(!info.contains("server_name:valkey"), "{info}");
            }
        }
        drop(process.stdin.take());
        wait_for_exit(&mut process, "redlock-masters", PATIENCE);
    }
}

#[test]
fn a_bad_server_is_refused_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-masters"))
        .args(["1", "--server", "valky"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"valky\""), "{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_redlock-masters"))
        .arg("1")
        .env("REDLOCK_SERVER", "valky")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("REDLOCK_SERVER=valky"), "{stderr}");
}
