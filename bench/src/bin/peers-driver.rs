//! `make bench-peers` driver for this project's Rust surface: `--driver rust-async` (the tokio
//! API on a multi-threaded runtime, one task per W2/W3 task) or `--driver rust-blocking`
//! (`redlock_core::blocking`, one OS thread per task). One process runs one workload and
//! prints one JSON line (see `redlock_peers_workload`). `--driver rust-main` awaits the same
//! client in the runtime's main future, as a `#[tokio::main]` program does (nothing spawned).
//! `--driver floor` is the W1 and W2 reference (`redlock_bench::peers::floor`).
//!
//! W1/W2 use the client's defaults; W3 configures the client's own retry to W3's (100
//! retries, delay drawn from [10, 20] ms: `retry_delay` is the upper bound, the lower is half).

use std::time::Duration;

use redlock_core::{Lock, Redlock};
use redlock_peers_workload::{self as workload, Args, AsyncClient, BlockingClient, Workload};

struct Async(Redlock, Duration);

impl AsyncClient for Async {
    type Guard = Lock;
    async fn acquire(&self, key: &str) -> Result<Lock, String> {
        self.0.acquire(key, self.1).await.map_err(|e| e.to_string())
    }
    async fn release(&self, lock: Lock) -> Result<(), String> {
        self.0
            .release(&lock)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

struct Blocking(redlock_core::blocking::Redlock, Duration);

impl BlockingClient for Blocking {
    type Guard = Lock;
    fn acquire(&self, key: &str) -> Result<Lock, String> {
        self.0.acquire(key, self.1).map_err(|e| e.to_string())
    }
    fn release(&self, lock: Lock) -> Result<(), String> {
        self.0.release(&lock).map(drop).map_err(|e| e.to_string())
    }
}

fn builder(args: &Args) -> redlock_core::RedlockBuilder {
    // `rust-async-no-handoff`: the same client with its local hand-off off, to show what the
    // hand-off does to W3 in the same run.
    let handoff = std::env::var("REDLOCK_PEERS_LOCAL_HANDOFF").map_or(true, |v| v != "0");
    let builder = Redlock::builder(args.masters.clone()).local_handoff(handoff);
    match args.workload {
        Workload::W3 => builder
            .retry_count(workload::W3_RETRIES)
            .retry_delay(workload::W3_DELAY_MAX),
        Workload::W1 | Workload::W2 => builder,
    }
}

fn main() {
    let library = format!("redlock-core {}", env!("CARGO_PKG_VERSION"));
    let args = Args::from_env("rust-async", &library);
    let connect = Duration::from_secs(5);
    match args.driver.as_str() {
        "floor" => {
            let floor = || {
                redlock_bench::peers::floor::Floor::connect(&args.masters, args.ttl)
                    .unwrap_or_else(|e| workload::fail(&args, &e))
            };
            match args.workload {
                Workload::W1 => workload::run_blocking(&args, floor()),
                Workload::W2 => workload::run_rounds(&args, floor()),
                Workload::W3 => workload::skip(&args, "a reference for W1 and W2 only"),
            }
        }
        "rust-blocking" => {
            let client = builder(&args)
                .build_blocking()
                .unwrap_or_else(|e| workload::fail(&args, &e.to_string()));
            let _ = client.wait_connected(connect);
            workload::run_blocking(&args, Blocking(client, args.ttl));
        }
        "rust-async" | "rust-async-no-handoff" | "rust-main" => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .unwrap_or_else(|e| workload::fail(&args, &format!("tokio runtime: {e}")));
            let client = rt
                .block_on(async {
                    let client = builder(&args).build()?;
                    client.wait_connected(connect).await;
                    Ok::<_, redlock_core::Error>(client)
                })
                .unwrap_or_else(|e| workload::fail(&args, &e.to_string()));
            let client = Async(client, args.ttl);
            if args.driver == "rust-main" {
                workload::run_in_main(&rt, &args, client);
            } else {
                workload::run_async(&rt, &args, client);
            }
        }
        other => workload::fail(
            &args,
            &format!("--driver {other:?}: this program runs floor, rust-blocking, rust-async, rust-async-no-handoff or rust-main"),
        ),
    }
}
