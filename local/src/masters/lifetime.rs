//! Local masters never outlive the process that started them, whatever kills it.
//!
//! `Drop` kills them on a normal exit or a panic, but a process killed by a signal (SIGTERM
//! from `timeout` or a CI runner, SIGHUP, SIGKILL) runs no destructor. So each `redis-server`
//! asks the kernel, between fork and exec, for SIGKILL when its parent dies
//! (`PR_SET_PDEATHSIG`, Linux). SIGKILL also ends a master paused with SIGSTOP.
//!
//! The kernel's "parent" there is the *thread* that forked the child: a master started from
//! a test thread or a tokio worker would be killed when that thread ends, long before the
//! process. So every master is forked by one dedicated thread that lives as long as the
//! process (re-created in a forked child, where it does not exist).
//!
//! Each master also leads a process group of its own, so the signals a terminal or a shell
//! sends to a group reach the program and not its masters: Ctrl-C stops the program, which
//! reports and then stops its masters itself (they do not vanish under the operations still
//! in flight), and Ctrl-Z does not pause them. A master paused with SIGSTOP (a `pause` fault)
//! is then a stopped job of its own group only; the kernel sends SIGHUP to every member of an
//! orphaned group holding a stopped job, and the program's group never holds one.
//!
//! What a killed process leaves on disk, its temporary directory, is swept by the next
//! [`super::LocalMasters`] started on the machine: each directory names its owner's pid.

use std::fs;
use std::io;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::sync::Mutex;

/// Prefix of the temporary directories of local masters.
pub(super) const DIR_PREFIX: &str = "redlock-masters-";
/// File in each directory holding the pid of the process that owns it.
const OWNER_FILE: &str = "owner.pid";

type Job = (Command, mpsc::Sender<io::Result<Child>>);

/// The spawning thread's queue, and the process it belongs to.
struct Spawner {
    pid: u32,
    jobs: mpsc::Sender<Job>,
}

static SPAWNER: Mutex<Option<Spawner>> = Mutex::new(None);

/// Starts `command` as a child that the kernel kills (SIGKILL) when this process dies.
pub(super) fn spawn_tied_to_process(mut command: Command) -> io::Result<Child> {
    tie_to_parent(&mut command);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let (reply, result) = mpsc::channel();
    spawner()?
        .send((command, reply))
        .map_err(|_| io::Error::other("the local-masters spawner thread is gone"))?;
    result
        .recv()
        .map_err(|_| io::Error::other("the local-masters spawner thread is gone"))?
}

/// The queue of this process's spawning thread, started on first use.
fn spawner() -> io::Result<mpsc::Sender<Job>> {
    let mut slot = SPAWNER.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if let Some(spawner) = slot.as_ref().filter(|s| s.pid == pid) {
        return Ok(spawner.jobs.clone());
    }
    // None yet, or inherited through fork() from a parent whose thread does not exist here:
    // the stale sender is forgotten rather than dropped (its channel belongs to the parent).
    if let Some(stale) = slot.take() {
        std::mem::forget(stale);
    }
    let (jobs, queue) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("redlock-local-masters".into())
        .spawn(move || {
            // Ends only with the process: the sender lives in a static.
            for (mut command, reply) in queue {
                let _ = reply.send(command.spawn());
            }
        })?;
    *slot = Some(Spawner {
        pid,
        jobs: jobs.clone(),
    });
    Ok(jobs)
}

#[cfg(target_os = "linux")]
fn tie_to_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec and only makes
    // async-signal-safe calls (prctl, getppid) without allocating.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the request took effect: then no signal comes.
            if libc::getppid() as u32 != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn tie_to_parent(_command: &mut Command) {
    // No parent-death signal on this OS: masters of a process killed by a signal survive it.
}

/// Asks the kernel to kill this process (SIGKILL) when its parent dies (Linux; elsewhere
/// nothing): for a process that runs masters on behalf of another, like `redlock-masters`.
/// Its own masters then die with it. The parent is the *thread* that started this process,
/// and a parent already gone before this call sends no signal: such a process should also
/// stop when it loses its parent some other way (e.g. its stdin pipe closes).
pub fn die_with_parent() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_PDEATHSIG) with a valid signal only sets a process attribute.
        let set = unsafe {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            )
        };
        if set != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Marks `dir` as owned by this process (for [`sweep_abandoned_dirs`]).
pub(super) fn claim_dir(dir: &Path) -> io::Result<()> {
    fs::write(dir.join(OWNER_FILE), std::process::id().to_string())
}

/// Removes the local-master directories in `parent` whose owner process is gone (killed
/// before its `Drop` could run). Directories without an owner file, of another user, or
/// whose owner still runs are left alone; failures are ignored (this is housekeeping).
pub(super) fn sweep_abandoned_dirs(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(DIR_PREFIX) {
            continue;
        }
        let dir = entry.path();
        if !owned_by_this_user(&dir) {
            continue;
        }
        let owner = fs::read_to_string(dir.join(OWNER_FILE))
            .ok()
            .and_then(|text| text.trim().parse::<i32>().ok());
        if owner.is_some_and(|pid| pid > 0 && !process_exists(pid)) {
            let _ = fs::remove_dir_all(&dir);
        }
    }
}

#[cfg(unix)]
fn owned_by_this_user(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == me)
}

#[cfg(not(unix))]
fn owned_by_this_user(_dir: &Path) -> bool {
    false
}

/// True while a process `pid` exists (zombies included); a pid of another user counts.
fn process_exists(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let found = unsafe { libc::kill(pid, 0) } == 0;
    found || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
