//! Metrics through Python's OpenTelemetry API (`redlock_rs/_metrics.py`), when it is
//! installed: the core hands each measurement to [`PyMetrics`], which batches them and passes
//! a batch to the Python recorder once per finished operation, attaching to the interpreter
//! only then.

use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use redlock_core::{Measurement, MetricsSink};

use crate::boundary::AttachPermit;
use crate::logging::keep_raised;

/// One client's measurements on their way to its Python recorder.
struct PyMetrics {
    recorder: Py<PyAny>,
    pending: Mutex<Vec<Measurement>>,
}

impl MetricsSink for PyMetrics {
    fn record(&self, measurement: Measurement) {
        let batch = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            pending.push(measurement);
            if !measurement.ends_operation() {
                return;
            }
            std::mem::take(&mut *pending)
        };
        let Some(_permit) = AttachPermit::acquire() else {
            return; // the interpreter is exiting
        };
        let _ = Python::try_attach(|py| {
            // Recording while an exception propagates must not swallow it.
            let pending = PyErr::take(py);
            let recorded = batch
                .iter()
                .map(|m| as_tuple(py, m))
                .collect::<PyResult<Vec<_>>>()
                .and_then(|items| self.recorder.call1(py, (items,)));
            if let Err(err) = recorded {
                // Ctrl-C landing here, or a pipeline that raises: the operation's caller gets
                // it once the operation is done, as with an exception from its logging.
                keep_raised(err);
            }
            if let Some(pending) = pending {
                pending.restore(py);
            }
        });
    }
}

/// The tuple `_metrics._Recorder` reads.
fn as_tuple<'py>(py: Python<'py>, m: &Measurement) -> PyResult<Bound<'py, PyTuple>> {
    match *m {
        Measurement::Acquire { outcome, seconds } => {
            ("acquire", outcome, seconds).into_pyobject(py)
        }
        Measurement::Attempt { result } => ("attempt", result).into_pyobject(py),
        Measurement::Extend { seconds } => ("extend", seconds).into_pyobject(py),
        Measurement::Release { seconds } => ("release", seconds).into_pyobject(py),
        Measurement::LocksHeld { delta } => ("held", delta).into_pyobject(py),
        Measurement::Request {
            master,
            operation,
            seconds,
            error_type,
        } => ("request", master, operation, seconds, error_type).into_pyobject(py),
        _ => ("lost",).into_pyobject(py),
    }
}

/// The sink of a new client: `None` when OpenTelemetry is not installed (with a
/// `meter_provider` given, the import error is raised) or, without one, when no global meter
/// provider was set before the client was created.
pub(crate) fn sink(
    py: Python<'_>,
    meter_provider: Option<&Py<PyAny>>,
    masters: &[String],
    fanout: &str,
) -> PyResult<Option<Arc<dyn MetricsSink>>> {
    let redacted: Vec<String> = masters
        .iter()
        .map(|m| redlock_core::redact_url(m))
        .collect();
    let recorder = py.import("redlock_rs._metrics")?.call_method1(
        "recorder",
        (meter_provider.map(|p| p.bind(py)), redacted, fanout),
    )?;
    if recorder.is_none() {
        return Ok(None);
    }
    Ok(Some(Arc::new(PyMetrics {
        recorder: recorder.unbind(),
        pending: Mutex::new(Vec::new()),
    })))
}
