//! The three single-master baselines: one attempt and one release each, counting the Redis
//! commands they send. See the module above for what each one does and why.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::master::{Master, RequestError};
use super::LockAlgorithm;
use crate::engine::faults::client::WorkerFaults;

/// The single-instance pattern's release: delete the key only if it still holds our token.
const COMPARE_AND_DELETE: &str = r#"
if redis.call("get", KEYS[1]) == ARGV[1] then
    return redis.call("del", KEYS[1])
end
return 0
"#;

/// A lock a client won.
#[derive(Debug, Clone)]
pub struct Held {
    /// What this client wrote (single: its token; setnx-expire: a unique marker; setnx-getset:
    /// the expiry timestamp).
    pub value: String,
    /// setnx-getset: the expiry time written, ms on this client's clock.
    pub expires_ms: i64,
    /// When the holder learned it won.
    pub completed: Instant,
    /// Until when the holder believes it owns the lock: the attempt's start + TTL (the key
    /// cannot expire on the master before that).
    pub valid_until: Instant,
}

/// How one attempt ended.
#[derive(Debug, Clone)]
pub enum AttemptResult {
    Acquired(Held),
    /// Someone else holds the lock.
    Denied,
    /// The master did not answer (error or timeout).
    Failed(RequestError),
    /// The client died right after winning (the crash fault): it never releases.
    Crashed,
}

/// One attempt.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub result: AttemptResult,
    /// Redis commands sent.
    pub commands: u64,
    /// Round trip of the first command (answered ones).
    pub first_round_trip: Option<Duration>,
    pub elapsed: Duration,
}

/// One release.
#[derive(Debug, Clone, Default)]
pub struct Released {
    /// Redis commands sent (0: setnx-getset found its lock expired and sent nothing).
    pub commands: u64,
    /// The release removed a key.
    pub deleted: bool,
    /// The key it removed was someone else's lock.
    pub foreign: bool,
    /// The master did not answer.
    pub error: Option<RequestError>,
}

/// A single-master lock client (shared by every load client of a mode).
#[derive(Debug)]
pub struct Baseline {
    pub algorithm: LockAlgorithm,
    master: Master,
    script: redis::Script,
}

impl Baseline {
    /// `url` is the one master; `timeout` bounds each request.
    pub fn new(algorithm: LockAlgorithm, url: &str, timeout: Duration) -> Result<Baseline, String> {
        if algorithm.votes() {
            return Err(format!("{algorithm} is not a single-master lock"));
        }
        Ok(Baseline {
            algorithm,
            master: Master::new(url, timeout)?,
            script: redis::Script::new(COMPARE_AND_DELETE),
        })
    }

    /// One attempt at `key` for `ttl`.
    pub async fn try_acquire(&self, key: &str, ttl: Duration, faults: &WorkerFaults) -> Attempt {
        let started = Instant::now();
        let mut attempt = Attempt {
            result: AttemptResult::Denied,
            commands: 0,
            first_round_trip: None,
            elapsed: Duration::ZERO,
        };
        attempt.result = self
            .attempt(key, ttl, faults, &mut attempt)
            .await
            .unwrap_or_else(AttemptResult::Failed);
        attempt.elapsed = started.elapsed();
        attempt
    }

    async fn send<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
        attempt: &mut Attempt,
    ) -> Result<T, RequestError> {
        attempt.commands += 1;
        let (reply, rtt) = self.master.query(cmd).await?;
        attempt.first_round_trip.get_or_insert(rtt);
        Ok(reply)
    }

    /// The attempt's commands, as the algorithm sends them.
    async fn attempt(
        &self,
        key: &str,
        ttl: Duration,
        faults: &WorkerFaults,
        attempt: &mut Attempt,
    ) -> Result<AttemptResult, RequestError> {
        // The key cannot expire on the master before the attempt's start + TTL.
        let valid_until = Instant::now() + ttl;
        let held = |value: String, expires_ms: i64| Held {
            value,
            expires_ms,
            completed: Instant::now(),
            valid_until,
        };
        let won = |value, expires_ms| match faults.crash_now() {
            true => AttemptResult::Crashed,
            false => AttemptResult::Acquired(held(value, expires_ms)),
        };
        match self.algorithm {
            LockAlgorithm::Single => {
                // The token Redlock uses (20 bytes from the OS CSPRNG, hex): the same cost per
                // attempt.
                let token = redlock_core::validity::new_token()
                    .map_err(|e| RequestError::Failed(format!("OS random source: {e}")))?;
                let mut set = redis::cmd("SET");
                set.arg(key).arg(&token).arg("NX").arg("PX");
                let reply: Option<String> =
                    self.send(set.arg(ttl.as_millis() as u64), attempt).await?;
                Ok(reply.map_or(AttemptResult::Denied, |_| won(token, 0)))
            }
            LockAlgorithm::SetnxExpire => {
                let marker = format!("{:016x}", rand::random::<u64>());
                let set: bool = self
                    .send(redis::cmd("SETNX").arg(key).arg(&marker), attempt)
                    .await?;
                if !set {
                    return Ok(AttemptResult::Denied);
                }
                // The pattern's weak spot: the key exists without a TTL until EXPIRE lands.
                if faults.crash_now() {
                    return Ok(AttemptResult::Crashed);
                }
                // EXPIRE takes whole seconds: round up so the key never expires before the TTL.
                let seconds = ttl.as_millis().div_ceil(1000).max(1) as u64;
                let _: bool = self
                    .send(redis::cmd("EXPIRE").arg(key).arg(seconds), attempt)
                    .await?;
                Ok(AttemptResult::Acquired(held(marker, 0)))
            }
            LockAlgorithm::SetnxGetset => self.setnx_getset(key, ttl, faults, attempt, won).await,
            LockAlgorithm::Redlock => unreachable!("checked in Baseline::new"),
        }
    }

    async fn setnx_getset(
        &self,
        key: &str,
        ttl: Duration,
        faults: &WorkerFaults,
        attempt: &mut Attempt,
        won: impl Fn(String, i64) -> AttemptResult,
    ) -> Result<AttemptResult, RequestError> {
        let expires = |faults| now_ms(faults) + ttl.as_millis() as i64 + 1;
        let first = expires(faults);
        let set: bool = self
            .send(redis::cmd("SETNX").arg(key).arg(first), attempt)
            .await?;
        if set {
            return Ok(won(first.to_string(), first));
        }
        let current: Option<String> = self.send(redis::cmd("GET").arg(key), attempt).await?;
        // Gone meanwhile (released): this attempt lost; the next one starts over with SETNX.
        let Some(current) = current else {
            return Ok(AttemptResult::Denied);
        };
        if !expired(&current, now_ms(faults)) {
            return Ok(AttemptResult::Denied);
        }
        let again = expires(faults);
        let previous: Option<String> = self
            .send(redis::cmd("GETSET").arg(key).arg(again), attempt)
            .await?;
        // Another contender's GETSET got there first when the old value is no longer expired;
        // ours then moved its expiry a little, which the pattern accepts.
        match previous {
            Some(previous) if !expired(&previous, now_ms(faults)) => Ok(AttemptResult::Denied),
            _ => Ok(won(again.to_string(), again)),
        }
    }

    /// Releases `held` at `key`.
    pub async fn release(&self, key: &str, held: &Held, faults: &WorkerFaults) -> Released {
        let mut released = Released::default();
        let reply = match self.algorithm {
            LockAlgorithm::Single => {
                released.commands = 1;
                self.master
                    .script::<i64>(&self.script, key, &held.value)
                    .await
                    .map(|(n, _)| {
                        released.deleted = n > 0;
                    })
            }
            LockAlgorithm::SetnxGetset if now_ms(faults) >= held.expires_ms => {
                // Expired on this client's clock: someone may hold it now, leave it alone.
                return released;
            }
            _ => {
                released.commands = 1;
                self.master
                    .query::<Option<String>>(redis::cmd("GETDEL").arg(key))
                    .await
                    .map(|(deleted, _)| {
                        released.deleted = deleted.is_some();
                        released.foreign = deleted.is_some_and(|v| v != held.value);
                    })
            }
        };
        released.error = reply.err();
        released
    }
}

/// This client's wall clock, ms since the Unix epoch, with its offset.
fn now_ms(faults: &WorkerFaults) -> i64 {
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as i64;
    wall + faults.clock_offset_ms
}

/// Whether a stored expiry time has passed at `now_ms`. A value that is not a timestamp is
/// treated as expired, as a client of the pattern that parses it as 0 would.
fn expired(value: &str, now_ms: i64) -> bool {
    value.trim().parse::<i64>().unwrap_or(0) <= now_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_time_has_passed_only_when_it_is_not_in_the_future() {
        assert!(expired("1000", 1000));
        assert!(expired("999", 1000));
        assert!(!expired("1001", 1000));
        assert!(expired("garbage", 1000));
    }

    #[test]
    fn redlock_is_not_a_baseline() {
        let err = Baseline::new(
            LockAlgorithm::Redlock,
            "redis://127.0.0.1:1",
            Duration::from_millis(50),
        )
        .unwrap_err();
        assert!(err.contains("redlock"), "{err}");
    }
}
