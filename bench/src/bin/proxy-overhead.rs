//! What the fault proxy costs with no fault on: PING and SET round trips to one local master,
//! direct, through a bare `copy_bidirectional` proxy (the floor for any user-space proxy) and
//! through `FaultProxy`, interleaved in the same run so all three see the same machine noise.
//!
//! Then, with 1 ms of latency on replies, PING rates of 1 and 16 connections: latency is applied
//! per connection, so 16 connections go about 16 times as fast.
//!
//! `cargo run --release -p redlock-bench --bin proxy-overhead [ROUND_TRIPS]` (default 20000
//! per target and command).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use redlock_local::proxy::{Direction, FaultProxy};
use redlock_local::resp::{self, Reply};
use redlock_local::LocalMasters;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A plain user-space proxy: accept, connect, `copy_bidirectional`. Runs until the process ends.
async fn bare_proxy(upstream: SocketAddr) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(mut server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    Ok(addr)
}

struct Target {
    name: &'static str,
    stream: TcpStream,
    samples: [Vec<Duration>; 2],
}

/// The commands timed: name, request, the exact reply expected.
fn commands() -> [(&'static str, Vec<u8>, Vec<u8>); 2] {
    [
        (
            "PING",
            resp::encode(&["PING"]),
            Reply::Status("PONG".into()).to_bytes(),
        ),
        (
            "SET",
            resp::encode(&["SET", "overhead", "0123456789abcdef"]),
            Reply::Status("OK".into()).to_bytes(),
        ),
    ]
}

async fn round_trip(stream: &mut TcpStream, request: &[u8], reply: &[u8]) -> Duration {
    let mut buf = [0u8; 64];
    let started = Instant::now();
    stream.write_all(request).await.expect("write");
    stream
        .read_exact(&mut buf[..reply.len()])
        .await
        .expect("read");
    let took = started.elapsed();
    assert_eq!(&buf[..reply.len()], reply);
    took
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let round_trips: usize = match std::env::args().nth(1) {
        Some(n) => n
            .parse()
            .map_err(|e| format!("ROUND_TRIPS must be a positive integer, got {n:?}: {e}"))?,
        None => 20_000,
    };
    if round_trips == 0 {
        return Err("ROUND_TRIPS must be at least 1".into());
    }
    let masters = LocalMasters::start(1)?;
    let master = SocketAddr::from(([127, 0, 0, 1], masters.port(0)?));
    let fault_proxy = FaultProxy::start(master).await?;
    let bare = bare_proxy(master).await?;

    let mut targets = Vec::new();
    for (name, addr) in [
        ("direct", master),
        ("bare copy proxy", bare),
        ("FaultProxy (no fault)", fault_proxy.local_addr()),
    ] {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        targets.push(Target {
            name,
            stream,
            samples: [
                Vec::with_capacity(round_trips),
                Vec::with_capacity(round_trips),
            ],
        });
    }
    let timed = commands();
    // Warm up connections, caches and the allocator.
    for target in &mut targets {
        for (_, request, reply) in &timed {
            for _ in 0..1_000 {
                round_trip(&mut target.stream, request, reply).await;
            }
        }
    }
    for _ in 0..round_trips {
        for target in &mut targets {
            for (c, (_, request, reply)) in timed.iter().enumerate() {
                let took = round_trip(&mut target.stream, request, reply).await;
                target.samples[c].push(took);
            }
        }
    }

    println!("{round_trips} round trips per target and command, interleaved; microseconds");
    println!(
        "{:<24}{:>6}{:>9}{:>9}{:>9}",
        "target", "cmd", "p50", "p90", "p99"
    );
    let mut p50 = vec![[0.0; 2]; targets.len()];
    for (t, target) in targets.iter_mut().enumerate() {
        for (c, (cmd, _, _)) in timed.iter().enumerate() {
            let samples = &mut target.samples[c];
            samples.sort_unstable();
            p50[t][c] = percentile(samples, 0.50);
            println!(
                "{:<24}{:>6}{:>9.1}{:>9.1}{:>9.1}",
                target.name,
                cmd,
                p50[t][c],
                percentile(samples, 0.90),
                percentile(samples, 0.99)
            );
        }
    }
    for (c, (cmd, _, _)) in timed.iter().enumerate() {
        println!(
            "{cmd}: p50 added by FaultProxy vs direct {:+.1} µs; vs bare copy proxy {:+.1} µs",
            p50[2][c] - p50[0][c],
            p50[2][c] - p50[1][c],
        );
    }

    // Latency is per connection: 16 connections each waiting 1 ms per reply should together
    // do about 16 times what one does, not queue behind each other.
    fault_proxy.set_latency(Direction::Downstream, LATENCY, Duration::ZERO);
    let mut rates = Vec::new();
    for connections in [1, 16] {
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..connections {
            let addr = fault_proxy.local_addr();
            tasks.push(tokio::spawn(async move {
                let mut stream = TcpStream::connect(addr).await.expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                let [(_, request, reply), _] = commands();
                for _ in 0..LATENCY_ROUND_TRIPS {
                    round_trip(&mut stream, &request, &reply).await;
                }
            }));
        }
        for task in tasks {
            task.await?;
        }
        let rate = (connections * LATENCY_ROUND_TRIPS) as f64 / started.elapsed().as_secs_f64();
        println!(
            "downstream latency {LATENCY:?}, {connections:>2} connection(s): {rate:>7.0} PING/s"
        );
        rates.push(rate);
    }
    println!(
        "16 connections ÷ 1 connection: {:.1}× (16× if independent, 1× if serialised)",
        rates[1] / rates[0]
    );
    Ok(())
}

const LATENCY: Duration = Duration::from_millis(1);
const LATENCY_ROUND_TRIPS: usize = 300;
