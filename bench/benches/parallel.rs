//! Aggregate throughput of one shared client driven by many tasks at once:
//! `parallel/{sequential,concurrent}/{1,16,64}`.
//!
//! Each task cycles acquire + release on its own resource (no contention), so the figure is
//! what the client and its multiplexed connections sustain, not lock contention (the load
//! generator measures that). For `rounds` iterations every task runs `rounds` cycles back to
//! back (not in lock-step), so one iteration is worth one cycle per task: the time is wall
//! time / rounds, and the throughput line is aggregate cycles per second.
//!
//! The client's CPU per cycle (this process's user + sys over the timed part; the masters are
//! other processes) is printed after the group and saved for `bench-report`.

use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use redlock_bench::client_cpu::{self, Tally};
use redlock_bench::fixture::{self, Masters, Names, FANOUTS};

const MASTERS: usize = 5;
const TASK_COUNTS: [usize; 3] = [1, 16, 64];

fn parallel(c: &mut Criterion) {
    let rt = fixture::runtime();
    let masters = Masters::start(MASTERS);
    let cpu = Tally::default();
    let mut group = c.benchmark_group("parallel");
    // Every sample runs the same number of rounds: each one is long enough to keep all tasks
    // busy, which linear sampling's short first samples would not.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(30);
    for fanout in FANOUTS {
        let redlock = rt.block_on(fixture::client(&masters.urls(MASTERS), fanout));
        for tasks in TASK_COUNTS {
            group.throughput(Throughput::Elements(tasks as u64));
            let id = format!("{fanout}/{tasks}");
            let mut names: Vec<Names> = (0..tasks)
                .map(|t| Names::new(format!("bench:parallel:{id}:{t}")))
                .collect();
            group.bench_function(&id, |b| {
                b.to_async(&rt).iter_custom(|rounds| {
                    let per_task: Vec<Vec<String>> =
                        names.iter_mut().map(|n| n.take(rounds)).collect();
                    let (redlock, cpu, id) = (&redlock, &cpu, &id);
                    async move {
                        let cpu_before = client_cpu::process_cpu();
                        let start = Instant::now();
                        let handles: Vec<_> = per_task
                            .into_iter()
                            .map(|resources| {
                                let redlock = redlock.clone();
                                tokio::spawn(async move {
                                    for resource in &resources {
                                        fixture::cycle(&redlock, resource).await;
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
                        let elapsed = start.elapsed();
                        let cycles = rounds * tasks as u64;
                        cpu.add(
                            &format!("parallel/{id}"),
                            client_cpu::process_cpu() - cpu_before,
                            cycles,
                        );
                        elapsed
                    }
                });
            });
            masters.settle(&format!("parallel/{id}"));
        }
    }
    group.finish();
    cpu.finish();
}

criterion_group!(benches, parallel);
criterion_main!(benches);
