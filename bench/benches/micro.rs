//! The pure parts of every acquire, without I/O: `micro/token` (20 bytes from the OS CSPRNG,
//! hex-encoded), `micro/validity` (drift allowance + validity window) and `micro/replies`
//! (reading what one master answers to an acquire + release).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use redlock_core::validity::{drift, new_token, validity};
use redlock_core::DEFAULT_DRIFT_FACTOR;
use redlock_resp::{read_reply, Reply};

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
    group.bench_function("replies", |b| {
        // SET's +OK, ECHO's request id, then the release script's answer: the request id.
        let stream = b"+OK\r\n$7\r\n1000042\r\n$7\r\n1000043\r\n";
        b.iter(|| {
            let (mut used, mut bulk_bytes) = (0, 0);
            while let Some((reply, n)) = read_reply(&black_box(stream)[used..]).unwrap() {
                used += n;
                if let Reply::Bulk(id) = reply {
                    bulk_bytes += id.len();
                }
            }
            bulk_bytes
        });
    });
    group.finish();
}

criterion_group!(benches, micro);
criterion_main!(benches);
