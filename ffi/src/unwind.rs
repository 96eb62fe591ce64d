//! The panic guard of the infallible exported functions (accessors, frees, name lookups): a
//! leaf, so the status names and the boundary helpers can both use it.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of an infallible exported function (accessor, free, name lookup): a panic
/// yields `fallback` instead of unwinding into C.
pub(crate) fn infallible<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}
