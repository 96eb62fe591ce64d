//! Masters that are not honest Redis servers: stray replies, floods, silence, a wrong
//! `SCRIPT LOAD` answer. A real Redis cannot be made to send these, so each is a small server
//! written for the test (127.0.0.1 only); every other master in these tests is a real one.
//!
//! What users rely on: only a well-formed grant of *this* request counts, a broken connection
//! is replaced, memory stays bounded, nothing panics, and a master that recovers is used again.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

use common::{eventually, masters};
use redlock_core::{ExtendCommand, FailureKind, FanOut, Outcome, Redlock, ReleaseCommand};
use redlock_local::resp::{Decoder, Reply};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

const TTL: Duration = Duration::from_secs(10);

/// The healthy masters (the first `healthy` of the vote) are a quorum, so an acquire may fail
/// only where one of them did not answer within the per-master timeout (a loaded machine can
/// delay a local master that long), never because of what the hostile one sent: no healthy
/// master denied or failed, at least one timed out. The lock when won.
fn won_unless_a_healthy_master_was_late(
    result: Result<redlock_core::Lock, redlock_core::Error>,
    healthy: usize,
) -> Option<redlock_core::Lock> {
    let e = match result {
        Ok(lock) => return Some(lock),
        Err(e) => e,
    };
    let vote = e.vote().unwrap_or_else(|| panic!("{e}: no vote"));
    let outcomes: Vec<Outcome> = vote.masters()[..healthy]
        .iter()
        .map(|m| m.outcome)
        .collect();
    assert!(
        outcomes.contains(&Outcome::TimedOut)
            && outcomes.iter().all(|o| matches!(
                o,
                Outcome::Granted | Outcome::TimedOut | Outcome::NotAwaited
            )),
        "lost although the healthy masters were a quorum: {e}"
    );
    None
}

/// How a hostile master behaves once a connection has loaded its scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Denies every request, but sends one unsolicited `+OK` first on each connection, so
    /// every later reply is shifted by one.
    StrayOk,
    /// Grants every acquire's `SET` and echoes the previous request's id: a grant, but not
    /// this one's.
    ReplayPreviousGrant,
    /// Answers the first request with a 4 GB bulk header and then endless bytes.
    Flood,
    /// Reads every request and never answers.
    Silent,
    /// Answers `SCRIPT LOAD` with a SHA1 that is not the script's.
    WrongScriptSha,
    /// Answers everything as Redis would, except that it never sends an acquire's `SET`
    /// reply (its `ECHO` and every release are answered).
    DropSetReply,
    /// Answers the capability probe (`INFO server`) with `ODD_INFO[i]` and denies every
    /// request the way Redis does.
    OddInfo(usize),
}

/// Answers to `INFO server` that are not a capable server's INFO text.
const ODD_INFO: [&[u8]; 5] = [
    b"+OK\r\n",
    b":9\r\n",
    b"-NOPERM this user has no permissions to run the 'info' command\r\n",
    b"$20\r\nredis_version:99.x.1\r\n",
    b"$32\r\nserver_name:keydb\r\nversion:9.0.0\r\n",
];

/// A hostile master on 127.0.0.1; counts the connections it accepted.
struct Hostile {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Hostile {
    async fn start(mode: Mode) -> Hostile {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&accepted);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, mode));
            }
        });
        Hostile {
            addr,
            accepted,
            task,
        }
    }
    fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }
    fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Reads one command (an array of bulk strings); `None` at end of stream or on bad input.
async fn read_command(stream: &mut TcpStream, decoder: &mut Decoder) -> Option<Vec<Vec<u8>>> {
    decoder.read_async(stream).await.ok()?.into_command()
}

async fn serve(mut stream: TcpStream, mode: Mode) {
    let mut decoder = Decoder::default();
    let mut stray_sent = false;
    let mut previous_id: Vec<u8> = b"0".to_vec();
    while let Some(args) = read_command(&mut stream, &mut decoder).await {
        let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
        let reply: Vec<u8> = match name.as_str() {
            "SCRIPT" => {
                // What Redis answers: the SHA1 of the script body.
                let sha = redis::Script::new(&String::from_utf8_lossy(&args[2]))
                    .get_hash()
                    .to_string();
                let sha = if mode == Mode::WrongScriptSha {
                    "0".repeat(40)
                } else {
                    sha
                };
                Reply::bulk(sha).to_bytes()
            }
            // An acquire is `SET` then `ECHO id`; extend and release are scripts.
            "SET" => match mode {
                Mode::StrayOk if !stray_sent => {
                    stray_sent = true;
                    let stray = Reply::Status("OK".into()).to_bytes();
                    [stray, Reply::Nil.to_bytes()].concat()
                }
                // A grant, but the ECHO after it carries another request's id.
                Mode::ReplayPreviousGrant => Reply::Status("OK".into()).to_bytes(),
                Mode::StrayOk | Mode::WrongScriptSha | Mode::OddInfo(_) => Reply::Nil.to_bytes(),
                Mode::DropSetReply => continue,
                Mode::Flood => {
                    let _ = stream.write_all(b"$4000000000\r\n").await;
                    let junk = vec![b'x'; 64 * 1024];
                    while stream.write_all(&junk).await.is_ok() {}
                    return;
                }
                Mode::Silent => continue,
            },
            "ECHO" => {
                let id = args.last().unwrap().clone();
                let reply = match mode {
                    Mode::Silent => continue,
                    Mode::ReplayPreviousGrant => Reply::bulk(previous_id).to_bytes(),
                    _ => Reply::bulk(id.clone()).to_bytes(),
                };
                previous_id = id;
                reply
            }
            "EVALSHA" => match mode {
                Mode::Silent => continue,
                Mode::ReplayPreviousGrant => {
                    let id = args.last().unwrap().clone();
                    Reply::bulk(std::mem::replace(&mut previous_id, id)).to_bytes()
                }
                _ => Reply::Integer(0).to_bytes(),
            },
            "INFO" => match mode {
                Mode::OddInfo(i) => ODD_INFO[i].to_vec(),
                _ => Reply::Status("OK".into()).to_bytes(),
            },
            _ => Reply::Status("OK".into()).to_bytes(),
        };
        if stream.write_all(&reply).await.is_err() {
            return;
        }
    }
}

/// Counts panics anywhere in this test binary: none may happen, in any build.
fn count_panics() -> &'static AtomicUsize {
    static PANICS: AtomicUsize = AtomicUsize::new(0);
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            default(info);
        }));
    });
    &PANICS
}

/// Resident memory of this process, from /proc.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stray_or_replayed_replies_never_count_as_grants_and_the_connection_is_replaced() {
    let panics = count_panics();
    for mode in [Mode::StrayOk, Mode::ReplayPreviousGrant] {
        let hostile: Vec<Hostile> =
            futures_util::future::join_all((0..5).map(|_| Hostile::start(mode))).await;
        let redlock = Redlock::builder(hostile.iter().map(Hostile::url))
            .retry_count(0)
            .build()
            .unwrap();
        redlock.wait_connected(Duration::from_secs(10)).await;
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let redlock = redlock.clone();
                tokio::spawn(async move {
                    let (mut granted, mut protocol) = (0, 0);
                    for _ in 0..20 {
                        match redlock.acquire("contended", TTL).await {
                            Ok(lock) => panic!("{mode:?}: a lock was won: {:?}", lock.vote()),
                            Err(e) => {
                                let vote = e.vote().unwrap();
                                granted += vote.granted();
                                protocol += vote
                                    .masters()
                                    .iter()
                                    .filter(|m| m.outcome == Outcome::Failed(FailureKind::Protocol))
                                    .count();
                            }
                        }
                    }
                    (granted, protocol)
                })
            })
            .collect();
        let (mut granted, mut protocol) = (0, 0);
        for task in tasks {
            let (g, p) = task.await.unwrap();
            granted += g;
            protocol += p;
        }
        assert_eq!(granted, 0, "{mode:?}: a reply that was not a grant counted");
        assert!(
            protocol > 0,
            "{mode:?}: no reply was seen as not this request's"
        );
        for (i, h) in hostile.iter().enumerate() {
            eventually(
                &format!("{mode:?}: master {i}'s connection replaced"),
                Duration::from_secs(10),
                || h.connections() >= 2,
            )
            .await;
        }
    }
    assert_eq!(panics.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flooding_and_silent_masters_leave_memory_bounded_and_the_others_keep_working() {
    let panics = count_panics();
    for mode in [Mode::Flood, Mode::Silent] {
        let real = masters(4);
        let hostile = Hostile::start(mode).await;
        let mut urls = real.urls();
        urls.push(hostile.url());
        let redlock = Redlock::builder(urls)
            .fanout(FanOut::Concurrent)
            .instance_timeout(Duration::from_millis(20))
            .build()
            .unwrap();
        redlock.wait_connected(Duration::from_secs(10)).await;
        let before = rss_bytes();
        let tasks: Vec<_> = (0..16)
            .map(|t| {
                let redlock = redlock.clone();
                tokio::spawn(async move {
                    let (mut causes, mut won) = (Vec::new(), 0);
                    for c in 0..200 {
                        // Healthy masters are a quorum: every lock is won but where one of
                        // them was late.
                        let acquired = redlock.acquire(&format!("bounded:{t}:{c}"), TTL).await;
                        let Some(lock) = won_unless_a_healthy_master_was_late(acquired, 4) else {
                            continue;
                        };
                        won += 1;
                        let released = redlock.release(&lock).await.unwrap();
                        causes.extend(released.masters()[4].error.clone());
                    }
                    (causes, won)
                })
            })
            .collect();
        let (mut causes, mut won) = (Vec::new(), 0);
        for task in tasks {
            let (c, w) = task.await.unwrap();
            causes.extend(c);
            won += w;
        }
        eprintln!("{mode:?}: {won} of 3,200 locks won (the rest: a healthy master late)");
        assert!(won > 0, "{mode:?}: no lock won");
        let grown = rss_bytes().saturating_sub(before);
        assert!(
            grown < 64 << 20,
            "{mode:?}: memory grew by {} MiB over 3,200 cycles",
            grown >> 20
        );
        let expected = match mode {
            Mode::Flood => "reply too large",
            _ => "no reply",
        };
        assert!(
            causes.iter().any(|c| c.contains(expected)),
            "{mode:?}: causes seen: {:?}",
            &causes[..causes.len().min(5)]
        );
        eventually(
            &format!("{mode:?}: the broken connection is replaced"),
            Duration::from_secs(10),
            || hostile.connections() >= 2,
        )
        .await;
    }
    assert_eq!(panics.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_that_drops_set_replies_is_reconnected_with_back_off_not_per_request() {
    let real = masters(4);
    let sick = Hostile::start(Mode::DropSetReply).await;
    let mut urls = real.urls();
    urls.push(sick.url());
    let redlock = Redlock::builder(urls)
        .fanout(FanOut::Concurrent)
        .retry_count(0)
        .build()
        .unwrap();
    redlock.wait_connected(Duration::from_secs(10)).await;
    let start = std::time::Instant::now();
    // Bounded by time and by count, whichever comes first.
    let run_for = Duration::from_secs(3);
    let tasks: Vec<_> = (0..16)
        .map(|t| {
            let redlock = redlock.clone();
            tokio::spawn(async move {
                let mut sick_causes = Vec::new();
                for c in 0..100_000 {
                    if start.elapsed() > run_for {
                        break;
                    }
                    // The four healthy masters are a quorum: every lock is won but where one
                    // of them was late.
                    let acquired = redlock.acquire(&format!("sick:{t}:{c}"), TTL).await;
                    let Some(lock) = won_unless_a_healthy_master_was_late(acquired, 4) else {
                        continue;
                    };
                    sick_causes.extend(lock.vote().masters()[4].error.clone());
                    redlock.release(&lock).await.unwrap();
                }
                sick_causes
            })
        })
        .collect();
    let mut causes = Vec::new();
    for task in tasks {
        causes.extend(task.await.unwrap());
    }
    let elapsed = start.elapsed();
    // Without back-off every burst of acquires breaks a fresh connection: hundreds per
    // second. With it: about ten while the delay grows to `MAX_BACKOFF`, then one per
    // `MAX_BACKOFF`/2 at most.
    let allowed = 12 + elapsed.as_secs() as usize;
    eprintln!(
        "{} acquires failed on the sick master in {elapsed:?}; {} connections to it",
        causes.len(),
        sick.connections()
    );
    assert!(
        sick.connections() <= allowed,
        "{} connections to the sick master in {elapsed:?} (at most {allowed} expected)",
        sick.connections()
    );
    assert!(
        causes
            .iter()
            .any(|c| c.contains("not this request's answer")),
        "the sick master's failures do not say why: {:?}",
        &causes[..causes.len().min(5)]
    );
}

/// A real redis-server on `port`, killed on drop.
struct RealOnPort(Child);

impl Drop for RealOnPort {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_script_load_answer_fails_that_master_without_a_panic_until_a_real_redis_answers() {
    let panics = count_panics();
    let hostile = Hostile::start(Mode::WrongScriptSha).await;
    let url = hostile.url();
    let port = hostile.addr.port();
    let redlock = Redlock::builder([url.clone()])
        .retry_count(0)
        .build()
        .unwrap();
    redlock.wait_connected(Duration::from_secs(10)).await;
    let err = redlock.acquire("sha", TTL).await.unwrap_err();
    let cause = err.vote().unwrap().masters()[0].error.clone().unwrap();
    assert!(cause.contains("SCRIPT LOAD answered"), "{err}");
    assert_eq!(
        err.vote().unwrap().masters()[0].outcome,
        Outcome::Failed(FailureKind::Protocol)
    );
    // The hostile server goes; a real Redis takes its port. The same client uses it.
    drop(hostile);
    let _real = RealOnPort(
        Command::new(std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into()))
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server"),
    );
    let mut last;
    let start = std::time::Instant::now();
    loop {
        match redlock.acquire("sha", TTL).await {
            Ok(lock) => {
                redlock.release(&lock).await.unwrap();
                break;
            }
            Err(e) => last = e.to_string(),
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the master was never used again: {last}"
        );
        // Waiting for the client's own reconnect (back-off), not standing in for a signal.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(panics.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_odd_answer_to_the_capability_probe_leaves_the_master_on_the_scripts() {
    for i in 0..ODD_INFO.len() {
        let odd = Hostile::start(Mode::OddInfo(i)).await;
        let redlock = Redlock::builder([odd.url()])
            .retry_count(0)
            .instance_timeout(Duration::from_secs(2))
            .build()
            .unwrap();
        assert_eq!(
            redlock.wait_connected(Duration::from_secs(10)).await,
            1,
            "{i}"
        );
        let server = redlock.master_servers().remove(0).expect("connected");
        assert_eq!(server.release, ReleaseCommand::Script, "{i}: {server}");
        assert_eq!(server.extend, ExtendCommand::Script, "{i}: {server}");
        // The connection serves requests: the denial is counted as one, not as a failure.
        let err = redlock.try_acquire("probe", TTL).await.unwrap_err();
        assert!(err.is_not_acquired(), "{i}: {err}");
    }
}
