//! Local masters never outlive the process that started them: a child process holding
//! `LocalMasters` (one of them paused) is killed by each signal, and no `redis-server` on its
//! ports may survive; the directory a killed owner leaves is swept by the next start.
//!
//! The child is this test binary itself, re-run with `REDLOCK_MASTERS_CHILD` set (see
//! [`child_holding_masters`]), its `TMPDIR` a directory of this test's own: no other process
//! starting masters (another test, another copy of the suite) sweeps what the child leaves.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redlock_local::resp::Reply;
use redlock_local::{eventually_blocking, wait_for_exit, with_default_signals, LocalMasters};

const CHILD_ENV: &str = "REDLOCK_MASTERS_CHILD";

/// Generous bound for anything that should take milliseconds (busy CI machine).
const PATIENCE: Duration = Duration::from_secs(30);

/// A child body runs only when a test re-ran this binary as its child.
fn only_as_a_child(parent: &str) {
    assert!(
        std::env::var_os(CHILD_ENV).is_some(),
        "run by {parent} only"
    );
}

/// Not a test of its own (ignored): the body of the child process. Starts 2 masters, pauses
/// one, prints `ready <dir> <port>,<port>` and waits to be killed.
#[test]
#[ignore = "the child process of the signal tests"]
fn child_holding_masters() {
    only_as_a_child("the signal tests");
    let masters = LocalMasters::start(2).expect("start masters");
    masters.pause(0).expect("pause");
    let ports: Vec<String> = (0..masters.len())
        .map(|i| masters.port(i).unwrap().to_string())
        .collect();
    println!("ready {} {}", masters.dir().display(), ports.join(","));
    loop {
        std::thread::park(); // until a signal ends the process
    }
}

/// Not a test of its own (ignored): starts one master (sweeping its `TMPDIR`), stops it and
/// exits.
#[test]
#[ignore = "the child process of the sweep test"]
fn child_starting_one_master() {
    only_as_a_child("the sweep test");
    drop(LocalMasters::start(1).expect("start a master"));
}

struct Child {
    process: std::process::Child,
    dir: PathBuf,
    ports: Vec<u16>,
    /// The child's `TMPDIR`, removed with whatever is left in it when the test ends.
    parent: tempfile::TempDir,
}

/// This test binary re-run as the child `name`, with `parent` as its `TMPDIR`.
fn child_command(name: &str, parent: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    with_default_signals(&mut command)
        .args(["--exact", name, "--ignored", "--nocapture"])
        .env(CHILD_ENV, "1")
        .env("TMPDIR", parent);
    command
}

/// Runs the child (with default signal dispositions: this test may run under `nohup`) and
/// waits (bounded) for its `ready` line.
fn start_child() -> Child {
    let parent = tempfile::tempdir().expect("the child's TMPDIR");
    let mut process = child_command("masters::child_holding_masters", parent.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the child");
    let lines = common::stdout_lines(&mut process);
    let deadline = Instant::now() + PATIENCE;
    let ready = std::iter::from_fn(|| {
        lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .ok()
    })
    .find_map(|line| line.strip_prefix("ready ").map(str::to_owned));
    let Some(ready) = ready else {
        let _ = process.kill();
        let _ = process.wait();
        panic!("the child never reported its masters ready");
    };
    let (dir, ports) = ready.rsplit_once(' ').expect("ready <dir> <ports>");
    Child {
        process,
        dir: PathBuf::from(dir),
        ports: ports.split(',').map(|p| p.parse().unwrap()).collect(),
        parent,
    }
}

/// Live (not zombie) `redis-server` processes serving one of `ports` (by their title,
/// `redis-server 127.0.0.1:PORT`, or their arguments, `--port PORT`).
fn survivors(ports: &[u16]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let path = entry.path();
        let Ok(cmdline) = std::fs::read(path.join("cmdline")) else {
            continue;
        };
        let words: Vec<String> = cmdline
            .split(|&b| b == 0 || b == b' ')
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        if !words.first().is_some_and(|w| w.contains("redis-server")) {
            continue;
        }
        let on_port = ports.iter().any(|port| {
            let port = port.to_string();
            words
                .iter()
                .any(|w| w.rsplit_once(':').is_some_and(|(_, p)| p == port))
                || words.windows(2).any(|w| w[0] == "--port" && w[1] == port)
        });
        let zombie = std::fs::read_to_string(path.join("stat"))
            .ok()
            .and_then(|stat| stat.rsplit_once(") ").map(|(_, s)| s.starts_with('Z')))
            .unwrap_or(true); // gone meanwhile
        if on_port && !zombie {
            found.push(format!("{} {}", path.display(), words.join(" ")));
        }
    }
    found
}

fn kill_child_and_check_masters_die(signal: libc::c_int) -> Child {
    let mut child = start_child();
    assert!(
        survivors(&child.ports).len() == 2,
        "both masters run before the signal: {:?}",
        survivors(&child.ports)
    );
    // SAFETY: signalling the child process this test started (not yet reaped).
    assert_eq!(unsafe { libc::kill(child.process.id() as i32, signal) }, 0);
    let status = wait_for_exit(&mut child.process, "the signalled child", PATIENCE);
    assert!(!status.success(), "the child ended by signal {signal}");
    eventually_blocking(
        &format!("no redis-server outliving its parent killed by signal {signal}"),
        PATIENCE,
        || survivors(&child.ports).is_empty(),
    );
    child
}

#[test]
fn masters_die_with_a_parent_killed_by_sigterm() {
    kill_child_and_check_masters_die(libc::SIGTERM);
}

#[test]
fn masters_die_with_a_parent_killed_by_sighup() {
    kill_child_and_check_masters_die(libc::SIGHUP);
}

#[test]
fn masters_die_with_a_parent_killed_by_sigkill_and_the_next_start_sweeps_its_directory() {
    let child = kill_child_and_check_masters_die(libc::SIGKILL);
    assert!(
        child.dir.exists(),
        "nothing ran in the killed child to remove {}",
        child.dir.display()
    );
    let mut next = child_command("masters::child_starting_one_master", child.parent.path())
        .stdout(Stdio::null())
        .spawn()
        .expect("start the sweeping child");
    let status = wait_for_exit(&mut next, "the sweeping child", PATIENCE);
    assert!(status.success(), "the sweeping child: {status}");
    assert!(
        !child.dir.exists(),
        "{} of the killed child was not swept",
        child.dir.display()
    );
    let next = LocalMasters::start(1).expect("start a master");
    // A live owner's directory is never swept.
    let live = next.dir().to_path_buf();
    drop(LocalMasters::start(1).expect("start another master"));
    assert!(
        live.exists(),
        "the live directory {} was swept",
        live.display()
    );
    drop(next);
    assert!(!live.exists(), "dropping removes the directory");
}

/// The kernel's parent-death signal follows the *thread* that forked a child: masters
/// started from a thread that ends must keep running while the process lives.
#[test]
fn each_master_leads_a_process_group_of_its_own_also_when_restarted_or_paused() {
    let masters = LocalMasters::start(2).expect("start masters");
    // SAFETY: getpgid reads a process attribute; it has no preconditions.
    let ours = unsafe { libc::getpgid(0) };
    let group_of = |i: usize| {
        let pid = masters.pid(i).unwrap().expect("running");
        // SAFETY: as above, for the pid of a child we started and have not reaped.
        (pid, unsafe { libc::getpgid(pid) })
    };
    masters.pause(0).unwrap();
    masters.kill(1).unwrap();
    masters.start_again(1).unwrap();
    for i in 0..2 {
        let (pid, group) = group_of(i);
        assert_eq!(group, pid, "master {i} leads its group");
        assert_ne!(group, ours, "master {i} is not in the group of its starter");
    }
    masters.resume(0).unwrap();
}

#[test]
fn masters_outlive_the_thread_that_started_them() {
    let (masters, tid) = std::thread::spawn(|| {
        let masters = LocalMasters::start(2).expect("start masters");
        // SAFETY: gettid has no preconditions.
        (masters, unsafe { libc::gettid() })
    })
    .join()
    .expect("the starting thread");
    // join() returns before the kernel has finished the thread's exit (and sent any
    // parent-death signal); its task entry goes only after that.
    let task = PathBuf::from(format!("/proc/self/task/{tid}"));
    eventually_blocking(&format!("thread {tid} to finish exiting"), PATIENCE, || {
        !task.exists()
    });
    let ports: Vec<u16> = (0..2).map(|i| masters.port(i).unwrap()).collect();
    // The starting thread is gone; pings answer (a dead master would refuse the connection).
    for i in 0..2 {
        let reply = masters.command(i, &["PING"]).expect("PING");
        assert_eq!(reply, Reply::Status("PONG".into()), "master {i}");
    }
    assert_eq!(survivors(&ports).len(), 2);
    drop(masters);
    assert!(
        survivors(&ports).is_empty(),
        "dropping kills and reaps them"
    );
}
