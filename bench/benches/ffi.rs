//! What the C ABI adds: `ffi/acquire_release/c_abi` calls the exported functions of
//! `libredlock` (crate `redlock-ffi`, through its rlib: the same code a C program links)
//! — `redlock_acquire`, `redlock_release`, `redlock_lock_free` — and
//! `ffi/acquire_release/rust_blocking` does the same cycle through
//! `redlock_core::blocking::Redlock`, which the C ABI is built on. 5 masters, concurrent
//! fan-out (the default of both), one calling thread.
//!
//! Wall time cannot resolve a few microseconds next to a ~300 µs network cycle, so both
//! benchmarks also add up the process's CPU time (user + sys, every thread; the masters are
//! other processes) per cycle. The difference of the two, over the three C calls of a cycle,
//! is what the C ABI adds per call; the group prints it and saves it with the other
//! client-CPU figures. (The calling thread's CPU alone would not do: which thread polls a
//! round's parts varies with scheduling, so the split between threads is not comparable.)

use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use redlock::{
    redlock_acquire, redlock_client, redlock_client_free, redlock_client_new,
    redlock_client_wait_connected, redlock_last_error_message, redlock_lock, redlock_lock_free,
    redlock_options_default, redlock_release, redlock_status,
};
use redlock_bench::client_cpu::{process_cpu, Tally};
use redlock_bench::fixture::{self, Masters, Names, TTL};
use redlock_core::FanOut;

const MASTERS: usize = 5;
/// C calls in one cycle: `redlock_acquire`, `redlock_release`, `redlock_lock_free`.
const C_CALLS_PER_CYCLE: f64 = 3.0;
const C_ID: &str = "ffi/acquire_release/c_abi (client process)";
const RUST_ID: &str = "ffi/acquire_release/rust_blocking (client process)";

/// The thread's last C ABI error message, for a failure report.
fn last_error() -> String {
    let message = redlock_last_error_message();
    if message.is_null() {
        return "(no message)".into();
    }
    // SAFETY: a non-NULL result is a NUL-terminated string owned by the library, valid until
    // this thread's next call into it.
    unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned()
}

/// A C client handle, freed on drop.
struct CClient(*mut redlock_client);

impl CClient {
    fn new(urls: &[String]) -> Self {
        let urls: Vec<CString> = urls
            .iter()
            .map(|u| CString::new(u.as_str()).expect("URL without NUL"))
            .collect();
        let pointers: Vec<*const c_char> = urls.iter().map(|u| u.as_ptr()).collect();
        let options = redlock_options_default();
        let mut client = ptr::null_mut();
        // SAFETY: `pointers` holds `len` NUL-terminated strings alive for the call; `options`
        // and `client` are valid for reading and writing.
        let status =
            unsafe { redlock_client_new(pointers.as_ptr(), pointers.len(), &options, &mut client) };
        assert_eq!(
            status,
            redlock_status::REDLOCK_OK,
            "redlock_client_new: {}",
            last_error()
        );
        let mut connected = 0usize;
        // SAFETY: `client` is a live handle; `connected` is writable.
        let status = unsafe { redlock_client_wait_connected(client, 5000, &mut connected) };
        assert_eq!(
            status,
            redlock_status::REDLOCK_OK,
            "wait_connected: {}",
            last_error()
        );
        assert_eq!(
            connected,
            pointers.len(),
            "only {connected} masters connected"
        );
        CClient(client)
    }

    /// One acquire + release + free through the C ABI.
    fn cycle(&self, resource: &CStr, ttl_ms: u64) {
        let mut lock: *mut redlock_lock = ptr::null_mut();
        // SAFETY: live client handle, NUL-terminated resource, writable out-pointer.
        let status = unsafe { redlock_acquire(self.0, resource.as_ptr(), ttl_ms, &mut lock) };
        if status != redlock_status::REDLOCK_OK {
            return fixture::anomaly(format!(
                "redlock_acquire({resource:?}): {status:?}: {}",
                last_error()
            ));
        }
        // SAFETY: live client and lock handles.
        let status = unsafe { redlock_release(self.0, lock) };
        // SAFETY: the lock handle is freed once, after its release.
        unsafe { redlock_lock_free(lock) };
        if status != redlock_status::REDLOCK_OK {
            fixture::anomaly(format!(
                "redlock_release({resource:?}): {status:?}: {}",
                last_error()
            ));
        }
    }
}

impl Drop for CClient {
    fn drop(&mut self) {
        // SAFETY: the handle came from redlock_client_new and is freed once, by its owner.
        unsafe { redlock_client_free(self.0) };
    }
}

fn ffi(c: &mut Criterion) {
    let masters = Masters::start(MASTERS);
    let urls = masters.urls(MASTERS);
    let ttl_ms = u64::try_from(TTL.as_millis()).expect("small TTL");
    let tally = Tally::default();
    let mut group = c.benchmark_group("ffi/acquire_release");
    group.throughput(Throughput::Elements(1));

    let c_client = CClient::new(&urls);
    let mut names = Names::new("bench:ffi:c_abi");
    group.bench_function("c_abi", |b| {
        b.iter_custom(|iters| {
            let resources: Vec<CString> = names
                .take(iters)
                .into_iter()
                .map(|r| CString::new(r).expect("name without NUL"))
                .collect();
            let cpu_before = process_cpu();
            let start = Instant::now();
            for resource in &resources {
                c_client.cycle(resource, ttl_ms);
            }
            let elapsed = start.elapsed();
            tally.add(C_ID, process_cpu() - cpu_before, iters);
            elapsed
        });
    });
    drop(c_client);
    masters.settle("ffi/acquire_release/c_abi");

    let rust_client = fixture::blocking_client(&urls, FanOut::Concurrent);
    let mut names = Names::new("bench:ffi:rust_blocking");
    group.bench_function("rust_blocking", |b| {
        b.iter_custom(|iters| {
            let resources = names.take(iters);
            let cpu_before = process_cpu();
            let start = Instant::now();
            for resource in &resources {
                // The same status checks as the C side, no more.
                match rust_client.acquire(resource, TTL) {
                    Ok(lock) => {
                        if let Err(e) = rust_client.release(&lock) {
                            fixture::anomaly(format!("release({resource:?}): {e}"));
                        }
                    }
                    Err(e) => fixture::anomaly(format!("acquire({resource:?}): {e}")),
                }
            }
            let elapsed = start.elapsed();
            tally.add(RUST_ID, process_cpu() - cpu_before, iters);
            elapsed
        });
    });
    drop(rust_client);
    masters.settle("ffi/acquire_release/rust_blocking");
    group.finish();
    if let (Some(c_abi), Some(rust)) = (tally.per_cycle(C_ID), tally.per_cycle(RUST_ID)) {
        println!(
            "ffi/acquire_release: the C ABI adds {:.2} µs of CPU per call \
             ({c_abi:.1} against {rust:.1} µs per cycle of {C_CALLS_PER_CYCLE} calls)",
            (c_abi - rust) / C_CALLS_PER_CYCLE
        );
    }
    tally.finish();
}

criterion_group!(benches, ffi);
criterion_main!(benches);
