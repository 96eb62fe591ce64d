//! The Rust side of `make bench-python`: acquire+release cycles per second through the
//! blocking API (`redlock_core::blocking`, what the Python extension wraps), N threads sharing
//! one client, each on a resource of its own. Prints one JSON object.
//!
//! `cargo run --release -p redlock-bench --bin blocking-cycles -- --masters URL,URL,... --threads 16`

use std::time::{Duration, Instant};

use clap::Parser;
use redlock_core::blocking::Redlock;
use redlock_core::FanOut;

#[derive(Parser, Debug)]
struct Args {
    /// Master URLs, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    masters: Vec<String>,
    /// Threads sharing one client.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// "concurrent" or "sequential".
    #[arg(long, default_value = "concurrent")]
    fanout: FanOut,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let client = Redlock::builder(args.masters)
        .fanout(args.fanout)
        .build_blocking()?;
    let ttl = Duration::from_secs(10);
    // Warm-up: connections open, scripts loaded.
    let lock = client.acquire("bench:warm-up", ttl)?;
    client.release(&lock)?;

    let run_for = Duration::from_secs_f64(args.seconds);
    let started = Instant::now();
    let cycles: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..args.threads)
            .map(|index| {
                let client = &client;
                scope.spawn(move || -> Result<u64, redlock_core::Error> {
                    let resource = format!("bench:rust:{index}");
                    let mut cycles = 0;
                    while started.elapsed() < run_for {
                        let lock = client.acquire(&resource, ttl)?;
                        client.release(&lock)?;
                        cycles += 1;
                    }
                    Ok(cycles)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("worker panicked"))
            .sum::<Result<u64, _>>()
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "{{\"threads\": {}, \"fanout\": \"{}\", \"cycles\": {cycles}, \"seconds\": {elapsed:.3}, \"cycles_per_s\": {:.1}}}",
        args.threads,
        args.fanout,
        cycles as f64 / elapsed
    );
    Ok(())
}
