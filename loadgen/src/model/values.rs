//! Values parsed from text wherever they are written (flags, fault specs, the capacity
//! objective): durations, hold times and key distributions. A leaf: it imports nothing of the
//! crate, so every layer can use it.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The longest duration any flag accepts (keeps every deadline computation far from overflow).
const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// Durations like `10s`, `500ms`, `1m30s`, `250us` (a bare `0` is zero), at most 30 days.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{text:?} is not a duration ({e}); write e.g. 10s, 500ms, 1m"))?;
    if d > MAX_DURATION {
        return Err(format!(
            "{text:?}: longer than the 30 days any flag accepts"
        ));
    }
    Ok(d)
}

/// Time spent inside the lock: fixed (`min == max`) or uniform in `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldSpec {
    pub min: Duration,
    pub max: Duration,
}

/// `5ms` or `1ms..5ms`.
impl FromStr for HoldSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<HoldSpec, String> {
        let (lo, hi) = text.split_once("..").unwrap_or((text, text));
        let spec = HoldSpec {
            min: parse_duration(lo)?,
            max: parse_duration(hi)?,
        };
        if spec.min > spec.max {
            return Err(format!(
                "{text:?}: the range's start is after its end (write MIN..MAX)"
            ));
        }
        Ok(spec)
    }
}

impl fmt::Display for HoldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{:?}", self.min)
        } else {
            write!(f, "{:?}..{:?} (uniform)", self.min, self.max)
        }
    }
}

/// How a client picks the resource of its next acquire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyDist {
    Uniform,
    /// Zipf with this exponent: resource 0 is the hottest.
    Zipf(f64),
}

/// `uniform`, `zipf` or `zipf:EXPONENT`.
impl FromStr for KeyDist {
    type Err = String;

    fn from_str(text: &str) -> Result<KeyDist, String> {
        match text.trim() {
            "uniform" => Ok(KeyDist::Uniform),
            "zipf" => Ok(KeyDist::Zipf(1.0)),
            other => {
                let expected = || format!("{text:?}: expected uniform, zipf or zipf:EXPONENT");
                let exponent = other.strip_prefix("zipf:").ok_or_else(expected)?;
                let not_a_number = |_| format!("{text:?}: the zipf exponent is not a number");
                let s: f64 = exponent.parse().map_err(not_a_number)?;
                if !s.is_finite() || s <= 0.0 {
                    return Err(format!("{text:?}: the zipf exponent must be above 0"));
                }
                Ok(KeyDist::Zipf(s))
            }
        }
    }
}

impl fmt::Display for KeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDist::Uniform => f.write_str("uniform"),
            KeyDist::Zipf(s) => write!(f, "zipf:{s}"),
        }
    }
}

/// A rate rounded to a whole number with thousands separated: `3,875`.
pub fn grouped(rate: f64) -> String {
    let digits = format!("{:.0}", rate.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if rate < -0.5 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_is_fixed_or_a_range() {
        let fixed = "5ms".parse::<HoldSpec>().unwrap();
        assert_eq!(
            (fixed.min, fixed.max),
            (Duration::from_millis(5), Duration::from_millis(5))
        );
        let range = "1ms..3ms".parse::<HoldSpec>().unwrap();
        assert_eq!(
            (range.min, range.max),
            (Duration::from_millis(1), Duration::from_millis(3))
        );
        assert!("3ms..1ms"
            .parse::<HoldSpec>()
            .unwrap_err()
            .contains("3ms..1ms"));
        assert!("soon".parse::<HoldSpec>().unwrap_err().contains("soon"));
    }

    #[test]
    fn key_dist_accepts_an_exponent() {
        assert_eq!("uniform".parse::<KeyDist>().unwrap(), KeyDist::Uniform);
        assert_eq!("zipf".parse::<KeyDist>().unwrap(), KeyDist::Zipf(1.0));
        assert_eq!("zipf:1.5".parse::<KeyDist>().unwrap(), KeyDist::Zipf(1.5));
        assert!("zipf:-1"
            .parse::<KeyDist>()
            .unwrap_err()
            .contains("zipf:-1"));
        assert!("normal".parse::<KeyDist>().unwrap_err().contains("normal"));
    }
}
