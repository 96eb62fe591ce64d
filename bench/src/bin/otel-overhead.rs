//! Client CPU per W2 cycle (16 tasks, distinct keys, one client, 5 local masters) with the
//! core's telemetry off and, built with `--features otel`, on: recording into the
//! OpenTelemetry SDK with a periodic reader exporting every second to an in-memory exporter
//! (a live pipeline; the SDK's export thread is part of this process's CPU). Mode "stats"
//! records into a `ClientStats` sink instead (what every C client does for
//! `redlock_client_stats`).
//!
//! The phases alternate in one run on the same masters (off, on, off, on, ...), each a fixed
//! number of seconds; the medians per mode are printed. Built without the feature, only "off"
//! runs: compare its figure with "off" of a build with the feature.
//!
//! `cargo run --release -p redlock-bench --features otel --bin otel-overhead -- 3 4`
//! (seconds per phase, phases per mode).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redlock_bench::client_cpu::process_cpu;
use redlock_core::{ClientStats, FanOut, Redlock, RedlockBuilder};
use redlock_local::LocalMasters;

const TASKS: usize = 16;
const TTL: Duration = Duration::from_secs(10);

/// Runs W2 for `seconds` on `client`; returns (cycles, CPU seconds of this process).
async fn phase(client: &Redlock, seconds: f64, label: &str) -> (u64, f64) {
    let stop = Arc::new(AtomicBool::new(false));
    let cycles = Arc::new(AtomicU64::new(0));
    let cpu_before = process_cpu();
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let (client, stop, cycles) = (client.clone(), stop.clone(), cycles.clone());
            let key = format!("otel-overhead:{label}:{t}");
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let lock = client.acquire(&key, TTL).await.expect("distinct keys: won");
                    client.release(&lock).await.expect("released");
                    cycles.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.expect("W2 task");
    }
    let cpu = (process_cpu() - cpu_before).as_secs_f64();
    (cycles.load(Ordering::Relaxed), cpu)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

async fn client(masters: &LocalMasters) -> Redlock {
    client_of(Redlock::builder(masters.urls())).await
}

async fn client_of(builder: RedlockBuilder) -> Redlock {
    let client = builder.fanout(FanOut::Concurrent).build().expect("client");
    client.wait_connected(Duration::from_secs(5)).await;
    client
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args
        .next()
        .map_or(3.0, |s| s.parse().expect("seconds per phase"));
    let phases: usize = args
        .next()
        .map_or(4, |s| s.parse().expect("phases per mode"));
    let masters = LocalMasters::start(5).expect("5 local masters");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        // Built while the global meter provider is the no-op one: its instruments are off.
        let off = client(&masters).await;
        let stats = Arc::new(ClientStats::new(masters.len()));
        let with_stats =
            client_of(Redlock::builder(masters.urls()).metrics_sink(stats.clone())).await;
        #[cfg(feature = "otel")]
        let (on, provider) = {
            use opentelemetry_sdk::metrics::{
                InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
            };
            let exporter = InMemoryMetricExporter::default();
            let reader = PeriodicReader::builder(exporter)
                .with_interval(Duration::from_secs(1))
                .build();
            let provider = SdkMeterProvider::builder().with_reader(reader).build();
            opentelemetry::global::set_meter_provider(provider.clone());
            (client(&masters).await, provider)
        };
        let mut modes: Vec<(&str, &Redlock, Vec<f64>, u64)> = vec![
            ("off", &off, Vec::new(), 0),
            ("stats", &with_stats, Vec::new(), 0),
        ];
        #[cfg(feature = "otel")]
        modes.push(("on", &on, Vec::new(), 0));
        // Warm-up of each mode, not counted.
        for (label, client, _, _) in &modes {
            phase(client, 0.5, label).await;
        }
        for _ in 0..phases {
            for (label, client, per_cycle, total) in modes.iter_mut() {
                let (cycles, cpu) = phase(client, seconds, label).await;
                per_cycle.push(cpu * 1e6 / cycles.max(1) as f64);
                *total += cycles;
            }
        }
        let built = if cfg!(feature = "otel") {
            "built with otel"
        } else {
            "built without otel"
        };
        for (label, _, per_cycle, total) in &modes {
            let range = (
                per_cycle.iter().copied().fold(f64::INFINITY, f64::min),
                per_cycle.iter().copied().fold(0.0, f64::max),
            );
            println!(
                "{built}, telemetry {label}: {:.2} µs CPU per cycle (median of {phases} phases, range {:.2}–{:.2}; {total} cycles)",
                median(per_cycle.clone()),
                range.0,
                range.1
            );
        }
        let ratio = median(modes[1].2.clone()) / median(modes[0].2.clone());
        println!(
            "stats / off: {ratio:.3}× ({} acquires counted)",
            stats.snapshot().acquires.acquired
        );
        #[cfg(feature = "otel")]
        {
            let ratio = median(modes[2].2.clone()) / median(modes[0].2.clone());
            println!("on / off: {ratio:.3}×");
            provider.shutdown().expect("provider shutdown");
        }
    });
}
