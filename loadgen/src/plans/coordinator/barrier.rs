//! The bounded barrier in front of every measured phase, and its start instant.
//!
//! Each agent arrives (a counter on the coordinator). The N-th to arrive reads the
//! coordinator's clock and plans the start: `TIME` + [`START_MARGIN`], moved so that the
//! measured window (after the warm-up) begins on a whole coordinator second — so the agents'
//! per-second windows align exactly. Everyone else polls for the planned start. An agent that
//! has waited `--join-timeout` gives the run up for everybody: it records why (how many
//! arrived) under `abandoned`, and an agent arriving later — or a last arrival racing it — reads
//! that instead of starting alone. Arriving, planning and giving up are each one Lua script, so
//! the run either starts for all N or for nobody.

use std::time::{Duration, Instant};

use super::clock::{self, Sync};
use super::{key, Coordinator, KEY_TTL};
use crate::error::LoadgenError;
use crate::signals::{Signal, Signals};

/// Time between the last arrival and the start: enough for every waiting agent to see the
/// planned start (it polls every 5 ms) and to synchronise its clock.
pub const START_MARGIN: Duration = Duration::from_secs(1);
/// How often waiting agents look for the planned start.
const POLL: Duration = Duration::from_millis(5);

const ARRIVE: &str = r"
if redis.call('EXISTS', KEYS[3]) == 1 then return {-1, redis.call('GET', KEYS[3])} end
local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return {n, ''}";

/// Plans the start unless the run was given up meanwhile.
const PLAN: &str = r"
if redis.call('EXISTS', KEYS[2]) == 1 then return {-1, redis.call('GET', KEYS[2])} end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return {0, ARGV[1]}";

/// Gives the run up unless its start was planned meanwhile (then: go).
const GIVE_UP: &str = r"
local s = redis.call('GET', KEYS[1])
if s then return {1, s} end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local n = redis.call('GET', KEYS[3]) or '0'
  redis.call('SET', KEYS[2], string.format(ARGV[1], n), 'EX', ARGV[2])
end
return {0, redis.call('GET', KEYS[2])}";

/// Sets a key unless it is set (the first value wins) and returns its value: the reason a run
/// was given up, a run's `agents` and `kind`.
pub const SET_ONCE: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
return redis.call('GET', KEYS[1])";

/// What one agent saw at one barrier.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    /// The planned start, coordinator µs since the Unix epoch.
    pub planned_us: u64,
    /// The same instant on this machine's monotonic clock.
    pub local: Instant,
    /// The clock synchronisation the instant was mapped with.
    pub sync: Sync,
}

/// The start instant of `warmup` + measurement, planned as described in the module docs.
pub fn plan_start(now_coord_us: u64, warmup: Duration) -> u64 {
    let warmup_us = warmup.as_micros() as u64;
    let earliest_measure = now_coord_us + START_MARGIN.as_micros() as u64 + warmup_us;
    earliest_measure.div_ceil(1_000_000) * 1_000_000 - warmup_us
}

/// The barriers of one agent in one run.
#[derive(Debug)]
pub struct Barriers<'a> {
    pub coordinator: &'a Coordinator,
    pub run_id: &'a str,
    pub agents: u32,
    /// How long one barrier waits (`--join-timeout`).
    pub timeout: Duration,
    /// A signal ends the wait (and the run, for everybody).
    pub signals: &'a Signals,
}

/// The coordinator keys of one barrier, and their expiry (s).
#[derive(Debug)]
struct PhaseKeys {
    arrived: String,
    start: String,
    abandoned: String,
    ttl: String,
}

/// Waits at barrier `phase` (1, 2, ...; `what` says what the others did not do in time:
/// "joined", "reached phase 3") until every agent arrived, then returns the planned start of
/// `warmup` + measurement. Bounded by the join timeout.
pub async fn wait(
    b: &Barriers<'_>,
    phase: u32,
    what: &str,
    warmup: Duration,
) -> Result<Start, LoadgenError> {
    let Barriers {
        coordinator,
        run_id,
        agents,
        timeout,
        ..
    } = *b;
    let keys = PhaseKeys {
        arrived: key(run_id, &format!("phase:{phase}:arrived")),
        start: key(run_id, &format!("phase:{phase}:start")),
        abandoned: key(run_id, "abandoned"),
        ttl: KEY_TTL.as_secs().to_string(),
    };
    let deadline = Instant::now() + timeout;
    let (n, why): (i64, String) = coordinator
        .script(
            &redis::Script::new(ARRIVE),
            &[
                keys.arrived.clone(),
                keys.start.clone(),
                keys.abandoned.clone(),
            ],
            std::slice::from_ref(&keys.ttl),
        )
        .await?;
    if n < 0 {
        return Err(given_up(run_id, &why));
    }
    if n > i64::from(agents) {
        return Err(LoadgenError::Usage(format!(
            "run {run_id}: more than --agents {agents} agents {what} (is another run using this run id?)"
        )));
    }
    if n == i64::from(agents) {
        return plan(b, keys, warmup).await;
    }
    poll(b, keys, what, deadline).await
}

/// The last arrival: plans the start, unless the run was given up meanwhile.
async fn plan(b: &Barriers<'_>, keys: PhaseKeys, warmup: Duration) -> Result<Start, LoadgenError> {
    let sync = clock::sync(b.coordinator).await?;
    let planned = plan_start(sync.to_coord_us(Instant::now()), warmup);
    let (status, why): (i64, String) = b
        .coordinator
        .script(
            &redis::Script::new(PLAN),
            &[keys.start, keys.abandoned],
            &[planned.to_string(), keys.ttl],
        )
        .await?;
    if status < 0 {
        return Err(given_up(b.run_id, &why));
    }
    Ok(Start {
        planned_us: planned,
        local: sync.to_local(planned),
        sync,
    })
}

/// The others: polls for the planned start until `deadline` or a signal, then gives up.
async fn poll(
    b: &Barriers<'_>,
    keys: PhaseKeys,
    what: &str,
    deadline: Instant,
) -> Result<Start, LoadgenError> {
    loop {
        if let Some(planned) = b.coordinator.get::<u64>(&keys.start).await? {
            return start_at(b.coordinator, planned).await;
        }
        let interrupted = b.signals.received();
        if interrupted.is_some() || Instant::now() >= deadline {
            return give_up(b, keys, what, interrupted).await;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Gives the run up for everybody (why: `interrupted`, or the join timeout), unless its start
/// was planned meanwhile: then starts after all, unless interrupted.
async fn give_up(
    b: &Barriers<'_>,
    keys: PhaseKeys,
    what: &str,
    interrupted: Option<Signal>,
) -> Result<Start, LoadgenError> {
    let Barriers {
        coordinator,
        run_id,
        agents,
        timeout,
        ..
    } = *b;
    let reason = match interrupted {
        Some(signal) => format!(
            "an agent was interrupted by {signal} while waiting (%s of {agents} agents {what}); nobody started"
        ),
        None => format!(
            "only %s of {agents} agents {what} within {timeout:?} (--join-timeout); nobody started"
        ),
    };
    let (go, text): (i64, String) = coordinator
        .script(
            &redis::Script::new(GIVE_UP),
            &[keys.start, keys.abandoned, keys.arrived],
            &[reason, keys.ttl],
        )
        .await?;
    if let Some(signal) = interrupted {
        return Err(LoadgenError::Interrupted(signal));
    }
    if go == 1 {
        let planned = text.parse().map_err(|_| {
            LoadgenError::Failed(format!(
                "run {run_id}: bad start {text:?} on the coordinator"
            ))
        })?;
        return start_at(coordinator, planned).await;
    }
    Err(given_up(run_id, &text))
}

async fn start_at(coordinator: &Coordinator, planned_us: u64) -> Result<Start, LoadgenError> {
    let sync = clock::sync(coordinator).await?;
    Ok(Start {
        planned_us,
        local: sync.to_local(planned_us),
        sync,
    })
}

fn given_up(run_id: &str, why: &str) -> LoadgenError {
    LoadgenError::Failed(format!("run {run_id} was given up: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measured_window_starts_on_a_whole_second_after_the_margin() {
        let warmup = Duration::from_millis(1500);
        let now = 1_700_000_000_250_000;
        let start = plan_start(now, warmup);
        let measure = start + 1_500_000;
        assert_eq!(measure % 1_000_000, 0);
        assert!(start >= now + START_MARGIN.as_micros() as u64);
        assert!(start < now + START_MARGIN.as_micros() as u64 + 1_000_000);
        // No warm-up: the run itself starts on the second.
        assert_eq!(plan_start(now, Duration::ZERO), 1_700_000_002_000_000);
    }
}
