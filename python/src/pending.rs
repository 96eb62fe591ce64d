//! The releases an asyncio client runs that nobody awaits any more (a cancelled or abandoned
//! release, a lock garbage-collected while held, a lock won by a cancelled acquire), counted so
//! that `await client.close()` can wait for them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// Releases of one client still running.
#[derive(Default)]
pub(crate) struct Pending {
    running: AtomicUsize,
    idle: Notify,
}

/// One release counted by [`Pending`] until this is dropped (the release done, or given up).
pub(crate) struct Ticket(Arc<Pending>);

impl Pending {
    /// Counts one more release until the ticket is dropped.
    pub(crate) fn ticket(self: &Arc<Self>) -> Ticket {
        self.running.fetch_add(1, Ordering::SeqCst);
        Ticket(self.clone())
    }

    /// Completes once no counted release is running.
    pub(crate) async fn idle(&self) {
        loop {
            let changed = self.idle.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.running.load(Ordering::SeqCst) == 0 {
                return;
            }
            changed.await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}
