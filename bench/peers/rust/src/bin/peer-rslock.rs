//! `make bench-peers` driver of rslock (async, tokio; one `LockManager` shared by every task).
//!
//! W1/W2 call `LockManager::lock` with rslock's default retry (3 attempts). rslock's retry
//! draws its delay from [0, d), which cannot express W3's [10, 20] ms, so W3 sets rslock to
//! one attempt per call and retries with the harness's delay (`retry_async`).

use std::time::Duration;

use redlock_peers_workload::{self as workload, Args, AsyncClient, Workload};
use rslock::{Lock, LockManager};

struct Rslock {
    manager: LockManager,
    ttl: Duration,
    w3: bool,
}

impl AsyncClient for Rslock {
    type Guard = Lock;
    async fn acquire(&self, key: &str) -> Result<Lock, String> {
        let attempt = || async {
            self.manager
                .lock(key.as_bytes(), self.ttl)
                .await
                .map_err(|e| e.to_string())
        };
        if self.w3 {
            workload::retry_async(attempt).await
        } else {
            attempt().await
        }
    }
    async fn release(&self, lock: Lock) -> Result<(), String> {
        // rslock's unlock is best effort and reports nothing.
        self.manager.unlock(&lock).await;
        Ok(())
    }
}

fn main() {
    let args = Args::from_env("rslock", "rslock 0.10.0");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| workload::fail(&args, &format!("tokio runtime: {e}")));
    let mut manager = {
        let _entered = rt.enter();
        LockManager::new(args.masters.clone())
    };
    let w3 = args.workload == Workload::W3;
    if w3 {
        manager.set_retry(1, Duration::from_millis(1));
    }
    let client = Rslock {
        manager,
        ttl: args.ttl,
        w3,
    };
    workload::run_async(&rt, &args, client);
}
