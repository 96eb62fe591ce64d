//! Load from many machines: agents that join one run on a coordinator Redis, start each
//! measured phase at one instant of the coordinator's clock, and store their results there
//! for `collect`.
//!
//! The coordinator is any Redis every agent reaches (it never holds lock keys: those live on
//! the masters). Everything of a run lives under `redlock-loadgen-coordinator:<run id>:` with a
//! TTL ([`KEY_TTL`]):
//!
//! - `agents` (N), `joined` (counter: an agent's number is its place in it), `abandoned` (why
//!   the run was given up, once somebody did);
//! - per phase k (a fan-out mode of `run`, a step of `capacity`): `phase:k:arrived`,
//!   `phase:k:start` (the planned start, coordinator µs since the Unix epoch);
//! - per agent n: `agent:n` (host, timings), `result:n` (the same JSON as `--json`),
//!   `windows:n:k` (ownership windows in coordinator time, for the cross-agent check),
//!   and for capacity `step:k:n` (each step's result, which every agent merges to decide the
//!   search's next rate the same way).
//!
//! See [`barrier`] for the start instant, [`clock`] for the time mapping, [`overlap`] for what
//! the cross-agent safety check can and cannot see; the commands are
//! `crate::commands::run`, `crate::commands::capacity` and `crate::commands::collect` (its
//! gathering is [`collect`]).

pub(crate) mod agent;
pub(crate) mod barrier;
pub mod clock;
pub mod collect;
pub(crate) mod overlap;

use std::time::Duration;

use crate::error::LoadgenError;

/// How long everything a run stores on the coordinator lives.
pub const KEY_TTL: Duration = Duration::from_secs(24 * 3600);
/// Every single coordinator request (and the connection) is bounded by this (a coordinator
/// that stops answering fails the run instead of hanging it). It is the only bound: the redis
/// crate's own defaults (0.5 s per answer, 1 s to connect) are switched off, since reading an
/// agent's 80 MB of windows on a busy machine takes longer than that.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Agents in one run at most (`--agents`); `collect` refuses a stored count above it.
pub const MAX_AGENTS: u32 = 1000;
/// Key of the run agents without `--run-id` join (deleted once the run is full).
const OPEN_RUN_KEY: &str = "redlock-loadgen-coordinator:open-run";

/// The coordination settings of `run`/`capacity --coordinator`.
#[derive(Debug, Clone)]
pub struct Coordination {
    pub url: String,
    pub agents: u32,
    pub run_id: Option<String>,
    pub join_timeout: Duration,
}

/// The coordinator key `name` of run `run_id`.
pub fn key(run_id: &str, name: &str) -> String {
    format!("redlock-loadgen-coordinator:{run_id}:{name}")
}

/// One connection to the coordinator; every request bounded by [`REQUEST_TIMEOUT`].
#[derive(Clone)]
pub struct Coordinator {
    con: redis::aio::MultiplexedConnection,
    /// The URL with its password redacted (for messages).
    pub shown: String,
}

impl std::fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinator")
            .field("url", &self.shown)
            .finish()
    }
}

impl Coordinator {
    pub async fn connect(url: &str) -> Result<Coordinator, LoadgenError> {
        let shown = redlock_core::redact_url(url);
        let client = redis::Client::open(url)
            .map_err(|e| LoadgenError::Usage(format!("coordinator {shown}: {e}")))?;
        let unbounded = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(None)
            .set_response_timeout(None);
        let connecting = client.get_multiplexed_async_connection_with_config(&unbounded);
        let con = tokio::time::timeout(REQUEST_TIMEOUT, connecting)
            .await
            .map_err(|_| {
                LoadgenError::Failed(format!(
                    "coordinator {shown}: no connection within {REQUEST_TIMEOUT:?}"
                ))
            })?
            .map_err(|e| LoadgenError::Failed(format!("coordinator {shown}: {e}")))?;
        Ok(Coordinator { con, shown })
    }

    /// Sends one command (bounded).
    pub async fn query<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, LoadgenError> {
        let mut con = self.con.clone();
        self.bounded(cmd.query_async(&mut con)).await
    }

    /// Runs a Lua script (bounded).
    pub async fn script<T: redis::FromRedisValue>(
        &self,
        script: &redis::Script,
        keys: &[String],
        args: &[String],
    ) -> Result<T, LoadgenError> {
        let mut invocation = script.prepare_invoke();
        for k in keys {
            invocation.key(k);
        }
        for a in args {
            invocation.arg(a);
        }
        let mut con = self.con.clone();
        self.bounded(invocation.invoke_async(&mut con)).await
    }

    /// Waits for one coordinator request at most `REQUEST_TIMEOUT`, naming the coordinator
    /// (password redacted) in either failure.
    async fn bounded<T>(
        &self,
        request: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, LoadgenError> {
        tokio::time::timeout(REQUEST_TIMEOUT, request)
            .await
            .map_err(|_| {
                LoadgenError::Failed(format!(
                    "coordinator {}: no answer within {REQUEST_TIMEOUT:?}",
                    self.shown
                ))
            })?
            .map_err(|e| LoadgenError::Failed(format!("coordinator {}: {e}", self.shown)))
    }

    /// `SET key value EX ttl`.
    pub async fn put(&self, key: &str, value: impl redis::ToRedisArgs) -> Result<(), LoadgenError> {
        self.query::<()>(
            redis::cmd("SET")
                .arg(key)
                .arg(value)
                .arg("EX")
                .arg(KEY_TTL.as_secs()),
        )
        .await
    }

    pub async fn get<T: redis::FromRedisValue>(
        &self,
        key: &str,
    ) -> Result<Option<T>, LoadgenError> {
        self.query(redis::cmd("GET").arg(key)).await
    }

    /// Reads the string at `key` only when it holds at most `max` bytes: its length first
    /// (`STRLEN`), then at most `max` + 1 bytes of it (`GETRANGE`), so a value that grew in
    /// between is not read whole either. A refused value costs no memory here.
    pub async fn read_bounded(&self, key: &str, max: u64) -> Result<Stored, LoadgenError> {
        let size: u64 = self.query(redis::cmd("STRLEN").arg(key)).await?;
        if size > max {
            return Ok(Stored::TooLarge(size));
        }
        if size == 0 {
            return Ok(Stored::Missing);
        }
        let bytes: Vec<u8> = self
            .query(redis::cmd("GETRANGE").arg(key).arg(0).arg(max))
            .await?;
        match bytes.len() as u64 {
            0 => Ok(Stored::Missing),
            n if n > max => Ok(Stored::TooLarge(n)),
            _ => Ok(Stored::Value(bytes)),
        }
    }

    /// The run id to join: `wanted`, or the run the coordinator has open (opened here when
    /// there is none).
    pub async fn run_id(&self, wanted: Option<&str>) -> Result<String, LoadgenError> {
        if let Some(id) = wanted {
            return Ok(id.to_string());
        }
        let fresh = crate::model::header::new_run_id();
        // GET-or-SET in one step (a script, so older coordinators without SET NX GET work).
        let script = redis::Script::new(
            "local v = redis.call('GET', KEYS[1]) if v then return v end \
             redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) return ARGV[1]",
        );
        self.script(
            &script,
            &[OPEN_RUN_KEY.to_string()],
            &[fresh, KEY_TTL.as_secs().to_string()],
        )
        .await
    }

    /// Closes the open run `run_id` (when it is the open one): later agents open a new one.
    pub async fn close_open_run(&self, run_id: &str) -> Result<(), LoadgenError> {
        let script = redis::Script::new(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1",
        );
        self.script::<i64>(&script, &[OPEN_RUN_KEY.to_string()], &[run_id.to_string()])
            .await
            .map(|_| ())
    }
}

/// What [`Coordinator::read_bounded`] found under a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// No such key (or an empty string: nothing the agents store is empty).
    Missing,
    /// More bytes than allowed (at least this many; nothing more was read).
    TooLarge(u64),
    Value(Vec<u8>),
}

/// This machine's host name (the pod name on Kubernetes).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is what we pass.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
