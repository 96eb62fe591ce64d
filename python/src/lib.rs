//! `redlock_rs._redlock_rs`: the Python extension over redlock-core.
//!
//! - `sync_api`, `sync_lock`: `Redlock`, `LockContext`, `Lock` over `redlock_core::blocking`;
//! - `async_api`, `async_lock`: `AsyncRedlock`, `AsyncLockContext`, `AsyncLock` over the
//!   async core on the tokio runtime of `runtime`, awaited through `coroutine`;
//! - `client`: what a client keeps (and lets go of on `close()`); `pending`: the releases an
//!   asyncio client runs in the background, which `await close()` waits for;
//! - `boundary`: the one GIL helper, panic containment, fork detection, Ctrl-C polling;
//! - `attach`: other threads attaching to the interpreter, and none once it exits;
//! - `carried`: what stops an operation early (an exception from its logging, `close()`);
//! - `errors`: the exception tree and the one mapping from core errors;
//! - `logging`: the `redlock_rs` logger;
//! - `metrics`: OpenTelemetry metrics through Python's API, when it is installed;
//! - `twins`: what the sync and async classes share (constructor, accessors), written once;
//! - `args`, `vote`, `held`: argument conversion, vote objects, lock state.

mod args;
mod async_api;
mod async_lock;
mod attach;
mod boundary;
mod carried;
mod client;
mod coroutine;
mod errors;
mod held;
mod histograms;
mod logging;
mod loop_wakeup;
mod metrics;
mod outbox;
mod pending;
mod process;
mod runtime;
mod sync_api;
mod sync_lock;
mod twins;
mod vote;

use pyo3::prelude::*;

fn panic_with<T>(message: String) -> T {
    panic!("{message}")
}

/// Test hook: a Rust panic inside a blocking call, to show it surfaces as `RedlockError`.
#[pyfunction]
fn _panic_in_call(py: Python<'_>, message: String) -> PyResult<()> {
    boundary::guarded(|| boundary::without_gil(py, move || panic_with(message)))
}

/// Test hook: a Rust panic inside a coroutine, to show it surfaces as `RedlockError`.
#[pyfunction]
fn _panic_in_coroutine(message: String) -> coroutine::Coroutine {
    coroutine::coroutine("_panic_in_coroutine", move |_py| {
        Ok((runtime::handle()?, async move {
            panic_with::<redlock_core::Result<()>>(message)
        }))
    })
}

#[pymodule]
fn _redlock_rs(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    process::watch_forks();
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(module)?;
    args::add_defaults(module)?;
    module.add_class::<sync_api::Redlock>()?;
    module.add_class::<sync_lock::Lock>()?;
    module.add_class::<sync_api::LockContext>()?;
    module.add_class::<async_api::AsyncRedlock>()?;
    module.add_class::<async_lock::AsyncLock>()?;
    module.add_class::<async_api::AsyncLockContext>()?;
    module.add_class::<vote::Vote>()?;
    module.add_class::<vote::MasterVote>()?;
    module.add_class::<metrics::Tally>()?;
    module.add_function(wrap_pyfunction!(_panic_in_call, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_in_coroutine, module)?)?;
    // Unpickling targets of `Vote.__reduce__` / `MasterVote.__reduce__`.
    module.add_function(wrap_pyfunction!(vote::_rebuild_vote, module)?)?;
    module.add_function(wrap_pyfunction!(vote::_rebuild_master_vote, module)?)?;
    // What the asyncio methods return, as asyncio.iscoroutine and isinstance checks see it.
    let coroutine_type = py.get_type::<coroutine::Coroutine>();
    py.import("collections.abc")?
        .getattr("Coroutine")?
        .call_method1("register", (&coroutine_type,))?;
    module.add("_Coroutine", coroutine_type)?;
    // Stop re-attaching blocked threads once the interpreter starts to exit.
    let at_exit = wrap_pyfunction!(attach::_at_interpreter_exit, module)?;
    py.import("atexit")?.call_method1("register", (at_exit,))?;
    // Public names only (pyo3 would list the test hooks and `__version__` too).
    let public: Vec<String> = module
        .index()?
        .iter()
        .map(|name| name.extract::<String>())
        .collect::<PyResult<Vec<_>>>()?
        .into_iter()
        .filter(|name| !name.starts_with('_'))
        .collect();
    module.setattr("__all__", public)?;
    Ok(())
}
