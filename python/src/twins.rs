//! What the sync and async twins share, written once: the client constructor (signature,
//! argument parsing, defaults), the client and lock accessors, and what releases a lock
//! dropped while held (each class's `abandon()` and `DROPPED`). Each macro emits a class's
//! one `#[pymethods]` block: the shared methods, then the class's own (the sync-vs-async ones).
//!
//! The classes provide: a client `slot: ClientSlot<C>` with `C: CoreClient` and
//! `fn build(py, ClientArgs) -> PyResult<Self>`; a lock `held: Arc<Held<R>>`.

/// The constructor and accessors of `Redlock` and `AsyncRedlock`, then `{ own methods }`.
macro_rules! client_methods {
    ($class:ident, $name:literal, { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            // The defaults are the core's constants; the text signature shows them to Python
            // (`help()`, `inspect`) as literals, checked against the core at compile time in
            // args.rs and against the module's DEFAULT_* by tests/test_conventions.py.
            #[new]
            #[pyo3(signature = (masters, *,
                                retry_count = redlock_core::DEFAULT_RETRY_COUNT,
                                retry_delay = redlock_core::DEFAULT_RETRY_DELAY,
                                drift_factor = redlock_core::DEFAULT_DRIFT_FACTOR,
                                instance_timeout = redlock_core::DEFAULT_INSTANCE_TIMEOUT,
                                fanout = redlock_core::DEFAULT_FANOUT.as_str(),
                                quorum = None,
                                max_extensions = redlock_core::DEFAULT_MAX_EXTENSIONS,
                                local_handoff = true,
                                fencing = false,
                                trace_resource_names = false,
                                meter_provider = None,
                                collector = None),
                   text_signature = "(masters, *, retry_count=3, retry_delay=0.2, \
                                     drift_factor=0.01, instance_timeout=0.05, \
                                     fanout='concurrent', quorum=None, max_extensions=1000, \
                                     local_handoff=True, fencing=False, \
                                     trace_resource_names=False, meter_provider=None, \
                                     collector=None)")]
            #[allow(clippy::too_many_arguments)]
            fn new(
                py: Python<'_>,
                #[pyo3(from_py_with = args::masters)] masters: Vec<String>,
                #[pyo3(from_py_with = args::retry_count)] retry_count: u32,
                #[pyo3(from_py_with = args::retry_delay)] retry_delay: Duration,
                #[pyo3(from_py_with = args::drift_factor)] drift_factor: f64,
                #[pyo3(from_py_with = args::instance_timeout)] instance_timeout: Duration,
                #[pyo3(from_py_with = args::fanout)] fanout: &'static str,
                #[pyo3(from_py_with = args::quorum)] quorum: Option<usize>,
                #[pyo3(from_py_with = args::max_extensions)] max_extensions: u32,
                #[pyo3(from_py_with = args::local_handoff)] local_handoff: bool,
                #[pyo3(from_py_with = args::fencing)] fencing: bool,
                #[pyo3(from_py_with = args::trace_resource_names)] trace_resource_names: bool,
                meter_provider: Option<Py<PyAny>>,
                collector: Option<Py<PyAny>>,
            ) -> PyResult<Self> {
                let args = args::ClientArgs {
                    masters,
                    retry_count,
                    retry_delay,
                    drift_factor,
                    instance_timeout,
                    fanout,
                    quorum,
                    max_extensions,
                    local_handoff,
                    fencing,
                    trace_resource_names,
                    meter_provider,
                    collector,
                };
                guarded(|| Self::build(py, args))
            }

            /// How many masters have an established connection right now.
            fn connected_masters(&self) -> PyResult<usize> {
                use $crate::client::CoreClient;
                guarded(|| Ok(self.slot.get()?.get()?.core().connected_masters()))
            }

            /// True once ``close()`` was called.
            #[getter]
            fn closed(&self) -> bool {
                self.slot.is_closed()
            }

            /// Master URLs in configured order, passwords redacted.
            #[getter]
            fn masters(&self) -> Vec<String> {
                self.slot.info.masters.to_vec()
            }
            /// "concurrent" or "sequential".
            #[getter]
            fn fanout(&self) -> &'static str {
                self.slot.info.fanout
            }
            /// Votes needed to win.
            #[getter]
            fn quorum(&self) -> usize {
                self.slot.info.quorum
            }
            /// Whether a release by this client wakes its next waiter for the same resource.
            #[getter]
            fn local_handoff(&self) -> bool {
                self.slot.info.local_handoff
            }
            /// Whether this client's locks carry fencing tokens.
            #[getter]
            fn fencing(&self) -> bool {
                self.slot.info.fencing
            }

            fn __repr__(&self) -> String {
                self.slot.describe($name)
            }

            $($own)*
        }
    };
}

/// The accessors of `Lock` and `AsyncLock` (they read the held state and never wait), then
/// `{ own methods }`.
macro_rules! lock_methods {
    ($class:ident, $name:literal, { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            /// The locked resource (the Redis key).
            #[getter]
            fn resource(&self) -> String {
                self.held.current().resource().to_string()
            }
            /// The random token that proves ownership (40 hex characters). Keep it secret: it
            /// is what releases the lock.
            #[getter]
            fn token(&self) -> String {
                self.held.current().token().to_string()
            }
            /// The fencing token (an int) of a client made with ``fencing=True``: above the
            /// token of every lock of this resource returned before this one's acquire began.
            /// Send it with every write to the protected resource, which refuses a token below
            /// the highest it has seen. None without fencing.
            #[getter]
            fn fencing_token(&self) -> Option<u64> {
                self.held.current().fencing_token()
            }
            /// Seconds the keys were last set or renewed for.
            #[getter]
            fn ttl(&self) -> f64 {
                self.held.current().ttl().as_secs_f64()
            }
            /// Seconds of validity when last acquired, extended or renewed (ttl − elapsed −
            /// drift).
            #[getter]
            fn validity(&self) -> f64 {
                self.held.current().validity().as_secs_f64()
            }
            /// Successful extensions so far.
            #[getter]
            fn extensions(&self) -> u32 {
                self.held.current().extensions()
            }
            /// The vote of the last acquire attempt, extension or renewal.
            #[getter]
            fn vote(&self) -> Vote {
                Vote::from(self.held.current().vote())
            }
            /// True when renewed in the background (``lock(..., auto_extend=True)``).
            #[getter]
            fn auto_extend(&self) -> bool {
                self.held.auto_extends()
            }
            /// Seconds of validity left now: 0.0 once expired, lost or released.
            fn remaining(&self) -> f64 {
                self.held.remaining()
            }
            /// True while this holder may act as the owner: not released, not lost, validity
            /// left.
            fn is_valid(&self) -> bool {
                self.held.is_valid()
            }

            fn __repr__(&self) -> String {
                self.held.describe($name)
            }

            $($own)*
        }

        impl Drop for $class {
            fn drop(&mut self) {
                // Nobody can release it any more (its last reference is gone): released here,
                // whatever dropped it. Unless an exception unwinding past it did (Ctrl-C as
                // the acquire returned), the program forgot it: say so, once it is released.
                if !self.held.held_here() {
                    return;
                }
                let forgotten = if crate::boundary::exception_in_flight() {
                    None
                } else {
                    self.held.forgotten($name, Self::DROPPED)
                };
                self.abandon();
                if let Some(message) = forgotten {
                    crate::boundary::warn_unraisable(
                        |py| py.get_type::<pyo3::exceptions::PyResourceWarning>(),
                        &message,
                    );
                }
            }
        }
    };
}

pub(crate) use {client_methods, lock_methods};
