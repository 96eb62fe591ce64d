//! The masters a run loads: local `redis-server` processes it started, or existing ones.
//!
//! The runner keeps this handle for the whole run, so a fault schedule can pause, kill or
//! restart local masters while the load runs.

use std::time::Duration;

use redlock_local::{LocalError, LocalMasters};

use crate::engine::config::RunConfig;
use crate::error::LoadgenError;

/// Masters started when neither `--masters` nor `--spawn` is given.
pub const DEFAULT_LOCAL_MASTERS: u32 = 5;

/// The masters under load.
#[derive(Debug)]
pub struct Target {
    /// URLs in configured order (may carry passwords: display [`Target::display_urls`]).
    pub urls: Vec<String>,
    /// The local masters, when this run started them.
    pub local: Option<LocalMasters>,
    /// `redis_version` of each master, or "unknown".
    pub redis_versions: Vec<String>,
    /// The protected resource of a fencing run (`--storage`, or a local one).
    pub storage: Option<StorageTarget>,
}

/// The Redis that plays the protected resource.
#[derive(Debug)]
pub struct StorageTarget {
    pub url: String,
    /// The local redis-server started for it (no `--storage` given).
    pub local: Option<LocalMasters>,
}

impl Target {
    /// Starts `n` local masters.
    pub fn spawn(n: u32) -> Result<Target, LoadgenError> {
        let local = LocalMasters::start(n as usize).map_err(|e| match e {
            LocalError::NotInstalled { .. } => LoadgenError::Failed(format!(
                "{e}\n(or run `make deps-redis` in the repository, or pass --masters URL,... to load existing masters)"
            )),
            other => LoadgenError::Failed(format!("starting {n} local masters: {other}")),
        })?;
        Ok(Target {
            urls: local.urls(),
            local: Some(local),
            redis_versions: Vec::new(),
            storage: None,
        })
    }

    /// Sets up the protected resource when `cfg` writes to one: `--storage`, or one more
    /// local redis-server.
    pub fn attach_storage(&mut self, cfg: &RunConfig) -> Result<(), LoadgenError> {
        if !cfg.writes_storage() {
            return Ok(());
        }
        self.storage = Some(match &cfg.storage {
            Some(url) => StorageTarget {
                url: url.clone(),
                local: None,
            },
            None => {
                let local = LocalMasters::start(1).map_err(|e| {
                    LoadgenError::Failed(format!("starting the local storage (--storage): {e}"))
                })?;
                StorageTarget {
                    url: local.urls().remove(0),
                    local: Some(local),
                }
            }
        });
        Ok(())
    }

    /// Existing masters.
    pub fn existing(urls: Vec<String>) -> Target {
        Target {
            urls,
            local: None,
            redis_versions: Vec::new(),
            storage: None,
        }
    }

    /// Master URLs with passwords redacted.
    pub fn display_urls(&self) -> Vec<String> {
        self.urls
            .iter()
            .map(|u| redlock_core::redact_url(u))
            .collect()
    }

    /// Asks every master for its version (best effort, bounded: "unknown" when it does not
    /// answer within a second).
    pub async fn probe_versions(&mut self) {
        let mut versions = Vec::with_capacity(self.urls.len());
        for url in &self.urls {
            let version = tokio::time::timeout(Duration::from_secs(1), redis_version(url))
                .await
                .ok()
                .flatten();
            versions.push(version.unwrap_or_else(|| "unknown".into()));
        }
        self.redis_versions = versions;
    }

    /// Empties local masters between modes so each starts from the same state. Existing
    /// masters are never flushed (only this run's keys are touched there, and all released).
    pub fn reset(&self) -> Result<(), LoadgenError> {
        if let Some(local) = &self.local {
            local
                .flush_all()
                .map_err(|e| LoadgenError::Failed(format!("flushing local masters: {e}")))?;
        }
        if let Some(local) = self.storage.as_ref().and_then(|s| s.local.as_ref()) {
            local
                .flush_all()
                .map_err(|e| LoadgenError::Failed(format!("flushing the local storage: {e}")))?;
        }
        Ok(())
    }
}

async fn redis_version(url: &str) -> Option<String> {
    let client = redis::Client::open(url).ok()?;
    let mut con = client.get_multiplexed_async_connection().await.ok()?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut con)
        .await
        .ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .map(|v| v.trim().to_string())
}
