//! What the C ABI adds: `ffi/acquire_release/c_abi` calls the exported functions of
//! `libredlock` (crate `redlock-ffi`, through its rlib: the same code a C program links)
//! — `redlock_acquire`, `redlock_release`, `redlock_lock_free` — and
//! `ffi/acquire_release/rust_blocking` does the same cycle through
//! `redlock_core::blocking::Redlock`, which the C ABI is built on. 5 masters, concurrent
//! fan-out (the default of both), one calling thread.
//!
//! Wall time cannot resolve a few microseconds next to a ~300 µs network cycle, so after the
//! group a paired measurement alternates blocks of cycles between the two surfaces and
//! compares the process's CPU time (user + sys, every thread; the masters are other
//! processes): the median difference over the three C calls of a cycle is what the C ABI adds
//! per call. (The calling thread's CPU alone would not do: which thread polls a round's parts
//! varies with scheduling, so the split between threads is not comparable.)

use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use redlock::{
    redlock_acquire, redlock_client, redlock_client_free, redlock_client_new,
    redlock_client_wait_connected, redlock_last_error_message, redlock_lock, redlock_lock_free,
    redlock_options_default, redlock_release, redlock_status,
};
use redlock_bench::client_cpu::process_cpu;
use redlock_bench::fixture::{self, Masters, Names, TTL};
use redlock_core::{blocking, FanOut};

const MASTERS: usize = 5;
/// C calls in one cycle: `redlock_acquire`, `redlock_release`, `redlock_lock_free`.
const C_CALLS_PER_CYCLE: f64 = 3.0;
/// Alternated blocks of the paired CPU measurement, and cycles per block and surface.
const PAIRED_BLOCKS: usize = 9;
const PAIRED_CYCLES: u64 = 600;

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

/// One acquire + release through the Rust blocking API, with the same status checks as the C
/// side, no more.
fn rust_cycle(client: &blocking::Redlock, resource: &str) {
    match client.acquire(resource, TTL) {
        Ok(lock) => {
            if let Err(e) = client.release(&lock) {
                fixture::anomaly(format!("release({resource:?}): {e}"));
            }
        }
        Err(e) => fixture::anomaly(format!("acquire({resource:?}): {e}")),
    }
}

/// The client process's CPU per C call beyond the Rust blocking API, in µs: blocks of cycles
/// alternated between the two surfaces on the same masters (so the machine's other load hits
/// both alike), the median of the per-pair differences with its range.
fn paired_cpu_per_call(urls: &[String], ttl_ms: u64) -> (f64, f64, f64) {
    let (blocks, cycles) = if fixture::is_test_mode() {
        (1, 2)
    } else {
        (PAIRED_BLOCKS, PAIRED_CYCLES)
    };
    let c_client = CClient::new(urls);
    let rust_client = fixture::blocking_client(urls, FanOut::Concurrent);
    let mut c_names = Names::new("bench:ffi:paired:c_abi");
    let mut rust_names = Names::new("bench:ffi:paired:rust");
    let mut differences: Vec<f64> = (0..blocks)
        .map(|_| {
            let resources: Vec<CString> = c_names
                .take(cycles)
                .into_iter()
                .map(|r| CString::new(r).expect("name without NUL"))
                .collect();
            let before = process_cpu();
            for resource in &resources {
                c_client.cycle(resource, ttl_ms);
            }
            let c_abi = process_cpu() - before;
            let resources = rust_names.take(cycles);
            let before = process_cpu();
            for resource in &resources {
                rust_cycle(&rust_client, resource);
            }
            let rust = process_cpu() - before;
            (c_abi.as_secs_f64() - rust.as_secs_f64()) * 1e6 / (cycles as f64 * C_CALLS_PER_CYCLE)
        })
        .collect();
    differences.sort_by(f64::total_cmp);
    (
        differences[differences.len() / 2],
        differences[0],
        differences[differences.len() - 1],
    )
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
            let start = Instant::now();
            for resource in &resources {
                c_client.cycle(resource, ttl_ms);
            }
            start.elapsed()
        });
    });
    drop(c_client);
    masters.settle("ffi/acquire_release/c_abi");

    let rust_client = fixture::blocking_client(&urls, FanOut::Concurrent);
    let mut names = Names::new("bench:ffi:rust_blocking");
    group.bench_function("rust_blocking", |b| {
        b.iter_custom(|iters| {
            let resources = names.take(iters);
            let start = Instant::now();
            for resource in &resources {
                rust_cycle(&rust_client, resource);
            }
            start.elapsed()
        });
    });
    drop(rust_client);
    masters.settle("ffi/acquire_release/rust_blocking");
    group.finish();
    let (median, low, high) = paired_cpu_per_call(&urls, ttl_ms);
    println!(
        "ffi/acquire_release: the C ABI adds {median:.2} µs of the client process's CPU per call \
         (median of {PAIRED_BLOCKS} alternated blocks of {PAIRED_CYCLES} cycles, range {low:.2} to {high:.2})"
    );
    masters.settle("ffi/acquire_release/paired");
}

criterion_group!(benches, ffi);
criterion_main!(benches);
