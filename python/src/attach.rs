//! Threads the interpreter did not start (tokio workers, blocked callers' signal checks,
//! asyncio completions, a metrics batch past its cap) attaching to it, and the interpreter's
//! exit, after which none may.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use pyo3::prelude::*;

/// Set by an `atexit` hook: from then on no Rust thread attaches to the interpreter (an
/// attach racing with finalization can kill the thread mid-unwind or abort the process).
static INTERPRETER_EXITING: AtomicBool = AtomicBool::new(false);
/// Rust-owned threads currently inside (or about to enter) the interpreter.
static ATTACHED_SECTIONS: AtomicUsize = AtomicUsize::new(0);
/// How long the exit hook waits for those threads to leave the interpreter.
const EXIT_DRAIN: Duration = Duration::from_secs(2);

/// Permission for a thread the interpreter did not start (tokio workers, blocked callers'
/// signal checks, asyncio completions) to attach; `None` once the interpreter is exiting.
pub(crate) struct AttachPermit(());

impl AttachPermit {
    pub(crate) fn acquire() -> Option<AttachPermit> {
        ATTACHED_SECTIONS.fetch_add(1, Ordering::SeqCst);
        if INTERPRETER_EXITING.load(Ordering::SeqCst) {
            ATTACHED_SECTIONS.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(AttachPermit(()))
    }
}

impl Drop for AttachPermit {
    fn drop(&mut self) {
        ATTACHED_SECTIONS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Called from Python's `atexit` (registered when the module is imported), before the
/// interpreter starts finalizing: refuses new attaches and lets the current ones finish.
#[pyfunction]
pub(crate) fn _at_interpreter_exit(py: Python<'_>) {
    INTERPRETER_EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = std::time::Instant::now() + EXIT_DRAIN;
        while ATTACHED_SECTIONS.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}
