//! What fencing tokens cost: one acquire + release of one resource (the W1 cycle), unfenced
//! and fenced, in both fan-out modes, on the same 5 masters in the same run.
//!
//! - `fencing/{unfenced,fenced}/{sequential,concurrent}/5`.
//!
//! A fenced acquire makes two round trips (round 1 reads the counter with the grant, round 2
//! raises it on a quorum) where an unfenced one makes one; with the release, a cycle is 3
//! round trips instead of 2 (target: fenced W1 >= 0.6x unfenced, `docs/src/design.md#performance-targets`).

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use redlock_bench::fixture::{self, Masters, FANOUTS};

const N: usize = 5;

fn fencing(c: &mut Criterion) {
    let rt = fixture::runtime();
    let masters = Masters::start(N);
    let mut group = c.benchmark_group("fencing");
    group.throughput(Throughput::Elements(1));
    for fanout in FANOUTS {
        for fenced in [false, true] {
            let redlock = rt.block_on(fixture::client_with(&masters.urls(N), fanout, |b| {
                b.fencing(fenced)
            }));
            let mode = if fenced { "fenced" } else { "unfenced" };
            let id = format!("{mode}/{fanout}/{N}");
            let resource = format!("bench:fencing:{id}");
            group.bench_function(&id, |b| {
                b.to_async(&rt).iter_custom(|iters| {
                    let (redlock, resource) = (&redlock, &resource);
                    async move {
                        let start = Instant::now();
                        for _ in 0..iters {
                            fixture::cycle(redlock, resource).await;
                        }
                        start.elapsed()
                    }
                });
            });
            // The counter stays by design; every other key must be gone.
            let counter = redlock_core::fencing_counter_key(&resource);
            for i in 0..N {
                masters
                    .local()
                    .command(i, &[b"DEL".as_slice(), &counter])
                    .unwrap_or_else(|e| panic!("DEL on master {i}: {e}"));
            }
            masters.settle(&format!("fencing/{id}"));
        }
    }
    group.finish();
}

criterion_group!(benches, fencing);
criterion_main!(benches);
