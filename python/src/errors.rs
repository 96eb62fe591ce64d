//! The Python exception tree and the one mapping from core errors (and Rust panics) to it.

use std::any::Any;

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::{create_exception, PyTypeInfo};
use redlock_core::{DurationUnit, Error, ErrorKind, Surface};

use crate::vote::Vote;

create_exception!(
    redlock_rs,
    RedlockError,
    PyException,
    "Base class of every error redlock_rs raises (besides ValueError/TypeError for bad arguments).\n\n\
     `resource` and `vote` (the last vote, per master) are set when the error has them."
);
create_exception!(
    redlock_rs,
    NotAcquired,
    RedlockError,
    "The vote was lost to contention: someone else holds the resource."
);
create_exception!(
    redlock_rs,
    Unavailable,
    RedlockError,
    "Fewer than a quorum of masters answered: Redis is down or unreachable."
);
create_exception!(
    redlock_rs,
    LockLost,
    RedlockError,
    "The lock is no longer held: an extend failed, it expired, or its renewal stopped."
);

/// Registers the exception classes, with class-level defaults for the attributes each raised
/// instance may carry (so `err.vote` is always readable).
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let base = RedlockError::type_object(py);
    base.setattr("resource", py.None())?;
    base.setattr("vote", py.None())?;
    module.add("RedlockError", base)?;
    module.add("NotAcquired", NotAcquired::type_object(py))?;
    module.add("Unavailable", Unavailable::type_object(py))?;
    module.add("LockLost", LockLost::type_object(py))?;
    Ok(())
}

/// Python's names of the core's parameters: the same words (`ttl`, `instance_timeout`...),
/// with durations in seconds.
const PYTHON_WORDS: Surface = Surface {
    names: &[],
    durations: DurationUnit::Seconds,
};

/// THE mapping from a core error to its Python exception, decided by [`ErrorKind`].
pub(crate) fn to_py_err(py: Python<'_>, err: Error) -> PyErr {
    let resource = match &err {
        Error::NotAcquired { resource, .. }
        | Error::Unavailable { resource, .. }
        | Error::LockLost { resource, .. } => Some(resource.clone()),
        _ => None,
    };
    let vote = err.vote().map(Vote::from);
    match err.kind() {
        ErrorKind::NotAcquired => with_details::<NotAcquired>(py, &err, resource, vote),
        ErrorKind::Unavailable => with_details::<Unavailable>(py, &err, resource, vote),
        ErrorKind::LockLost => with_details::<LockLost>(py, &err, resource, vote),
        // The core names the parameter, its value (never a password) and why; Python reads
        // the same names, with durations in seconds.
        ErrorKind::InvalidArgument => match err.for_surface(&PYTHON_WORDS) {
            Error::InvalidArgument(invalid) => PyValueError::new_err(invalid.to_string()),
            other => PyValueError::new_err(other.to_string()),
        },
        _ => with_details::<RedlockError>(py, &err, resource, vote),
    }
}

fn with_details<T: PyTypeInfo>(
    py: Python<'_>,
    err: &Error,
    resource: Option<String>,
    vote: Option<Vote>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let message = err.display_in(PYTHON_WORDS.durations).to_string();
        let exc = T::type_object(py).call1((message,))?;
        exc.setattr("resource", resource)?;
        exc.setattr("vote", vote)?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|failure| failure)
}

/// A Rust panic caught at the boundary, as a `RedlockError` (never pyo3's PanicException).
pub(crate) fn panic_to_py_err(payload: Box<dyn Any + Send>) -> PyErr {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_string());
    RedlockError::new_err(format!(
        "internal error in redlock_rs (a Rust panic was caught; please report it): {message}"
    ))
}

/// The error of a client or lock used in a process forked from the one that created it.
pub(crate) fn forked(created_in: u32) -> PyErr {
    RedlockError::new_err(format!(
        "this redlock_rs object was created in process {created_in} and cannot be used in process {} \
         after os.fork(): its I/O threads do not exist here. Create a new client in the child process.",
        crate::process::process_id()
    ))
}
