//! Bad arguments, said once: which parameter, the value given, and why it is refused.
//!
//! The core checks every value (see the builder and [`crate::Redlock::acquire`]); each surface
//! (C, Python, the load generator) only renames the parameters into its own words and shows
//! durations in its own unit through one [`Surface`], instead of checking again.

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, Instant};

use crate::error::Error;

/// The offending value of an [`InvalidArgument`], kept typed so that each surface can show it
/// in its own unit (milliseconds in C, seconds in Python).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ArgValue {
    /// A duration (a TTL, a timeout, a delay).
    Duration(Duration),
    /// A number of seconds as given (before it became a [`Duration`]).
    Seconds(f64),
    /// Any other number.
    Number(f64),
    /// A count or an index.
    Integer(u64),
    /// Text, already made safe to show (URLs have their password redacted).
    Text(String),
}

/// How a surface writes durations in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DurationUnit {
    /// Rust's `Debug` form: `1.5s`, `200ms`, `0ns` (the core, the load generator's flags).
    #[default]
    Readable,
    /// Whole milliseconds, no unit (the C ABI's `*_ms` parameters).
    Millis,
    /// Seconds as a float, no unit (Python).
    Seconds,
}

/// A bad argument or configuration value: the parameter, the value (when there is one to
/// show) and the reason.
///
/// Shown as `"{parameter} {value}: {reason}"`, e.g. `ttl 1ms: must be longer than the
/// clock-drift allowance ...`, or `"{parameter} {reason}"` without a value (`out is NULL`).
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidArgument {
    parameter: Cow<'static, str>,
    value: Option<ArgValue>,
    reason: String,
    unit: DurationUnit,
}

impl InvalidArgument {
    /// A bad `value` of `parameter`, refused for `reason` (phrased to follow `"{parameter}
    /// {value}: "`, e.g. "must be greater than zero").
    pub fn new(
        parameter: impl Into<Cow<'static, str>>,
        value: ArgValue,
        reason: impl Into<String>,
    ) -> Self {
        InvalidArgument {
            parameter: parameter.into(),
            value: Some(value),
            reason: reason.into(),
            unit: DurationUnit::default(),
        }
    }
    /// A bad `parameter` with no value worth showing; `reason` follows the name directly
    /// (e.g. "is NULL").
    pub fn without_value(
        parameter: impl Into<Cow<'static, str>>,
        reason: impl Into<String>,
    ) -> Self {
        InvalidArgument {
            parameter: parameter.into(),
            value: None,
            reason: reason.into(),
            unit: DurationUnit::default(),
        }
    }
    /// The parameter's name (the core's, or the surface's after [`Error::for_surface`]).
    pub fn parameter(&self) -> &str {
        &self.parameter
    }
    /// The offending value, when there is one to show.
    pub fn value(&self) -> Option<&ArgValue> {
        self.value.as_ref()
    }
    /// Why the value is refused.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.parameter)?;
        match &self.value {
            None => return write!(f, " {}", self.reason),
            Some(ArgValue::Duration(d)) => match self.unit {
                DurationUnit::Readable => write!(f, " {d:?}")?,
                DurationUnit::Millis => write!(f, " {}", d.as_millis())?,
                DurationUnit::Seconds => write!(f, " {}", PySeconds(d.as_secs_f64()))?,
            },
            Some(ArgValue::Seconds(s)) => write!(f, " {}", PySeconds(*s))?,
            Some(ArgValue::Number(n)) => write!(f, " {n}")?,
            Some(ArgValue::Integer(i)) => write!(f, " {i}")?,
            Some(ArgValue::Text(t)) => write!(f, " {t:?}")?,
        }
        write!(f, ": {}", self.reason)
    }
}

/// Seconds as Python prints a float (`0.0`, not `0`).
struct PySeconds(f64);

impl fmt::Display for PySeconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_finite() && self.0.fract() == 0.0 && self.0.abs() < 1e16 {
            write!(f, "{:.1}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// The words of one surface: its name for each core parameter it renames, and its unit of
/// durations. Each surface has one, applied where it maps errors ([`Error::for_surface`]).
#[derive(Debug, Clone, Copy)]
pub struct Surface {
    /// `(core name, surface name)` pairs, e.g. `("ttl", "ttl_ms")`; parameters not listed
    /// keep the core's name.
    pub names: &'static [(&'static str, &'static str)],
    /// How durations are shown.
    pub durations: DurationUnit,
}

impl Error {
    /// The error in a surface's words: an `InvalidArgument` gets the surface's parameter name
    /// and duration unit; every other error is returned as is.
    pub fn for_surface(self, surface: &Surface) -> Self {
        match self {
            Error::InvalidArgument(mut invalid) => {
                if let Some((_, renamed)) = surface
                    .names
                    .iter()
                    .find(|(core, _)| *core == invalid.parameter)
                {
                    invalid.parameter = Cow::Borrowed(renamed);
                }
                invalid.unit = surface.durations;
                Error::InvalidArgument(invalid)
            }
            other => other,
        }
    }

    /// An `InvalidArgument` error (see [`InvalidArgument::new`]).
    pub fn invalid_argument(
        parameter: impl Into<Cow<'static, str>>,
        value: ArgValue,
        reason: impl Into<String>,
    ) -> Self {
        Error::InvalidArgument(InvalidArgument::new(parameter, value, reason))
    }
}

/// A number of seconds as a [`Duration`], or `InvalidArgument` naming `parameter` when it is
/// negative, not a number or too large (the one conversion for surfaces that speak seconds).
pub fn duration_from_secs(parameter: &'static str, seconds: f64) -> Result<Duration, Error> {
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(Error::invalid_argument(
            parameter,
            ArgValue::Seconds(seconds),
            "must be a finite number of seconds >= 0",
        ));
    }
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| Error::invalid_argument(parameter, ArgValue::Seconds(seconds), "too large"))
}

/// The instant `timeout` from now: the one timeout-to-deadline conversion. A timeout beyond
/// what the clock can represent means "no deadline worth the name": it is capped at about
/// 136 years from now instead of failing.
pub fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    let far = Duration::from_secs(u64::from(u32::MAX));
    now.checked_add(timeout)
        .or_else(|| now.checked_add(far))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Surface = Surface {
        names: &[("ttl", "ttl_ms")],
        durations: DurationUnit::Millis,
    };
    const PY: Surface = Surface {
        names: &[],
        durations: DurationUnit::Seconds,
    };

    #[test]
    fn each_surface_names_the_parameter_and_value_in_its_own_words() {
        let err = || {
            Error::invalid_argument(
                "ttl",
                ArgValue::Duration(Duration::from_millis(1500)),
                "too short",
            )
        };
        assert_eq!(err().to_string(), "invalid argument: ttl 1.5s: too short");
        assert_eq!(
            err().for_surface(&C).to_string(),
            "invalid argument: ttl_ms 1500: too short"
        );
        assert_eq!(
            err().for_surface(&PY).to_string(),
            "invalid argument: ttl 1.5: too short"
        );
        let zero = Error::invalid_argument("ttl", ArgValue::Duration(Duration::ZERO), "no");
        assert_eq!(
            zero.for_surface(&PY).to_string(),
            "invalid argument: ttl 0.0: no"
        );
        let null = Error::InvalidArgument(InvalidArgument::without_value("out", "is NULL"));
        assert_eq!(
            null.for_surface(&C).to_string(),
            "invalid argument: out is NULL"
        );
    }

    #[test]
    fn seconds_convert_once_with_one_policy() {
        assert_eq!(
            duration_from_secs("ttl", 0.25).unwrap(),
            Duration::from_millis(250)
        );
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e300] {
            let err = duration_from_secs("timeout", bad).unwrap_err();
            assert!(err.is_invalid_argument());
            assert!(
                err.to_string().starts_with("invalid argument: timeout "),
                "{err}"
            );
        }
        let now = Instant::now();
        assert!(deadline_after(Duration::MAX) > now + Duration::from_secs(86_400 * 365));
        assert!(deadline_after(Duration::ZERO) >= now);
    }
}
