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

/// Sets a key unless it is set (the first value wins) and returns its value: the reason a run
/// was given up, a run's `agents` and `kind`.
const SET_ONCE: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
return redis.call('GET', KEYS[1])";

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
#[derive(Clone, Debug)]
pub struct Coordinator {
    con: redis::aio::MultiplexedConnection,
    /// The URL with its password redacted (for messages).
    pub shown: String,
}

/// Waits for one coordinator request at most `REQUEST_TIMEOUT` (else: `no` within it), naming
/// the coordinator (password redacted) in either failure.
async fn bounded<T>(
    shown: &str,
    no: &str,
    request: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, LoadgenError> {
    tokio::time::timeout(REQUEST_TIMEOUT, request)
        .await
        .map_err(|_| {
            LoadgenError::Failed(format!(
                "coordinator {shown}: {no} within {REQUEST_TIMEOUT:?}"
            ))
        })?
        .map_err(|e| LoadgenError::Failed(format!("coordinator {shown}: {e}")))
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
        let con = bounded(&shown, "no connection", connecting).await?;
        Ok(Coordinator { con, shown })
    }

    /// Sends one command (bounded).
    pub async fn query<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, LoadgenError> {
        let mut con = self.con.clone();
        bounded(&self.shown, "no answer", cmd.query_async(&mut con)).await
    }

    /// Runs the Lua script `lua` on `keys` with `args` (bounded).
    pub async fn script<T: redis::FromRedisValue>(
        &self,
        lua: &str,
        keys: &[&str],
        args: impl redis::ToRedisArgs,
    ) -> Result<T, LoadgenError> {
        let mut eval = redis::cmd("EVAL");
        eval.arg(lua).arg(keys.len()).arg(keys).arg(args);
        self.query(&eval).await
    }

    /// `SET key value EX ttl`.
    pub async fn put(&self, key: &str, value: impl redis::ToRedisArgs) -> Result<(), LoadgenError> {
        let ttl = KEY_TTL.as_secs();
        self.query(redis::cmd("SET").arg(key).arg(value).arg("EX").arg(ttl))
            .await
    }

    pub async fn get<T: redis::FromRedisValue>(
        &self,
        key: &str,
    ) -> Result<Option<T>, LoadgenError> {
        self.query(redis::cmd("GET").arg(key)).await
    }

    /// Sets `key` to `value` unless it is set; returns the value it holds.
    pub async fn set_once(&self, key: &str, value: &str) -> Result<String, LoadgenError> {
        self.script(SET_ONCE, &[key], (value, KEY_TTL.as_secs()))
            .await
    }

    /// The run id to join: `wanted`, or the run the coordinator has open (opened here when
    /// there is none).
    pub async fn run_id(&self, wanted: Option<&str>) -> Result<String, LoadgenError> {
        if let Some(id) = wanted {
            return Ok(id.to_string());
        }
        let fresh = crate::model::header::new_run_id();
        // GET-or-SET in one step (a script, so older coordinators without SET NX GET work).
        let lua = "local v = redis.call('GET', KEYS[1]) if v then return v end \
             redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) return ARGV[1]";
        self.script(lua, &[OPEN_RUN_KEY], (fresh, KEY_TTL.as_secs()))
            .await
    }

    /// Closes the open run `run_id` (when it is the open one): later agents open a new one.
    pub async fn close_open_run(&self, run_id: &str) -> Result<(), LoadgenError> {
        let lua =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1";
        self.script(lua, &[OPEN_RUN_KEY], run_id).await
    }
}

/// The error of a run somebody gave up (`why`).
fn given_up(run_id: &str, why: &str) -> LoadgenError {
    LoadgenError::Failed(format!("run {run_id} was given up: {why}"))
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
