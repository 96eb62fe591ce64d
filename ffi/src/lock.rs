//! `redlock_lock`: a held lock and its accessors.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use redlock_core::Lock;

/// A lock won on a quorum of masters (opaque).
///
/// Created by `redlock_acquire()` and its variants, which hand ownership to the caller; free it
/// exactly once with `redlock_lock_free()`, whether it was released or not (`redlock_release()`
/// does not free it). It holds no connection: freeing an unreleased lock only forgets it (its
/// keys expire at their TTL). Reading it from several threads is fine; do not extend or free it
/// while another thread uses it.
pub struct redlock_lock {
    pub(crate) lock: Lock,
    // C copies of the strings, made on first request (most callers never ask).
    resource: OnceLock<CString>,
    token: OnceLock<CString>,
}

impl std::fmt::Debug for redlock_lock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.lock.fmt(f)
    }
}

impl redlock_lock {
    pub(crate) fn new(lock: Lock) -> Self {
        redlock_lock {
            lock,
            resource: OnceLock::new(),
            token: OnceLock::new(),
        }
    }
}

/// A C string of `s`, which came from a C string or is hex, so it has no NUL inside.
fn c_copy(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Runs `f` on the lock, or returns `fallback` when `lock` is NULL (or on a panic).
///
/// # Safety
/// `lock` must be NULL or a live lock handle.
unsafe fn with_lock<T>(
    lock: *const redlock_lock,
    fallback: T,
    f: impl FnOnce(&redlock_lock) -> T,
) -> T {
    if lock.is_null() {
        return fallback;
    }
    // SAFETY: non-NULL live handle by the caller's contract.
    let lock = unsafe { &*lock };
    crate::unwind::infallible(fallback, || f(lock))
}

/// The locked resource (the Redis key), or NULL when `lock` is NULL. The string belongs to
/// the lock and lives until `redlock_lock_free(lock)`.
///
/// # Safety
/// `lock` must be NULL or a live lock handle.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_resource(lock: *const redlock_lock) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe {
        with_lock(lock, std::ptr::null(), |l| {
            l.resource
                .get_or_init(|| c_copy(l.lock.resource()))
                .as_ptr()
        })
    }
}

/// The lock's random token (40 lowercase hex characters), or NULL when `lock` is NULL. The
/// string belongs to the lock and lives until `redlock_lock_free(lock)`.
///
/// # Safety
/// `lock` must be NULL or a live lock handle.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_token(lock: *const redlock_lock) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe {
        with_lock(lock, std::ptr::null(), |l| {
            l.token.get_or_init(|| c_copy(l.lock.token())).as_ptr()
        })
    }
}

/// The validity computed when the lock was acquired or last extended, in milliseconds:
/// ttl - elapsed - drift. 0 when `lock` is NULL.
///
/// # Safety
/// `lock` must be NULL or a live lock handle.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_validity_ms(lock: *const redlock_lock) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { with_lock(lock, 0, |l| ms(l.lock.validity())) }
}

/// The validity left now, in milliseconds (monotonic clock), rounded down: act as the owner
/// only while it is above 0. 0 once expired (and already when less than 1 ms is left, so
/// acting while it is above 0 never outlasts the validity), and when `lock` is NULL.
///
/// # Safety
/// `lock` must be NULL or a live lock handle.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_remaining_ms(lock: *const redlock_lock) -> u64 {
    // SAFETY: forwarded contract.
    unsafe { with_lock(lock, 0, |l| ms(l.lock.remaining())) }
}

/// Successful extensions of this lock so far; 0 when `lock` is NULL.
///
/// # Safety
/// `lock` must be NULL or a live lock handle.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_extensions(lock: *const redlock_lock) -> u32 {
    // SAFETY: forwarded contract.
    unsafe { with_lock(lock, 0, |l| l.lock.extensions()) }
}

/// Writes the lock's fencing token to `*out`: above the token of every lock of the same
/// resource returned before this lock's acquire began, never the token of another lock of it
/// (while the masters keep their counters). Send it with every write to the protected
/// resource, which refuses a token below the highest it has seen. `REDLOCK_INVALID_ARGUMENT`
/// (and `*out` untouched) when `lock` or `out` is NULL, or the lock's client was created
/// without `opts.fencing = 1`.
///
/// # Safety
/// `lock` must be NULL or a live lock handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_fencing_token(
    lock: *const redlock_lock,
    out: *mut u64,
) -> crate::status::redlock_status {
    crate::boundary::query("redlock_lock_fencing_token", || {
        crate::boundary::non_null(lock, "lock")?;
        crate::boundary::non_null(out, "out")?;
        // SAFETY: non-NULL live handle by the caller's contract.
        let lock = unsafe { &*lock };
        let token = lock.lock.fencing_token().ok_or_else(|| {
            redlock_core::Error::InvalidArgument(redlock_core::InvalidArgument::without_value(
                "lock",
                "has no fencing token: its client was created without opts.fencing = 1",
            ))
        })?;
        // SAFETY: `out` is non-NULL and writable by the caller's contract.
        unsafe { crate::boundary::write_out(out, token) };
        Ok(())
    })
}

/// Frees a lock handle (and the strings it returned). NULL is ignored, so freeing NULL twice
/// is fine; freeing the same non-NULL handle twice is not.
///
/// # Safety
/// `lock` must be NULL or a live lock handle from this library, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn redlock_lock_free(lock: *mut redlock_lock) {
    if lock.is_null() {
        return;
    }
    // SAFETY: the handle came from Box::into_raw in this library and is freed once.
    let lock = unsafe { Box::from_raw(lock) };
    crate::unwind::infallible((), || drop(lock));
}
