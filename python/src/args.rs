//! Python arguments to core values. Each argument has its own extractor (used with
//! `#[pyo3(from_py_with = ...)]`), so a wrong type or an out-of-range value raises a
//! `TypeError`/`ValueError` whose message starts with the argument's name — also for ints too
//! large for a C long or a float (`ttl=10**400`, `retry_count=2**64`), which pyo3's own
//! conversions would report as an `OverflowError` naming nothing.

use std::time::{Duration, Instant};

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use redlock_core::{FanOut, Redlock, RedlockBuilder, Retry};

use crate::errors::to_py_err;

/// Whether zero is an acceptable number of seconds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Zero {
    Allowed,
    Refused,
}

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

/// A number of seconds (int or float) checked to be finite and positive (or zero).
fn seconds(obj: &Bound<'_, PyAny>, name: &str, zero: Zero) -> PyResult<f64> {
    let (ok, bound): (fn(f64) -> bool, _) = match zero {
        Zero::Allowed => (|v| v >= 0.0, ">= 0"),
        Zero::Refused => (|v| v > 0.0, "> 0"),
    };
    let value = match obj.extract::<f64>() {
        Ok(value) => value,
        Err(err) if err.is_instance_of::<PyOverflowError>(obj.py()) => {
            return Err(PyValueError::new_err(format!(
                "{name} must be a finite number of seconds {bound}, got {} (too large for a float)",
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
    if !value.is_finite() || !ok(value) {
        return Err(PyValueError::new_err(format!(
            "{name} must be a finite number of seconds {bound}, got {value}"
        )));
    }
    Ok(value)
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

/// `resource`: a str (the core refuses an empty one).
pub(crate) fn resource(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    obj.extract::<String>().map_err(|_| {
        PyTypeError::new_err(format!(
            "resource must be a str (the Redis key), got {}",
            type_name(obj)
        ))
    })
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

pub(crate) fn ttl(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    seconds(obj, "ttl", Zero::Refused)
}
pub(crate) fn optional_ttl(obj: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if obj.is_none() {
        return Ok(None);
    }
    ttl(obj).map(Some)
}
pub(crate) fn timeout(obj: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if obj.is_none() {
        return Ok(None);
    }
    seconds(obj, "timeout", Zero::Allowed).map(Some)
}
pub(crate) fn wait_timeout(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    seconds(obj, "timeout", Zero::Allowed)
}
pub(crate) fn retry_count(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    count(obj, "retry_count")
}
pub(crate) fn max_extensions(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    count(obj, "max_extensions")
}
pub(crate) fn retry_delay(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    seconds(obj, "retry_delay", Zero::Allowed)
}
pub(crate) fn instance_timeout(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    seconds(obj, "instance_timeout", Zero::Refused)
}
pub(crate) fn drift_factor(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    // Any float here: the core checks the range [0, 1) and names the value.
    obj.extract::<f64>().map_err(|err| {
        if err.is_instance_of::<PyOverflowError>(obj.py()) {
            PyValueError::new_err(format!(
                "drift_factor must be in [0, 1), got {}",
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
pub(crate) fn quorum(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    if obj.is_none() {
        return Ok(None);
    }
    let max = u64::try_from(usize::MAX).unwrap_or(u64::MAX);
    int_in(obj, "quorum", 1, max).map(|q| Some(q as usize))
}

/// Checked seconds (see the extractors) as a `Duration`, or `ValueError` naming `name` when
/// beyond what a `Duration` holds.
pub(crate) fn duration(name: &str, seconds: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| PyValueError::new_err(format!("{name} {seconds}: too large")))
}

/// How many attempts an acquire makes: `timeout=None` → `1 + retry_count`; a timeout → as
/// many as start before it (at least one).
pub(crate) fn retry_until(timeout: Option<Duration>) -> Retry {
    match timeout {
        None => Retry::Configured,
        Some(timeout) => {
            // A timeout past what the clock can represent means "keep trying".
            let now = Instant::now();
            let forever = Duration::from_secs(u64::from(u32::MAX));
            now.checked_add(timeout)
                .or_else(|| now.checked_add(forever))
                .map_or(Retry::Configured, Retry::Until)
        }
    }
}

/// The checked `ttl` and `timeout` of an acquire.
pub(crate) fn acquire_times(ttl: f64, timeout: Option<f64>) -> PyResult<(Duration, Retry)> {
    let ttl = duration("ttl", ttl)?;
    let timeout = timeout.map(|t| duration("timeout", t)).transpose()?;
    Ok((ttl, retry_until(timeout)))
}

/// The constructor arguments shared by `Redlock` and `AsyncRedlock` (each already checked by
/// its extractor).
#[derive(Debug)]
pub(crate) struct ClientArgs {
    pub masters: Vec<String>,
    pub retry_count: u32,
    pub retry_delay: f64,
    pub drift_factor: f64,
    pub instance_timeout: f64,
    pub fanout: &'static str,
    pub quorum: Option<usize>,
    pub max_extensions: u32,
}

impl ClientArgs {
    /// The core builder; the core checks the rest (URLs, quorum range, drift factor) and names
    /// the bad value.
    pub(crate) fn builder(self, py: Python<'_>) -> PyResult<RedlockBuilder> {
        let fanout: FanOut = self.fanout.parse().map_err(|e| to_py_err(py, e))?;
        let mut builder = Redlock::builder(self.masters)
            .fanout(fanout)
            .retry_count(self.retry_count)
            .retry_delay(duration("retry_delay", self.retry_delay)?)
            .drift_factor(self.drift_factor)
            .instance_timeout(duration("instance_timeout", self.instance_timeout)?)
            .max_extensions(self.max_extensions);
        if let Some(quorum) = self.quorum {
            builder = builder.quorum(quorum);
        }
        Ok(builder)
    }
}

// The constructors' `max_extensions=1000` default (a literal, so Python shows it) is the core's.
const _: () = assert!(redlock_core::DEFAULT_MAX_EXTENSIONS == 1000);
