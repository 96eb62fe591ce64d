//! Acquire and release one lock, telling "someone else holds it" from "Redis is down".
//!
//! `cargo run -p redlock-core --example quickstart -- redis://127.0.0.1:7001 redis://127.0.0.1:7002 redis://127.0.0.1:7003`

use std::time::Duration;

use redlock_core::{FanOut, Redlock};

#[tokio::main]
async fn main() -> Result<(), redlock_core::Error> {
    let mut masters: Vec<String> = std::env::args().skip(1).collect();
    if masters.is_empty() {
        masters = (7001..=7003)
            .map(|port| format!("redis://127.0.0.1:{port}"))
            .collect();
    }
    let redlock = Redlock::builder(masters)
        .fanout(FanOut::Concurrent) // or FanOut::Sequential
        .retry_count(3)
        .retry_delay(Duration::from_millis(200))
        .build()?;

    match redlock.acquire("orders:42", Duration::from_secs(10)).await {
        Ok(lock) => {
            // Act as the owner only while lock.is_valid().
            println!(
                "won {}/{} votes, valid for {:?}",
                lock.vote().granted(),
                redlock.master_count(),
                lock.validity()
            );
            redlock.release(&lock).await?;
        }
        Err(e) if e.is_not_acquired() => println!("someone else holds it: {e}"),
        Err(e) if e.is_unavailable() => println!("too few masters answered: {e}"),
        Err(e) => return Err(e),
    }
    Ok(())
}
