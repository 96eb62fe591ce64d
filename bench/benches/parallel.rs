//! Aggregate throughput of one shared client driven by many tasks at once:
//! `parallel/{sequential,concurrent}/{1,16,64}`.
//!
//! Each task cycles acquire + release on its own resource (no contention), so the figure is
//! what the client and its multiplexed connections sustain, not lock contention (the load
//! generator measures that). One criterion iteration is one round in which every task
//! completes one cycle; the throughput line is aggregate cycles per second.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use redlock_bench::fixture::{self, Masters, FANOUTS};

const MASTERS: usize = 5;
const TASK_COUNTS: [usize; 3] = [1, 16, 64];

fn parallel(c: &mut Criterion) {
    let rt = fixture::runtime();
    let masters = Masters::start(MASTERS);
    let mut group = c.benchmark_group("parallel");
    // Every sample runs the same number of rounds: each one is long enough to keep all tasks
    // busy, which linear sampling's short first samples would not.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(30);
    for fanout in FANOUTS {
        let redlock = rt.block_on(fixture::client(&masters.urls(MASTERS), fanout));
        for tasks in TASK_COUNTS {
            let resources: Vec<String> =
                (0..tasks).map(|t| format!("bench:parallel:{t}")).collect();
            group.throughput(Throughput::Elements(tasks as u64));
            let id = format!("{fanout}/{tasks}");
            group.bench_function(&id, |b| {
                b.to_async(&rt).iter_custom(|rounds| {
                    let (redlock, resources) = (&redlock, &resources);
                    async move {
                        let start = Instant::now();
                        let handles: Vec<_> = resources
                            .iter()
                            .map(|resource| {
                                let (redlock, resource) = (redlock.clone(), resource.clone());
                                tokio::spawn(async move {
                                    for _ in 0..rounds {
                                        fixture::cycle(&redlock, &resource).await;
                                    }
                                })
                            })
                            .collect();
                        for handle in handles {
                            match handle.await {
                                Ok(()) => {}
                                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                                Err(e) => panic!("benchmark task did not finish: {e}"),
                            }
                        }
                        start.elapsed()
                    }
                });
            });
            masters.settle(&format!("parallel/{id}"));
        }
    }
    group.finish();
}

criterion_group!(benches, parallel);
criterion_main!(benches);
