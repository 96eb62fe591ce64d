//! Quick throughput check of acquire+release cycles on 5 local masters: one task serially,
//! then N tasks on distinct keys sharing one client, for both fan-out modes.
//!
//! `cargo run --release -p redlock-bench --bin quick-throughput [-- SECONDS TASKS]`
//! (the load generator is the real tool; this is a core developer's quick check).

use std::time::{Duration, Instant};

use redlock_core::{FanOut, Redlock};
use redlock_local::LocalMasters;

/// Returns (cycles completed, attempts that failed — e.g. a master slower than its timeout).
async fn cycles(redlock: Redlock, task: usize, until: Instant) -> (u64, u64) {
    let (mut done, mut failed) = (0u64, 0u64);
    let key = format!("tp:{task}");
    while Instant::now() < until {
        match redlock.try_acquire(&key, Duration::from_secs(10)).await {
            Ok(lock) => {
                let _ = redlock.release(&lock).await;
                done += 1;
            }
            Err(_) => failed += 1,
        }
    }
    (done, failed)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3.0);
    let tasks: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(16);
    let masters = LocalMasters::start(5)?;
    for fanout in [FanOut::Sequential, FanOut::Concurrent] {
        let redlock = Redlock::builder(masters.urls()).fanout(fanout).build()?;
        redlock.wait_connected(Duration::from_secs(5)).await;
        for n in [1, tasks] {
            let until = Instant::now() + Duration::from_secs_f64(seconds);
            let started = Instant::now();
            let cpu_before = redlock_process_cpu::process_cpu();
            let handles: Vec<_> = (0..n)
                .map(|t| tokio::spawn(cycles(redlock.clone(), t, until)))
                .collect();
            let (mut total, mut failed) = (0, 0);
            for h in handles {
                let (done, lost) = h.await?;
                total += done;
                failed += lost;
            }
            let rate = total as f64 / started.elapsed().as_secs_f64();
            let cpu = redlock_process_cpu::process_cpu() - cpu_before;
            let cpu_us = cpu.total().as_secs_f64() * 1e6 / total.max(1) as f64;
            println!(
                "{fanout:<10} {n:>3} task(s): {rate:>9.0} acquire+release cycles/s, {cpu_us:>5.1} µs client CPU per cycle ({failed} failed attempts)"
            );
        }
    }
    Ok(())
}
