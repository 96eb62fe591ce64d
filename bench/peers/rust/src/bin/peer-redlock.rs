//! `make bench-peers` driver of the `redlock` crate (blocking; one `RedLock` shared by every
//! thread). This crate opens a new connection to each master for every request and asks the
//! masters one after the other: that is its design, measured as it is.
//!
//! W1/W2 call `RedLock::lock` with its default retry (3 attempts). Its retry draws the delay
//! from [0, d) ms, which cannot express W3's [10, 20] ms, so W3 sets it to one attempt (no
//! delay) and retries with the harness's delay (`retry_blocking`).

use redlock::{Lock, RedLock};
use redlock_peers_workload::{self as workload, Args, BlockingClient, Workload};

struct Redlock {
    manager: RedLock,
    ttl_ms: usize,
    w3: bool,
}

/// What `release` needs to rebuild the crate's `Lock` (which borrows the manager).
struct Held {
    resource: Vec<u8>,
    val: Vec<u8>,
    validity_time: usize,
}

impl BlockingClient for Redlock {
    type Guard = Held;
    fn acquire(&self, key: &str) -> Result<Held, String> {
        let attempt = || match self.manager.lock(key.as_bytes(), self.ttl_ms) {
            Ok(Some(lock)) => Ok(Held {
                resource: lock.resource,
                val: lock.val,
                validity_time: lock.validity_time,
            }),
            Ok(None) => Err("not acquired".to_string()),
            Err(e) => Err(e.to_string()),
        };
        if self.w3 {
            workload::retry_blocking(attempt)
        } else {
            attempt()
        }
    }
    fn release(&self, held: Held) -> Result<(), String> {
        // The crate's unlock is best effort and reports nothing.
        self.manager.unlock(&Lock {
            resource: held.resource,
            val: held.val,
            validity_time: held.validity_time,
            lock_manager: &self.manager,
        });
        Ok(())
    }
}

fn main() {
    let args = Args::from_env("redlock-crate", "redlock 2.0.0");
    let mut manager = RedLock::new(args.masters.clone());
    let w3 = args.workload == Workload::W3;
    if w3 {
        manager.set_retry(1, 1);
    }
    let ttl_ms = usize::try_from(args.ttl_ms()).unwrap_or(usize::MAX);
    workload::run_blocking(
        &args,
        Redlock {
            manager,
            ttl_ms,
            w3,
        },
    );
}
