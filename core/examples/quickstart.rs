//! Acquire and release one lock, telling "someone else holds it" from "Redis is down".
//!
//! Masters: `make masters && target/debug/redlock-masters --until-signal > urls.txt &`, then `cargo run -p redlock-core --example quickstart -- $(cat urls.txt)`

use std::time::Duration;

use redlock_core::{FanOut, Redlock};

#[tokio::main]
async fn main() -> Result<(), redlock_core::Error> {
    let masters: Vec<String> = std::env::args().skip(1).collect();
    if masters.is_empty() {
        eprintln!(
            "no masters given: start five local ones with `target/debug/redlock-masters \
             --until-signal > urls.txt &` (`make masters` builds it), then pass $(cat urls.txt)"
        );
        std::process::exit(2);
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
        Err(e) if e.is_unavailable() => {
            eprintln!("too few masters answered (are they running?): {e}");
            std::process::exit(1);
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
