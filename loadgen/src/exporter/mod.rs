//! `run --prometheus ADDR`: the running figures of a run, served at `http://ADDR/metrics` in
//! the Prometheus text format while the run lasts, under the OpenTelemetry names of docs/src/design.md#observability
//! mapped the usual way (dots become underscores, the unit a suffix, counters end in
//! `_total`).
//!
//! There is no second accounting: [`LiveFigures`] adds up the very [`Interval`]s that each
//! task's [`crate::engine::recorder::Recorder`] hands the run's control loop (the ones that become the
//! result's `intervals`), plus the generator's CPU the control loop samples and each mode's
//! mutual-exclusion check once it is done. [`encode`] turns them into the text format at each
//! scrape; [`server`] answers the scrapes.

pub mod encode;
pub mod server;

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use redlock_core::{AttemptResult, FanOut};

use crate::hist::Hist;
use crate::model::interval::{CallOutcome, Interval};
use crate::model::lock::LockAlgorithm;
use crate::model::mode::GeneratorCpu;

/// The port the Redis client connects to when a URL names none.
const REDIS_DEFAULT_PORT: u16 = 6379;

/// A master as its metric labels show it: `server.address` and `server.port` (never its URL,
/// so never a password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MasterLabels {
    pub address: String,
    pub port: String,
}

impl MasterLabels {
    /// From a master URL, passwords already redacted (`redis://user:***@host:port/0`).
    pub fn from_redacted_url(redacted: &str) -> MasterLabels {
        match url::Url::parse(redacted) {
            Ok(u) => MasterLabels {
                address: u
                    .host_str()
                    .map_or_else(|| u.path().to_string(), str::to_string),
                // The client's default port for a TCP master (a socket path has none).
                port: u
                    .port()
                    .or(u.host_str().map(|_| REDIS_DEFAULT_PORT))
                    .map_or(String::new(), |p| p.to_string()),
            },
            // Not a URL the client would accept either: shown as given, port unknown.
            Err(_) => MasterLabels {
                address: redacted.to_string(),
                port: String::new(),
            },
        }
    }
}

/// The live figures of one mode (a lock algorithm and fan-out), added up since it started.
#[derive(Debug, Clone)]
pub struct LiveMode {
    pub lock: LockAlgorithm,
    pub fanout: FanOut,
    /// Attempts by result, by [`AttemptResult::index`] (the library's vocabulary).
    pub attempts: [u64; AttemptResult::ALL.len()],
    /// Whole-acquire latency by outcome, µs.
    pub acquire: BTreeMap<CallOutcome, Hist>,
    /// Open loop: start lag, µs.
    pub start_lag: Hist,
    /// Failed requests by (master position, `error.type`).
    pub failures: BTreeMap<(usize, String), u64>,
    /// The generator's CPU over the measured window so far.
    pub cpu: GeneratorCpu,
    /// Mutual-exclusion violations (known once the mode's check is done).
    pub violations: u64,
}

impl LiveMode {
    fn new(lock: LockAlgorithm, fanout: FanOut) -> LiveMode {
        LiveMode {
            lock,
            fanout,
            attempts: [0; AttemptResult::ALL.len()],
            acquire: CallOutcome::ALL.iter().map(|&o| (o, Hist::new())).collect(),
            start_lag: Hist::new(),
            failures: BTreeMap::new(),
            cpu: GeneratorCpu::default(),
            violations: 0,
        }
    }

    fn add(&mut self, i: &Interval) {
        for (result, n) in [
            (AttemptResult::Won, i.attempts_won),
            (AttemptResult::Split, i.split_votes),
            (AttemptResult::CleanLoss, i.clean_losses),
            (AttemptResult::Expired, i.expired_attempts),
            (AttemptResult::Unavailable, i.unavailable_attempts),
        ] {
            self.attempts[result.index()] += n;
        }
        for (outcome, h) in &i.acquire_by_outcome {
            self.acquire.entry(*outcome).or_default().add(&h.unpack());
        }
        self.start_lag.add(&i.start_lag.unpack());
        for f in &i.failures {
            *self
                .failures
                .entry((f.master, f.error_type.clone()))
                .or_default() += f.requests;
        }
    }

    /// The `redlock_fanout` label: the fan-out of a Redlock mode, `none` for a single-master
    /// lock (which has no fan-out).
    pub fn fanout_label(&self) -> &'static str {
        if self.lock.votes() {
            self.fanout.as_str()
        } else {
            "none"
        }
    }
}

/// What a scrape reads.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub masters: Vec<MasterLabels>,
    pub modes: Vec<LiveMode>,
}

#[derive(Debug, Default)]
struct State {
    snapshot: Snapshot,
    /// The run is over: what is served now is final.
    finished: bool,
    /// A scrape has read the final figures.
    final_scraped: bool,
}

/// The running figures of a run, shared by its control loop (which adds to them) and the
/// HTTP server (which reads them at each scrape).
#[derive(Debug, Default)]
pub struct LiveFigures {
    state: Mutex<State>,
    final_scraped: Condvar,
}

impl LiveFigures {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves figures that are still readable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The masters, passwords redacted, in the run's order.
    pub fn set_masters(&self, redacted_urls: &[String]) {
        self.lock().snapshot.masters = redacted_urls
            .iter()
            .map(|u| MasterLabels::from_redacted_url(u))
            .collect();
    }

    /// A mode starts: its series appear (at zero) and what follows is added to it.
    pub fn mode_started(&self, lock: LockAlgorithm, fanout: FanOut) {
        self.lock().snapshot.modes.push(LiveMode::new(lock, fanout));
    }

    fn current(&self, f: impl FnOnce(&mut LiveMode)) {
        if let Some(mode) = self.lock().snapshot.modes.last_mut() {
            f(mode);
        }
    }

    /// A task's finished interval of the current mode.
    pub fn add(&self, interval: &Interval) {
        self.current(|mode| mode.add(interval));
    }

    /// The generator's CPU over the current mode's measured window so far.
    pub fn set_cpu(&self, cpu: GeneratorCpu) {
        self.current(|mode| mode.cpu = cpu);
    }

    /// The current mode's mutual-exclusion check is done.
    pub fn set_violations(&self, violations: u64) {
        self.current(|mode| mode.violations = violations);
    }

    /// What a scrape serves now; marks the final figures as collected once the run is over.
    pub fn scrape(&self) -> Snapshot {
        let mut state = self.lock();
        if state.finished && !state.final_scraped {
            state.final_scraped = true;
            self.final_scraped.notify_all();
        }
        state.snapshot.clone()
    }

    /// The run is over: the figures are final.
    pub fn finish(&self) {
        self.lock().finished = true;
    }

    /// Waits until a scrape has read the final figures, `limit` has passed, or `give_up`
    /// says so (checked every 100 ms); true if a scrape read them.
    pub fn wait_for_final_scrape(&self, limit: Duration, give_up: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + limit;
        let mut state = self.lock();
        loop {
            if state.final_scraped {
                return true;
            }
            let now = Instant::now();
            if now >= deadline || give_up() {
                return false;
            }
            let wait = (deadline - now).min(Duration::from_millis(100));
            state = self
                .final_scraped
                .wait_timeout(state, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hist::PackedHist;
    use crate::model::interval::MasterFailures;

    #[test]
    fn master_labels_hold_host_and_port_never_the_userinfo() {
        let redacted = redlock_core::redact_url("redis://user:s3cret@127.0.0.1:7001/0");
        let m = MasterLabels::from_redacted_url(&redacted);
        assert_eq!(m.address, "127.0.0.1");
        assert_eq!(m.port, "7001");
        let default_port = MasterLabels::from_redacted_url("rediss://:***@cache.example/0");
        assert_eq!(default_port.address, "cache.example");
        assert_eq!(default_port.port, "6379");
        let socket = MasterLabels::from_redacted_url("redis+unix:///run/redis.sock?pass=***");
        assert_eq!(
            (socket.address.as_str(), socket.port.as_str()),
            ("/run/redis.sock", "")
        );
    }

    #[test]
    fn intervals_add_up_into_the_current_mode() {
        let live = LiveFigures::default();
        live.mode_started(LockAlgorithm::Redlock, FanOut::Sequential);
        let mut acquired = Hist::new();
        acquired.record(1500);
        let interval = Interval {
            attempts_won: 2,
            split_votes: 1,
            unavailable_attempts: 3,
            failures: vec![MasterFailures {
                master: 1,
                error_type: "timeout".into(),
                requests: 4,
            }],
            acquire_by_outcome: [(CallOutcome::Acquired, PackedHist::pack(&acquired))].into(),
            ..Interval::default()
        };
        live.add(&interval);
        live.add(&interval);
        let snapshot = live.scrape();
        let mode = &snapshot.modes[0];
        assert_eq!(mode.attempts, [4, 2, 0, 0, 6]);
        assert_eq!(mode.acquire[&CallOutcome::Acquired].count(), 2);
        assert_eq!(mode.acquire[&CallOutcome::NotAcquired].count(), 0);
        assert_eq!(mode.failures[&(1, "timeout".to_string())], 8);
    }

    #[test]
    fn only_a_scrape_after_the_end_counts_as_the_final_one() {
        let live = LiveFigures::default();
        live.scrape();
        assert!(!live.wait_for_final_scrape(Duration::ZERO, || false));
        live.finish();
        assert!(!live.wait_for_final_scrape(Duration::from_millis(1), || false));
        live.scrape();
        assert!(live.wait_for_final_scrape(Duration::ZERO, || false));
    }
}
