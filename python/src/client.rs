//! What `Redlock` and `AsyncRedlock` share: the client that `close()` lets go of, and what
//! stays readable after that (masters, settings, `repr()`).

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use pyo3::prelude::*;

use crate::boundary::ProcessBound;
use crate::carried::Closing;
use crate::errors::RedlockError;

/// The settings of a client, kept for its properties and `repr()` (also once closed).
pub(crate) struct Info {
    /// Master URLs in configured order, passwords redacted (also what log records show).
    pub masters: Arc<[String]>,
    /// What the `redlock_rs` logger's records of this client may show, and its rate limits.
    pub log: Arc<crate::logging::LogSettings>,
    pub fanout: &'static str,
    pub quorum: usize,
    pub local_handoff: bool,
    pub fencing: bool,
    settings: String,
}

impl Info {
    pub(crate) fn of(client: &redlock_core::Redlock, resource_names: bool) -> Self {
        let settings = client.settings();
        let masters: Arc<[String]> = client.masters().into();
        Info {
            log: Arc::new(crate::logging::LogSettings::new(
                masters.clone(),
                resource_names,
            )),
            masters,
            fanout: settings.fanout.as_str(),
            quorum: settings.quorum,
            local_handoff: settings.local_handoff,
            fencing: settings.fencing,
            settings: format!(
                "fanout='{}', quorum={}, retry_count={}, retry_delay={}, instance_timeout={}",
                settings.fanout,
                settings.quorum,
                settings.retry_count,
                settings.retry_delay.as_secs_f64(),
                settings.instance_timeout.as_secs_f64()
            ),
        }
    }
}

/// A client until `close()`: each operation takes its own reference, and locks keep theirs
/// until released; an acquire running when the client is closed stops (`closing`).
pub(crate) struct ClientSlot<C> {
    client: ArcSwapOption<ProcessBound<C>>,
    pub info: Arc<Info>,
    /// What acquires in flight watch to stop when the client is closed.
    pub closing: Arc<Closing>,
}

impl<C> ClientSlot<C> {
    pub(crate) fn new(client: C, info: Info) -> Self {
        ClientSlot {
            client: ArcSwapOption::from_pointee(ProcessBound::new(client)),
            info: Arc::new(info),
            closing: Arc::default(),
        }
    }

    /// The client for one operation: `RedlockError` once closed, or in a forked child.
    pub(crate) fn get(&self) -> PyResult<Arc<ProcessBound<C>>> {
        let client = self.client.load_full().ok_or_else(|| {
            RedlockError::new_err(
                "this client is closed (close() or the end of its with block): create a new one",
            )
        })?;
        client.get()?;
        Ok(client)
    }

    /// Lets go of the client: new operations raise `RedlockError`, acquires in flight stop
    /// (their attempt in flight undone); the connections close once running operations and
    /// the client's locks (released, or garbage-collected) let go too.
    pub(crate) fn close(&self) {
        self.client.store(None);
        self.closing.close();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.client.load().is_none()
    }

    /// `Class(masters=[...], fanout=..., ...)` for `repr()`.
    pub(crate) fn describe(&self, class: &str) -> String {
        let closed = if self.is_closed() { ", closed" } else { "" };
        format!(
            "{class}(masters={:?}, {}{closed})",
            self.info.masters, self.info.settings
        )
    }
}

/// The async core client behind a Python client (the blocking one wraps it), for what the
/// twins read alike (see `twins.rs`).
pub(crate) trait CoreClient {
    fn core(&self) -> &redlock_core::Redlock;
}

impl CoreClient for redlock_core::blocking::Redlock {
    fn core(&self) -> &redlock_core::Redlock {
        self.as_async()
    }
}
