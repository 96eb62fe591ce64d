//! The pure parts of every acquire, without I/O: `micro/token` (20 bytes from the OS CSPRNG,
//! hex-encoded) and `micro/validity` (drift allowance + validity window).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use redlock_core::validity::{drift, new_token, validity};
use redlock_core::DEFAULT_DRIFT_FACTOR;

fn micro(c: &mut Criterion) {
    let mut group = c.benchmark_group("micro");
    group.bench_function("token", |b| {
        b.iter(|| new_token().unwrap_or_else(|e| panic!("OS random source: {e}")));
    });
    group.bench_function("validity", |b| {
        let (ttl, elapsed) = (Duration::from_secs(10), Duration::from_micros(180));
        b.iter(|| {
            let ttl = black_box(ttl);
            validity(
                ttl,
                black_box(elapsed),
                drift(ttl, black_box(DEFAULT_DRIFT_FACTOR)),
            )
        });
    });
    group.finish();
}

criterion_group!(benches, micro);
criterion_main!(benches);
