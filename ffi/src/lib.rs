//! The C ABI of `redlock-core`: `libredlock` (cdylib and staticlib) described by the generated
//! header `include/redlock.h`, plus the header-only C++ wrapper `include/redlock.hpp`.
//!
//! Conventions (after rustls-ffi): opaque handles created by `*_new`/acquire functions and
//! freed by their NULL-safe `*_free`; fallible functions return a [`redlock_status`] and write
//! their out-parameters (always last) only on success; every exported body runs inside a
//! panic boundary; `redlock_last_error_message()` holds the thread's last failure message.
//!
//! Built on [`redlock_core::blocking::Redlock`]; the exported functions are `pub` so Rust code
//! (benches, tests) can call them through the rlib too.
#![allow(non_camel_case_types)] // the C names are the public interface

mod boundary;
mod client;
mod fork;
mod lock;
mod options;
mod stats;
mod status;
mod unwind;
mod vote;

use std::ffi::c_char;

pub use boundary::redlock_last_error_message;
pub use client::{
    redlock_acquire, redlock_acquire_within, redlock_client, redlock_client_free,
    redlock_client_new, redlock_client_wait_connected, redlock_extend, redlock_release,
    redlock_release_checked, redlock_try_acquire,
};
pub use lock::{
    redlock_lock, redlock_lock_extensions, redlock_lock_free, redlock_lock_remaining_ms,
    redlock_lock_resource, redlock_lock_token, redlock_lock_validity_ms,
};
pub use options::{redlock_fanout, redlock_options, redlock_options_default, redlock_options_init};
pub use stats::{redlock_client_stats, redlock_master_stats, redlock_stats};
pub use status::{redlock_status, redlock_status_str, redlock_status_value};
pub use vote::{
    redlock_failure, redlock_last_vote, redlock_lock_vote, redlock_master_vote, redlock_outcome,
    redlock_outcome_str, redlock_verdict, redlock_verdict_str, redlock_vote, REDLOCK_MAX_MASTERS,
};

/// The library's version (`"MAJOR.MINOR.PATCH"`), to compare with the `REDLOCK_VERSION_*`
/// macros of the header a program was compiled with. Static: never free it.
#[no_mangle]
pub extern "C" fn redlock_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Test hook (feature `test-hooks`, never in the installed library or the header): panics
/// inside the panic boundary, so tests can prove a panic becomes `REDLOCK_PANIC`.
#[cfg(feature = "test-hooks")]
#[no_mangle]
pub extern "C" fn redlock_test_panic() -> redlock_status {
    boundary::call("redlock_test_panic", || {
        panic!("test-only panic trigger");
    })
}
