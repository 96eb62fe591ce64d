//! Starts 5 local masters, acquires and releases one lock in each fan-out mode, prints votes.
//!
//! `cargo run -p redlock-core --example demo` (or `make demo`)

use std::time::Duration;

use redlock_core::{FanOut, Redlock, Vote};
use redlock_local::LocalMasters;

fn print_vote(what: &str, vote: &Vote) {
    println!("  {what}: {vote}");
    for m in vote.masters() {
        let rtt = m
            .round_trip
            .map(|d| format!("{:.1} µs", d.as_secs_f64() * 1e6))
            .unwrap_or_else(|| "-".into());
        println!(
            "    master {}: {:<12} {rtt}",
            m.master,
            m.outcome.to_string()
        );
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let masters = LocalMasters::start(5)?;
    println!("5 local masters: {}", masters.urls().join(", "));
    for fanout in [FanOut::Sequential, FanOut::Concurrent] {
        let redlock = Redlock::builder(masters.urls()).fanout(fanout).build()?;
        // Start from open connections so the votes show steady-state round trips.
        redlock.wait_connected(Duration::from_secs(5)).await;

        println!("\n{fanout} fan-out");
        let lock = redlock
            .acquire("demo:resource", Duration::from_secs(10))
            .await?;
        println!(
            "  acquired {:?} token {}… validity {:?}",
            lock.resource(),
            &lock.token()[..8],
            lock.validity()
        );
        print_vote("acquire", lock.vote());
        match redlock
            .try_acquire("demo:resource", Duration::from_secs(10))
            .await
        {
            Err(e) => println!("  a second contender is refused: {e}"),
            Ok(_) => println!("  BUG: a second contender got the lock"),
        }
        let release = redlock.release(&lock).await?;
        print_vote("release", &release);
    }
    Ok(())
}
