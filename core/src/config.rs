//! Client configuration: the builder and its validation.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use redis::{ConnectionAddr, IntoConnectionInfo};

use crate::argument::{ArgValue, InvalidArgument};
use crate::error::{Error, Result};
pub(crate) use crate::redact::redact_url;

/// How one operation reaches the masters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FanOut {
    /// One master after another, in configured order (the algorithm's step list).
    Sequential,
    /// All masters at once; decided as soon as the outcome is known.
    Concurrent,
}

impl Default for FanOut {
    fn default() -> Self {
        DEFAULT_FANOUT
    }
}

impl FanOut {
    /// `"sequential"` or `"concurrent"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FanOut::Sequential => "sequential",
            FanOut::Concurrent => "concurrent",
        }
    }
}

impl fmt::Display for FanOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FanOut {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "sequential" => Ok(FanOut::Sequential),
            "concurrent" => Ok(FanOut::Concurrent),
            other => Err(Error::invalid_argument(
                "fanout",
                ArgValue::Text(other.to_string()),
                "expected \"sequential\" or \"concurrent\"",
            )),
        }
    }
}

// The defaults of every surface: the C options, Python's signatures and the load generator's
// flags are built from these (each surface has a test that they agree).

/// Default fan-out mode.
pub const DEFAULT_FANOUT: FanOut = FanOut::Concurrent;
/// Default TTL of a lock when the caller gives none (Python's `acquire(resource, ttl=10.0)`).
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);
/// Default number of retries after the first attempt.
pub const DEFAULT_RETRY_COUNT: u32 = 3;
/// Default upper bound of the jittered delay between attempts.
pub const DEFAULT_RETRY_DELAY: Duration = Duration::from_millis(200);
/// Default clock-drift factor.
pub const DEFAULT_DRIFT_FACTOR: f64 = 0.01;
/// Default per-master timeout.
pub const DEFAULT_INSTANCE_TIMEOUT: Duration = Duration::from_millis(50);
/// Default bound on the number of extensions of one lock.
pub const DEFAULT_MAX_EXTENSIONS: u32 = 1000;

/// Validated settings shared by every operation of a client.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Fan-out mode.
    pub fanout: FanOut,
    /// Retries after the first attempt in [`crate::Redlock::acquire`].
    pub retry_count: u32,
    /// Upper bound of the jittered delay between attempts.
    pub retry_delay: Duration,
    /// Drift factor in `[0, 1)`.
    pub drift_factor: f64,
    /// Per-master timeout of each request.
    pub instance_timeout: Duration,
    /// Votes needed, in `[N/2+1, N]`.
    pub quorum: usize,
    /// Maximum extensions of one lock.
    pub max_extensions: u32,
    /// Whether a release wakes this client's next waiter for the same resource (see
    /// [`RedlockBuilder::local_handoff`]).
    pub local_handoff: bool,
    /// Whether every acquired lock carries a fencing token (see [`RedlockBuilder::fencing`]).
    pub fencing: bool,
    /// Whether release and extend use a master's own commands where it has them (see
    /// [`RedlockBuilder::native_commands`]).
    pub native_commands: bool,
}

/// Builder of a [`crate::Redlock`] client; see [`crate::Redlock::builder`].
#[derive(Clone)]
pub struct RedlockBuilder {
    pub(crate) urls: Vec<String>,
    pub(crate) fanout: FanOut,
    pub(crate) retry_count: u32,
    pub(crate) retry_delay: Duration,
    pub(crate) drift_factor: f64,
    pub(crate) instance_timeout: Duration,
    pub(crate) quorum: Option<usize>,
    pub(crate) max_extensions: u32,
    pub(crate) local_handoff: bool,
    pub(crate) fencing: bool,
    pub(crate) native_commands: bool,
    pub(crate) trace_resource_names: bool,
    pub(crate) metrics_sink: Option<std::sync::Arc<dyn crate::telemetry::MetricsSink>>,
}

impl fmt::Debug for RedlockBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let urls: Vec<String> = self.urls.iter().map(|u| redact_url(u)).collect();
        f.debug_struct("RedlockBuilder")
            .field("urls", &urls)
            .field("fanout", &self.fanout)
            .field("retry_count", &self.retry_count)
            .field("retry_delay", &self.retry_delay)
            .field("drift_factor", &self.drift_factor)
            .field("instance_timeout", &self.instance_timeout)
            .field("quorum", &self.quorum)
            .field("max_extensions", &self.max_extensions)
            .field("local_handoff", &self.local_handoff)
            .field("fencing", &self.fencing)
            .field("native_commands", &self.native_commands)
            .field("trace_resource_names", &self.trace_resource_names)
            .field("metrics_sink", &self.metrics_sink.is_some())
            .finish()
    }
}

impl RedlockBuilder {
    pub(crate) fn new(urls: Vec<String>) -> Self {
        RedlockBuilder {
            urls,
            fanout: FanOut::default(),
            retry_count: DEFAULT_RETRY_COUNT,
            retry_delay: DEFAULT_RETRY_DELAY,
            drift_factor: DEFAULT_DRIFT_FACTOR,
            instance_timeout: DEFAULT_INSTANCE_TIMEOUT,
            quorum: None,
            max_extensions: DEFAULT_MAX_EXTENSIONS,
            local_handoff: true,
            fencing: false,
            native_commands: true,
            trace_resource_names: false,
            metrics_sink: None,
        }
    }
    /// Fan-out mode (default: concurrent).
    pub fn fanout(mut self, fanout: FanOut) -> Self {
        self.fanout = fanout;
        self
    }
    /// Retries after the first attempt (default 3).
    pub fn retry_count(mut self, retries: u32) -> Self {
        self.retry_count = retries;
        self
    }
    /// Upper bound of the delay between attempts; each delay is drawn from `[d/2, d]` (default 200 ms).
    pub fn retry_delay(mut self, delay: Duration) -> Self {
        self.retry_delay = delay;
        self
    }
    /// Clock-drift factor in `[0, 1)` (default 0.01).
    pub fn drift_factor(mut self, factor: f64) -> Self {
        self.drift_factor = factor;
        self
    }
    /// Per-master request timeout; keep it small compared to the TTL (default 50 ms).
    pub fn instance_timeout(mut self, timeout: Duration) -> Self {
        self.instance_timeout = timeout;
        self
    }
    /// Votes needed, in `[N/2+1, N]` (default N/2+1).
    pub fn quorum(mut self, quorum: usize) -> Self {
        self.quorum = Some(quorum);
        self
    }
    /// Maximum number of extensions of one lock (default 1000).
    pub fn max_extensions(mut self, max: u32) -> Self {
        self.max_extensions = max;
        self
    }
    /// Local hand-off (default on): tasks of this client waiting for the same resource take
    /// turns in arrival order, and a release by this client wakes the next one to attempt at
    /// once instead of sleeping out its retry delay. Attempts still go to the masters; off,
    /// every waiter sleeps its drawn delay, as separate processes would.
    pub fn local_handoff(mut self, on: bool) -> Self {
        self.local_handoff = on;
        self
    }

    /// Fencing tokens (default off): every acquired lock then carries a number,
    /// [`Lock::fencing_token`](crate::Lock::fencing_token), above the token of every lock of
    /// the same resource returned before its acquire began, for the protected resource to
    /// check ("accept a write only with a token at least the highest seen"). It costs one more
    /// round trip per acquire, and needs masters that keep their data (see the fencing page of
    /// the book): each master keeps one counter key per resource ever fenced, without a TTL.
    pub fn fencing(mut self, on: bool) -> Self {
        self.fencing = on;
        self
    }

    /// Release and extend with a master's own compare-and-delete / compare-and-refresh where
    /// it has one (default on): `DELIFEQ` (Valkey ≥ 9.0) or `DELEX … IFEQ` (Redis ≥ 8.4),
    /// `SET … IFEQ … PX` (Valkey ≥ 8.1, Redis ≥ 8.4), learned per master when its connection
    /// opens ([`Redlock::master_servers`](crate::Redlock::master_servers)); Lua scripts
    /// (`EVALSHA`) elsewhere. Off: scripts on every master (to compare the two). Same
    /// semantics either way; fenced acquires always use their scripts.
    pub fn native_commands(mut self, on: bool) -> Self {
        self.native_commands = on;
        self
    }

    /// Resource names in `tracing` spans and lost-lock events (default off: a resource name
    /// may carry user data). Never in metrics.
    pub fn trace_resource_names(mut self, on: bool) -> Self {
        self.trace_resource_names = on;
        self
    }

    /// Sends every measurement of the client (`docs/src/design.md#observability`) to `sink` as
    /// well: how a binding records them in its own language's metrics.
    pub fn metrics_sink(mut self, sink: std::sync::Arc<dyn crate::telemetry::MetricsSink>) -> Self {
        self.metrics_sink = Some(sink);
        self
    }

    /// Checks every value and returns the settings, or `InvalidArgument` naming the bad one.
    pub(crate) fn settings(&self) -> Result<Settings> {
        let n = self.urls.len();
        if n == 0 {
            return Err(Error::InvalidArgument(InvalidArgument::without_value(
                "masters",
                "must list at least one master URL",
            )));
        }
        check_distinct_servers(&self.urls)?;
        let majority = crate::quorum::majority(n);
        let quorum = self.quorum.unwrap_or(majority);
        if !crate::quorum::valid_range(n).contains(&quorum) {
            return Err(Error::invalid_argument(
                "quorum",
                ArgValue::Integer(quorum as u64),
                format!("must be between {majority} (majority) and {n} (all masters)"),
            ));
        }
        if !self.drift_factor.is_finite() || !(0.0..1.0).contains(&self.drift_factor) {
            return Err(Error::invalid_argument(
                "drift_factor",
                ArgValue::Number(self.drift_factor),
                "must be a finite number in [0, 1)",
            ));
        }
        if self.instance_timeout.is_zero() {
            return Err(Error::invalid_argument(
                "instance_timeout",
                ArgValue::Duration(self.instance_timeout),
                "must be greater than zero",
            ));
        }
        if self.retry_delay > crate::validity::MAX_TTL {
            return Err(Error::InvalidArgument(
                InvalidArgument::new(
                    "retry_delay",
                    ArgValue::Duration(self.retry_delay),
                    "larger than the maximum {0}",
                )
                .with_limits([crate::validity::MAX_TTL]),
            ));
        }
        Ok(Settings {
            fanout: self.fanout,
            retry_count: self.retry_count,
            retry_delay: self.retry_delay,
            drift_factor: self.drift_factor,
            instance_timeout: self.instance_timeout,
            quorum,
            max_extensions: self.max_extensions,
            local_handoff: self.local_handoff,
            fencing: self.fencing,
            native_commands: self.native_commands,
        })
    }
}

/// The server a master URL points at, as far as the URL alone tells (no name resolution).
#[derive(Debug, PartialEq, Eq, Hash)]
enum Server {
    /// Host (IP addresses in canonical form, names in lower case) and port; TLS or not.
    Tcp(String, u16),
    /// A Unix socket path, with `.` and repeated `/` removed.
    Socket(PathBuf),
}

/// The server of `url` as the Redis client reads it; `None` when it does not parse (the
/// client's own parse reports that, naming the URL).
fn server_of(url: &str) -> Option<Server> {
    let info = url.into_connection_info().ok()?;
    let tcp = |host: &str, port: u16| {
        let host = match host.parse::<IpAddr>() {
            Ok(ip) => ip.to_string(),
            Err(_) => host.to_ascii_lowercase(),
        };
        Some(Server::Tcp(host, port))
    };
    match info.addr() {
        ConnectionAddr::Tcp(host, port) => tcp(host, *port),
        ConnectionAddr::TcpTls { host, port, .. } => tcp(host, *port),
        ConnectionAddr::Unix(path) => Some(Server::Socket(path.components().collect())),
        _ => None,
    }
}

/// Refuses a server listed twice (same host and port, or same socket path, whatever the
/// database, user or scheme): it would count as several independent votes, so one server
/// could hold a quorum alone. Names (`localhost` and `127.0.0.1`) are compared as written.
fn check_distinct_servers(urls: &[String]) -> Result<()> {
    let mut seen: HashMap<Server, usize> = HashMap::with_capacity(urls.len());
    for (index, url) in urls.iter().enumerate() {
        let Some(server) = server_of(url) else {
            continue;
        };
        if let Some(&first) = seen.get(&server) {
            // The parsed server is not shown: a misplaced password can end up in a socket path.
            return Err(Error::invalid_argument(
                format!("master URL #{index}"),
                ArgValue::Text(redact_url(url)),
                format!(
                    "the same server as master URL #{first} {:?}: each server may vote only \
                     once, list every master once",
                    redact_url(&urls[first]),
                ),
            ));
        }
        seen.insert(server, index);
    }
    Ok(())
}

/// Checks one master URL as the builder does (scheme `redis://`, `rediss://` or `unix://`,
/// host, port, TLS parameters and the files they name), for a surface that wants to refuse a
/// bad one while parsing its own arguments. The error names the URL with its password
/// redacted; its [`reason`](crate::InvalidArgument::reason) says what is wrong.
pub fn check_master_url(url: &str) -> Result<()> {
    crate::master::target_of(0, url).map(drop)
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

/// The longest resource name accepted, in bytes (UTF-8). A resource is a Redis key sent with
/// every request to every master: a huge one costs every master memory and bandwidth and the
/// client time far beyond its per-master timeout, so it is refused before anything is sent.
pub const MAX_RESOURCE_BYTES: usize = 64 * 1024;

/// Validates a resource name as every acquire does (non-empty, at most
/// [`MAX_RESOURCE_BYTES`]), or `InvalidArgument` naming `resource` and the limit: for surfaces
/// that refuse a bad name up front (a context manager made before its acquire runs).
pub fn check_resource(resource: &str) -> Result<()> {
    if resource.is_empty() {
        return Err(Error::invalid_argument(
            "resource",
            ArgValue::Text(String::new()),
            "must not be empty",
        ));
    }
    if resource.len() > MAX_RESOURCE_BYTES {
        return Err(Error::invalid_argument(
            "resource",
            ArgValue::Text(crate::argument::shown_prefix(resource).to_string()),
            format!(
                "too long: {} bytes, the maximum is {MAX_RESOURCE_BYTES} bytes (64 KiB)",
                resource.len()
            ),
        ));
    }
    Ok(())
}

/// Validates a TTL against the drift allowance and returns it in whole milliseconds.
pub(crate) fn check_ttl(ttl: Duration, drift_factor: f64) -> Result<Duration> {
    let whole_ms = Duration::from_millis(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
    if whole_ms > crate::validity::MAX_TTL {
        return Err(Error::InvalidArgument(
            InvalidArgument::new(
                "ttl",
                ArgValue::Duration(ttl),
                "larger than the maximum {0}",
            )
            .with_limits([crate::validity::MAX_TTL]),
        ));
    }
    let drift = crate::validity::drift(whole_ms, drift_factor);
    if whole_ms <= drift {
        return Err(Error::InvalidArgument(
            InvalidArgument::new(
                "ttl",
                ArgValue::Duration(ttl),
                "must be longer than the clock-drift allowance {0} (ttl × drift_factor + {1})",
            )
            .with_limits([drift, crate::validity::DRIFT_FLOOR]),
        ));
    }
    Ok(whole_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_server_twice_is_refused_naming_both_positions() {
        let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
        let duplicates = [
            (
                &["redis://h:7000/0", "redis://h:7001", "redis://h:7000/2"][..],
                "#2",
                "#0",
            ),
            (&["redis://H:7000", "redis://u:pw@h:7000/1"], "#1", "#0"),
            (&["redis://[::1]:1", "redis://[0:0::1]:1"], "#1", "#0"),
            (&["redis://a:1", "redis://b:2", "rediss://b:2"], "#2", "#1"),
            (
                &["unix:///tmp/r.sock", "redis+unix:///tmp//./r.sock?db=3"],
                "#1",
                "#0",
            ),
        ];
        for (list, later, first) in duplicates {
            let err = RedlockBuilder::new(urls(list)).settings().unwrap_err();
            let msg = err.to_string();
            assert!(err.is_invalid_argument(), "{msg}");
            assert!(
                msg.contains(&format!("master URL {later} "))
                    && msg.contains(&format!("master URL {first} "))
                    && msg.contains("same server"),
                "{list:?}: {msg}"
            );
            assert!(!msg.contains("pw"), "{msg}");
        }
        let distinct = ["redis://h:7000", "redis://h:7001", "redis://g:7000"];
        assert!(RedlockBuilder::new(urls(&distinct)).settings().is_ok());
        let sockets = ["unix:///tmp/a.sock", "unix:///tmp/b.sock", "redis://h:1"];
        assert!(RedlockBuilder::new(urls(&sockets)).settings().is_ok());
    }

    #[test]
    fn fanout_parses_and_names_bad_value() {
        assert_eq!("sequential".parse::<FanOut>().unwrap(), FanOut::Sequential);
        assert_eq!("concurrent".parse::<FanOut>().unwrap(), FanOut::Concurrent);
        let err = "parallel".parse::<FanOut>().unwrap_err();
        assert!(err.to_string().contains("parallel"), "{err}");
    }

    #[test]
    fn ttl_must_exceed_drift() {
        assert!(check_ttl(Duration::ZERO, 0.01).is_err());
        assert!(check_ttl(Duration::from_millis(2), 0.01).is_err());
        assert_eq!(
            check_ttl(Duration::from_micros(3500), 0.0).unwrap(),
            Duration::from_millis(3)
        );
        let err = check_ttl(Duration::from_millis(1), 0.01).unwrap_err();
        assert!(err.to_string().contains("1ms"), "{err}");
    }
}

#[cfg(test)]
mod surface_tests {
    use super::*;
    use crate::argument::{deadline_after, DurationUnit, Surface};
    use std::time::Instant;

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
    fn durations_in_a_reason_are_in_the_surface_unit() {
        let err = || check_ttl(Duration::from_millis(1), 0.01).unwrap_err();
        let reason = "must be longer than the clock-drift allowance";
        assert_eq!(
            err().to_string(),
            format!("invalid argument: ttl 1ms: {reason} 2.01ms (ttl × drift_factor + 2ms)")
        );
        assert_eq!(
            err().for_surface(&C).to_string(),
            format!("invalid argument: ttl_ms 1: {reason} 2.01 ms (ttl × drift_factor + 2 ms)")
        );
        assert_eq!(
            err().for_surface(&PY).to_string(),
            format!(
                "invalid argument: ttl 0.001: {reason} 0.00201 s (ttl × drift_factor + 0.002 s)"
            )
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
