//! `redlock_options`: every knob of the core's builder as a plain C struct.

use std::time::Duration;

use redlock_core::{
    FanOut, RedlockBuilder, DEFAULT_DRIFT_FACTOR, DEFAULT_INSTANCE_TIMEOUT, DEFAULT_MAX_EXTENSIONS,
    DEFAULT_RETRY_COUNT, DEFAULT_RETRY_DELAY,
};

use crate::boundary;

/// How one operation reaches the masters (values of `redlock_options.fanout`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum redlock_fanout {
    /// All masters at once; the operation is decided as soon as its outcome is known.
    REDLOCK_FANOUT_CONCURRENT = 0,
    /// One master after another, in configured order.
    REDLOCK_FANOUT_SEQUENTIAL = 1,
}

/// Client configuration. Start from `redlock_options_default()` and change what you need,
/// so fields added in later versions keep their defaults in your code.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct redlock_options {
    /// A `redlock_fanout` value (default `REDLOCK_FANOUT_CONCURRENT`).
    pub fanout: u32,
    /// Retries after the first attempt in `redlock_acquire()` (default 3).
    pub retry_count: u32,
    /// Upper bound of the random delay between attempts, drawn from [d/2, d] (default 200 ms).
    pub retry_delay_ms: u64,
    /// Clock-drift factor in [0, 1) (default 0.01): drift = ttl * factor + 2 ms.
    pub drift_factor: f64,
    /// Per-master request timeout in milliseconds, > 0 (default 50).
    pub instance_timeout_ms: u64,
    /// Votes needed to win, in [N/2+1, N]; 0 means the majority N/2+1 (default 0).
    pub quorum: u32,
    /// Maximum number of extensions of one lock (default 1000).
    pub max_extensions: u32,
}

/// The defaults of every option (the same as the Rust and Python surfaces).
#[no_mangle]
pub extern "C" fn redlock_options_default() -> redlock_options {
    DEFAULT_OPTIONS // a constant: nothing here can panic
}

const DEFAULT_OPTIONS: redlock_options = redlock_options {
    fanout: redlock_fanout::REDLOCK_FANOUT_CONCURRENT as u32,
    retry_count: DEFAULT_RETRY_COUNT,
    retry_delay_ms: DEFAULT_RETRY_DELAY.as_millis() as u64,
    drift_factor: DEFAULT_DRIFT_FACTOR,
    instance_timeout_ms: DEFAULT_INSTANCE_TIMEOUT.as_millis() as u64,
    quorum: 0,
    max_extensions: DEFAULT_MAX_EXTENSIONS,
};

impl redlock_options {
    /// Applies every option to `builder`; the core validates the values (and names a bad one).
    pub(crate) fn apply(
        &self,
        builder: RedlockBuilder,
    ) -> Result<RedlockBuilder, redlock_core::Error> {
        let fanout = match self.fanout {
            f if f == redlock_fanout::REDLOCK_FANOUT_CONCURRENT as u32 => FanOut::Concurrent,
            f if f == redlock_fanout::REDLOCK_FANOUT_SEQUENTIAL as u32 => FanOut::Sequential,
            other => {
                return Err(redlock_core::Error::InvalidArgument(format!(
                    "fanout {other}: expected REDLOCK_FANOUT_CONCURRENT (0) or REDLOCK_FANOUT_SEQUENTIAL (1)"
                )))
            }
        };
        let instance_timeout =
            boundary::positive_ms(self.instance_timeout_ms, "instance_timeout_ms")?;
        let builder = builder
            .fanout(fanout)
            .retry_count(self.retry_count)
            .retry_delay(Duration::from_millis(self.retry_delay_ms))
            .drift_factor(self.drift_factor)
            .instance_timeout(instance_timeout)
            .max_extensions(self.max_extensions);
        Ok(match self.quorum {
            0 => builder,
            q => builder.quorum(q as usize),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_core() {
        let o = redlock_options_default();
        assert_eq!(o.fanout, redlock_fanout::REDLOCK_FANOUT_CONCURRENT as u32);
        assert_eq!(o.retry_count, DEFAULT_RETRY_COUNT);
        assert_eq!(Duration::from_millis(o.retry_delay_ms), DEFAULT_RETRY_DELAY);
        assert_eq!(o.drift_factor, DEFAULT_DRIFT_FACTOR);
        assert_eq!(
            Duration::from_millis(o.instance_timeout_ms),
            DEFAULT_INSTANCE_TIMEOUT
        );
        assert_eq!((o.quorum, o.max_extensions), (0, DEFAULT_MAX_EXTENSIONS));
    }

    #[test]
    fn bad_values_are_named() {
        let builder = || redlock_core::Redlock::builder(["redis://127.0.0.1:1"]);
        let bad_fanout = redlock_options {
            fanout: 7,
            ..redlock_options_default()
        };
        let err = bad_fanout.apply(builder()).unwrap_err();
        assert!(err.to_string().contains("fanout 7"), "{err}");
        let zero_timeout = redlock_options {
            instance_timeout_ms: 0,
            ..redlock_options_default()
        };
        let err = zero_timeout.apply(builder()).unwrap_err();
        assert!(err.to_string().contains("instance_timeout_ms 0"), "{err}");
    }
}
