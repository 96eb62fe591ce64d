//! First-look latency: one acquire attempt (sequential vs concurrent fan-out) on 5 local
//! masters, next to one plain SET round trip, all in the same run.
//!
//! `cargo run --release -p redlock-bench --bin quick-latency [-- ROUNDS]`
//! (the load generator and criterion benches measure far more; this is the quick check).

use std::time::{Duration, Instant};

use redlock_core::{FanOut, Redlock};
use redlock_local::LocalMasters;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank]
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{name:<28} p50 {:>8.1} µs   p99 {:>8.1} µs   ({} samples)",
        us(percentile(&samples, 50.0)),
        us(percentile(&samples, 99.0)),
        samples.len()
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(2000);
    let masters = LocalMasters::start(5)?;

    let client = redis::Client::open(masters.url(0)?)?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let mut set_rtt = Vec::with_capacity(rounds);
    for i in 0..rounds + rounds / 10 {
        let start = Instant::now();
        let _: () = redis::cmd("SET")
            .arg(format!("plain:{i}"))
            .arg("x")
            .query_async(&mut conn)
            .await?;
        if i >= rounds / 10 {
            set_rtt.push(start.elapsed());
        }
    }
    report("SET round trip (1 master)", set_rtt);

    for fanout in [FanOut::Sequential, FanOut::Concurrent] {
        let redlock = Redlock::builder(masters.urls()).fanout(fanout).build()?;
        redlock.wait_connected(Duration::from_secs(5)).await;
        let mut attempts = Vec::with_capacity(rounds);
        for i in 0..rounds + rounds / 10 {
            let lock = redlock
                .try_acquire(&format!("lat:{fanout}:{i}"), Duration::from_secs(10))
                .await?;
            if i >= rounds / 10 {
                attempts.push(lock.vote().elapsed());
            }
            redlock.release(&lock).await?;
        }
        report(&format!("attempt, {fanout} (5)"), attempts);
    }
    Ok(())
}
