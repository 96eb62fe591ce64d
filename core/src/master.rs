//! One Redis master: a supervised multiplexed connection and the three requests the algorithm
//! sends to it.
//!
//! A background task owns connecting and reconnecting; requests only read the current state
//! (an `ArcSwap`, no lock). That gives the properties the algorithm needs:
//! - a request on a live connection is queued on its first poll, so requests to one master
//!   reach it in the order they were issued (cleanup after an attempt can never overtake it);
//! - a master known to be down fails at once instead of costing the per-master timeout;
//! - nothing here blocks construction or other masters.

use std::fmt;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError, RedisResult, Script, Value};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::config::redact_url;
use crate::error::{Error, Result};

/// Compare-and-delete: delete the key only if it still holds our token.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end"#,
    )
});

/// Compare-and-PEXPIRE: renew only if the key still holds our token; never re-creates it.
static EXTEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end"#,
    )
});

/// How long one TCP connect (plus handshake) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// Reconnect back-off bounds: a restarted master is found again within `MAX_BACKOFF`.
const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_millis(200);
/// Requests a connection's queue holds before a sender has to wait (redis-rs default: 50).
///
/// Why so many: the fan-out relies on a request being queued during its first poll, so that
/// a straggler finished in the background still reaches the master before a later request
/// for the same key. A sender that finds the queue full waits instead; once room is made,
/// whichever waiting task runs first is queued first, so a release could overtake the
/// acquire's straggling `SET` and leave its key behind until the TTL (seen with 64 tasks on
/// one client: a dozen keys per 3 s). The queue allocates as it fills, so the room costs
/// nothing while a master keeps up; one that stops reading (paused) holds at most this many
/// small requests (a few MiB) until it resumes or the connection drops.
const PIPELINE_BUFFER: usize = 1 << 16;

/// What a request asks of one master.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    /// `SET resource token NX PX ttl_ms`.
    Lock { ttl_ms: u64 },
    /// Compare-and-PEXPIRE.
    Extend { ttl_ms: u64 },
    /// Compare-and-delete.
    Unlock,
}

/// A request the algorithm sends to every master. `Ok(true)` means granted, `Ok(false)`
/// denied. Owns its strings (shared, cheap to clone) so a request can outlive the round that
/// stopped waiting for it.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) op: Op,
    pub(crate) resource: Arc<str>,
    pub(crate) token: Arc<str>,
}

enum ConnState {
    /// A connect attempt is under way: requests wait for it (within their timeout).
    Connecting,
    Connected(MultiplexedConnection),
    /// The last connect attempt failed; the supervisor retries after a back-off.
    Down(RedisError),
}

struct Shared {
    client: redis::Client,
    state: ArcSwap<ConnState>,
    /// Signalled on every state change (wakes requests waiting on `Connecting`).
    changed: Notify,
    /// Signalled by a request that saw the connection break.
    broken: Notify,
}

/// A configured master.
pub(crate) struct Master {
    /// The URL with any password redacted: the only form ever displayed.
    display: String,
    handle: MasterHandle,
    supervisor: JoinHandle<()>,
}

/// What a request needs of a master; `'static`, so requests can finish in the background.
#[derive(Clone)]
pub(crate) struct MasterHandle(Arc<Shared>);

impl fmt::Debug for Master {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Master")
            .field("url", &self.display)
            .finish()
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        self.supervisor.abort();
    }
}

impl Master {
    /// Parses `url` and starts connecting in the background. Must run inside a tokio runtime.
    pub(crate) fn new(index: usize, url: &str) -> Result<Self> {
        let display = redact_url(url);
        if url.starts_with("rediss://") {
            ensure_tls(index, &display)?;
        }
        let client = redis::Client::open(url).map_err(|e| {
            Error::invalid(format!(
                "master URL #{index} {display:?}: {}",
                describe_parse_error(&e)
            ))
        })?;
        let shared = Arc::new(Shared {
            client,
            state: ArcSwap::from_pointee(ConnState::Connecting),
            changed: Notify::new(),
            broken: Notify::new(),
        });
        let supervisor = tokio::spawn(supervise(Arc::clone(&shared)));
        Ok(Master {
            display,
            handle: MasterHandle(shared),
            supervisor,
        })
    }

    /// The URL with its password redacted.
    pub(crate) fn display(&self) -> &str {
        &self.display
    }

    /// A handle for sending requests.
    pub(crate) fn handle(&self) -> &MasterHandle {
        &self.handle
    }

    /// True while a connection is established.
    pub(crate) fn is_connected(&self) -> bool {
        matches!(**self.handle.0.state.load(), ConnState::Connected(_))
    }

    /// Waits until connected (returns true) or until the master is known to be down.
    pub(crate) async fn connected(&self) -> bool {
        self.handle.connection().await.is_ok()
    }
}

impl MasterHandle {
    /// The live connection, waiting for a connect under way; an error if the master is down.
    async fn connection(&self) -> RedisResult<(Arc<ConnState>, MultiplexedConnection)> {
        loop {
            let changed = self.0.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let state = self.0.state.load_full();
            match &*state {
                ConnState::Connected(conn) => {
                    let conn = conn.clone();
                    return Ok((state, conn));
                }
                ConnState::Down(err) => return Err(err.clone()),
                ConnState::Connecting => changed.await,
            }
        }
    }

    /// Sends `request`; `Ok(true)` = granted, `Ok(false)` = denied.
    pub(crate) async fn send(&self, request: &Request) -> RedisResult<bool> {
        let (state, mut conn) = self.connection().await?;
        let result = exchange(&mut conn, request).await;
        if let Err(err) = &result {
            if err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal() {
                // Hand the broken connection back to the supervisor, once.
                let previous = self
                    .0
                    .state
                    .compare_and_swap(&state, Arc::new(ConnState::Connecting));
                if Arc::ptr_eq(&previous, &state) {
                    self.0.broken.notify_one();
                }
            }
        }
        result
    }
}

async fn exchange(conn: &mut MultiplexedConnection, request: &Request) -> RedisResult<bool> {
    let (resource, token) = (&*request.resource, &*request.token);
    match request.op {
        Op::Lock { ttl_ms } => {
            let reply: Value = redis::cmd("SET")
                .arg(resource)
                .arg(token)
                .arg("NX")
                .arg("PX")
                .arg(ttl_ms)
                .query_async(conn)
                .await?;
            match reply {
                Value::Okay => Ok(true),
                Value::Nil => Ok(false),
                other => Err(unexpected_reply("SET NX", &other)),
            }
        }
        Op::Extend { ttl_ms } => {
            let renewed: i64 = EXTEND
                .key(resource)
                .arg(token)
                .arg(ttl_ms)
                .invoke_async(conn)
                .await?;
            Ok(renewed == 1)
        }
        Op::Unlock => {
            let deleted: i64 = RELEASE.key(resource).arg(token).invoke_async(conn).await?;
            Ok(deleted == 1)
        }
    }
}

/// Connects, and reconnects whenever a request reports the connection broken.
async fn supervise(shared: Arc<Shared>) {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_pipeline_buffer_size(PIPELINE_BUFFER)
        // The algorithm applies its own per-master timeout to every request.
        .set_response_timeout(None);
    let mut backoff = MIN_BACKOFF;
    loop {
        set_state(&shared, ConnState::Connecting);
        let attempt = shared
            .client
            .get_multiplexed_async_connection_with_config(&config);
        let result = match tokio::time::timeout(CONNECT_TIMEOUT * 2, attempt).await {
            Ok(result) => result,
            Err(_) => Err(RedisError::from((
                redis::ErrorKind::Io,
                "connect timed out",
            ))),
        };
        // Load the scripts up front: EVALSHA then succeeds at once, and a cleanup whose reply
        // is not awaited (paused master) still runs when the master wakes up, instead of
        // failing with NOSCRIPT and never being retried.
        let result = match result {
            Ok(mut conn) => {
                match tokio::time::timeout(CONNECT_TIMEOUT, load_scripts(&mut conn)).await {
                    Ok(Ok(())) => Ok(conn),
                    Ok(Err(err)) => Err(err),
                    Err(_) => Err(RedisError::from((
                        redis::ErrorKind::Io,
                        "SCRIPT LOAD timed out",
                    ))),
                }
            }
            Err(err) => Err(err),
        };
        match result {
            Ok(conn) => {
                backoff = MIN_BACKOFF;
                let broken = shared.broken.notified();
                tokio::pin!(broken);
                broken.as_mut().enable();
                set_state(&shared, ConnState::Connected(conn));
                broken.await;
            }
            Err(err) => {
                set_state(&shared, ConnState::Down(err));
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

async fn load_scripts(conn: &mut MultiplexedConnection) -> RedisResult<()> {
    for script in [&*RELEASE, &*EXTEND] {
        script.load_async(conn).await?;
    }
    Ok(())
}

fn set_state(shared: &Shared, state: ConnState) {
    shared.state.store(Arc::new(state));
    shared.changed.notify_waiters();
}

fn unexpected_reply(what: &str, reply: &Value) -> RedisError {
    RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        "unexpected reply",
        format!("{what}: {reply:?}"),
    ))
}

/// Makes `rediss://` usable, or says how to get it.
#[cfg(feature = "tls")]
fn ensure_tls(_index: usize, _display: &str) -> Result<()> {
    // redis-rs asks rustls for the process-wide provider; install ring's once (an error
    // only means some provider is installed already, which is fine).
    let _ = rustls::crypto::ring::default_provider().install_default();
    Ok(())
}

#[cfg(not(feature = "tls"))]
fn ensure_tls(index: usize, display: &str) -> Result<()> {
    Err(Error::invalid(format!(
        "master URL #{index} {display:?}: rediss:// (TLS) needs redlock-core built with the `tls` feature"
    )))
}

/// A parse error's description without echoing the URL (it may hold a password).
fn describe_parse_error(err: &RedisError) -> String {
    match err.kind() {
        redis::ErrorKind::InvalidClientConfig => {
            "not a valid redis://, rediss:// or unix:// URL".to_string()
        }
        _ => format!("{:?}", err.kind()),
    }
}
