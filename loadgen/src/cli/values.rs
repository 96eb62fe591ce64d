//! Parsed values shared by the command line, the fault specs and the capacity objective:
//! durations, hold times, key distributions and the fan-out choice. A leaf module: it imports
//! nothing of the crate, so every parser can use it without an import cycle.

use std::fmt;
use std::time::Duration;

use clap::ValueEnum;
use redlock_core::FanOut;

/// Which fan-out modes to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FanoutChoice {
    Sequential,
    Concurrent,
    /// Both, one after the other, compared side by side.
    Both,
}

impl FanoutChoice {
    /// The modes, in the order they run.
    pub fn modes(self) -> Vec<FanOut> {
        match self {
            FanoutChoice::Sequential => vec![FanOut::Sequential],
            FanoutChoice::Concurrent => vec![FanOut::Concurrent],
            FanoutChoice::Both => vec![FanOut::Sequential, FanOut::Concurrent],
        }
    }
}

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

impl HoldSpec {
    /// `5ms` or `1ms..5ms`.
    pub fn parse(text: &str) -> Result<HoldSpec, String> {
        let spec = match text.split_once("..") {
            None => {
                let d = parse_duration(text)?;
                HoldSpec { min: d, max: d }
            }
            Some((lo, hi)) => HoldSpec {
                min: parse_duration(lo)?,
                max: parse_duration(hi)?,
            },
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

impl KeyDist {
    /// `uniform`, `zipf` or `zipf:EXPONENT`.
    pub fn parse(text: &str) -> Result<KeyDist, String> {
        match text.trim() {
            "uniform" => Ok(KeyDist::Uniform),
            "zipf" => Ok(KeyDist::Zipf(1.0)),
            other => {
                let exponent = other
                    .strip_prefix("zipf:")
                    .ok_or_else(|| format!("{text:?}: expected uniform, zipf or zipf:EXPONENT"))?;
                let s: f64 = exponent
                    .parse()
                    .map_err(|_| format!("{text:?}: the zipf exponent is not a number"))?;
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

/// `--coordinator`: a redis:// or rediss:// URL redis-rs accepts (the error shows it with its
/// password redacted).
pub fn parse_coordinator_url(text: &str) -> Result<String, String> {
    let url = text.trim();
    if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
        return Err(format!(
            "{:?}: a coordinator URL starts with redis:// or rediss://",
            redlock_core::redact_url(url)
        ));
    }
    redis::Client::open(url).map_err(|e| format!("{:?}: {e}", redlock_core::redact_url(url)))?;
    Ok(url.to_string())
}

/// `--run-id`: 1 to 64 letters, digits, '.', '_' or '-' (it becomes part of coordinator keys).
pub fn parse_run_id(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 64
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(text.to_string())
    } else {
        Err(format!(
            "{text:?}: a run id is 1 to 64 letters, digits, '.', '_' or '-'"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_is_fixed_or_a_range() {
        let fixed = HoldSpec::parse("5ms").unwrap();
        assert_eq!(
            (fixed.min, fixed.max),
            (Duration::from_millis(5), Duration::from_millis(5))
        );
        let range = HoldSpec::parse("1ms..3ms").unwrap();
        assert_eq!(
            (range.min, range.max),
            (Duration::from_millis(1), Duration::from_millis(3))
        );
        assert!(HoldSpec::parse("3ms..1ms")
            .unwrap_err()
            .contains("3ms..1ms"));
        assert!(HoldSpec::parse("soon").unwrap_err().contains("soon"));
    }

    #[test]
    fn key_dist_accepts_an_exponent() {
        assert_eq!(KeyDist::parse("uniform").unwrap(), KeyDist::Uniform);
        assert_eq!(KeyDist::parse("zipf").unwrap(), KeyDist::Zipf(1.0));
        assert_eq!(KeyDist::parse("zipf:1.5").unwrap(), KeyDist::Zipf(1.5));
        assert!(KeyDist::parse("zipf:-1").unwrap_err().contains("zipf:-1"));
        assert!(KeyDist::parse("normal").unwrap_err().contains("normal"));
    }

    #[test]
    fn run_ids_and_coordinator_urls_are_checked_naming_the_value() {
        assert_eq!(parse_run_id("bench-2026.11_a").unwrap(), "bench-2026.11_a");
        assert!(parse_run_id("a b").unwrap_err().contains("\"a b\""));
        assert!(parse_run_id("").is_err());
        assert!(parse_run_id(&"x".repeat(65)).is_err());
        let err = parse_coordinator_url("http://:secret@h:1").unwrap_err();
        assert!(err.contains("http://"), "{err}");
        assert!(!err.contains("secret"), "{err}");
        assert!(parse_coordinator_url("redis://127.0.0.1:7000/2").is_ok());
    }
}
