//! `redlock_client` and the operations: acquire, extend, release.

use std::ffi::c_char;
use std::sync::Arc;
use std::time::Duration;

use std::ffi::CStr;

use redlock_core::{
    blocking, deadline_after, redact_url_bytes, ClientStats, Error, InvalidArgument, Lock,
};

use crate::boundary::{self, non_null, utf8_arg, write_out};
use crate::fork::Owner;
use crate::lock::redlock_lock;
use crate::options::{read_options, redlock_options, redlock_options_default};
use crate::status::redlock_status;
use crate::vote::{self, REDLOCK_MAX_MASTERS};

/// A Redlock client over N independent Redis masters (opaque).
///
/// Created by `redlock_client_new()`, which hands ownership to the caller; free it exactly
/// once with `redlock_client_free()` after every thread is done with it. It owns one
/// multiplexed connection per master and a small I/O thread pool.
///
/// **Thread safety:** one client may be used by any number of threads at once (all functions
/// taking a `const redlock_client *` are thread-safe); their requests share the connections.
///
/// **fork():** a client belongs to the process that created it. In a forked child every call
/// with it returns `REDLOCK_INVALID_ARGUMENT` at once, with a message saying so (its I/O
/// threads do not exist there); create a new client in the child.
#[derive(Debug)]
pub struct redlock_client {
    inner: blocking::Redlock,
    owner: Owner,
    /// The client's figures (`redlock_client_stats()`): its metrics sink.
    stats: Arc<ClientStats>,
}

impl redlock_client {
    /// The Rust client behind this handle (same runtime and connections), for Rust code that
    /// compares or mixes both APIs (benchmarks); not part of the C ABI.
    pub fn blocking(&self) -> &blocking::Redlock {
        &self.inner
    }

    /// The figures `redlock_client_stats()` reports.
    pub(crate) fn stats(&self) -> &ClientStats {
        &self.stats
    }
}

/// Borrows a live client handle, or `InvalidArgument` when NULL or used after fork().
///
/// # Safety
/// `client` must be NULL or a live client handle.
pub(crate) unsafe fn handle_ref<'a>(
    client: *const redlock_client,
) -> Result<&'a redlock_client, Error> {
    non_null(client, "client")?;
    // SAFETY: non-NULL live handle by the caller's contract.
    let client = unsafe { &*client };
    client.owner.check()?;
    Ok(client)
}

/// The Rust client behind a live handle (see [`handle_ref`]).
///
/// # Safety
/// As for [`handle_ref`].
unsafe fn client_ref<'a>(client: *const redlock_client) -> Result<&'a blocking::Redlock, Error> {
    // SAFETY: forwarded contract.
    Ok(&unsafe { handle_ref(client) }?.inner)
}

/// Reads master URL `urls[index]`, or `InvalidArgument` naming it; a URL that is not UTF-8 is
/// shown redacted (never its password), its other bad bytes escaped.
///
/// # Safety
/// `url` must be NULL or a NUL-terminated string that outlives the call.
unsafe fn url_arg(url: *const c_char, index: usize) -> Result<String, Error> {
    let name = format!("urls[{index}]");
    non_null(url, &name)?;
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(url) }.to_bytes();
    match std::str::from_utf8(bytes) {
        Ok(url) => Ok(url.to_owned()),
        Err(e) => Err(Error::InvalidArgument(InvalidArgument::without_value(
            name,
            format!(
                "\"{}\" is not valid UTF-8 (bad byte at offset {})",
                redact_url_bytes(bytes),
                e.valid_up_to()
            ),
        ))),
    }
}

/// Creates a client over `n_urls` master URLs (`redis://[user:password@]host:port[/db]`,
/// `rediss://` for TLS) with `opts` (NULL: the defaults). Does no network I/O: connections
/// open in the background, so a master that is down does not make this fail or block. The
/// client counts its operations from then on (`redlock_client_stats()`).
///
/// On success writes a new handle to `*out` (free it with `redlock_client_free()`); on failure
/// leaves `*out` alone. `REDLOCK_INVALID_ARGUMENT` for a NULL `urls`, URL or `out`, a URL that
/// is not UTF-8 or does not parse, the same server listed twice (same host and port, or same
/// socket path, whatever the database), no URL or more than `REDLOCK_MAX_MASTERS`, or a bad
/// option. Messages show URLs with their passwords redacted.
///
/// # Safety
/// `urls` must be NULL or point to `n_urls` pointers, each NULL or a NUL-terminated string;
/// `opts` NULL or a `redlock_options` of at least `opts->struct_size` readable bytes (as
/// `redlock_options_default()` makes it); `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn redlock_client_new(
    urls: *const *const c_char,
    n_urls: usize,
    opts: *const redlock_options,
    out: *mut *mut redlock_client,
) -> redlock_status {
    boundary::call("redlock_client_new", || {
        non_null(urls, "urls")?;
        non_null(out, "out")?;
        if n_urls > REDLOCK_MAX_MASTERS {
            return Err(Error::invalid_argument(
                "n_urls",
                redlock_core::ArgValue::Integer(n_urls as u64),
                format!("at most {REDLOCK_MAX_MASTERS} masters (REDLOCK_MAX_MASTERS)"),
            ));
        }
        let urls = (0..n_urls)
            .map(|i| {
                // SAFETY: `urls` has `n_urls` elements by the caller's contract.
                let url = unsafe { *urls.add(i) };
                // SAFETY: each element is NULL or NUL-terminated by the caller's contract.
                unsafe { url_arg(url, i) }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let opts = if opts.is_null() {
            redlock_options_default()
        } else {
            // SAFETY: non-NULL and `struct_size` bytes long by the caller's contract.
            unsafe { read_options(opts) }?
        };
        let owner = Owner::current();
        let stats = Arc::new(ClientStats::new(urls.len()));
        let inner = opts
            .apply(blocking::Redlock::builder(urls))?
            .metrics_sink(stats.clone())
            .build_blocking()?;
        let handle = Box::into_raw(Box::new(redlock_client {
            inner,
            owner,
            stats,
        }));
        // SAFETY: `out` is non-NULL and writable by the caller's contract.
        unsafe { write_out(out, handle) };
        Ok(())
    })
}

/// Frees a client: closes its connections and stops its I/O threads (without waiting for
/// them). NULL is ignored, so freeing NULL twice is fine. Locks it acquired stay valid handles
/// (free them with `redlock_lock_free()`); release them before, if you mean to. In a process
/// forked from the one that created the client, this only forgets the handle (its threads
/// and their state belong to the parent; touching them could block).
///
/// **Calls in flight:** this function waits for no thread and cannot interrupt one. Unlike
/// Python's `close()`, which ends calls in flight, it must not be called while another thread
/// is still inside a call with this client (a blocked `redlock_acquire()` included): that is
/// a use after free. To stop such threads sooner, give them a deadline
/// (`redlock_acquire_within()`, `redlock_try_acquire()` or a small `retry_count`), join them, then
/// free the client.
///
/// # Safety
/// `client` must be NULL or a live client handle from this library that no other thread is
/// using, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn redlock_client_free(client: *mut redlock_client) {
    if client.is_null() {
        return;
    }
    // SAFETY: the handle came from Box::into_raw in this library and is freed once.
    let client = unsafe { Box::from_raw(client) };
    if client.owner.is_forked() {
        std::mem::forget(client);
        return;
    }
    crate::unwind::infallible((), || drop(client));
}

/// Waits until every master is connected or known to be down, at most `timeout_ms`, and
/// writes how many are connected to `*out_connected`. Optional (connections open in the
/// background anyway); useful to start with warm connections.
///
/// # Safety
/// `client` must be NULL or a live client handle; `out_connected` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn redlock_client_wait_connected(
    client: *const redlock_client,
    timeout_ms: u64,
    out_connected: *mut usize,
) -> redlock_status {
    boundary::call("redlock_client_wait_connected", || {
        // SAFETY: forwarded contract.
        let client = unsafe { client_ref(client) }?;
        non_null(out_connected, "out_connected")?;
        let connected = client.wait_connected(Duration::from_millis(timeout_ms))?;
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { write_out(out_connected, connected) };
        Ok(())
    })
}

/// Shared body of the acquire functions: argument checks, the call, the vote, the out-handle.
///
/// # Safety
/// As for `redlock_acquire`.
unsafe fn acquire_with(
    function: &str,
    client: *const redlock_client,
    resource: *const c_char,
    ttl_ms: u64,
    out: *mut *mut redlock_lock,
    acquire: impl FnOnce(&blocking::Redlock, &str, Duration) -> Result<Lock, Error>,
) -> redlock_status {
    vote::operation(function, || {
        // SAFETY: forwarded contract.
        let client = unsafe { client_ref(client) }?;
        // SAFETY: forwarded contract.
        let resource = unsafe { utf8_arg(resource, "resource") }?;
        non_null(out, "out")?;
        // The core checks the TTL (and names it `ttl_ms` to C callers).
        let lock = acquire(client, resource, Duration::from_millis(ttl_ms))?;
        vote::record_last(Some(lock.vote()));
        let handle = Box::into_raw(Box::new(redlock_lock::new(lock)));
        // SAFETY: `out` is non-NULL and writable by the caller's contract.
        unsafe { write_out(out, handle) };
        Ok(())
    })
}

/// Acquires `resource` for `ttl_ms` milliseconds: up to 1 + retry_count attempts, with a
/// random delay between them. On success writes a new lock handle to `*out` (free it with
/// `redlock_lock_free()`); on failure leaves `*out` alone and returns `REDLOCK_NOT_ACQUIRED`
/// (someone else holds it) or `REDLOCK_UNAVAILABLE` (too few masters answered); the last
/// attempt's vote is then in `redlock_last_vote()`. A `resource` that is empty, not UTF-8 or
/// longer than 65536 bytes (64 KiB) is refused with `REDLOCK_INVALID_ARGUMENT` before
/// anything is sent.
///
/// # Safety
/// `client` must be NULL or a live client handle; `resource` NULL or a NUL-terminated string;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn redlock_acquire(
    client: *const redlock_client,
    resource: *const c_char,
    ttl_ms: u64,
    out: *mut *mut redlock_lock,
) -> redlock_status {
    // SAFETY: forwarded contract.
    unsafe {
        acquire_with(
            "redlock_acquire",
            client,
            resource,
            ttl_ms,
            out,
            |c, r, ttl| c.acquire(r, ttl),
        )
    }
}

/// Like `redlock_acquire()` with exactly one attempt (no retry, no delay).
///
/// # Safety
/// As for `redlock_acquire()`.
#[no_mangle]
pub unsafe extern "C" fn redlock_try_acquire(
    client: *const redlock_client,
    resource: *const c_char,
    ttl_ms: u64,
    out: *mut *mut redlock_lock,
) -> redlock_status {
    // SAFETY: forwarded contract.
    unsafe {
        acquire_with(
            "redlock_try_acquire",
            client,
            resource,
            ttl_ms,
            out,
            |c, r, ttl| c.try_acquire(r, ttl),
        )
    }
}

/// Like `redlock_acquire()`, but keeps attempting for up to `wait_ms` milliseconds (no
/// attempt starts after that) whatever retry_count says. `wait_ms` 0 makes one attempt;
/// `UINT64_MAX` waits as long as it takes.
///
/// # Safety
/// As for `redlock_acquire()`.
#[no_mangle]
pub unsafe extern "C" fn redlock_acquire_within(
    client: *const redlock_client,
    resource: *const c_char,
    ttl_ms: u64,
    wait_ms: u64,
    out: *mut *mut redlock_lock,
) -> redlock_status {
    // SAFETY: forwarded contract.
    unsafe {
        acquire_with(
            "redlock_acquire_within",
            client,
            resource,
            ttl_ms,
            out,
            |c, r, ttl| {
                c.acquire_with_deadline(r, ttl, deadline_after(Duration::from_millis(wait_ms)))
            },
        )
    }
}

/// Renews `lock` to `ttl_ms` on every master that still holds its token. On success the lock
/// carries the new validity (`redlock_lock_validity_ms()`); it never re-creates a key that is
/// gone. `REDLOCK_LOCK_LOST` when fewer than a quorum still hold it (or the client's extension
/// bound is reached), `REDLOCK_UNAVAILABLE` when too few masters answered.
///
/// # Safety
/// `client` must be NULL or a live client handle; `lock` NULL or a live lock handle that no
/// other thread uses meanwhile.
#[no_mangle]
pub unsafe extern "C" fn redlock_extend(
    client: *const redlock_client,
    lock: *mut redlock_lock,
    ttl_ms: u64,
) -> redlock_status {
    vote::operation("redlock_extend", || {
        // SAFETY: forwarded contract.
        let client = unsafe { client_ref(client) }?;
        non_null(lock, "lock")?;
        // SAFETY: non-NULL live handle, not shared during the call, by the caller's contract.
        let lock = unsafe { &mut (*lock).lock };
        client.extend(lock, Duration::from_millis(ttl_ms))?;
        vote::record_last(Some(lock.vote()));
        Ok(())
    })
}

/// Releases `lock` on every master that still holds its token (compare-and-delete). Does not
/// free the handle: call `redlock_lock_free()` afterwards. Releasing an expired or foreign
/// lock is not an error; `redlock_last_vote()`'s `granted` says how many masters released.
///
/// # Safety
/// `client` must be NULL or a live client handle; `lock` NULL or a live lock handle.
#[no_mangle]
pub unsafe extern "C" fn redlock_release(
    client: *const redlock_client,
    lock: *const redlock_lock,
) -> redlock_status {
    vote::operation("redlock_release", || {
        // SAFETY: forwarded contract.
        let client = unsafe { client_ref(client) }?;
        non_null(lock, "lock")?;
        // SAFETY: non-NULL live handle by the caller's contract.
        let vote = client.release(unsafe { &(*lock).lock })?;
        vote::record_last(Some(&vote));
        Ok(())
    })
}

/// Like `redlock_release()` at the end of a scope that acted as the lock's owner (what the C++
/// `redlock::Guard` calls): the release is made on every master all the same, but the result
/// is `REDLOCK_LOCK_LOST` when the lock's validity had run out before it, since the scope may
/// have acted while someone else could hold the lock. `redlock_last_vote()` then holds the
/// release's vote (how many masters released).
///
/// # Safety
/// As for `redlock_release()`.
#[no_mangle]
pub unsafe extern "C" fn redlock_release_checked(
    client: *const redlock_client,
    lock: *const redlock_lock,
) -> redlock_status {
    vote::operation("redlock_release_checked", || {
        // SAFETY: forwarded contract.
        let client = unsafe { client_ref(client) }?;
        non_null(lock, "lock")?;
        // SAFETY: non-NULL live handle by the caller's contract.
        let lock = unsafe { &(*lock).lock };
        let checked = lock.check_still_valid();
        let vote = client.release(lock)?;
        vote::record_last(Some(&vote));
        Lock::end_of_scope(checked, Ok(vote)).map(drop)
    })
}
