//! One Redis master: a lazily-connected, self-reconnecting multiplexed connection and the three
//! requests the algorithm sends to it.

use std::fmt;
use std::sync::LazyLock;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{RedisError, RedisResult, Script, Value};

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

/// A request the algorithm sends to one master. `Ok(true)` means granted, `Ok(false)` denied.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Request<'a> {
    /// `SET resource token NX PX ttl_ms`.
    Lock {
        resource: &'a str,
        token: &'a str,
        ttl_ms: u64,
    },
    /// Compare-and-PEXPIRE.
    Extend {
        resource: &'a str,
        token: &'a str,
        ttl_ms: u64,
    },
    /// Compare-and-delete.
    Unlock { resource: &'a str, token: &'a str },
}

/// A configured master.
pub(crate) struct Master {
    /// The URL with any password redacted: the only form ever displayed.
    display: String,
    conn: ConnectionManager,
}

impl fmt::Debug for Master {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Master")
            .field("url", &self.display)
            .finish()
    }
}

/// How long one TCP connect may take before the manager gives up and tries again later.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

impl Master {
    /// Parses `url` and prepares a lazy connection; does no I/O, so a down master cannot block.
    /// Must run inside a tokio runtime (the manager spawns its reconnect task there).
    pub(crate) fn new(index: usize, url: &str) -> Result<Self> {
        let display = redact_url(url);
        let client = redis::Client::open(url).map_err(|e| {
            Error::invalid(format!(
                "master URL #{index} {display:?}: {}",
                describe_parse_error(&e)
            ))
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            // The algorithm applies its own per-master timeout to every request.
            .set_response_timeout(None)
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(10))
            .set_max_delay(Duration::from_millis(500));
        let conn = ConnectionManager::new_lazy_with_config(client, config).map_err(|e| {
            Error::invalid(format!(
                "master URL #{index} {display:?}: {}",
                describe_parse_error(&e)
            ))
        })?;
        Ok(Master { display, conn })
    }

    /// The URL with its password redacted.
    pub(crate) fn display(&self) -> &str {
        &self.display
    }

    /// Sends `request`; `Ok(true)` = granted, `Ok(false)` = denied.
    pub(crate) async fn send(&self, request: Request<'_>) -> RedisResult<bool> {
        // Cloning the manager clones an Arc; the underlying connection stays shared and pipelined.
        let mut conn = self.conn.clone();
        match request {
            Request::Lock {
                resource,
                token,
                ttl_ms,
            } => {
                let reply: Value = redis::cmd("SET")
                    .arg(resource)
                    .arg(token)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query_async(&mut conn)
                    .await?;
                match reply {
                    Value::Okay => Ok(true),
                    Value::Nil => Ok(false),
                    other => Err(unexpected_reply("SET NX", &other)),
                }
            }
            Request::Extend {
                resource,
                token,
                ttl_ms,
            } => {
                let renewed: i64 = EXTEND
                    .key(resource)
                    .arg(token)
                    .arg(ttl_ms)
                    .invoke_async(&mut conn)
                    .await?;
                Ok(renewed == 1)
            }
            Request::Unlock { resource, token } => {
                let deleted: i64 = RELEASE
                    .key(resource)
                    .arg(token)
                    .invoke_async(&mut conn)
                    .await?;
                Ok(deleted == 1)
            }
        }
    }

    /// Opens the connection in the background so the first operation does not pay for it.
    pub(crate) fn warm_up(&self) {
        let mut conn = self.conn.clone();
        tokio::spawn(async move {
            let _: RedisResult<Value> = redis::cmd("PING").query_async(&mut conn).await;
        });
    }
}

fn unexpected_reply(what: &str, reply: &Value) -> RedisError {
    RedisError::from((
        redis::ErrorKind::UnexpectedReturnType,
        "unexpected reply",
        format!("{what}: {reply:?}"),
    ))
}

/// A parse error's description without echoing the URL (it may hold a password).
fn describe_parse_error(err: &RedisError) -> String {
    match err.kind() {
        redis::ErrorKind::InvalidClientConfig => {
            "not a valid redis:// , rediss:// or unix:// URL".to_string()
        }
        _ => format!("{:?}", err.kind()),
    }
}
