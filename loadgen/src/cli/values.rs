//! Values only the command line parses: the fan-out choice, the coordinator URL and the run
//! id (domain values such as durations and hold times parse in [`crate::model::values`]).

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
