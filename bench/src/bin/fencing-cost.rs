//! W1 with and without fencing tokens: one task, serial acquire + release cycles of one
//! resource on 5 local masters, unfenced and fenced clients taking turns (ABAB...) in the same
//! run, for both fan-out modes; prints each turn's cycles/s and the fenced/unfenced ratio of
//! the medians (target: fenced W1 >= 0.6x unfenced, `docs/src/design.md#performance-targets`).
//!
//! `cargo run --release -p redlock-bench --bin fencing-cost [-- SECONDS_PER_TURN TURNS]`
//! (defaults 3 s and 3 turns each: about 40 s in all).

use std::time::{Duration, Instant};

use redlock_core::{FanOut, Redlock};
use redlock_local::LocalMasters;

const TTL: Duration = Duration::from_secs(10);

/// Serial cycles of `resource` for `seconds`: cycles per second.
async fn w1(redlock: &Redlock, resource: &str, seconds: f64) -> Result<f64, redlock_core::Error> {
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let mut cycles = 0u64;
    while Instant::now() < until {
        let lock = redlock.acquire(resource, TTL).await?;
        redlock.release(&lock).await?;
        cycles += 1;
    }
    Ok(cycles as f64 / started.elapsed().as_secs_f64())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3.0);
    let turns: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let masters = LocalMasters::start(5)?;
    println!(
        "W1 (one task, serial acquire + release of one key), 5 local masters, {seconds} s per turn"
    );
    for fanout in [FanOut::Sequential, FanOut::Concurrent] {
        let build = |fencing: bool| {
            Redlock::builder(masters.urls())
                .fanout(fanout)
                .fencing(fencing)
                .build()
        };
        let (unfenced, fenced) = (build(false)?, build(true)?);
        unfenced.wait_connected(Duration::from_secs(5)).await;
        fenced.wait_connected(Duration::from_secs(5)).await;
        let (mut plain_rates, mut fenced_rates) = (Vec::new(), Vec::new());
        for turn in 1..=turns {
            let plain = w1(&unfenced, "cost:unfenced", seconds).await?;
            let with_tokens = w1(&fenced, "cost:fenced", seconds).await?;
            println!(
                "{fanout:>10} turn {turn}: unfenced {plain:>8.0} cycles/s, fenced {with_tokens:>8.0} cycles/s"
            );
            plain_rates.push(plain);
            fenced_rates.push(with_tokens);
        }
        let (plain, with_tokens) = (median(plain_rates), median(fenced_rates));
        println!(
            "{fanout:>10} median: unfenced {plain:.0} cycles/s, fenced {with_tokens:.0} cycles/s, fenced/unfenced {:.2}",
            with_tokens / plain
        );
    }
    Ok(())
}
