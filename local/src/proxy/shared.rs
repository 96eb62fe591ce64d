//! State shared by a proxy's handle, its accept task and every connection it carries.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Mutex;

use tokio::net::TcpListener;
use tokio::sync::watch;

use super::faults::Faults;

/// State shared by the handle, the accept task and every connection.
pub(super) struct Shared {
    /// Current faults; its version is what the fast path checks per chunk.
    pub(super) faults: watch::Sender<Faults>,
    /// Armed by `reset_next`, consumed (swapped off) by the first connection that sees bytes.
    pub(super) reset_armed: AtomicBool,
    /// Bumped by every `set_down(true)`, so a quick down → up still cuts live connections.
    pub(super) cuts: AtomicU64,
    /// A listener bound again by `set_down(false)`, for the accept task to take.
    pub(super) rebound: Mutex<Option<TcpListener>>,
    pub(super) connections: AtomicUsize,
}
