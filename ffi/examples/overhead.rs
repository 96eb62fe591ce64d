//! What the C ABI adds to one acquire+release cycle: the same cycle through the Rust blocking
//! API and through the exported C functions, on the same client (same masters, runtime and
//! connections), interleaved in rounds so machine noise affects both alike. Reports the
//! medians of wall time and of the calling thread's CPU time per cycle, and of the per-round
//! differences.
//!
//! `make ffi-overhead` (or `cargo run --release -p redlock-ffi --example overhead [CYCLES
//! [ROUNDS]]`). A measurement, not a test: nothing here asserts a time.

use std::ffi::{c_char, CString};
use std::ptr;
use std::time::{Duration, Instant};

use redlock::{
    redlock_acquire, redlock_client, redlock_client_free, redlock_client_new,
    redlock_client_wait_connected, redlock_lock, redlock_lock_free, redlock_release,
    redlock_status,
};
use redlock_core::blocking;
use redlock_core::local::LocalMasters;

const TTL: Duration = Duration::from_secs(10);

/// CPU time consumed by the calling thread so far, in µs. `block_on` polls the operation on
/// the calling thread, so this is the wrapper's and the core's own work without the waiting
/// (far less noisy than wall time on a busy machine).
fn thread_cpu_us() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

/// Mean (wall, calling-thread CPU) µs per cycle of `cycles` runs of `cycle`.
fn time_cycles(cycles: u32, mut cycle: impl FnMut()) -> (f64, f64) {
    let (start, cpu_start) = (Instant::now(), thread_cpu_us());
    for _ in 0..cycles {
        cycle();
    }
    let n = f64::from(cycles);
    (
        start.elapsed().as_secs_f64() * 1e6 / n,
        (thread_cpu_us() - cpu_start) / n,
    )
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Per-round figures of both sides.
#[derive(Default)]
struct Samples {
    rust: Vec<f64>,
    c: Vec<f64>,
    diff: Vec<f64>,
}

impl Samples {
    fn push(&mut self, rust: f64, c: f64) {
        self.rust.push(rust);
        self.c.push(c);
        self.diff.push(c - rust);
    }
    fn report(&mut self, what: &str) {
        println!(
            "  {what}: rust {:7.2} µs/cycle, C ABI {:7.2} µs/cycle, C - rust {:+.2} µs/cycle",
            median(&mut self.rust),
            median(&mut self.c),
            median(&mut self.diff)
        );
    }
}

/// A C client over `urls`, through the exported functions.
fn c_client(urls: &[String]) -> *mut redlock_client {
    let owned: Vec<CString> = urls
        .iter()
        .map(|u| CString::new(u.as_str()).unwrap())
        .collect();
    let pointers: Vec<*const c_char> = owned.iter().map(|u| u.as_ptr()).collect();
    let mut client = ptr::null_mut();
    // SAFETY: valid array of NUL-terminated strings and a writable out-pointer.
    let status =
        unsafe { redlock_client_new(pointers.as_ptr(), pointers.len(), ptr::null(), &mut client) };
    assert_eq!(status, redlock_status::REDLOCK_OK);
    let mut connected = 0;
    // SAFETY: live client, writable out-pointer.
    unsafe { redlock_client_wait_connected(client, 5000, &mut connected) };
    assert_eq!(connected, urls.len(), "every master connected");
    client
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u32>().expect("a count"));
    let cycles = args.next().unwrap_or(500).max(1);
    let rounds = args.next().unwrap_or(21).max(1);

    let masters = LocalMasters::start(5).expect("5 local masters");
    let c = c_client(&masters.urls());
    // The very client behind the C handle: same runtime, same connections.
    // SAFETY: `c` is a live handle until the end of main.
    let rust: &blocking::Redlock = unsafe { (*c).blocking() };
    let c_resource = CString::new("overhead:c").unwrap();

    // A busy machine can stall a cycle past the 50 ms per-master timeout: such cycles are
    // counted and reported, not fatal.
    let (mut rust_failed, mut c_failed) = (0u32, 0u32);
    let mut rust_cycle = || match rust.acquire("overhead:rust", TTL) {
        Ok(lock) => drop(rust.release(&lock)),
        Err(_) => rust_failed += 1,
    };
    let mut c_cycle = || {
        let mut lock: *mut redlock_lock = ptr::null_mut();
        // SAFETY: live client, NUL-terminated resource, writable out-pointer; the lock is
        // released and freed once.
        unsafe {
            if redlock_acquire(c, c_resource.as_ptr(), 10_000, &mut lock)
                != redlock_status::REDLOCK_OK
            {
                c_failed += 1;
                return;
            }
            redlock_release(c, lock);
            redlock_lock_free(lock);
        }
    };

    time_cycles(cycles / 4 + 1, &mut rust_cycle); // warm-up
    time_cycles(cycles / 4 + 1, &mut c_cycle);
    let (mut wall, mut cpu) = (Samples::default(), Samples::default());
    for round in 0..rounds {
        // Alternate which side goes first so neither always runs on a warmer machine.
        let (r, c) = if round % 2 == 0 {
            let r = time_cycles(cycles, &mut rust_cycle);
            (r, time_cycles(cycles, &mut c_cycle))
        } else {
            let c = time_cycles(cycles, &mut c_cycle);
            (time_cycles(cycles, &mut rust_cycle), c)
        };
        println!(
            "round {round:2}: wall rust {:7.1} C {:7.1} µs   thread CPU rust {:6.2} C {:6.2} µs",
            r.0, c.0, r.1, c.1
        );
        wall.push(r.0, c.0);
        cpu.push(r.1, c.1);
    }
    println!(
        "acquire+release, 5 local masters, concurrent fan-out, {cycles} cycles x {rounds} rounds (medians):"
    );
    wall.report("wall time ");
    cpu.report("thread CPU");
    println!(
        "failed cycles (stalls past the per-master timeout): rust {rust_failed}, C ABI {c_failed}"
    );
    // SAFETY: the client is freed once, after its last use (`rust` borrows it: not used after).
    unsafe { redlock_client_free(c) };
}
