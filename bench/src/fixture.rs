//! Masters, clients and the one acquire + release cycle the benchmarks time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use redlock_core::{blocking, FanOut, Lock, Outcome, Redlock, Vote};
use redlock_local::LocalMasters;
use tokio::runtime::Runtime;

/// TTL of every benchmark lock: long enough that no lock can expire during a sample.
pub const TTL: Duration = Duration::from_secs(10);

/// How long a new client may take to connect to every master before the benchmark starts.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Operations that did not go as they must on an idle system (an uncontended acquire lost, a
/// release that missed a master holding the lock, an extend of a held lock refused) since the
/// last [`Masters::settle`], and the first one's description. Only counted outside test mode:
/// in test mode the first one fails the run.
static ANOMALIES: AtomicU64 = AtomicU64::new(0);
static FIRST_ANOMALY: Mutex<Option<String>> = Mutex::new(None);

/// Both fan-out modes, in the order the benchmarks report them.
pub const FANOUTS: [FanOut; 2] = [FanOut::Sequential, FanOut::Concurrent];

/// True when the benchmark binary runs in criterion's test mode (`cargo test --benches`, or
/// `cargo bench -- --test`): each benchmark runs once and nothing is measured. Checks are
/// strict there; in a long measurement run, a rare slow reply under load is reported instead.
pub fn is_test_mode() -> bool {
    static TEST_MODE: OnceLock<bool> = OnceLock::new();
    *TEST_MODE.get_or_init(|| {
        let args: Vec<String> = std::env::args().collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        has("--test") || !has("--bench")
    })
}

/// Records an operation that went wrong: fails a test-mode run at once; in a measurement run
/// (where a heavily loaded machine can push a reply past the 50 ms per-master timeout) it is
/// counted and reported by [`Masters::settle`] after the benchmark, next to its figures.
pub fn anomaly(message: String) {
    assert!(!is_test_mode(), "{message}");
    ANOMALIES.fetch_add(1, Ordering::Relaxed);
    FIRST_ANOMALY
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert(message);
}

/// Fresh resource names (`prefix:1`, `prefix:2`, ...), so a key left behind by a timed-out
/// release can never make a later acquire of the same benchmark lose.
#[derive(Debug)]
pub struct Names {
    prefix: String,
    next: u64,
}

impl Names {
    /// Names starting with `prefix`.
    pub fn new(prefix: impl Into<String>) -> Self {
        Names {
            prefix: prefix.into(),
            next: 0,
        }
    }
    /// The next unused name.
    #[allow(clippy::should_implement_trait)] // infinite and infallible: not an Iterator
    pub fn next(&mut self) -> String {
        self.next += 1;
        format!("{}:{}", self.prefix, self.next)
    }
    /// The next `count` unused names (made before a timed loop, so it times no formatting).
    pub fn take(&mut self, count: u64) -> Vec<String> {
        (0..count).map(|_| self.next()).collect()
    }
}

/// The tokio runtime the async benchmarks run on: multi-threaded with one worker per core,
/// the way a service would run the client.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("cannot start the benchmark runtime: {e}"))
}

/// Local masters for one criterion group.
#[derive(Debug)]
pub struct Masters {
    local: LocalMasters,
}

impl Masters {
    /// Starts `n` masters (or stops the run with the reason, e.g. redis-server missing).
    pub fn start(n: usize) -> Self {
        let local = LocalMasters::start(n)
            .unwrap_or_else(|e| panic!("cannot start {n} local redis-server masters: {e}"));
        Masters { local }
    }

    /// URLs of the first `n` masters.
    pub fn urls(&self, n: usize) -> Vec<String> {
        assert!(
            n <= self.local.len(),
            "asked for {n} masters, {} started",
            self.local.len()
        );
        self.local.urls().into_iter().take(n).collect()
    }

    /// The masters themselves (ports, faults).
    pub fn local(&self) -> &LocalMasters {
        &self.local
    }

    /// Call after each benchmark: every lock taken was released, so no key may be left.
    /// Leftover keys or short releases fail a test-mode run and are reported in a measurement
    /// run; then every master is flushed so the next benchmark starts empty.
    pub fn settle(&self, benchmark: &str) {
        let leftover: u64 = (0..self.local.len())
            .map(|i| {
                self.local
                    .key_count(i)
                    .unwrap_or_else(|e| panic!("DBSIZE on master {i}: {e}"))
            })
            .sum();
        let anomalies = ANOMALIES.swap(0, Ordering::Relaxed);
        let first = FIRST_ANOMALY
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if leftover > 0 || anomalies > 0 {
            let message = format!(
                "{benchmark}: {leftover} key(s) left on the masters; {anomalies} failed operation(s){}",
                first.map(|f| format!(", the first: {f}")).unwrap_or_default()
            );
            assert!(!is_test_mode(), "{message}");
            eprintln!("warning: {message}");
        }
        self.local
            .flush_all()
            .unwrap_or_else(|e| panic!("FLUSHALL after {benchmark}: {e}"));
    }
}

/// A client over `urls` with every connection open, so no benchmark times a connect.
pub async fn client(urls: &[String], fanout: FanOut) -> Redlock {
    client_with(urls, fanout, |b| b).await
}

/// Like [`client`], with extra builder settings (e.g. a higher extension bound).
pub async fn client_with(
    urls: &[String],
    fanout: FanOut,
    configure: impl FnOnce(redlock_core::RedlockBuilder) -> redlock_core::RedlockBuilder,
) -> Redlock {
    let redlock = configure(Redlock::builder(urls.iter().cloned()).fanout(fanout))
        .build()
        .unwrap_or_else(|e| panic!("cannot build the client: {e}"));
    let connected = redlock.wait_connected(CONNECT_TIMEOUT).await;
    assert_eq!(
        connected,
        urls.len(),
        "only {connected} of {} masters connected within {CONNECT_TIMEOUT:?}",
        urls.len()
    );
    redlock
}

/// A blocking client over `urls` with every connection open.
pub fn blocking_client(urls: &[String], fanout: FanOut) -> blocking::Redlock {
    let redlock = blocking::Redlock::builder(urls.iter().cloned())
        .fanout(fanout)
        .build_blocking()
        .unwrap_or_else(|e| panic!("cannot build the blocking client: {e}"));
    let connected = redlock
        .wait_connected(CONNECT_TIMEOUT)
        .unwrap_or_else(|e| panic!("wait_connected: {e}"));
    assert_eq!(connected, urls.len(), "only {connected} masters connected");
    redlock
}

/// Times one `try_acquire` (one attempt, no retry) per resource; the release after each is
/// not timed.
pub async fn timed_try_acquires(redlock: &Redlock, resources: Vec<String>) -> Duration {
    let mut timed = Duration::ZERO;
    for resource in &resources {
        let start = std::time::Instant::now();
        let lock = redlock.try_acquire(resource, TTL).await;
        timed += start.elapsed();
        if let Some(lock) = won(lock, resource) {
            released(redlock.release(&lock).await, &lock);
        }
    }
    timed
}

/// The lock of an uncontended acquire, which must always be won (else an [`anomaly`]).
pub fn won(result: redlock_core::Result<Lock>, resource: &str) -> Option<Lock> {
    match result {
        Ok(lock) => Some(lock),
        Err(e) => {
            let vote = e.vote().map(|v| v.to_string()).unwrap_or_default();
            anomaly(format!(
                "uncontended acquire of {resource:?} failed: {e} (last vote: {vote})"
            ));
            None
        }
    }
}

/// Checks a release vote against the lock it released: every master that granted the lock
/// must have deleted its key. (A master the acquire did not wait for — concurrent fan-out,
/// "not awaited" — may legitimately never have received the `SET`: the connection drops a
/// request nobody waits for before it is written. It then releases nothing.)
pub fn released(result: redlock_core::Result<Vote>, lock: &Lock) {
    let vote = match result {
        Ok(vote) => vote,
        Err(e) => return anomaly(format!("release of {:?} failed: {e}", lock.resource())),
    };
    let missed = lock
        .vote()
        .masters()
        .iter()
        .filter(|m| m.outcome == Outcome::Granted)
        .filter(|m| vote.masters()[m.master].outcome != Outcome::Granted)
        .count();
    if missed > 0 {
        anomaly(format!(
            "release missed {missed} master(s) that granted the lock: acquire {}, release {vote}",
            lock.vote()
        ));
    }
}

/// One uncontended acquire + release of `resource`: the unit of most benchmarks.
pub async fn cycle(redlock: &Redlock, resource: &str) {
    if let Some(lock) = won(redlock.acquire(resource, TTL).await, resource) {
        released(redlock.release(&lock).await, &lock);
    }
}
