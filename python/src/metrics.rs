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
//! That per-value route costs about ten SDK `record()` calls per acquire+release cycle (the
//! OpenTelemetry Python SDK takes no pre-aggregated histogram). A tally made for a
//! `redlock_rs.prometheus.RedlockCollector` ([`Tally::aggregating`]) instead keeps each
//! series' exact bucket counts and sum here ([`Aggregate`]), and the collector reads them
//! when Prometheus scrapes: no Python call per operation at all.
//!
//! A forked child starts new tallies (`_metrics.py`'s fork hook) and never touches its
//! parent's: a recording thread the child does not have may have held their locks.

use std::collections::HashMap;
use std::sync::atomic::Ordering::{self, Relaxed};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyDict, PyList, PyTuple};
use redlock_core::{AttemptResult, Measurement, MetricsSink};

use crate::attach::AttachPermit;
use crate::histograms::{Aggregate, Direct, Series, BUCKETS};
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

/// What the clients of one meter measured and nobody has read yet (counters: since the start).
#[derive(Default)]
struct Counts {
    pending: Vec<(Series, f64)>,
    /// Each series' bucket counts, in an aggregating tally (`pending` stays empty there);
    /// clients record into the common series through their [`Direct`] handles, without
    /// this lock.
    aggregates: HashMap<Series, Arc<Aggregate>>,
    /// `redlock.master.failures` by server and `error.type`.
    failures: HashMap<(usize, &'static str), u64>,
}

/// The counters every operation touches, summed without a lock.
#[derive(Default)]
struct Counters {
    /// `redlock.attempts` by [`AttemptResult::index`].
    attempts: [AtomicU64; AttemptResult::ALL.len()],
    /// `redlock.locks.held`: +1 per lock won, -1 when the core's mark of it ends (its
    /// release, its loss, or its last copy dropped); 0 from the start.
    held: AtomicI64,
    lost: AtomicU64,
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
    counters: Counters,
    /// Where durations go: the SDK's histograms, or the tally's own [`Aggregate`]s.
    route: Route,
    /// Touched only with the GIL, locked with `lock_py_attached` (building a dict may run
    /// Python code that lets another thread in).
    attributes: Mutex<Attributes>,
    /// A batch is due.
    due: AtomicBool,
    /// The process that made it: a forked child makes its own (see `_metrics.py`) and never
    /// touches its parent's, whose locks a thread the child does not have may hold.
    pid: u32,
}

/// How a tally takes durations.
enum Route {
    /// One SDK `record()` per value, in batches: the `record` methods of
    /// `redlock.acquire.duration`, `redlock.extend.duration`, `redlock.release.duration` and
    /// `db.client.operation.duration`, and the context values are recorded in (an empty one:
    /// see `_metrics.py`).
    PerValue {
        histograms: [Py<PyAny>; 4],
        context: Py<PyAny>,
    },
    /// Bucket counts kept in `Counts::aggregates`, read at collection.
    Aggregated,
}

impl Shared {
    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the pending values (with the GIL). On an exception (Ctrl-C in the SDK's code),
    /// the values not recorded yet are put back and the exception returned.
    fn record_pending(&self, py: Python<'_>) -> PyResult<()> {
        self.due.store(false, Ordering::SeqCst);
        let Route::PerValue {
            histograms,
            context,
        } = &self.route
        else {
            return Ok(());
        };
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
            let histogram = &histograms[series.histogram()];
            if let Err(err) = histogram.call1(py, (*seconds, attributes, context)) {
                self.put_back(batch[done + 1..].to_vec());
                return Err(err);
            }
        }
        Ok(())
    }

    fn put_back(&self, values: Vec<(Series, f64)>) {
        self.counts().pending.extend(values);
    }

    /// The bucket counts of `series` in an aggregating tally, made on first use.
    pub(crate) fn aggregate(&self, series: Series) -> Arc<Aggregate> {
        self.counts().aggregates.entry(series).or_default().clone()
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
        Tally::with_route(Route::PerValue {
            histograms: [acquire, extend, release, request],
            context,
        })
    }

    /// A tally that keeps each series' exact bucket counts itself (read with `histograms()`).
    #[staticmethod]
    fn aggregating() -> Self {
        Tally::with_route(Route::Aggregated)
    }

    /// `[(histogram, attributes, bucket counts, sum)]` of an aggregating tally since the
    /// start: `histogram` 0 to 3 (acquire, extend, release, request duration), the counts per
    /// bucket (not cumulative; the last above every bound).
    #[allow(clippy::type_complexity)]
    fn histograms(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(usize, Py<PyDict>, [u64; BUCKETS], f64)>> {
        let aggregates: Vec<(Series, Arc<Aggregate>)> = self
            .shared
            .counts()
            .aggregates
            .iter()
            .map(|(series, aggregate)| (*series, aggregate.clone()))
            .collect();
        let mut attributes = self
            .shared
            .attributes
            .lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner);
        aggregates
            .into_iter()
            .map(|(series, aggregate)| {
                let (counts, sum) = aggregate.snapshot();
                // A client's handles (every acquire outcome, extend, release, each master's
                // answered requests) exist from its start and are served at 0, as the Rust
                // core's bound instruments are: `increase()` then sees the first value.
                attributes
                    .of(py, series)
                    .map(|of| (series.histogram(), of, counts, sum))
            })
            .collect()
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

    /// `[(redlock.attempt.result, attempts)]` since the start, every result (0 until seen).
    fn attempts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let counts = self
            .shared
            .counters
            .attempts
            .each_ref()
            .map(|n| n.load(Relaxed));
        let seen = AttemptResult::ALL
            .iter()
            .zip(counts)
            .map(|(result, n)| (result.as_str(), n));
        PyList::new(py, seen)
    }

    /// Histogram values waiting to be recorded.
    fn pending(&self) -> usize {
        self.shared.counts().pending.len()
    }

    /// Locks held now: won, and neither released, found lost nor dropped (0 from the start).
    fn locks_held(&self) -> i64 {
        self.shared.counters.held.load(Relaxed)
    }

    /// Held locks found lost since the start.
    fn locks_lost(&self) -> u64 {
        self.shared.counters.lost.load(Relaxed)
    }

    /// `[(server id, error.type, failures)]` since the start: every registered server with
    /// every `error.type` ([`redlock_core::ERROR_TYPES`]), 0 until it fails so.
    fn failures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let servers = self
            .shared
            .attributes
            .lock_py_attached(py)
            .unwrap_or_else(PoisonError::into_inner)
            .servers
            .len();
        let counted = self.shared.counts().failures.clone();
        let mut failures: Vec<(usize, &'static str, u64)> = (0..servers)
            .flat_map(|server| {
                let counted = &counted;
                redlock_core::ERROR_TYPES.iter().map(move |&error| {
                    (
                        server,
                        error,
                        counted.get(&(server, error)).copied().unwrap_or(0),
                    )
                })
            })
            .collect();
        // A kind not in the list (none today) is still served.
        failures.extend(
            counted
                .iter()
                .filter(|((_, error), _)| !redlock_core::ERROR_TYPES.contains(error))
                .map(|(&(server, error), &n)| (server, error, n)),
        );
        let items = failures
            .into_iter()
            .map(|item| item.into_pyobject(py))
            .collect::<PyResult<Vec<Bound<'py, PyTuple>>>>()?;
        PyList::new(py, items)
    }
}

impl Tally {
    fn with_route(route: Route) -> Self {
        let shared = Shared {
            counts: Mutex::default(),
            counters: Counters::default(),
            route,
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
    /// An aggregating tally's series of this client, recorded into without a lock.
    direct: Option<Direct>,
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
        let counters = &self.tally.counters;
        match measurement {
            Measurement::Attempt { result } => {
                counters.attempts[result.index()].fetch_add(1, Relaxed);
                return;
            }
            Measurement::LocksHeld { delta } => {
                counters.held.fetch_add(delta, Relaxed);
                return;
            }
            Measurement::LockLost => {
                counters.lost.fetch_add(1, Relaxed);
                return;
            }
            _ => {}
        }
        if self
            .direct
            .as_ref()
            .is_some_and(|direct| direct.record(measurement))
        {
            return;
        }
        let (series, seconds) = match measurement {
            Measurement::Acquire { outcome, seconds } => {
                let fanout = self.fanout;
                (Series::Acquire { outcome, fanout }, seconds)
            }
            Measurement::Extend { seconds } => (Series::Extend, seconds),
            Measurement::Release { seconds } => (Series::Release, seconds),
            Measurement::Request {
                master,
                operation,
                seconds,
                error_type,
            } => {
                let server = self.servers.get(master).copied().unwrap_or(usize::MAX);
                if let Some(error) = error_type {
                    *self
                        .tally
                        .counts()
                        .failures
                        .entry((server, error))
                        .or_default() += 1;
                }
                let series = Series::Request {
                    server,
                    operation,
                    error_type,
                };
                (series, seconds)
            }
            _ => return,
        };
        if matches!(self.tally.route, Route::Aggregated) {
            self.tally.aggregate(series).record(seconds);
            return;
        }
        let pending = {
            let mut counts = self.tally.counts();
            counts.pending.push((series, seconds));
            counts.pending.len()
        };
        if pending >= BATCH {
            self.batch_due(pending);
        }
    }
}

/// The sink of a new client: its `collector`'s aggregating tally (a
/// `redlock_rs.prometheus.RedlockCollector`, checked by `_metrics.py`) and its OpenTelemetry
/// meter's tally, each when there is one. OpenTelemetry's is `None` when it is not installed
/// (with a `meter_provider` given, the import error is raised) or, without one, when no global
/// meter provider was set before the client was created, or when a `collector` is given.
pub(crate) fn sink(
    py: Python<'_>,
    meter_provider: Option<&Py<PyAny>>,
    collector: Option<&Py<PyAny>>,
    masters: &[String],
    fanout: &'static str,
) -> PyResult<Option<Arc<dyn MetricsSink>>> {
    let redacted: Vec<String> = masters
        .iter()
        .map(|m| redlock_core::redact_url(m))
        .collect();
    let module = py.import("redlock_rs._metrics")?;
    let mut routes = Vec::new();
    for recorder in [
        module.call_method1(
            "collector_recorder",
            (collector.map(|c| c.bind(py)), &redacted),
        )?,
        module.call_method1(
            "recorder",
            (
                meter_provider.map(|p| p.bind(py)),
                &redacted,
                collector.is_some(),
            ),
        )?,
    ] {
        if recorder.is_none() {
            continue;
        }
        let (tally, servers): (Bound<'_, Tally>, Vec<usize>) = recorder.extract()?;
        let tally = tally.get().shared.clone();
        let direct = matches!(tally.route, Route::Aggregated)
            .then(|| Direct::new(|series| tally.aggregate(series), &servers, fanout));
        routes.push(PyMetrics {
            tally,
            servers,
            fanout,
            direct,
        });
    }
    Ok(match routes.len() {
        0 => None,
        1 => routes
            .pop()
            .map(|route| Arc::new(route) as Arc<dyn MetricsSink>),
        _ => Some(Arc::new(Routes(routes))),
    })
}

/// A client recording into both a collector and an OpenTelemetry meter.
struct Routes(Vec<PyMetrics>);

impl MetricsSink for Routes {
    fn record(&self, measurement: Measurement) {
        for route in &self.0 {
            route.record(measurement);
        }
    }
}
