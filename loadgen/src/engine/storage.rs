//! The protected resource of a fencing run (`--fencing`, `--storage URL`, a holder pause): a
//! Redis that each holder writes `(resource, token)` to while it believes it holds the lock,
//! and the check that tokens come out in order.
//!
//! A fenced run writes through [`FENCED_WRITE`], which stores a write only if its token is at
//! least the highest stored for the resource (the resource side of docs/src/design.md#fencing; the Python
//! example `python/examples/fencing_redis.py` shows the same check to users). An unfenced run
//! writes with a plain `SET`: every write is stored, late ones included, which is what fencing
//! exists to prevent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::Script;

use crate::engine::locks::master::{Master, RequestError};

/// Stores the token only if it is at least the highest stored: 1 stored, 0 refused. The
/// record expires an hour after its last write, so records never pile up on a storage that
/// outlives the run. Tokens are compared exactly, as decimal strings (fewer digits is smaller,
/// then digit by digit), never through Lua numbers: doubles are 2,048 apart near 2^63, so
/// `tonumber` would let a paused holder's late write through. A stored record that is not a
/// decimal token is an error reply, never silently overwritten.
pub const FENCED_WRITE: &str = r"
local token = ARGV[1]
local highest = redis.call('GET', KEYS[1])
if highest then
    if not string.match(highest, '^%d+$') then
        return redis.error_reply('fencing record ' .. KEYS[1] .. ' holds a value that is not a decimal token')
    end
    highest = string.gsub(highest, '^0+(%d)', '%1')
    if #token < #highest or (#token == #highest and token < highest) then
        return 0
    end
end
redis.call('SET', KEYS[1], token, 'PX', 3600000)
return 1
";

/// How long a record lives after its last write, in ms (as in [`FENCED_WRITE`]).
const RECORD_TTL_MS: u64 = 3_600_000;

/// What the storage did with a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    Stored,
    /// The token check refused it (fenced runs only).
    Refused,
    Failed(RequestError),
}

/// The storage of one mode: its connection, and the record names of this mode.
#[derive(Debug)]
pub struct Storage {
    master: Master,
    script: Script,
    fenced: bool,
    /// Distinguishes this mode's records from any other run's on a shared storage.
    prefix: String,
}

/// The least a write to the protected resource may take before it counts as failed. The
/// lock's per-master timeout (50 ms by default) is sized against the TTL; the resource is no
/// lock master, and on a loaded machine a late write that merely took long (a paused holder's,
/// say) must still be answered — stored or refused by its token — not lost as an error.
pub const STORAGE_WRITE_TIMEOUT_FLOOR: std::time::Duration = std::time::Duration::from_secs(1);

impl Storage {
    /// `timeout` bounds each write (the run's per-master timeout, at least
    /// [`STORAGE_WRITE_TIMEOUT_FLOOR`]).
    pub fn new(url: &str, fenced: bool, timeout: Duration) -> Result<Storage, String> {
        Ok(Storage {
            master: Master::new(url, timeout).map_err(|e| format!("--storage {e}"))?,
            script: Script::new(FENCED_WRITE),
            fenced,
            prefix: format!("redlock-loadgen:storage:{:016x}", rand::random::<u64>()),
        })
    }

    /// The record of resource `index`.
    pub fn record(&self, index: u32) -> String {
        format!("{}:{index}", self.prefix)
    }

    /// Writes `value` (the fencing token; unfenced: the lock's token) to resource `index`'s
    /// record: through the token check when fenced, unconditionally otherwise.
    pub async fn write(&self, index: u32, value: &str) -> Written {
        let record = self.record(index);
        let reply = if self.fenced {
            self.master
                .script::<i64>(&self.script, &record, value)
                .await
        } else {
            let mut set = redis::cmd("SET");
            set.arg(&record).arg(value).arg("PX").arg(RECORD_TTL_MS);
            self.master
                .query::<()>(&set)
                .await
                .map(|((), rtt)| (1, rtt))
        };
        match reply {
            Ok((1, _)) => Written::Stored,
            Ok((_, _)) => Written::Refused,
            Err(e) => Written::Failed(e),
        }
    }
}

/// Per resource, the highest fencing token returned by an acquisition that has completed.
#[derive(Debug)]
pub struct TokenOrder {
    highest: Vec<AtomicU64>,
}

impl TokenOrder {
    pub fn new(resources: u32) -> TokenOrder {
        TokenOrder {
            highest: (0..resources).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Read when an acquisition begins: every token it may return must be above this.
    pub fn floor(&self, resource: u32) -> u64 {
        self.highest
            .get(resource as usize)
            .map_or(0, |h| h.load(Ordering::SeqCst))
    }

    /// An acquisition that began at `floor` returned `token`: whether the order held.
    pub fn completed(&self, resource: u32, floor: u64, token: u64) -> bool {
        if let Some(h) = self.highest.get(resource as usize) {
            h.fetch_max(token, Ordering::SeqCst);
        }
        token > floor
    }
}

/// What the workers of a fenced or storage-writing mode share.
#[derive(Debug)]
pub struct Protected {
    pub storage: Storage,
    pub order: TokenOrder,
}

/// Whether a write sent at `sent` came from a holder whose validity had ended.
pub fn is_stale(sent: Instant, valid_until: Instant) -> bool {
    sent >= valid_until
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_order_counts_a_token_not_above_what_completed_before() {
        let order = TokenOrder::new(2);
        let floor = order.floor(0);
        assert!(order.completed(0, floor, 1));
        // An acquisition that began after token 1 completed must return more than 1.
        let floor = order.floor(0);
        assert_eq!(floor, 1);
        assert!(!order.completed(0, floor, 1), "a token returned twice");
        assert!(order.completed(0, floor, 5));
        // Resources are independent; a slower acquisition that began earlier is not judged
        // against tokens completed after it began.
        assert_eq!(order.floor(1), 0);
        assert!(order.completed(0, 1, 3));
        assert_eq!(order.floor(0), 5, "the highest stays the highest");
    }
}
