//! Values only the command line parses: the fan-out choice, the coordinator URL and the run
//! id, the flags' bounded durations, client counts, repeats and rates, and master URLs (domain
//! values such as durations and hold times parse in [`crate::model::values`]).

use std::ffi::OsStr;
use std::time::Duration;

use clap::ValueEnum;
use redlock_core::FanOut;

use crate::model::values::parse_duration;

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
    ok.then(|| text.to_string())
        .ok_or_else(|| format!("{text:?}: a run id is 1 to 64 letters, digits, '.', '_' or '-'"))
}

/// The longest measured window: the per-second series keeps one latency histogram per second,
/// so memory grows with the duration (merge consecutive runs for longer soaks).
pub const MAX_MEASURED: Duration = Duration::from_secs(3600);
const MAX_WARMUP: Duration = Duration::from_secs(600);

pub(super) fn parse_measured_duration(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("{text:?}: must be longer than zero"));
    }
    if d > MAX_MEASURED {
        return Err(format!(
            "{text:?}: at most 1h per run (the per-second series keeps one latency histogram per second; merge consecutive runs for longer)"
        ));
    }
    Ok(d)
}

pub(super) fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d < Duration::from_millis(100) || d > Duration::from_secs(60) {
        return Err(format!("{text:?}: an interval is 100ms to 1m"));
    }
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(format!(
            "{text:?}: an interval is a whole number of milliseconds"
        ));
    }
    Ok(d)
}

pub(super) fn parse_warmup(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d > MAX_WARMUP {
        return Err(format!("{text:?}: a warm-up is at most 10m"));
    }
    Ok(d)
}

/// The most concurrent clients: a master connection queues 65,536 requests before senders
/// wait (and could be reordered), and one client can have up to 4 queued on it at once
/// (a straggling SET, its cleanup, a release, an extend).
pub const MAX_CLIENTS: u32 = 16_384;

/// A client count in 1..=[`MAX_CLIENTS`].
pub fn parse_clients(text: &str) -> Result<u32, String> {
    let n: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of clients"))?;
    if n == 0 || n > MAX_CLIENTS {
        return Err(format!(
            "{text:?}: between 1 and {MAX_CLIENTS} clients (each can queue up to 4 requests on a master connection, which holds 65536)"
        ));
    }
    Ok(n)
}

/// Most repeats `run --repeat` takes (each is a whole run of every mode).
pub const MAX_REPEATS: u32 = 1000;

pub fn parse_repeat(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_REPEATS).contains(&n) => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of repeats: 1 to {MAX_REPEATS} (1: one run; 5 or more give intervals worth reading)"
        )),
    }
}

pub fn parse_rate(text: &str) -> Result<f64, String> {
    let rate: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of acquires per second"))?;
    if !rate.is_finite() || !(0.001..=10_000_000.0).contains(&rate) {
        return Err(format!(
            "{text:?}: must be a rate between 0.001 and 10000000 per second"
        ));
    }
    Ok(rate)
}

/// `--masters` and `--storage` values: checked by the core as the client will (`redis://`,
/// `rediss://`, `unix://`), and the error names the flag and shows the value with its password
/// redacted (clap's own message would echo it raw).
#[derive(Debug, Clone, Copy)]
pub(super) struct MasterUrl;

impl clap::builder::TypedValueParser for MasterUrl {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        let flag = arg
            .map(|a| {
                let name = a.get_long().unwrap_or_else(|| a.get_id().as_str());
                let value = a
                    .get_value_names()
                    .and_then(|names| names.first())
                    .map_or("URL", |n| n.as_str());
                format!("--{name} <{value}>")
            })
            .unwrap_or_else(|| "--masters <URL,...>".into());
        let invalid = |shown: String, why: String| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value {shown} for '{flag}': {why}\n"),
            )
            .with_cmd(cmd)
        };
        let text = value.to_str().ok_or_else(|| {
            invalid(
                format!("{:?}", redlock_core::redact_url(&value.to_string_lossy())),
                "not valid UTF-8".into(),
            )
        })?;
        let url = text.trim();
        redlock_core::check_master_url(url).map_err(|e| {
            let why = e
                .invalid()
                .map_or_else(|| e.to_string(), |i| i.reason().to_string());
            invalid(format!("{:?}", redlock_core::redact_url(text)), why)
        })?;
        Ok(url.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
