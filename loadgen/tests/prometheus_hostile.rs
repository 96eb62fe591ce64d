//! Scrapers that misbehave cannot hold a run served with `--prometheus`: a client pipelining
//! 20,000 `GET /metrics` it never reads, 2,000 half-sent requests and a 200 MiB header line,
//! all at once. The run measures the window it was given and ends by itself, SIGTERM ends it
//! under the same attack, and the generator's threads stay bounded (one per connection
//! before).

use crate::common;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::{closed_ports, read_json};
use redlock_local::{eventually_blocking, wait_for_exit};

/// Generous bounds: the machine may have both cores busy with other work.
const LIMIT: Duration = Duration::from_secs(120);

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_run(dir: &Path, port: u16, duration: &str) -> Killed {
    let child = Command::new(env!("CARGO_BIN_EXE_redlock-loadgen"))
        .args([
            "run",
            "--spawn",
            "3",
            "--fanout",
            "concurrent",
            "--prometheus",
            &format!("127.0.0.1:{port}"),
            "--duration",
            duration,
            "--warmup",
            "200ms",
            "-q",
            "--json",
            dir.join("result.json").to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .expect("the binary runs");
    Killed(child)
}

/// The `Threads:` of process `pid`.
fn threads(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}

/// Every hostile scraper at once, until dropped.
struct Attack {
    stop: Arc<AtomicBool>,
    /// Half-open connections tried so far.
    half_open: Arc<AtomicUsize>,
    workers: Vec<JoinHandle<()>>,
}

impl Drop for Attack {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

fn attack(port: u16) -> Attack {
    let stop = Arc::new(AtomicBool::new(false));
    let connect = move || {
        let s = TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.set_write_timeout(Some(Duration::from_millis(500))).ok()?;
        Some(s)
    };
    let pipelining = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let Some(mut s) = connect() else { return };
            for _ in 0..20_000 {
                if stop.load(Ordering::SeqCst)
                    || s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                        .is_err()
                {
                    return;
                }
            }
        })
    };
    let tried = Arc::new(AtomicUsize::new(0));
    let half_open = {
        let stop = Arc::clone(&stop);
        let tried = Arc::clone(&tried);
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for _ in 0..2_000 {
                tried.fetch_add(1, Ordering::SeqCst);
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Some(mut s) = connect() {
                    // The request line and one header: never the blank line that ends them.
                    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n");
                    held.push(s);
                }
            }
            while !stop.load(Ordering::SeqCst) {
                std::thread::park_timeout(Duration::from_millis(50));
            }
        })
    };
    let big_header = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let Some(mut s) = connect() else { return };
            if s.write_all(b"GET /metrics HTTP/1.1\r\nX-Big: ").is_err() {
                return;
            }
            let chunk = vec![b'a'; 1 << 20];
            for _ in 0..200 {
                if stop.load(Ordering::SeqCst) || s.write_all(&chunk).is_err() {
                    return;
                }
            }
        })
    };
    Attack {
        stop,
        half_open: tried,
        workers: vec![pipelining, half_open, big_header],
    }
}

fn wait_listening(port: u16) {
    eventually_blocking("the --prometheus address listens", LIMIT, || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
}

#[test]
fn hostile_scrapers_neither_stretch_the_run_nor_multiply_its_threads() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_ports(1)[0];
    let mut run = start_run(dir.path(), port, "3s");
    let pid = run.0.id();
    wait_listening(port);
    let before = threads(pid).expect("the run is alive");
    let attack = attack(port);
    let mut most = before;
    let status = loop {
        if let Some(status) = run.0.try_wait().unwrap() {
            break status;
        }
        if let Some(n) = threads(pid) {
            most = most.max(n);
        }
        std::thread::park_timeout(Duration::from_millis(20));
    };
    drop(attack);
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    // The server is one thread whatever the scrapers do; the rest is the run's own.
    assert!(
        most <= before + 4,
        "threads grew from {before} to {most} under attack"
    );
    let result = read_json(&dir.path().join("result.json"));
    let mode = &result["modes"][0];
    let measured = mode["duration_s"].as_f64().unwrap();
    let interval_s = mode["interval_ms"].as_f64().unwrap() / 1000.0;
    // The window measured is the one asked for, to within one of its own intervals.
    assert!(
        (measured - 3.0).abs() <= interval_s,
        "measured {measured} s of a 3 s run"
    );
    assert_eq!(result["interrupted"], false, "{result}");
}

#[test]
fn sigterm_ends_a_run_whatever_its_scrapers_do() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_ports(1)[0];
    let mut run = start_run(dir.path(), port, "10m");
    wait_listening(port);
    let attack = attack(port);
    // Let the attack take hold: every half-open connection is made.
    eventually_blocking("2,000 half-open connections", LIMIT, || {
        attack.half_open.load(Ordering::SeqCst) >= 2_000
    });
    // SAFETY: kill(2) on our own child's pid; no memory is involved.
    unsafe { libc::kill(run.0.id() as i32, libc::SIGTERM) };
    let status = wait_for_exit(&mut run.0, "the run after SIGTERM", LIMIT);
    assert_eq!(status.code(), Some(143), "{status}");
}

/// SIGTERM as soon as the exporter listens (before the masters are up and the run begins,
/// on most machines) exits 143 as at any later moment: never 1.
#[test]
fn sigterm_before_the_run_begins_exits_143() {
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let port = closed_ports(1)[0];
        let mut run = start_run(dir.path(), port, "10m");
        wait_listening(port);
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe { libc::kill(run.0.id() as i32, libc::SIGTERM) };
        let status = wait_for_exit(&mut run.0, "the run after an early SIGTERM", LIMIT);
        let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
        assert_eq!(status.code(), Some(143), "{status}: {stderr}");
    }
}
