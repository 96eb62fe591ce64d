//! Bad arguments, said once: which parameter, the value given, and why it is refused.
//!
//! The core checks every value (see the builder and [`crate::Redlock::acquire`]); each surface
//! (C, Python, the load generator) only renames the parameters into its own words and shows
//! durations in its own unit through one [`Surface`], instead of checking again.

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, Instant};

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
    /// Text, already made safe to show (URLs have their password redacted); messages show at
    /// most [`MAX_SHOWN_CHARS`] characters of it.
    Text(String),
}

/// How a surface writes durations in messages: one style per surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DurationUnit {
    /// Humanised (the core, the load generator): an argument as Rust's `Debug` form (`1.5s`,
    /// `200ms`), a measured or derived duration rounded (`40.12ms`, `232.5µs`).
    #[default]
    Readable,
    /// Milliseconds (C): an argument as whole milliseconds without a unit (the `*_ms`
    /// parameters), a measured or derived duration as `40.123 ms`.
    Millis,
    /// Seconds (Python): an argument as a float without a unit, a measured or derived
    /// duration as `0.040123 s`.
    Seconds,
}

impl DurationUnit {
    /// A measured or derived duration (an elapsed time, a limit) in this unit's style:
    /// `2.01ms`, `2.01 ms` or `0.00201 s`.
    pub fn show(self, d: Duration) -> String {
        match self {
            DurationUnit::Readable => {
                let nanos = d.as_nanos();
                if nanos >= 1_000_000_000 {
                    format!("{}s", trimmed(d.as_secs_f64(), 3))
                } else if nanos >= 1_000_000 {
                    format!("{}ms", trimmed(d.as_secs_f64() * 1e3, 2))
                } else if nanos >= 1_000 {
                    format!("{}µs", trimmed(d.as_secs_f64() * 1e6, 1))
                } else {
                    format!("{nanos}ns")
                }
            }
            DurationUnit::Millis => format!("{} ms", trimmed(d.as_secs_f64() * 1e3, 3)),
            DurationUnit::Seconds => format!("{} s", trimmed(d.as_secs_f64(), 6)),
        }
    }
}

/// `value` with at most `decimals` decimals, without trailing zeros (`2.01`, `40`).
fn trimmed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
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
    /// Durations the reason refers to as `{0}`, `{1}`...: shown in the surface's unit.
    limits: Vec<Duration>,
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
            limits: Vec::new(),
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
            limits: Vec::new(),
            unit: DurationUnit::default(),
        }
    }
    /// The durations that the reason's `{0}`, `{1}`... stand for (a limit, an allowance), so
    /// each surface shows them in its own unit: `"must be longer than {0}"`.
    pub(crate) fn with_limits(mut self, limits: impl IntoIterator<Item = Duration>) -> Self {
        self.limits = limits.into_iter().collect();
        self
    }
    /// The parameter's name (the core's, or the surface's after [`crate::Error::for_surface`]).
    pub fn parameter(&self) -> &str {
        &self.parameter
    }
    /// The offending value, when there is one to show.
    pub fn value(&self) -> Option<&ArgValue> {
        self.value.as_ref()
    }
    /// Why the value is refused, its durations in this argument's unit.
    pub fn reason(&self) -> Cow<'_, str> {
        if self.limits.is_empty() {
            return Cow::Borrowed(&self.reason);
        }
        let mut reason = self.reason.clone();
        for (i, limit) in self.limits.iter().enumerate() {
            reason = reason.replace(&format!("{{{i}}}"), &self.unit.show(*limit));
        }
        Cow::Owned(reason)
    }
    /// In `surface`'s words: its name for the parameter, its unit of durations.
    pub(crate) fn in_words_of(mut self, surface: &Surface) -> Self {
        if let Some((_, renamed)) = surface
            .names
            .iter()
            .find(|(core, _)| *core == self.parameter)
        {
            self.parameter = Cow::Borrowed(renamed);
        }
        self.in_unit(surface.durations)
    }
    /// With durations in `unit`.
    pub(crate) fn in_unit(mut self, unit: DurationUnit) -> Self {
        self.unit = unit;
        self
    }
}

impl fmt::Display for InvalidArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.parameter)?;
        match &self.value {
            None => return write!(f, " {}", self.reason()),
            Some(ArgValue::Duration(d)) => match self.unit {
                DurationUnit::Readable => write!(f, " {d:?}")?,
                DurationUnit::Millis => write!(f, " {}", d.as_millis())?,
                DurationUnit::Seconds => write!(f, " {}", PySeconds(d.as_secs_f64()))?,
            },
            Some(ArgValue::Seconds(s)) => write!(f, " {}", PySeconds(*s))?,
            Some(ArgValue::Number(n)) => write!(f, " {n}")?,
            Some(ArgValue::Integer(i)) => write!(f, " {i}")?,
            Some(ArgValue::Text(t)) => write!(f, " {}", shown_text(t))?,
        }
        write!(f, ": {}", self.reason())
    }
}

/// Characters of a caller's text (a resource name, a URL) that a message shows, at most.
pub const MAX_SHOWN_CHARS: usize = 100;

/// A caller's text as every message shows it: quoted and escaped like `{:?}`, cut after
/// [`MAX_SHOWN_CHARS`] characters (then followed by `…`), so that no message grows with what
/// the caller passed.
pub fn shown_text(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((cut, _)) => format!("{:?}…", &text[..cut]),
        None => format!("{text:?}"),
    }
}

/// The start of `text` that [`shown_text`] shows (and one character more, so it still shows
/// that the text was cut): what an error keeps of a text too long to copy.
pub(crate) fn shown_prefix(text: &str) -> &str {
    match text.char_indices().nth(MAX_SHOWN_CHARS + 1) {
        Some((cut, _)) => &text[..cut],
        None => text,
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
/// durations. Each surface has one, applied where it maps errors ([`crate::Error::for_surface`]).
#[derive(Debug, Clone, Copy)]
pub struct Surface {
    /// `(core name, surface name)` pairs, e.g. `("ttl", "ttl_ms")`; parameters not listed
    /// keep the core's name.
    pub names: &'static [(&'static str, &'static str)],
    /// How durations are shown.
    pub durations: DurationUnit,
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
