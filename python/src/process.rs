//! This process's id, cheap to ask for: the fork checks of every call compare it with the id
//! a client or lock was made in (see `boundary::ProcessBound`).

use std::sync::atomic::{AtomicU32, Ordering};

/// This process's id, read from the kernel once per process: the fork checks run on
/// every call, and `getpid` is a system call each time. 0 = not read yet in this process.
static PROCESS_ID: AtomicU32 = AtomicU32::new(0);

/// In the child of a `fork()` (Python's `os.fork`, multiprocessing's fork start method), before
/// any Python code runs there: forget the parent's id. Async-signal-safe (one atomic store).
extern "C" fn forget_process_id() {
    PROCESS_ID.store(0, Ordering::SeqCst);
}

/// Registers the fork hook; called once, when the module is imported.
pub(crate) fn watch_forks() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a handler that only stores to an atomic; no other precondition.
        // Without it (the call cannot fail but for lack of memory) every check reads the
        // kernel's id instead, so nothing is cached that a fork could make wrong.
        let registered = unsafe { libc::pthread_atfork(None, None, Some(forget_process_id)) };
        if registered != 0 {
            PROCESS_ID.store(u32::MAX, Ordering::SeqCst);
        }
    });
}

/// The current process's id (`std::process::id()`), without a system call after the first.
pub(crate) fn process_id() -> u32 {
    match PROCESS_ID.load(Ordering::SeqCst) {
        // Not cached yet, or the fork hook could not be registered (never cache then).
        0 | u32::MAX => {
            let id = std::process::id();
            let _ = PROCESS_ID.compare_exchange(0, id, Ordering::SeqCst, Ordering::SeqCst);
            id
        }
        id => id,
    }
}
