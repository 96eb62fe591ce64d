//! The masters a run loads: local `redis-server` processes it started, or existing ones.
//!
//! The runner keeps this handle for the whole run, so a fault schedule can pause, kill or
//! restart local masters while the load runs.

use std::time::Duration;

use redlock_local::{LocalError, LocalMasters, ServerKind};

use crate::engine::config::RunConfig;
use crate::engine::network::{NetworkProfile, NetworkProxy};
use crate::error::LoadgenError;

/// Masters started when neither `--masters` nor `--spawn` is given.
pub const DEFAULT_LOCAL_MASTERS: u32 = 5;

/// The masters under load.
#[derive(Debug, Default)]
pub struct Target {
    /// URLs in configured order (may carry passwords: display [`Target::display_urls`]).
    pub urls: Vec<String>,
    /// The local masters, when this run started them.
    pub local: Option<LocalMasters>,
    /// What each master runs and the commands release and extend use on it (e.g. `valkey
    /// 9.1.2 (release delifeq, extend set)`), or "unknown".
    pub redis_versions: Vec<String>,
    /// The protected resource of a fencing run (`--storage`, or a local one).
    pub storage: Option<StorageTarget>,
    /// `--rtt`: the proxy process between the client and the local masters.
    pub network: Option<NetworkProxy>,
}

/// The Redis that plays the protected resource.
#[derive(Debug)]
pub struct StorageTarget {
    pub url: String,
    /// The local redis-server started for it (no `--storage` given).
    pub local: Option<LocalMasters>,
}

impl Target {
    /// Starts `n` local masters of `server` (`None`: the one $REDLOCK_SERVER names, else
    /// redis-server), every master under libfaketime when `fake_clock` (for clock faults): a
    /// server that cannot run so, or a missing libfaketime, is a usage error that says why.
    pub fn spawn_masters(
        n: u32,
        server: Option<&ServerKind>,
        fake_clock: bool,
    ) -> Result<Target, LoadgenError> {
        let kind = match server {
            Some(server) => server.clone(),
            None => ServerKind::from_env()
                .map_err(|e| LoadgenError::Usage(format!("starting local masters: {e}")))?,
        };
        let mut launch = LocalMasters::of(kind);
        if fake_clock {
            launch = launch.with_fake_clock();
        }
        let local = launch.start(n as usize).map_err(|e| match e {
            LocalError::NoFakeClock { .. } => {
                LoadgenError::Usage(format!("--fault clock needs masters under libfaketime: {e}"))
            }
            LocalError::NotInstalled { .. } if fake_clock => {
                LoadgenError::Usage(format!("--fault clock needs masters under libfaketime: {e}"))
            }
            LocalError::NotInstalled { .. } => LoadgenError::Failed(format!(
                "{e}\n(or run `make deps-redis` in the repository, or pass --masters URL,... to load existing masters)"
            )),
            other => LoadgenError::Failed(format!("starting {n} local masters: {other}")),
        })?;
        Ok(Target {
            urls: local.urls(),
            local: Some(local),
            ..Target::default()
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

    /// `--rtt`: puts the network profile's proxy process between the client and the local
    /// masters (loopback: nothing to add, no proxy).
    pub fn add_network(&mut self, profile: &NetworkProfile) -> Result<(), LoadgenError> {
        let local = self.local.as_ref().ok_or_else(|| {
            LoadgenError::Usage(format!(
                "--rtt {} needs the local masters the load generator starts (drop --masters: masters elsewhere are as far away as they are)",
                profile.name
            ))
        })?;
        profile
            .per_master(local.len())
            .map_err(LoadgenError::Usage)?;
        if !profile.adds_latency() {
            return Ok(());
        }
        let ports = (0..local.len())
            .map(|i| local.port(i))
            .collect::<Result<Vec<u16>, _>>()
            .map_err(|e| LoadgenError::Failed(format!("the local masters' ports: {e}")))?;
        let proxy = NetworkProxy::start(profile, &ports)?;
        self.urls = proxy.urls.clone();
        self.network = Some(proxy);
        Ok(())
    }

    /// Existing masters.
    pub fn existing(urls: Vec<String>) -> Target {
        Target {
            urls,
            ..Target::default()
        }
    }

    /// Master URLs with passwords redacted.
    pub fn display_urls(&self) -> Vec<String> {
        self.urls
            .iter()
            .map(|u| redlock_core::redact_url(u))
            .collect()
    }

    /// Asks every master what it runs, as the lock client sees it when it connects (server,
    /// version, the commands its release and extend use); best effort, bounded: "unknown"
    /// for a master not connected within a second.
    pub async fn probe_versions(&mut self) {
        let servers = match redlock_core::Redlock::builder(self.urls.iter().cloned()).build() {
            Ok(client) => {
                client.wait_connected(Duration::from_secs(1)).await;
                client.master_servers()
            }
            Err(_) => Vec::new(),
        };
        self.redis_versions = (0..self.urls.len())
            .map(|i| match servers.get(i) {
                Some(Some(server)) => server.to_string(),
                _ => "unknown".into(),
            })
            .collect();
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
