//! The same API for synchronous callers (and the C and Python bindings): each client owns a
//! small tokio runtime and blocks the calling thread on it.
//!
//! Many threads may call one client at once; their requests share the multiplexed
//! connections.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::{Handle, Runtime};

use crate::argument::InvalidArgument;
use crate::client::Retry;
use crate::config::RedlockBuilder;
use crate::error::{Error, Result};
use crate::lock::Lock;
use crate::vote::Vote;
use crate::watchdog;
use crate::LostReason;

/// Owns the runtime; shuts it down without blocking, so dropping a client is safe anywhere.
struct RuntimeOwner(Option<Runtime>);

impl Drop for RuntimeOwner {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// A blocking Redlock client. Cheap to clone; clones share the runtime and connections.
#[derive(Clone)]
pub struct Redlock {
    inner: crate::Redlock,
    handle: Handle,
    _runtime: Arc<RuntimeOwner>,
}

impl fmt::Debug for Redlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("blocking::Redlock")
            .field(&self.inner)
            .finish()
    }
}

impl RedlockBuilder {
    /// Validates the configuration and creates a blocking client with its own runtime: one
    /// I/O thread named `redlock-io`, which serves every master's connection.
    ///
    /// One thread, not more: the callers' threads poll their own rounds, so the I/O thread
    /// only moves bytes, and a second one mostly adds wake-ups between the two; one thread
    /// costs less CPU at the same or a higher rate (docs/src/benchmarks.md, "One I/O thread").
    pub fn build_blocking(self) -> Result<Redlock> {
        self.build_blocking_with_threads(1)
    }

    /// Like [`build_blocking`](Self::build_blocking) with a chosen number of I/O threads.
    pub fn build_blocking_with_threads(self, worker_threads: usize) -> Result<Redlock> {
        self.settings()?; // fail on bad configuration before starting threads
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(worker_threads.max(1))
            .thread_name("redlock-io")
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the I/O runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let inner = {
            let _entered = handle.enter();
            self.build()?
        };
        Ok(Redlock {
            inner,
            handle,
            _runtime: Arc::new(RuntimeOwner(Some(runtime))),
        })
    }
}

impl Redlock {
    /// Starts configuring a client; finish with [`RedlockBuilder::build_blocking`].
    pub fn builder<I, S>(urls: I) -> RedlockBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        crate::Redlock::builder(urls)
    }

    /// The async client underneath (same connections), for callers that mix both.
    pub fn as_async(&self) -> &crate::Redlock {
        &self.inner
    }

    /// The runtime's handle, to spawn or enter it.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Runs `future` to completion on this client's runtime. Refuses (instead of panicking)
    /// when called from inside an async runtime, where blocking would stall it.
    pub fn block_on<F: Future>(&self, future: F) -> Result<F::Output> {
        if Handle::try_current().is_ok() {
            return Err(Error::InvalidArgument(InvalidArgument::without_value(
                "blocking::Redlock",
                "called from inside an async runtime: use the async API there",
            )));
        }
        Ok(self.handle.block_on(future))
    }

    /// See [`crate::Redlock::wait_connected`].
    pub fn wait_connected(&self, timeout: Duration) -> Result<usize> {
        self.block_on(self.inner.wait_connected(timeout))
    }
    /// See [`crate::Redlock::try_acquire`].
    pub fn try_acquire(&self, resource: &str, ttl: Duration) -> Result<Lock> {
        self.block_on(self.inner.try_acquire(resource, ttl))?
    }
    /// See [`crate::Redlock::acquire`].
    pub fn acquire(&self, resource: &str, ttl: Duration) -> Result<Lock> {
        self.block_on(self.inner.acquire(resource, ttl))?
    }
    /// See [`crate::Redlock::acquire_with_deadline`].
    pub fn acquire_with_deadline(
        &self,
        resource: &str,
        ttl: Duration,
        deadline: Instant,
    ) -> Result<Lock> {
        self.block_on(self.inner.acquire_with_deadline(resource, ttl, deadline))?
    }
    /// See [`crate::Redlock::acquire_observed`].
    pub fn acquire_observed(
        &self,
        resource: &str,
        ttl: Duration,
        retry: Retry,
        observer: &mut (dyn FnMut(&Vote) + Send),
    ) -> Result<Lock> {
        self.block_on(self.inner.acquire_observed(resource, ttl, retry, observer))?
    }
    /// See [`crate::Redlock::acquire_cancellable`]: `Ok(None)` once `cancel` completed (the
    /// in-flight attempt undone on every master).
    pub fn acquire_cancellable<C>(
        &self,
        resource: &str,
        ttl: Duration,
        retry: Retry,
        observer: &mut (dyn FnMut(&Vote) + Send),
        cancel: C,
    ) -> Result<Option<Lock>>
    where
        C: Future<Output = ()>,
    {
        self.block_on(
            self.inner
                .acquire_cancellable(resource, ttl, retry, observer, cancel),
        )?
    }
    /// See [`crate::Redlock::extend`].
    pub fn extend(&self, lock: &mut Lock, ttl: Duration) -> Result<()> {
        self.block_on(self.inner.extend(lock, ttl))?
    }
    /// See [`crate::Redlock::release`].
    pub fn release(&self, lock: &Lock) -> Result<Vote> {
        self.block_on(self.inner.release(lock))?
    }
    /// See [`crate::Redlock::release_scoped`].
    pub fn release_scoped(&self, lock: &Lock) -> Result<Vote> {
        self.block_on(self.inner.release_scoped(lock))?
    }
    /// See [`crate::Redlock::auto_extend`].
    pub fn auto_extend(&self, lock: Lock) -> AutoExtend {
        let _entered = self.handle.enter();
        AutoExtend {
            guard: Some(self.inner.auto_extend(lock)),
            client: self.clone(),
        }
    }
}

/// Blocking counterpart of [`crate::AutoExtend`].
#[derive(Debug)]
pub struct AutoExtend {
    guard: Option<watchdog::AutoExtend>,
    client: Redlock,
}

impl AutoExtend {
    fn guard(&self) -> &watchdog::AutoExtend {
        self.guard.as_ref().expect("guard present until consumed")
    }
    /// The lock as last renewed.
    pub fn lock(&self) -> Lock {
        self.guard().lock()
    }
    /// True once renewal failed for good.
    pub fn is_lost(&self) -> bool {
        self.guard().is_lost()
    }
    /// Why the lock was lost, if it was.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.guard().lost_reason()
    }
    /// How many renewals failed so far (see [`crate::AutoExtend::failed_renewals`]).
    pub fn failed_renewals(&self) -> u32 {
        self.guard().failed_renewals()
    }
    /// The vote of the last failed renewal: which masters failed, and why.
    pub fn last_failed_renewal(&self) -> Option<Vote> {
        self.guard().last_failed_renewal()
    }
    /// Stops renewing and hands the lock back.
    pub fn stop(mut self) -> Lock {
        let guard = self.guard.take().expect("guard present until consumed");
        let _entered = self.client.handle.enter();
        guard.stop()
    }
    /// Stops renewing and releases; `LockLost` if the lock had been lost meanwhile.
    pub fn release(mut self) -> Result<Vote> {
        let guard = self.guard.take().expect("guard present until consumed");
        self.client.block_on(guard.release())?
    }
}

impl Drop for AutoExtend {
    fn drop(&mut self) {
        if let Some(guard) = self.guard.take() {
            // The async guard's Drop spawns the release; it needs the runtime entered.
            let _entered = self.client.handle.enter();
            drop(guard);
        }
    }
}
