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

use super::agent::Agent;
use super::clock::{self, Sync};
use super::{given_up, KEY_TTL};
use crate::error::LoadgenError;
use crate::signals::Signal;

/// Time between the last arrival and the start: enough for every waiting agent to see the
/// planned start (it polls every 5 ms) and to synchronise its clock.
pub const START_MARGIN: Duration = Duration::from_secs(1);
/// How often waiting agents look for the planned start.
const POLL: Duration = Duration::from_millis(5);

/// Counts an arrival unless the run was given up.
const ARRIVE: &str = r"
if redis.call('EXISTS', KEYS[2]) == 1 then return {-1, redis.call('GET', KEYS[2])} end
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

/// The start instant of `warmup` + measurement, planned as described in the module docs.
pub fn plan_start(now_coord_us: u64, warmup: Duration) -> u64 {
    let warmup_us = warmup.as_micros() as u64;
    let earliest_measure = now_coord_us + START_MARGIN.as_micros() as u64 + warmup_us;
    earliest_measure.div_ceil(1_000_000) * 1_000_000 - warmup_us
}

/// The coordinator keys of one barrier: `[arrived, start, abandoned]`.
type Keys = [String; 3];

impl Agent {
    /// Waits at barrier `phase` (1, 2, ...; `what` says what the others did not do in time:
    /// "joined", "reached phase 3") until every agent arrived, then returns the planned start
    /// of `warmup` + measurement (coordinator µs) and the clock synchronisation to map it
    /// with. Bounded by the join timeout.
    pub(super) async fn barrier(
        &self,
        phase: u32,
        what: &str,
        warmup: Duration,
    ) -> Result<(u64, Sync), LoadgenError> {
        let (c, run_id, agents) = (&self.coordinator, &self.run_id, self.agents);
        let deadline = Instant::now() + self.join_timeout;
        let phase_key = |name: &str| self.key(&format!("phase:{phase}:{name}"));
        let keys: Keys = [
            phase_key("arrived"),
            phase_key("start"),
            self.key("abandoned"),
        ];
        let [arrived, start, abandoned] = &keys;
        let ttl = KEY_TTL.as_secs();
        let (n, why): (i64, String) = c.script(ARRIVE, &[arrived, abandoned], ttl).await?;
        if n < 0 {
            return Err(given_up(run_id, &why));
        }
        if n > i64::from(agents) {
            return Err(LoadgenError::Usage(format!(
                "run {run_id}: more than --agents {agents} agents {what} (is another run using this run id?)"
            )));
        }
        if n == i64::from(agents) {
            // The last arrival plans the start, unless the run was given up meanwhile.
            let sync = clock::sync(c).await?;
            let planned = plan_start(sync.to_coord_us(Instant::now()), warmup);
            let (status, why): (i64, String) =
                c.script(PLAN, &[start, abandoned], (planned, ttl)).await?;
            if status < 0 {
                return Err(given_up(run_id, &why));
            }
            return Ok((planned, sync));
        }
        // The others poll for the planned start until the deadline or a signal.
        loop {
            if let Some(planned) = c.get::<u64>(start).await? {
                return Ok((planned, clock::sync(c).await?));
            }
            let interrupted = self.signals.received();
            if interrupted.is_some() || Instant::now() >= deadline {
                return self.give_up(&keys, what, interrupted).await;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Gives the run up for everybody (why: `interrupted`, or the join timeout), unless its
    /// start was planned meanwhile: then starts after all, unless interrupted.
    async fn give_up(
        &self,
        [arrived, start, abandoned]: &Keys,
        what: &str,
        interrupted: Option<Signal>,
    ) -> Result<(u64, Sync), LoadgenError> {
        let (run_id, agents, timeout) = (&self.run_id, self.agents, self.join_timeout);
        let reason = match interrupted {
            Some(signal) => format!(
                "an agent was interrupted by {signal} while waiting (%s of {agents} agents {what}); nobody started"
            ),
            None => format!(
                "only %s of {agents} agents {what} within {timeout:?} (--join-timeout); nobody started"
            ),
        };
        let keys = [start, abandoned, arrived].map(String::as_str);
        let ttl = KEY_TTL.as_secs();
        let (go, text): (i64, String) = self
            .coordinator
            .script(GIVE_UP, &keys, (reason, ttl))
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
            return Ok((planned, clock::sync(&self.coordinator).await?));
        }
        Err(given_up(run_id, &text))
    }
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
