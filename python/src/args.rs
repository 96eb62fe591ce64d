//! Python arguments to core values. Each argument has its own extractor (used with
//! `#[pyo3(from_py_with = ...)]`), so a wrong type or an out-of-range value raises a
//! `TypeError`/`ValueError` whose message starts with the argument's name — also for ints too
//! large for a C long or a float (`ttl=10**400`, `retry_count=2**64`), which pyo3's own
//! conversions would report as an `OverflowError` naming nothing.

use std::time::Duration;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use redlock_core::{duration_from_secs, FanOut, Redlock, RedlockBuilder, Retry};

use crate::errors::to_py_err;

/// Digits of an int shown in a message; longer ones are described by their length.
const MAX_ECHOED_DIGITS: usize = 40;

/// The Python type name of `obj`, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".to_string(), |n| n.to_string())
}

/// `str(obj)` for a message, cut down when it is a huge int.
fn echo_int(obj: &Bound<'_, PyAny>) -> String {
    let text = obj
        .str()
        .map_or_else(|_| "?".to_string(), |s| s.to_string());
    let digits = text.trim_start_matches('-').len();
    if digits > MAX_ECHOED_DIGITS {
        format!("an int of {digits} digits")
    } else {
        text
    }
}

/// A number of seconds (int or float) as a `Duration`. Only the Python type is checked here:
/// the core converts (refusing negative, NaN and huge values) and checks the range (a zero
/// `ttl` or `instance_timeout`), naming `name` and the value in seconds.
fn seconds(obj: &Bound<'_, PyAny>, name: &'static str) -> PyResult<Duration> {
    let value = match obj.extract::<f64>() {
        Ok(value) => value,
        Err(err) if err.is_instance_of::<PyOverflowError>(obj.py()) => {
            return Err(PyValueError::new_err(format!(
                "{name} {}: too large for a float",
                echo_int(obj)
            )))
        }
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a number of seconds (int or float), got {}",
                type_name(obj)
            )))
        }
    };
    duration_from_secs(name, value).map_err(|e| to_py_err(obj.py(), e))
}

/// An int in `[min, max]`.
fn int_in(obj: &Bound<'_, PyAny>, name: &str, min: u64, max: u64) -> PyResult<u64> {
    let range = || {
        if max == u64::MAX {
            format!("an integer >= {min}")
        } else {
            format!("an integer in [{min}, {max}]")
        }
    };
    // Only real ints (and bools, which are ints): 2.0 is refused like Python's range() does.
    if obj.is_instance_of::<pyo3::types::PyFloat>() || obj.cast::<pyo3::types::PyInt>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be {}, got {}",
            range(),
            type_name(obj)
        )));
    }
    match obj.extract::<i128>() {
        Ok(value) if value >= i128::from(min) && value <= i128::from(max) => {
            Ok(u64::try_from(value).expect("checked against a u64 range"))
        }
        _ => Err(PyValueError::new_err(format!(
            "{name} must be {}, got {}",
            range(),
            echo_int(obj)
        ))),
    }
}

fn count(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u32> {
    int_in(obj, name, 0, u64::from(u32::MAX)).map(|v| v as u32)
}

/// `masters`: a list (any iterable but a string) of URL strings. Values are never echoed:
/// a URL may hold a password.
pub(crate) fn masters(obj: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "masters must be a list of master URLs, got a single string: write [url]",
        ));
    }
    let items = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "masters must be a list of master URLs (str), got {}",
            type_name(obj)
        ))
    })?;
    items
        .enumerate()
        .map(|(index, item)| {
            let item = item?;
            item.extract::<String>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "masters[{index}] must be a URL string, got {}",
                    type_name(&item)
                ))
            })
        })
        .collect()
}

/// `resource`: a str that UTF-8 can encode, non-empty and at most
/// `redlock_core::MAX_RESOURCE_BYTES` bytes: refused here, before anything is sent.
pub(crate) fn resource(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let Ok(text) = obj.cast::<PyString>() else {
        return Err(PyTypeError::new_err(format!(
            "resource must be a str (the Redis key), got {}",
            type_name(obj)
        )));
    };
    let resource = text.to_cow().map_err(|_| {
        // Only a lone surrogate (e.g. from os.fsdecode of undecodable bytes) has no UTF-8.
        let at = text
            .call_method1("encode", ("utf-8",))
            .err()
            .and_then(|err| err.value(obj.py()).getattr("start").ok())
            .and_then(|start| start.extract::<usize>().ok());
        let at = at
            .map(|i| format!(" (a lone surrogate at index {i})"))
            .unwrap_or_default();
        PyValueError::new_err(format!(
            "resource is not UTF-8 encodable{at}: the Redis key is the str's UTF-8 bytes"
        ))
    })?;
    redlock_core::check_resource(&resource).map_err(|e| to_py_err(obj.py(), e))?;
    Ok(resource.into_owned())
}

/// `fanout`: "concurrent" or "sequential" (the core's parser names a bad value).
pub(crate) fn fanout(obj: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    let text = obj.extract::<String>().map_err(|_| {
        PyTypeError::new_err(format!(
            "fanout must be 'concurrent' or 'sequential', got {}",
            type_name(obj)
        ))
    })?;
    let fanout: FanOut = text.parse().map_err(|e| to_py_err(obj.py(), e))?;
    Ok(fanout.as_str())
}

/// `auto_extend`: a bool (not any truthy value: `auto_extend="no"` would renew).
pub(crate) fn auto_extend(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.extract::<bool>().map_err(|_| {
        PyTypeError::new_err(format!(
            "auto_extend must be a bool, got {}",
            type_name(obj)
        ))
    })
}

pub(crate) fn ttl(obj: &Bound<'_, PyAny>) -> PyResult<Duration> {
    seconds(obj, "ttl")
}
pub(crate) fn optional_ttl(obj: &Bound<'_, PyAny>) -> PyResult<Option<Duration>> {
    if obj.is_none() {
        return Ok(None);
    }
    ttl(obj).map(Some)
}
/// `timeout` of an acquire: `None` → `1 + retry_count` attempts; seconds → as many attempts
/// as start within them (at least one), by the core's one deadline conversion.
pub(crate) fn timeout(obj: &Bound<'_, PyAny>) -> PyResult<Retry> {
    if obj.is_none() {
        return Ok(Retry::Configured);
    }
    seconds(obj, "timeout").map(Retry::within)
}
pub(crate) fn wait_timeout(obj: &Bound<'_, PyAny>) -> PyResult<Duration> {
    seconds(obj, "timeout")
}
pub(crate) fn retry_count(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    count(obj, "retry_count")
}
pub(crate) fn max_extensions(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    count(obj, "max_extensions")
}
pub(crate) fn retry_delay(obj: &Bound<'_, PyAny>) -> PyResult<Duration> {
    seconds(obj, "retry_delay")
}
pub(crate) fn instance_timeout(obj: &Bound<'_, PyAny>) -> PyResult<Duration> {
    seconds(obj, "instance_timeout")
}
pub(crate) fn drift_factor(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    // Any float here: the core checks the range [0, 1) and names the value.
    obj.extract::<f64>().map_err(|err| {
        if err.is_instance_of::<PyOverflowError>(obj.py()) {
            PyValueError::new_err(format!(
                "drift_factor {}: too large for a float",
                echo_int(obj)
            ))
        } else {
            PyTypeError::new_err(format!(
                "drift_factor must be a float in [0, 1), got {}",
                type_name(obj)
            ))
        }
    })
}
/// `local_handoff`: a bool, and only a bool (a truthy 1 or "yes" is refused, naming it).
pub(crate) fn local_handoff(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.cast::<pyo3::types::PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "local_handoff must be a bool (True or False), got {}",
                type_name(obj)
            ))
        })
}
/// `fencing`: a bool, and only a bool.
/// `trace_resource_names`: a bool.
pub(crate) fn trace_resource_names(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.cast::<pyo3::types::PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "trace_resource_names must be a bool (True or False), got {}",
                type_name(obj)
            ))
        })
}

pub(crate) fn fencing(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    obj.cast::<pyo3::types::PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "fencing must be a bool (True or False), got {}",
                type_name(obj)
            ))
        })
}
/// `quorum`: None or a non-negative int (the core checks the range [N/2+1, N]).
pub(crate) fn quorum(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    if obj.is_none() {
        return Ok(None);
    }
    let max = u64::try_from(usize::MAX).unwrap_or(u64::MAX);
    int_in(obj, "quorum", 0, max).map(|q| Some(q as usize))
}

/// The constructor arguments shared by `Redlock` and `AsyncRedlock` (each converted by its
/// extractor; the core checks the values).
#[derive(Debug)]
pub(crate) struct ClientArgs {
    pub masters: Vec<String>,
    pub retry_count: u32,
    pub retry_delay: Duration,
    pub drift_factor: f64,
    pub instance_timeout: Duration,
    pub fanout: &'static str,
    pub quorum: Option<usize>,
    pub max_extensions: u32,
    pub local_handoff: bool,
    pub fencing: bool,
    /// Resource names in log records (and the core's spans): off unless opted in.
    pub trace_resource_names: bool,
    /// An OpenTelemetry `MeterProvider`; `None`: the global one (when installed).
    pub meter_provider: Option<Py<PyAny>>,
    /// A `redlock_rs.prometheus.RedlockCollector` to aggregate the metrics for.
    pub collector: Option<Py<PyAny>>,
}

impl ClientArgs {
    /// The core builder; the core checks the values (URLs, quorum range, drift factor, zero
    /// timeout) and names the bad one.
    pub(crate) fn builder(self, py: Python<'_>) -> PyResult<RedlockBuilder> {
        let fanout: FanOut = self.fanout.parse().map_err(|e| to_py_err(py, e))?;
        let sink = crate::metrics::sink(
            py,
            self.meter_provider.as_ref(),
            self.collector.as_ref(),
            &self.masters,
            self.fanout,
        )?;
        let mut builder = Redlock::builder(self.masters)
            .fanout(fanout)
            .retry_count(self.retry_count)
            .retry_delay(self.retry_delay)
            .drift_factor(self.drift_factor)
            .instance_timeout(self.instance_timeout)
            .max_extensions(self.max_extensions)
            .local_handoff(self.local_handoff)
            .fencing(self.fencing)
            .trace_resource_names(self.trace_resource_names);
        if let Some(quorum) = self.quorum {
            builder = builder.quorum(quorum);
        }
        if let Some(sink) = sink {
            builder = builder.metrics_sink(sink);
        }
        Ok(builder)
    }
}

// The defaults Python shows in the signatures (literals, so that `help()` and `inspect` show
// them: see `client_methods!`) are the core's: checked here at compile time, and by
// tests/test_conventions.py against the module's DEFAULT_* constants.
const _: () = {
    assert!(redlock_core::DEFAULT_RETRY_COUNT == 3);
    assert!(redlock_core::DEFAULT_RETRY_DELAY.as_millis() == 200);
    assert!(redlock_core::DEFAULT_DRIFT_FACTOR == 0.01);
    assert!(redlock_core::DEFAULT_INSTANCE_TIMEOUT.as_millis() == 50);
    assert!(redlock_core::DEFAULT_MAX_EXTENSIONS == 1000);
    assert!(redlock_core::DEFAULT_TTL.as_millis() == 10_000);
    assert!(matches!(redlock_core::DEFAULT_FANOUT, FanOut::Concurrent));
};

/// The core's defaults in Python's units, as module constants (`redlock_rs.DEFAULT_TTL`...).
pub(crate) fn add_defaults(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("DEFAULT_TTL", redlock_core::DEFAULT_TTL.as_secs_f64())?;
    module.add("DEFAULT_RETRY_COUNT", redlock_core::DEFAULT_RETRY_COUNT)?;
    module.add(
        "DEFAULT_RETRY_DELAY",
        redlock_core::DEFAULT_RETRY_DELAY.as_secs_f64(),
    )?;
    module.add("DEFAULT_DRIFT_FACTOR", redlock_core::DEFAULT_DRIFT_FACTOR)?;
    module.add(
        "DEFAULT_INSTANCE_TIMEOUT",
        redlock_core::DEFAULT_INSTANCE_TIMEOUT.as_secs_f64(),
    )?;
    module.add("DEFAULT_FANOUT", redlock_core::DEFAULT_FANOUT.as_str())?;
    module.add(
        "DEFAULT_MAX_EXTENSIONS",
        redlock_core::DEFAULT_MAX_EXTENSIONS,
    )?;
    // The largest fencing token ever issued (2**53 - 1): what a resource's check may refuse
    // above, and what fits every consumer's exact integers.
    module.add("MAX_FENCING_TOKEN", redlock_core::MAX_FENCING_TOKEN)?;
    Ok(())
}
