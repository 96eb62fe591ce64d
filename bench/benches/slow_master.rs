//! One slow master out of 5: `slow_master/{sequential,concurrent}/5/...`.
//!
//! Every master sits behind a fault proxy (`redlock_local::proxy`), so all five pay the same
//! extra hop; master 0's proxy delays each request by 2 ms (a round trip ~2 ms slower). This
//! is where the fan-out modes differ most: sequential waits for the slow master in every
//! operation, concurrent wins its quorum from the four fast ones (release still waits for
//! all five, to delete every key).
//!
//! - `acquire_release`: one acquire + release, master 0 slow;
//! - `try_acquire`: one attempt alone (release untimed), master 0 slow;
//! - `acquire_release_all_fast`: one acquire + release through the same proxies, no delay
//!   (the reference the slow figures compare to).

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use redlock_bench::fixture::{self, Masters, Names, FANOUTS};
use redlock_core::Redlock;
use redlock_local::proxy::{Direction, FaultProxies};

const MASTERS: usize = 5;
/// Added to every request to the slow master.
const SLOW_BY: Duration = Duration::from_millis(2);

/// Times `iters` acquire + release cycles on fresh resources.
async fn cycles(redlock: &Redlock, resources: Vec<String>) -> Duration {
    let start = Instant::now();
    for resource in &resources {
        fixture::cycle(redlock, resource).await;
    }
    start.elapsed()
}

fn slow_master(c: &mut Criterion) {
    let rt = fixture::runtime();
    let masters = Masters::start(MASTERS);
    // The proxies stand for the network: they get their own thread, not the client's runtime.
    let network = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("fault-proxy")
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("cannot start the proxies' runtime: {e}"));
    let proxies = network
        .block_on(FaultProxies::start(masters.local()))
        .unwrap_or_else(|e| panic!("cannot start the fault proxies: {e}"));
    let mut group = c.benchmark_group("slow_master");
    group.throughput(Throughput::Elements(1));
    // A sequential cycle takes milliseconds here: fewer, longer samples.
    group.sample_size(30);
    for fanout in FANOUTS {
        let redlock = rt.block_on(fixture::client(&proxies.urls(), fanout));
        let name = |what: &str| format!("{fanout}/{MASTERS}/{what}");
        let mut names = Names::new(format!("bench:slow_master:{fanout}"));

        proxies.clear();
        group.bench_function(name("acquire_release_all_fast"), |b| {
            b.to_async(&rt)
                .iter_custom(|iters| cycles(&redlock, names.take(iters)));
        });
        masters.settle(&format!("slow_master/{}", name("acquire_release_all_fast")));

        proxies[0].set_latency(Direction::Upstream, SLOW_BY, Duration::ZERO);
        group.bench_function(name("acquire_release"), |b| {
            b.to_async(&rt)
                .iter_custom(|iters| cycles(&redlock, names.take(iters)));
        });
        masters.settle(&format!("slow_master/{}", name("acquire_release")));

        group.bench_function(name("try_acquire"), |b| {
            b.to_async(&rt)
                .iter_custom(|iters| fixture::timed_try_acquires(&redlock, names.take(iters)));
        });
        proxies.clear();
        masters.settle(&format!("slow_master/{}", name("try_acquire")));
    }
    group.finish();
}

criterion_group!(benches, slow_master);
criterion_main!(benches);
