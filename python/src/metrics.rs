//! Metrics through Python's OpenTelemetry API (`redlock_rs/_metrics.py`), when it is installed.
//!
//! The core hands each measurement to a client's [`PyMetrics`] on whatever thread made it
//! (often a tokio worker); it never attaches to the interpreter for it. Measurements go into
//! the [`Tally`] of the client's meter (one per meter, shared by the clients recording into
//! it), without the GIL:
//!
//! - counters (`redlock.attempts`, `redlock.locks.held`, `redlock.locks.lost`,
//!   `redlock.master.failures`) are summed there, and `_metrics.py`'s observable instruments
//!   read the sums when a reader collects: no SDK call per operation;
//! - histogram values (the durations) wait there, each with its attribute set, until a thread
//!   that holds the GIL anyway records them: a caller returning from an operation once a batch
//!   of [`BATCH`] values is due (see [`flush_due`]), and every collection (the observable
//!   instruments' callbacks flush first), so background renewals and lost locks reach the
//!   reader without a further operation. Only past [`HARD_CAP`] values (nobody calls or
//!   collects) does the recording thread attach to record them itself, so memory stays bounded.
//!
//! Every value is recorded once, with its exact attributes: nothing is sampled or dropped.
//!
//! A forked child starts new tallies (`_metrics.py`'s fork hook) and never touches its
//! parent's: a recording thread the child does not have may have held their locks.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyList, PyTuple};
use redlock_core::{AcquireOutcome, AttemptResult, Measurement, MetricsSink};

use crate::attach::AttachPermit;
use crate::logging::keep_raised;
use crate::process::process_id;

/// Pending histogram values at which the next caller returning from an operation records them.
const BATCH: usize = 128;
/// Pending values at which the thread making a measurement records them itself (attaching).
const HARD_CAP: usize = 1 << 16;

/// Whether a tally may have a batch due (one atomic load per operation when metrics are off).
static DUE: AtomicBool = AtomicBool::new(false);
/// Every tally, for [`flush_due`]. Locked only with the GIL and never across Python code, so
/// never held by another thread when the interpreter forks (the recording threads, which do
/// not hold the GIL, only set atomics).
static TALLIES: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// Which histogram a value goes to, with its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Series {
    Acquire {
        outcome: AcquireOutcome,
        fanout: &'static str,
    },
    Extend,
    Release,
    Request {
        /// The master's server attributes (`Tally::add_server`).
        server: usize,
        operation: &'static str,
        error_type: Option<&'static str>,
    },
}

impl Series {
    /// Position of its histogram in `Tally::histograms`.
    fn histogram(self) -> usize {
        match self {
            Series::Acquire { .. } => 0,
            Series::Extend => 1,
            Series::Release => 2,
            Series::Request { .. } => 3,
        }
    }
}

/// What the clients of one meter measured and nobody has read yet (counters: since the start).
#[derive(Default)]
struct Counts {
    pending: Vec<(Series, f64)>,
    /// `redlock.attempts` by [`AttemptResult::index`].
    attempts: [u64; AttemptResult::ALL.len()],
    /// `redlock.locks.held`; `None` until a lock was acquired.
    held: Option<i64>,
    lost: u64,
    /// `redlock.master.failures` by server and `error.type`.
    failures: HashMap<(usize, &'static str), u64>,
}

/// The attribute sets of the pending values, built once each (with the GIL).
#[derive(Default)]
struct Attributes {
    /// `server.address` (and `server.port`) of each server, by id.
    servers: Vec<Py<PyDict>>,
    built: HashMap<Series, Py<PyDict>>,
}

/// One meter's measurements between the clients and its instruments (see the module's doc).
#[pyclass(frozen, module = "redlock_rs._redlock_rs", name = "_Tally")]
pub(crate) struct Tally {
    shared: Arc<Shared>,
}

/// What a [`Tally`] and its clients' sinks share.
struct Shared {
    counts: Mutex<Counts>,
    /// The `record` methods of `redlock.acquire.duration`, `redlock.extend.duration`,
    /// `redlock.release.duration` and `db.client.operation.duration`.
    histograms: [Py<PyAny>; 4],
    /// The context values are recorded in (an empty one: see `_metrics.py`).
    context: Py<PyAny>,
    /// Touched only with the GIL, locked with `lock_py_attached` (building a dict may run
    /// Python code that lets another thread in).
    attributes: Mutex<Attributes>,
    /// A batch is due.
    due: AtomicBool,
    /// The process that made it: a forked child makes its own (see `_metrics.py`) and never
    /// touches its parent's, whose locks a thread the child does not have may hold.
    pid: u32,
}

impl Shared {
    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the pending values (with the GIL). On an exception (Ctrl-C in the SDK's code),
    /// the values not recorded yet are put back and the exception returned.
    fn record_pending(&self, py: Python<'_>) -> PyResult<()> {
        self.due.store(false, Ordering::SeqCst);
        let batch = std::mem::take(&mut self.counts().pending);
        if batch.is_empty() {
            return Ok(());
        }
        let attributes = {
            let mut attributes = self
                .attributes
                .lock_py_attached(py)
                .unwrap_or_else(PoisonError::into_inner);
            batch
                .iter()
                .map(|(series, _)| attributes.of(py, *series))
                .collect::<PyResult<Vec<_>>>()
        };
        let attributes = match attributes {
            Ok(attributes) => attributes,
            Err(err) => {
                self.put_back(batch);
                return Err(err);
            }
        };
        for (done, ((series, seconds), attributes)) in batch.iter().zip(attributes).enumerate() {
            let histogram = &self.histograms[series.histogram()];
            if let Err(err) = histogram.call1(py, (*seconds, attributes, &self.context)) {
                self.put_back(batch[done + 1..].to_vec());
                return Err(err);
            }
        }
        Ok(())
    }

    fn put_back(&self, values: Vec<(Series, f64)>) {
        self.counts().pending.extend(values);
    }
}

impl Attributes {
    /// The attribute dict of `series`, built on first use.
    fn of(&mut self, py: Python<'_>, series: Series) -> PyResult<Py<PyDict>> {
        if let Some(built) = self.built.get(&series) {
            return Ok(built.clone_ref(py));
        }
        let dict = PyDict::new(py);
        match series {
            Series::Acquire { outcome, fanout } => {
                dict.set_item("redlock.outcome", outcome.as_str())?;
                dict.set_item("redlock.fanout", fanout)?;
            }
            Series::Extend | Series::Release => {}
            Series::Request {
                server,
                operation,
                error_type,
            } => {
                dict.set_item("db.system.name", "redis")?;
                dict.set_item("db.operation.name", operation)?;
                if let Some(server) = self.servers.get(server) {
                    dict.update(server.bind(py).as_mapping())?;
                }
                if let Some(error_type) = error_type {
                    dict.set_item("error.type", error_type)?;
                }
            }
        }
        let dict = dict.unbind();
        self.built.insert(series, dict.clone_ref(py));
        Ok(dict)
    }
}

#[pymethods]
impl Tally {
    /// `_Tally(acquire, extend, release, request, context)`: the four histograms' `record`
    /// methods, and the context to record in.
    #[new]
    fn new(
        acquire: Py<PyAny>,
        extend: Py<PyAny>,
        release: Py<PyAny>,
        request: Py<PyAny>,
        context: Py<PyAny>,
    ) -> Self {
        let shared = Shared {
            counts: Mutex::default(),
            histograms: [acquire, extend, release, request],
            context,
            attributes: Mutex::default(),
            due: AtomicBool::new(false),
            pid: process_id(),
        };
        let shared = Arc::new(shared);
        let mut tallies = TALLIES.lock().unwrap_or_else(PoisonError::into_inner);
        tallies.retain(|tally| tally.strong_count() > 0);
        tallies.push(Arc::downgrade(&shared));
        Tally { shared }
    }

    /// Registers a server's attributes (`server.address`, `server.port`); returns its id.
    fn add_server(&self, py: Python<'_>, attributes: Bound<'_, PyDict>) -> usize {
        let mut known = self
            .shared
            .attributes
            .lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner);
        known.servers.push(attributes.unbind());
        known.servers.len() - 1
    }

    /// Records every pending histogram value (the collection's callbacks call it first).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.shared.record_pending(py)
    }

    /// `[(redlock.attempt.result, attempts)]` since the start, the results seen so far.
    fn attempts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let counts = self.shared.counts().attempts;
        let seen = AttemptResult::ALL
            .iter()
            .zip(counts)
            .filter(|(_, n)| *n > 0)
            .map(|(result, n)| (result.as_str(), n));
        PyList::new(py, seen)
    }

    /// Histogram values waiting to be recorded.
    fn pending(&self) -> usize {
        self.shared.counts().pending.len()
    }

    /// Locks held now (acquired, not released); `None` before the first acquire.
    fn locks_held(&self) -> Option<i64> {
        self.shared.counts().held
    }

    /// Held locks found lost since the start.
    fn locks_lost(&self) -> u64 {
        self.shared.counts().lost
    }

    /// `[(server id, error.type, failures)]` since the start.
    fn failures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let failures: Vec<_> = self
            .shared
            .counts()
            .failures
            .iter()
            .map(|(&(server, error), &n)| (server, error, n))
            .collect();
        let items = failures
            .into_iter()
            .map(|item| item.into_pyobject(py))
            .collect::<PyResult<Vec<Bound<'py, PyTuple>>>>()?;
        PyList::new(py, items)
    }
}

/// Records the batches due (see the module's doc), on a thread that holds the GIL anyway: a
/// caller returning from an operation. An exception (Ctrl-C landing in the SDK's code) is kept
/// for the operation to raise, as one from its logging is.
pub(crate) fn flush_due(py: Python<'_>) {
    if !DUE.load(Ordering::Relaxed) {
        return;
    }
    DUE.store(false, Ordering::SeqCst);
    let pid = process_id();
    // Collected first: a tally dropped here may run Python code, never under the lock.
    let tallies: Vec<Arc<Shared>> = TALLIES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for tally in tallies {
        if tally.pid == pid && tally.due.load(Ordering::SeqCst) {
            if let Err(err) = tally.record_pending(py) {
                keep_raised(err);
            }
        }
    }
}

/// One client's receiver of the core's measurements.
struct PyMetrics {
    tally: Arc<Shared>,
    /// Each master's server id in the tally, in configured order.
    servers: Vec<usize>,
    fanout: &'static str,
}

impl PyMetrics {
    /// A batch is due: flag it for the next caller, or past the hard cap record it now.
    fn batch_due(&self, pending: usize) {
        let tally = &self.tally;
        if pending >= HARD_CAP {
            let Some(_permit) = AttachPermit::acquire() else {
                return; // the interpreter is exiting
            };
            let _ = Python::try_attach(|py| {
                // Recording while an exception propagates must not swallow it.
                let propagating = PyErr::take(py);
                if let Err(err) = tally.record_pending(py) {
                    // No operation of this thread's to raise it: kept here, it would silence
                    // this thread's logging (see `logging.rs`).
                    let context = pyo3::types::PyString::new(py, "redlock_rs metrics");
                    err.write_unraisable(py, Some(&context));
                }
                if let Some(propagating) = propagating {
                    propagating.restore(py);
                }
            });
            return;
        }
        tally.due.store(true, Ordering::SeqCst);
        DUE.store(true, Ordering::SeqCst);
    }
}

impl MetricsSink for PyMetrics {
    fn record(&self, measurement: Measurement) {
        let pending = {
            let mut counts = self.tally.counts();
            match measurement {
                Measurement::Acquire { outcome, seconds } => {
                    let fanout = self.fanout;
                    pend(&mut counts, Series::Acquire { outcome, fanout }, seconds)
                }
                Measurement::Extend { seconds } => pend(&mut counts, Series::Extend, seconds),
                Measurement::Release { seconds } => pend(&mut counts, Series::Release, seconds),
                Measurement::Request {
                    master,
                    operation,
                    seconds,
                    error_type,
                } => {
                    let server = self.servers.get(master).copied().unwrap_or(usize::MAX);
                    if let Some(error) = error_type {
                        *counts.failures.entry((server, error)).or_default() += 1;
                    }
                    let series = Series::Request {
                        server,
                        operation,
                        error_type,
                    };
                    pend(&mut counts, series, seconds)
                }
                Measurement::Attempt { result } => {
                    counts.attempts[result.index()] += 1;
                    0
                }
                Measurement::LocksHeld { delta } => {
                    *counts.held.get_or_insert(0) += delta;
                    0
                }
                _ => {
                    counts.lost += 1;
                    0
                }
            }
        };
        if pending >= BATCH {
            self.batch_due(pending);
        }
    }
}

/// Adds a histogram value; returns how many are pending.
fn pend(counts: &mut Counts, series: Series, seconds: f64) -> usize {
    counts.pending.push((series, seconds));
    counts.pending.len()
}

/// The sink of a new client: `None` when OpenTelemetry is not installed (with a
/// `meter_provider` given, the import error is raised) or, without one, when no global meter
/// provider was set before the client was created.
pub(crate) fn sink(
    py: Python<'_>,
    meter_provider: Option<&Py<PyAny>>,
    masters: &[String],
    fanout: &'static str,
) -> PyResult<Option<Arc<dyn MetricsSink>>> {
    let redacted: Vec<String> = masters
        .iter()
        .map(|m| redlock_core::redact_url(m))
        .collect();
    let recorder = py
        .import("redlock_rs._metrics")?
        .call_method1("recorder", (meter_provider.map(|p| p.bind(py)), redacted))?;
    if recorder.is_none() {
        return Ok(None);
    }
    let (tally, servers): (Bound<'_, Tally>, Vec<usize>) = recorder.extract()?;
    Ok(Some(Arc::new(PyMetrics {
        tally: tally.get().shared.clone(),
        servers,
        fanout,
    })))
}
