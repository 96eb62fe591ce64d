//! One Redis master reached by the single-master baselines: a multiplexed redis-rs connection
//! that is re-opened after an I/O error or a timeout, with every request bounded.
//!
//! Not the core's connection layer on purpose: the baselines are what a user would write with
//! a plain client, and they must not inherit the core's guarantees.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, FromRedisValue};

/// Why a request got no answer (an error reply is an answer: it is returned as such).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// No reply within the per-request timeout.
    TimedOut,
    /// Connection refused or lost, or an error reply.
    Failed(String),
}

/// A master and its (lazily opened, re-opened on failure) connection.
#[derive(Debug)]
pub struct Master {
    client: Client,
    timeout: Duration,
    conn: Mutex<Option<MultiplexedConnection>>,
}

impl Master {
    /// `timeout` bounds connecting and each request.
    pub fn new(url: &str, timeout: Duration) -> Result<Master, String> {
        let client =
            Client::open(url).map_err(|e| format!("{:?}: {e}", redlock_core::redact_url(url)))?;
        Ok(Master {
            client,
            timeout,
            conn: Mutex::new(None),
        })
    }

    fn cached(&self) -> Option<MultiplexedConnection> {
        self.conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn forget(&self) {
        *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    async fn connection(&self) -> Result<MultiplexedConnection, RequestError> {
        if let Some(conn) = self.cached() {
            return Ok(conn);
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout));
        let conn = tokio::time::timeout(
            self.timeout,
            self.client
                .get_multiplexed_async_connection_with_config(&config),
        )
        .await
        .map_err(|_| RequestError::TimedOut)?
        .map_err(|e| {
            if e.is_timeout() {
                RequestError::TimedOut
            } else {
                RequestError::Failed(e.to_string())
            }
        })?;
        *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = Some(conn.clone());
        Ok(conn)
    }

    /// Maps a redis-rs error; a broken or timed-out connection is dropped.
    fn failed(&self, e: redis::RedisError) -> RequestError {
        if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() {
            self.forget();
        }
        if e.is_timeout() {
            RequestError::TimedOut
        } else {
            RequestError::Failed(e.to_string())
        }
    }

    /// Sends `cmd` and returns its reply and round trip. A timeout or an I/O error drops the
    /// connection so the next request opens a fresh one.
    pub async fn query<T: FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<(T, Duration), RequestError> {
        let mut conn = self.connection().await?;
        self.bounded(cmd.query_async::<T>(&mut conn)).await
    }

    /// Runs `script` (EVALSHA, EVAL when the script is not cached), bounded like [`Master::query`].
    pub async fn script<T: FromRedisValue>(
        &self,
        script: &redis::Script,
        key: &str,
        arg: &str,
    ) -> Result<(T, Duration), RequestError> {
        let mut conn = self.connection().await?;
        let mut invocation = script.key(key);
        invocation.arg(arg);
        self.bounded(invocation.invoke_async::<T>(&mut conn)).await
    }

    /// Awaits one request within the per-request timeout and times it; a timeout or an error
    /// drops the connection (see [`Master::query`]).
    async fn bounded<T>(
        &self,
        request: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<(T, Duration), RequestError> {
        let started = Instant::now();
        let reply = tokio::time::timeout(self.timeout, request).await;
        let rtt = started.elapsed();
        match reply {
            Ok(Ok(value)) => Ok((value, rtt)),
            Ok(Err(e)) => Err(self.failed(e)),
            Err(_) => {
                self.forget();
                Err(RequestError::TimedOut)
            }
        }
    }
}
