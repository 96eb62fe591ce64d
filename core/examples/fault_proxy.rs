//! A lock taken through fault proxies: one slow master, one silent, one down, and still a
//! quorum of five. The same switches serve your own tests (crate `redlock-local`).
//!
//! `cargo run -p redlock-core --example fault_proxy`

use std::time::Duration;

use redlock_core::Redlock;
use redlock_local::proxy::{Direction, FaultProxies};
use redlock_local::LocalMasters;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let masters = LocalMasters::start(5)?;
    let proxies = FaultProxies::start(&masters).await?; // proxies[i] fronts master i
    let redlock = Redlock::builder(proxies.urls()).build()?; // connect through them
    proxies[0].set_latency(
        Direction::Downstream,
        Duration::from_millis(50),
        Duration::from_millis(5),
    );
    proxies[1].set_blackhole(true);
    proxies[2].set_down(true);
    let lock = redlock
        .acquire("orders:42", Duration::from_secs(10))
        .await?; // 3 of 5 still answer
    println!("{}", lock.vote());
    proxies.clear(); // every fault off
    redlock.release(&lock).await?;
    Ok(())
}
