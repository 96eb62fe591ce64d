//! Latency of one lock operation on an idle system, by fan-out mode and master count, and the
//! plain-Redis floor it is compared to.
//!
//! - `acquire_release/{sequential,concurrent}/{1,3,5,7}`: one uncontended acquire + release;
//! - `attempt/{sequential,concurrent}/5/{try_acquire,release,extend}`: each operation alone;
//! - `baseline/set_roundtrip`: one `SET NX PX` + `DEL` pair to one master over a multiplexed
//!   connection (the same connection type the client uses); `baseline/set_only`: one `SET`.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use redlock_bench::fixture::{self, Masters, Names, FANOUTS, TTL};

const MASTER_COUNTS: [usize; 4] = [1, 3, 5, 7];

fn acquire_release(c: &mut Criterion) {
    let rt = fixture::runtime();
    let masters = Masters::start(*MASTER_COUNTS.iter().max().expect("non-empty"));
    let mut group = c.benchmark_group("acquire_release");
    group.throughput(Throughput::Elements(1));
    for fanout in FANOUTS {
        for n in MASTER_COUNTS {
            let redlock = rt.block_on(fixture::client(&masters.urls(n), fanout));
            let id = format!("{fanout}/{n}");
            let mut names = Names::new(format!("bench:acquire_release:{id}"));
            group.bench_function(&id, |b| {
                b.to_async(&rt).iter_custom(|iters| {
                    let resources = names.take(iters);
                    let redlock = &redlock;
                    async move {
                        let start = Instant::now();
                        for resource in &resources {
                            fixture::cycle(redlock, resource).await;
                        }
                        start.elapsed()
                    }
                });
            });
            masters.settle(&format!("acquire_release/{id}"));
        }
    }
    group.finish();
}

fn attempt(c: &mut Criterion) {
    const N: usize = 5;
    let rt = fixture::runtime();
    let masters = Masters::start(N);
    let mut group = c.benchmark_group("attempt");
    group.throughput(Throughput::Elements(1));
    for fanout in FANOUTS {
        // One lock is extended over and over below: lift the extension bound for it.
        let redlock = rt.block_on(fixture::client_with(&masters.urls(N), fanout, |b| {
            b.max_extensions(u32::MAX)
        }));
        let name = |op: &str| format!("{fanout}/{N}/{op}");
        let mut names = Names::new(format!("bench:attempt:{fanout}"));

        // One attempt (no retry); the release that follows is not timed.
        group.bench_function(name("try_acquire"), |b| {
            b.to_async(&rt)
                .iter_custom(|iters| fixture::timed_try_acquires(&redlock, names.take(iters)));
        });
        masters.settle(&format!("attempt/{}", name("try_acquire")));

        // One release; the acquire before it is not timed.
        group.bench_function(name("release"), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let resources = names.take(iters);
                let redlock = &redlock;
                async move {
                    let mut timed = Duration::ZERO;
                    for resource in &resources {
                        let acquired = redlock.acquire(resource, TTL).await;
                        let Some(lock) = fixture::won(acquired, resource) else {
                            continue;
                        };
                        let start = Instant::now();
                        let vote = redlock.release(&lock).await;
                        timed += start.elapsed();
                        fixture::released(vote, &lock);
                    }
                    timed
                }
            });
        });
        masters.settle(&format!("attempt/{}", name("release")));

        // One extension of a held lock; the mutex only hands the lock to each sample.
        let resource = names.next();
        let lock = fixture::won(rt.block_on(redlock.acquire(&resource, TTL)), &resource);
        let lock = tokio::sync::Mutex::new(lock);
        group.bench_function(name("extend"), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let (redlock, lock, resource) = (&redlock, &lock, &resource);
                async move {
                    let mut held = lock.lock().await;
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        let Some(lock) = held.as_mut() else {
                            *held = fixture::won(redlock.acquire(resource, TTL).await, resource);
                            continue;
                        };
                        let start = Instant::now();
                        let extended = redlock.extend(lock, TTL).await;
                        timed += start.elapsed();
                        if let Err(e) = extended {
                            fixture::anomaly(format!("extend of a held lock failed: {e}"));
                            *held = None; // re-acquired (untimed) on the next iteration
                        }
                    }
                    timed
                }
            });
        });
        if let Some(lock) = lock.into_inner() {
            fixture::released(rt.block_on(redlock.release(&lock)), &lock);
        }
        masters.settle(&format!("attempt/{}", name("extend")));
    }
    group.finish();
}

fn baseline(c: &mut Criterion) {
    let rt = fixture::runtime();
    let masters = Masters::start(1);
    let mut connection = rt.block_on(async {
        redis::Client::open(masters.urls(1)[0].as_str())
            .expect("valid loopback URL")
            .get_multiplexed_async_connection()
            .await
            .unwrap_or_else(|e| panic!("cannot connect to the baseline master: {e}"))
    });
    let ttl_ms = TTL.as_millis() as u64;
    let mut group = c.benchmark_group("baseline");
    group.throughput(Throughput::Elements(1));

    group.bench_function("set_roundtrip", |b| {
        b.to_async(&rt).iter(|| {
            let mut connection = connection.clone();
            async move {
                let set: Option<String> = redis::cmd("SET")
                    .arg("bench:baseline")
                    .arg("0123456789abcdef0123456789abcdef01234567")
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query_async(&mut connection)
                    .await
                    .unwrap_or_else(|e| panic!("SET: {e}"));
                assert!(set.is_some(), "SET NX found the key already set");
                let deleted: u64 = redis::cmd("DEL")
                    .arg("bench:baseline")
                    .query_async(&mut connection)
                    .await
                    .unwrap_or_else(|e| panic!("DEL: {e}"));
                assert_eq!(deleted, 1, "DEL did not delete the key");
            }
        });
    });
    masters.settle("baseline/set_roundtrip");

    group.bench_function("set_only", |b| {
        b.to_async(&rt).iter(|| {
            let mut connection = connection.clone();
            async move {
                let _: () = redis::cmd("SET")
                    .arg("bench:baseline")
                    .arg("0123456789abcdef0123456789abcdef01234567")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query_async(&mut connection)
                    .await
                    .unwrap_or_else(|e| panic!("SET: {e}"));
            }
        });
    });
    let _: () = rt
        .block_on(
            redis::cmd("DEL")
                .arg("bench:baseline")
                .query_async(&mut connection),
        )
        .unwrap_or_else(|e| panic!("DEL: {e}"));
    masters.settle("baseline/set_only");
    group.finish();
}

criterion_group!(benches, acquire_release, attempt, baseline);
criterion_main!(benches);
