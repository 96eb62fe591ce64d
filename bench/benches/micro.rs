//! The pure parts of every acquire, without I/O: `micro/token` (20 bytes from the OS CSPRNG,
//! hex-encoded), `micro/validity` (drift allowance + validity window), `micro/replies`
//! (reading what one master answers to an acquire + release), and
//! `micro/client_stats_cycle`: what the C client's `ClientStats` sink costs per acquire +
//! release cycle (its 15 measurements on 5 masters), alone and with another thread recording
//! into the same sink at the same time (`_contended`).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use redlock_core::validity::{drift, new_token, validity};
use redlock_core::{
    AcquireOutcome, AttemptResult, ClientStats, Measurement, MetricsSink, DEFAULT_DRIFT_FACTOR,
};
use redlock_resp::{read_reply, Reply};

const MASTERS: usize = 5;

/// The measurements of one acquire (won at the first attempt) and release on 5 masters.
fn record_cycle(stats: &ClientStats) {
    stats.record(Measurement::Attempt {
        result: AttemptResult::Won,
    });
    for master in 0..MASTERS {
        stats.record(black_box(Measurement::Request {
            master,
            operation: "SET",
            seconds: 0.000_1,
            error_type: None,
        }));
    }
    stats.record(Measurement::LocksHeld { delta: 1 });
    stats.record(black_box(Measurement::Acquire {
        outcome: AcquireOutcome::Acquired,
        seconds: 0.000_25,
    }));
    for master in 0..MASTERS {
        stats.record(black_box(Measurement::Request {
            master,
            operation: "EVALSHA",
            seconds: 0.000_1,
            error_type: None,
        }));
    }
    stats.record(Measurement::LocksHeld { delta: -1 });
    stats.record(Measurement::Release { seconds: 0.000_1 });
}

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
    let stats = ClientStats::new(MASTERS);
    group.bench_function("client_stats_cycle", |b| b.iter(|| record_cycle(&stats)));
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                record_cycle(&stats);
            }
        });
        group.bench_function("client_stats_cycle_contended", |b| {
            b.iter(|| record_cycle(&stats))
        });
        stop.store(true, Ordering::Relaxed);
    });
    group.finish();
}

criterion_group!(benches, micro);
criterion_main!(benches);
