//! Child processes of tests that start the way a shell would start them, whatever the test
//! runner inherited: a test run under `nohup` ignores SIGHUP, and an ignored signal stays
//! ignored across `exec`, so a child meant to die of it would live on.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Signals a test may send to its children, reset to their default action in the child.
const RESET: [libc::c_int; 5] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGQUIT,
    libc::SIGPIPE,
];

/// Makes `command` start its process with the default action for SIGHUP, SIGINT, SIGTERM,
/// SIGQUIT and SIGPIPE and no signal blocked, whatever this process ignores or blocks.
pub fn with_default_signals(command: &mut Command) -> &mut Command {
    // SAFETY: the closure runs in the forked child before `exec` and calls only `signal` and
    // `sigprocmask` on stack data, both async-signal-safe; it allocates and locks nothing.
    unsafe {
        command.pre_exec(|| {
            for signal in RESET {
                if libc::signal(signal, libc::SIG_DFL) == libc::SIG_ERR {
                    return Err(std::io::Error::last_os_error());
                }
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}
