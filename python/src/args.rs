//! Python arguments to core values: seconds as floats, counts as ints, each checked with an
//! error that names the argument and the bad value.

use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use redlock_core::{FanOut, Redlock, RedlockBuilder, Retry};

use crate::errors::to_py_err;

/// Whether zero is an acceptable number of seconds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Zero {
    Allowed,
    Refused,
}

/// `value` seconds as a `Duration`, or `ValueError` naming `name`.
pub(crate) fn seconds(name: &str, value: f64, zero: Zero) -> PyResult<Duration> {
    let (ok, bound) = match zero {
        Zero::Allowed => (value >= 0.0, ">= 0"),
        Zero::Refused => (value > 0.0, "> 0"),
    };
    if !ok || !value.is_finite() {
        return Err(PyValueError::new_err(format!(
            "{name} must be a finite number of seconds {bound}, got {value}"
        )));
    }
    Duration::try_from_secs_f64(value)
        .map_err(|_| PyValueError::new_err(format!("{name} {value}: too large")))
}

/// A non-negative count that fits the core's `u32`.
pub(crate) fn count(name: &str, value: i64) -> PyResult<u32> {
    u32::try_from(value).map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be an integer in [0, {}], got {value}",
            u32::MAX
        ))
    })
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

/// `timeout` (seconds or None) checked.
pub(crate) fn timeout(value: Option<f64>) -> PyResult<Option<Duration>> {
    value
        .map(|t| seconds("timeout", t, Zero::Allowed))
        .transpose()
}

/// The constructor arguments shared by `Redlock` and `AsyncRedlock`.
#[derive(Debug)]
pub(crate) struct ClientArgs<'a> {
    pub masters: Vec<String>,
    pub retry_count: i64,
    pub retry_delay: f64,
    pub drift_factor: f64,
    pub instance_timeout: f64,
    pub fanout: &'a str,
    pub quorum: Option<i64>,
    pub max_extensions: i64,
}

impl ClientArgs<'_> {
    /// The core builder, every value checked (the core checks the rest: URLs, quorum range,
    /// drift factor), or `ValueError` naming the bad one.
    pub(crate) fn builder(self, py: Python<'_>) -> PyResult<RedlockBuilder> {
        let fanout: FanOut = self.fanout.parse().map_err(|e| to_py_err(py, e))?;
        let mut builder = Redlock::builder(self.masters)
            .fanout(fanout)
            .retry_count(count("retry_count", self.retry_count)?)
            .retry_delay(seconds("retry_delay", self.retry_delay, Zero::Allowed)?)
            .drift_factor(self.drift_factor)
            .instance_timeout(seconds(
                "instance_timeout",
                self.instance_timeout,
                Zero::Refused,
            )?)
            .max_extensions(count("max_extensions", self.max_extensions)?);
        if let Some(quorum) = self.quorum {
            let quorum = usize::try_from(quorum)
                .ok()
                .filter(|q| *q > 0)
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "quorum must be a positive integer, got {quorum}"
                    ))
                })?;
            builder = builder.quorum(quorum);
        }
        Ok(builder)
    }
}

/// Describes a client's settings for `repr()`.
pub(crate) fn describe(client: &Redlock) -> String {
    let settings = client.settings();
    format!(
        "masters={:?}, fanout='{}', quorum={}, retry_count={}, retry_delay={}, instance_timeout={}",
        client.masters(),
        settings.fanout,
        settings.quorum,
        settings.retry_count,
        settings.retry_delay.as_secs_f64(),
        settings.instance_timeout.as_secs_f64()
    )
}

// The constructors' `max_extensions=1000` default (a literal, so Python shows it) is the core's.
const _: () = assert!(redlock_core::DEFAULT_MAX_EXTENSIONS == 1000);
