//! The drivers `make bench-peers` knows, and how one of them is run and read.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Whose code a driver measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kind {
    /// One of this project's surfaces.
    Project,
    /// Another Redlock library.
    Peer,
    /// Not a lock: what the same commands cost with no lock logic (`floor.rs`).
    Reference,
}

/// A program that runs one workload through one library.
#[derive(Debug, Clone)]
pub struct Driver {
    pub name: &'static str,
    pub kind: Kind,
    /// Language and API, for the tables.
    pub surface: &'static str,
    /// The program and its leading arguments, or why it cannot run here.
    pub command: Result<(PathBuf, Vec<String>), String>,
    /// Extra environment (the C driver's library path).
    pub env: Vec<(String, String)>,
}

/// Where the built drivers are.
#[derive(Debug, Clone)]
pub struct Paths {
    pub root: PathBuf,
    pub target: PathBuf,
    pub python: PathBuf,
}

impl Paths {
    /// Why `name` was not built, as the make target recorded it, if it did.
    fn build_failure(&self, name: &str) -> Option<String> {
        let path = self.target.join("bench-peers/skipped").join(name);
        let text = std::fs::read_to_string(path).ok()?;
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    fn program(&self, name: &str, path: PathBuf) -> Result<PathBuf, String> {
        if let Some(reason) = self.build_failure(name) {
            return Err(reason);
        }
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "not built: {} is missing (run `make bench-peers`)",
                path.display()
            ))
        }
    }
}

/// Every driver, in their default order: this project's surfaces first, then the peers.
pub fn all(paths: &Paths) -> Vec<Driver> {
    let release = paths.target.join("release");
    let rust = paths.program("rust", release.join("peers-driver"));
    let c = paths.program("c", paths.target.join("bench-peers/c-driver"));
    let redsync = paths.program("redsync", paths.target.join("bench-peers/redsync-driver"));
    let python = |name: &'static str| {
        let script = paths.root.join("bench/peers/driver.py");
        paths
            .program(name, paths.python.clone())
            .and_then(|python| {
                if script.is_file() {
                    Ok((python, vec![script.display().to_string()]))
                } else {
                    Err(format!("{} is missing", script.display()))
                }
            })
    };
    let bin = |program: Result<PathBuf, String>| program.map(|p| (p, Vec::new()));
    let project = |name, surface, command| Driver {
        name,
        kind: Kind::Project,
        surface,
        command,
        env: Vec::new(),
    };
    let peer = |name, surface, command| Driver {
        name,
        kind: Kind::Peer,
        surface,
        command,
        env: Vec::new(),
    };
    vec![
        project("rust-async", "Rust, tokio", bin(rust.clone())),
        Driver {
            env: vec![("REDLOCK_PEERS_LOCAL_HANDOFF".to_string(), "0".to_string())],
            ..project(
                "rust-async-no-handoff",
                "Rust, tokio, `local_handoff(false)`",
                bin(rust.clone()),
            )
        },
        project(
            "rust-main",
            "Rust, tokio, awaited in the main future (`#[tokio::main]`, nothing spawned)",
            bin(rust.clone()),
        ),
        project("rust-blocking", "Rust, blocking (threads)", bin(rust)),
        Driver {
            env: vec![("LD_LIBRARY_PATH".to_string(), release.display().to_string())],
            ..project("c", "C ABI (libredlock.so, pthreads)", bin(c))
        },
        project(
            "python-threads",
            "Python redlock_rs, threads",
            python("redlock-rs"),
        ),
        project(
            "python-asyncio",
            "Python redlock_rs, asyncio",
            python("redlock-rs"),
        ),
        peer(
            "rslock",
            "Rust, tokio",
            bin(paths.program("rslock", release.join("peer-rslock"))),
        ),
        peer(
            "redlock-crate",
            "Rust `redlock` crate, threads",
            bin(paths.program("redlock-crate", release.join("peer-redlock"))),
        ),
        peer(
            "redsync",
            "Go, goroutines (go-redsync, go-redis)",
            bin(redsync.clone()),
        ),
        peer(
            "redsync-failfast",
            "Go, go-redsync `WithFailFast(true)` (returns at a quorum; stragglers' keys may stay until their TTL)",
            bin(redsync),
        ),
        peer("aioredlock", "Python, asyncio", python("aioredlock")),
        peer("pottery", "Python, threads", python("pottery")),
        Driver {
            name: "floor",
            kind: Kind::Reference,
            surface: "reference: plain SET NX PX / DEL, blocking sockets, no lock logic (W1; W2 pipelined in rounds)",
            command: bin(paths.program("floor", release.join("peers-driver"))),
            env: Vec::new(),
        },
    ]
}

/// What one driver process measured.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub library: String,
    pub tasks: u64,
    /// Completed cycles (W3: acquisitions).
    pub ok: u64,
    pub acquire_failed: u64,
    pub release_failed: u64,
    pub errors: Vec<String>,
    pub wall_s: f64,
    /// User + sys CPU of the driver process over its measured window.
    pub cpu_s: f64,
    /// User + sys CPU of the whole driver process, start-up included (from `wait4`).
    pub process_cpu_s: f64,
    pub acquire_p50_us: f64,
    pub acquire_p99_us: f64,
    pub release_p50_us: f64,
    pub release_p99_us: f64,
    /// Keys on the masters after the process exited (a lock a release should have deleted).
    pub keys_left: u64,
    /// CPU the masters' processes used while the driver ran (its start-up included).
    pub masters_cpu_s: f64,
}

impl Sample {
    /// Cycles (W3: acquisitions) per second.
    pub fn rate(&self) -> f64 {
        self.ok as f64 / self.wall_s
    }

    /// Client CPU (user + sys) per cycle, in µs.
    pub fn cpu_per_cycle_us(&self) -> f64 {
        self.cpu_s * 1e6 / self.ok.max(1) as f64
    }

    /// The masters' CPU per cycle, in µs: what the client's way of talking to them costs
    /// them (one write per request, or many requests per write).
    pub fn masters_cpu_per_cycle_us(&self) -> f64 {
        self.masters_cpu_s * 1e6 / self.ok.max(1) as f64
    }
}

/// The result of one (driver, workload) in one run.
#[derive(Debug, Clone, Serialize)]
pub enum Outcome {
    Measured(Sample),
    Skipped(String),
    Failed(String),
}

/// The line a driver prints.
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(default)]
    skipped: Option<String>,
    #[serde(default)]
    failed: Option<String>,
    #[serde(default)]
    library: String,
    #[serde(default)]
    tasks: u64,
    #[serde(default)]
    ok: u64,
    #[serde(default)]
    acquire_failed: u64,
    #[serde(default)]
    release_failed: u64,
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    wall_s: f64,
    #[serde(default)]
    cpu_user_s: f64,
    #[serde(default)]
    cpu_sys_s: f64,
    #[serde(default)]
    acquire_ns: Vec<u64>,
    #[serde(default)]
    release_ns: Vec<u64>,
}

/// The `p` quantile (0..=1) of `sorted` by nearest rank, in µs.
pub fn percentile_us(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1e3
}

/// Runs `driver` on `workload` with `flags`, waits at most `limit`, and reads its line.
/// `process_cpu_s` comes from the kernel's accounting of the reaped child.
pub fn run(driver: &Driver, flags: &[String], limit: Duration) -> Outcome {
    let (program, leading) = match &driver.command {
        Ok(command) => command,
        Err(reason) => return Outcome::Skipped(reason.clone()),
    };
    let mut command = Command::new(program);
    command
        .args(leading)
        .args(["--driver", driver.name])
        .args(flags)
        .envs(driver.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Outcome::Skipped(format!("cannot start {}: {e}", program.display())),
    };
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = reader(Box::new(child.stdout.take().expect("piped")));
    let stderr = reader(Box::new(child.stderr.take().expect("piped")));
    let (status, process_cpu_s) = match wait_with_rusage(child.id() as libc::pid_t, limit) {
        Ok(done) => done,
        Err(e) => return Outcome::Failed(e),
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let last_line = stdout.lines().rev().find(|l| !l.trim().is_empty());
    let parsed = last_line.map(serde_json::from_str::<Line>);
    match parsed {
        Some(Ok(line)) => {
            if let Some(reason) = line.skipped {
                return Outcome::Skipped(reason);
            }
            if let Some(reason) = line.failed {
                return Outcome::Failed(reason);
            }
            if status != 0 {
                return Outcome::Failed(format!("exit status {status}: {}", tail(&stderr)));
            }
            Outcome::Measured(sample(line, process_cpu_s))
        }
        _ => Outcome::Failed(format!(
            "exit status {status}, no result line; stderr: {}",
            tail(&stderr)
        )),
    }
}

fn sample(mut line: Line, process_cpu_s: f64) -> Sample {
    line.acquire_ns.sort_unstable();
    line.release_ns.sort_unstable();
    Sample {
        library: line.library,
        tasks: line.tasks,
        ok: line.ok,
        acquire_failed: line.acquire_failed,
        release_failed: line.release_failed,
        errors: line.errors,
        wall_s: line.wall_s,
        cpu_s: line.cpu_user_s + line.cpu_sys_s,
        process_cpu_s,
        acquire_p50_us: percentile_us(&line.acquire_ns, 0.50),
        acquire_p99_us: percentile_us(&line.acquire_ns, 0.99),
        release_p50_us: percentile_us(&line.release_ns, 0.50),
        release_p99_us: percentile_us(&line.release_ns, 0.99),
        keys_left: 0,
        masters_cpu_s: 0.0,
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

/// Waits for `pid` (killing it after `limit`) and returns its exit status and the user + sys
/// CPU the kernel accounted to it and its threads.
fn wait_with_rusage(pid: libc::pid_t, limit: Duration) -> Result<(i32, f64), String> {
    let started = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: wait4 writes only the status and the rusage struct it is given.
        let (reaped, usage) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            let reaped = libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage);
            (reaped, usage)
        };
        if reaped == pid {
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let cpu = secs(usage.ru_utime) + secs(usage.ru_stime);
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            };
            return Ok((code, cpu));
        }
        if reaped < 0 {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        if started.elapsed() > limit {
            // SAFETY: pid is our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let mut status = 0;
            // SAFETY: reaps the child just killed.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            return Err(format!("killed after {} s (no result)", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The driver's default location of the benchmark virtualenv's interpreter.
pub fn default_python(root: &Path) -> PathBuf {
    root.join("bench/peers/.venv/bin/python")
}
