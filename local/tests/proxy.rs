//! The fault proxy on real connections to real masters: each fault does what it says.

use std::future::ready;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use redlock_local::proxy::{Direction, FaultProxies, FaultProxy, Faults};
use redlock_local::resp::{self, Decoder, Reply};
use redlock_local::{eventually, LocalMasters};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bound for anything that must happen (a reply, a close): generous, never a speed claim.
const PATIENCE: Duration = Duration::from_secs(5);
/// How long a blackholed request is given to (wrongly) get an answer.
const SILENCE: Duration = Duration::from_millis(300);

fn masters(n: usize) -> LocalMasters {
    LocalMasters::start(n).unwrap_or_else(|e| panic!("cannot start {n} local masters: {e}"))
}

fn master_addr(masters: &LocalMasters, i: usize) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], masters.port(i).unwrap()))
}

async fn proxy_for(masters: &LocalMasters, i: usize) -> FaultProxy {
    FaultProxy::start(master_addr(masters, i))
        .await
        .expect("start proxy")
}

fn status(text: &str) -> Reply {
    Reply::Status(text.into())
}

/// A raw RESP connection, so the tests see exactly what the proxy does to bytes.
struct Conn {
    stream: TcpStream,
    decoder: Decoder,
}

impl Conn {
    async fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            decoder: Decoder::default(),
        })
    }

    async fn send(&mut self, args: &[&str]) -> std::io::Result<()> {
        self.stream.write_all(&resp::encode(args)).await
    }

    /// The next reply; an error if the connection fails or closes first.
    async fn reply(&mut self) -> std::io::Result<Reply> {
        self.decoder.read_async(&mut self.stream).await
    }

    async fn call(&mut self, args: &[&str]) -> std::io::Result<Reply> {
        self.send(args).await?;
        self.reply().await
    }

    /// A reply that must come (bounded by `PATIENCE`).
    async fn must(&mut self, args: &[&str]) -> Reply {
        tokio::time::timeout(PATIENCE, self.call(args))
            .await
            .unwrap_or_else(|_| panic!("no reply to {args:?} within {PATIENCE:?}"))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    /// Waits (bounded) for the connection to end; returns how it ended.
    async fn closed(&mut self) -> std::io::Error {
        let mut buf = [0u8; 1024];
        let ended = tokio::time::timeout(PATIENCE, async {
            loop {
                match self.stream.read(&mut buf).await {
                    Ok(0) => return std::io::Error::from(ErrorKind::UnexpectedEof),
                    Ok(_) => continue,
                    Err(e) => return e,
                }
            }
        });
        ended
            .await
            .unwrap_or_else(|_| panic!("connection still open after {PATIENCE:?}"))
    }
}

/// Time of one PING round trip.
async fn ping_round_trip(conn: &mut Conn) -> Duration {
    let started = Instant::now();
    assert_eq!(conn.must(&["PING"]).await, status("PONG"));
    started.elapsed()
}

async fn refused(addr: SocketAddr) -> bool {
    matches!(TcpStream::connect(addr).await, Err(e) if e.kind() == ErrorKind::ConnectionRefused)
}

#[tokio::test]
async fn forwards_requests_and_replies_unchanged_and_counts_connections() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    assert_eq!(proxy.url(), format!("redis://{}", proxy.local_addr()));
    assert_eq!(proxy.upstream(), master_addr(&m, 0));
    assert!(proxy.faults().is_clear());

    let mut conn = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(conn.must(&["PING"]).await, status("PONG"));
    assert_eq!(proxy.connections(), 1);
    // A value far larger than one read buffer arrives whole.
    let big = "x".repeat(1 << 20);
    assert_eq!(conn.must(&["SET", "big", &big]).await, status("OK"));
    let reply = conn.must(&["GET", "big"]).await;
    assert_eq!(reply, Reply::bulk(big.clone()));
    assert_eq!(m.get(0, "big").unwrap().map(|v| v.len()), Some(big.len()));

    drop(conn);
    eventually("connection count back to 0", PATIENCE, || {
        ready(proxy.connections() == 0)
    })
    .await;
}

#[tokio::test]
async fn latency_adds_at_least_the_delay_per_round_trip_in_each_direction() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let mut conn = Conn::open(proxy.local_addr()).await.unwrap();
    let delay = Duration::from_millis(40);

    for (direction, trips) in [
        (Direction::Upstream, 1),
        (Direction::Downstream, 1),
        (Direction::Both, 2),
    ] {
        proxy.clear();
        proxy.set_latency(direction, delay, Duration::ZERO);
        for _ in 0..3 {
            let took = ping_round_trip(&mut conn).await;
            assert!(
                took >= delay * trips,
                "{direction}: round trip {took:?} < {trips} × {delay:?}"
            );
        }
    }
    let f = proxy.faults();
    assert_eq!(f.upstream_latency.latency, delay);
    assert_eq!(f.downstream_latency.latency, delay);

    // Jitter: each chunk waits at least latency − jitter.
    proxy.set_latency(
        Direction::Both,
        Duration::from_millis(30),
        Duration::from_millis(10),
    );
    for _ in 0..3 {
        let took = ping_round_trip(&mut conn).await;
        assert!(took >= Duration::from_millis(40), "jittered: {took:?}");
    }

    // Setting one direction leaves the other alone; zero removes it.
    proxy.set_latency(Direction::Upstream, Duration::ZERO, Duration::ZERO);
    assert!(proxy.faults().upstream_latency.is_zero());
    assert_eq!(
        proxy.faults().downstream_latency.latency,
        Duration::from_millis(30)
    );
    proxy.set_latency(Direction::Downstream, Duration::ZERO, Duration::ZERO);
    assert!(proxy.faults().is_clear());
    assert_eq!(conn.must(&["PING"]).await, status("PONG"));
}

#[tokio::test]
async fn latency_with_jitter_keeps_the_byte_order() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let mut conn = Conn::open(proxy.local_addr()).await.unwrap();
    // Jitter as large as the latency: chunks sent 1 ms apart would overtake each other if
    // each were scheduled independently.
    proxy.set_latency(
        Direction::Both,
        Duration::from_millis(10),
        Duration::from_millis(10),
    );
    let count = 40;
    for i in 0..count {
        conn.send(&["ECHO", &i.to_string()]).await.unwrap();
        // Pacing, so the requests travel as separate chunks.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    for i in 0..count {
        let want = i.to_string();
        let reply = tokio::time::timeout(PATIENCE, conn.reply())
            .await
            .expect("reply")
            .unwrap();
        assert_eq!(reply, Reply::bulk(want));
    }
    // A large value through the delayed path arrives whole.
    let big = "y".repeat(3 << 20);
    assert_eq!(conn.must(&["SET", "big", &big]).await, status("OK"));
    assert_eq!(
        conn.must(&["STRLEN", "big"]).await,
        Reply::Integer(big.len() as i64)
    );
}

#[tokio::test]
async fn down_refuses_new_connections_cuts_live_ones_and_comes_back_on_the_same_port() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let addr = proxy.local_addr();
    let mut live = Conn::open(addr).await.unwrap();
    assert_eq!(live.must(&["PING"]).await, status("PONG"));

    proxy.set_down(true);
    assert!(proxy.faults().down);
    live.closed().await;
    assert!(
        live.call(&["PING"]).await.is_err(),
        "a cut connection answered"
    );
    eventually("connections refused", PATIENCE, || refused(addr)).await;
    eventually("no live connection", PATIENCE, || {
        ready(proxy.connections() == 0)
    })
    .await;
    // The master itself is fine.
    assert_eq!(m.command(0, &["PING"]).unwrap(), status("PONG"));

    proxy.set_down(false);
    // Listening again as soon as set_down returns.
    let mut again = Conn::open(addr).await.expect("connect after down=false");
    assert_eq!(again.must(&["PING"]).await, status("PONG"));
    assert_eq!(proxy.local_addr(), addr);
}

#[tokio::test]
async fn a_quick_down_and_up_still_cuts_live_connections() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let mut live = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(live.must(&["PING"]).await, status("PONG"));
    proxy.set_down(true);
    proxy.set_down(false);
    live.closed().await;
    let mut fresh = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(fresh.must(&["PING"]).await, status("PONG"));
}

#[tokio::test]
async fn blackhole_accepts_but_never_answers_while_the_master_is_fine() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let mut idle = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(idle.must(&["PING"]).await, status("PONG"));
    let mut victim = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(victim.must(&["PING"]).await, status("PONG"));

    proxy.set_blackhole(true);
    assert!(
        tokio::time::timeout(SILENCE, victim.call(&["SET", "swallowed", "1"]))
            .await
            .is_err(),
        "a blackholed connection answered"
    );
    // New connections are accepted, and are just as silent.
    let mut late = Conn::open(proxy.local_addr()).await.expect("accepted");
    assert!(tokio::time::timeout(SILENCE, late.call(&["PING"]))
        .await
        .is_err());
    // The request never reached the master, which answers directly.
    assert_eq!(m.get(0, "swallowed").unwrap(), None);
    assert_eq!(m.command(0, &["PING"]).unwrap(), status("PONG"));

    proxy.set_blackhole(false);
    // Connections that lost bytes are closed (their replies would be misattributed) ...
    victim.closed().await;
    late.closed().await;
    // ... a connection that sent nothing meanwhile carries on, and new ones work.
    assert_eq!(idle.must(&["PING"]).await, status("PONG"));
    let mut fresh = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(fresh.must(&["PING"]).await, status("PONG"));
}

#[tokio::test]
async fn a_blackhole_is_silent_even_when_the_master_is_gone() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    m.kill(0).unwrap();
    proxy.set_blackhole(true);
    let mut talker = Conn::open(proxy.local_addr()).await.expect("accepted");
    let mut quiet = Conn::open(proxy.local_addr()).await.expect("accepted");
    // Neither an answer nor a close: silence.
    assert!(
        tokio::time::timeout(SILENCE, talker.call(&["PING"]))
            .await
            .is_err(),
        "a blackholed connection answered or closed"
    );
    assert_eq!(proxy.connections(), 2);

    m.start_again(0).unwrap();
    proxy.set_blackhole(false);
    talker.closed().await;
    // The connection that sent nothing is proxied to the master once the blackhole lifts.
    assert_eq!(quiet.must(&["PING"]).await, status("PONG"));
}

#[tokio::test]
async fn reset_next_resets_the_next_connection_that_talks_once() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let mut conn = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(conn.must(&["PING"]).await, status("PONG"));

    proxy.reset_next();
    assert!(proxy.faults().reset_armed);
    let err = tokio::time::timeout(PATIENCE, conn.call(&["SET", "reset", "1"]))
        .await
        .expect("the reset arrives")
        .expect_err("a reset connection answered");
    assert_eq!(err.kind(), ErrorKind::ConnectionReset, "{err}");
    assert_eq!(
        m.get(0, "reset").unwrap(),
        None,
        "the bytes that met the reset went through"
    );

    // One shot: the next connection works.
    assert!(!proxy.faults().reset_armed);
    let mut fresh = Conn::open(proxy.local_addr()).await.unwrap();
    assert_eq!(fresh.must(&["PING"]).await, status("PONG"));
    assert_eq!(fresh.must(&["PING"]).await, status("PONG"));
}

#[tokio::test]
async fn clear_restores_service_from_every_fault() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let addr = proxy.local_addr();
    proxy.set_latency(Direction::Both, Duration::from_secs(30), Duration::ZERO);
    proxy.set_blackhole(true);
    proxy.reset_next();
    proxy.set_down(true);
    eventually("connections refused", PATIENCE, || refused(addr)).await;
    assert!(!proxy.faults().is_clear());

    proxy.clear();
    assert_eq!(proxy.faults(), Faults::default());
    let mut conn = Conn::open(addr).await.unwrap();
    for _ in 0..3 {
        assert_eq!(conn.must(&["PING"]).await, status("PONG"));
    }
}

/// Faults flipped at random while clients talk: every reply a client gets is the answer to
/// its own request (no stream is ever desynchronised), and the proxy serves normally after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_faults_under_traffic_never_mixes_up_replies() {
    let m = masters(1);
    let proxy = std::sync::Arc::new(proxy_for(&m, 0).await);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered: std::sync::Arc<Vec<AtomicU32>> =
        std::sync::Arc::new((0..4).map(|_| AtomicU32::new(0)).collect());
    let mut clients = Vec::new();
    for client in 0..4 {
        let (proxy, stop, answered) = (proxy.clone(), stop.clone(), answered.clone());
        clients.push(tokio::spawn(async move {
            let mut conn: Option<Conn> = None;
            // Requests sent and not yet answered, oldest first: replies must come in this order.
            let mut outstanding = std::collections::VecDeque::new();
            let mut n = 0u64;
            while !stop.load(Relaxed) {
                let Some(c) = conn.as_mut() else {
                    conn = Conn::open(proxy.local_addr()).await.ok();
                    outstanding.clear();
                    if conn.is_none() {
                        tokio::task::yield_now().await; // refused while down
                    }
                    continue;
                };
                n += 1;
                let payload = format!("c{client}-{n}");
                if c.send(&["ECHO", &payload]).await.is_err() {
                    conn = None;
                    continue;
                }
                outstanding.push_back(payload);
                // Like a multiplexed client, a timed-out request keeps its place in line.
                match tokio::time::timeout(Duration::from_millis(50), c.reply()).await {
                    Ok(Ok(reply)) => {
                        let oldest = outstanding.pop_front().expect("a request is outstanding");
                        assert_eq!(reply, Reply::bulk(oldest));
                        answered[client].fetch_add(1, Relaxed);
                    }
                    Ok(Err(_)) => conn = None, // cut or reset
                    Err(_) => {}               // slow or silent
                }
            }
        }));
    }
    let steps = 300;
    for step in 0..steps {
        match rand_index(step, 6) {
            0 => proxy.set_latency(
                Direction::Both,
                Duration::from_millis(2),
                Duration::from_millis(2),
            ),
            1 => proxy.set_blackhole(step % 2 == 0),
            2 => proxy.set_down(step % 3 == 0),
            3 => proxy.reset_next(),
            4 => proxy.set_latency(Direction::Upstream, Duration::ZERO, Duration::ZERO),
            _ => proxy.clear(),
        }
        tokio::time::sleep(Duration::from_millis(3)).await; // pacing: let traffic meet the fault
    }
    proxy.clear();
    // Every client gets answers again once the faults are off.
    let before: Vec<u32> = answered.iter().map(|a| a.load(Relaxed)).collect();
    eventually("every client answered after clear()", PATIENCE, || {
        ready(
            answered
                .iter()
                .zip(&before)
                .all(|(a, b)| a.load(Relaxed) > *b),
        )
    })
    .await;
    stop.store(true, Relaxed);
    for client in clients {
        client.await.expect("client task");
    }
    eventually("all connections closed", PATIENCE, || {
        ready(proxy.connections() == 0)
    })
    .await;
}

/// A cheap deterministic spread of fault choices (no RNG needed for coverage).
fn rand_index(step: usize, n: usize) -> usize {
    (step.wrapping_mul(2_654_435_761) >> 7) % n
}

#[tokio::test]
async fn dropping_the_proxy_closes_its_port_and_its_connections() {
    let m = masters(1);
    let proxy = proxy_for(&m, 0).await;
    let addr = proxy.local_addr();
    let mut conn = Conn::open(addr).await.unwrap();
    assert_eq!(conn.must(&["PING"]).await, status("PONG"));
    drop(proxy);
    conn.closed().await;
    eventually("port closed", PATIENCE, || refused(addr)).await;
}

#[tokio::test]
async fn a_proxy_set_fronts_each_master_in_order() {
    let m = masters(3);
    let proxies = FaultProxies::start(&m).await.unwrap();
    assert_eq!(proxies.len(), 3);
    assert!(proxies.get(3).is_none());
    let urls = proxies.urls();
    for (i, proxy) in proxies.iter().enumerate() {
        assert_eq!(proxy.upstream(), master_addr(&m, i));
        assert_eq!(urls[i], proxy.url());
        // Through proxy i, a key lands on master i.
        let mut conn = Conn::open(proxy.local_addr()).await.unwrap();
        assert_eq!(
            conn.must(&["SET", "which", &i.to_string()]).await,
            status("OK")
        );
        assert_eq!(m.get(i, "which").unwrap(), Some(i.to_string()));
    }
    eventually("every connection closed", PATIENCE, || {
        ready(proxies.connections() == 0)
    })
    .await;
    for proxy in &proxies {
        proxy.set_blackhole(true);
    }
    proxies.clear();
    assert!(proxies.iter().all(|p| p.faults().is_clear()));
}
