//! The fault schedule of a run, plugged into the runner as its [`RunHooks`]: it applies each
//! fault when its time comes, logs what it did, and heals everything when a mode ends so the
//! next mode starts from healthy masters.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redlock_core::FanOut;
use redlock_local::proxy::{Direction, FaultProxies};
use redlock_local::{LocalError, LocalMasters};

use crate::engine::faults::master::{FaultKind, FaultSpec, FaultTime};
use crate::engine::history::HistoryLog;
use crate::engine::hooks::RunHooks;
use crate::engine::target::Target;
use crate::error::LoadgenError;
pub use crate::model::report::FaultEvent;

/// One step of a fault on its masters: the fault brought on, or (`on` false) lifted. A
/// delayed restart is a kill and a start again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Step {
    kind: FaultKind,
    on: bool,
}

#[derive(Debug, Clone)]
struct Action {
    at: FaultTime,
    spec: usize,
    step: Step,
    masters: Vec<usize>,
}

/// The faults of a run, in time order, and what was applied so far.
#[derive(Debug)]
pub struct FaultSchedule {
    specs: Vec<FaultSpec>,
    actions: Vec<Action>,
    /// Which actions the current mode has applied (in the order given: times from the first
    /// lock are only placed among the others once it has come).
    applied: Vec<bool>,
    /// Lock keys of the run (what `expire` deletes).
    keys: Vec<String>,
    proxies: Option<FaultProxies>,
    killed: BTreeSet<usize>,
    paused: BTreeSet<usize>,
    events: Vec<FaultEvent>,
    /// Time of the latest tick of the current mode (when its end is logged).
    last_tick: Duration,
    /// Where fault windows are logged as nemesis lines (`--history`), and the specs whose
    /// window is open there.
    history: Option<Arc<HistoryLog>>,
    open_windows: BTreeSet<usize>,
}

/// How long a `restart-delayed` master stays away: the longest TTL plus the drift allowance
/// (of the core's default drift factor, which the load generator's clients use), so every key
/// it held has expired everywhere before it answers again.
pub fn delayed_restart_gap(ttl: Duration) -> Duration {
    ttl + redlock_core::validity::drift(ttl, redlock_core::DEFAULT_DRIFT_FACTOR)
}

impl FaultSchedule {
    /// Resolves `specs` against `target` (local masters needed when there is any fault).
    /// `keys` are the run's lock keys; `ttl` sets how long `restart-delayed` waits.
    pub fn new(
        specs: &[FaultSpec],
        target: &Target,
        ttl: Duration,
        keys: Vec<String>,
    ) -> Result<FaultSchedule, LoadgenError> {
        let jumps = specs.iter().find(|s| matches!(s.kind, FaultKind::Clock(_)));
        if let (Some(jump), Some(local)) = (jumps, &target.local) {
            if !local.has_fake_clock() {
                return Err(LoadgenError::Usage(format!(
                    "fault {jump}: the masters were not started under libfaketime"
                )));
            }
        }
        if !specs.is_empty() && target.local.is_none() {
            return Err(LoadgenError::Usage(
                "--fault needs the local masters the load generator starts (drop --masters)".into(),
            ));
        }
        let n = target.urls.len();
        let mut actions = Vec::new();
        for (spec_index, spec) in specs.iter().enumerate() {
            let masters = spec
                .masters
                .resolve(n)
                .map_err(|e| LoadgenError::Usage(format!("fault {:?}: {e}", spec.to_string())))?;
            let mut push = |at, step| {
                actions.push(Action {
                    at,
                    spec: spec_index,
                    step,
                    masters: masters.clone(),
                })
            };
            let (kind, until) = match spec.kind {
                FaultKind::RestartDelayed => (
                    FaultKind::Kill,
                    Some(spec.at.plus(delayed_restart_gap(ttl))),
                ),
                kind => (kind, spec.until.filter(|_| !kind.is_instant())),
            };
            push(spec.at, Step { kind, on: true });
            if let Some(until) = until {
                push(until, Step { kind, on: false });
            }
        }
        Ok(FaultSchedule {
            specs: specs.to_vec(),
            applied: vec![false; actions.len()],
            actions,
            keys,
            proxies: None,
            killed: BTreeSet::new(),
            paused: BTreeSet::new(),
            events: Vec::new(),
            last_tick: Duration::ZERO,
            history: None,
            open_windows: BTreeSet::new(),
        })
    }

    /// Logs every fault window in `history` too, from now on.
    pub fn log_to(&mut self, history: Option<Arc<HistoryLog>>) {
        self.history = history;
    }

    /// The history's nemesis lines of a step applied from `begun` to `done`: a step that
    /// brings a fault on opens its window, the step that lifts it closes it, a one-off step
    /// (restart, expire) is a window of its own.
    fn log_window(&mut self, action: &Action, begun: Instant, done: Instant) {
        let Some(history) = &self.history else {
            return;
        };
        let label = self.specs[action.spec].to_string();
        let instant = action.step.kind.is_instant();
        if instant || (action.step.on && self.open_windows.insert(action.spec)) {
            history.nemesis(true, &label, begun);
        }
        if instant || (!action.step.on && self.open_windows.remove(&action.spec)) {
            history.nemesis(false, &label, done);
        }
    }

    /// True when some fault acts on the network path (latency, blackhole).
    pub fn needs_proxies(&self) -> bool {
        self.specs.iter().any(|s| s.kind.needs_proxy())
    }

    /// When a fault needs them, puts a fault proxy in front of each local master and points
    /// the target's URLs at the proxies (the client then connects through them).
    pub async fn route_through_proxies(&mut self, target: &mut Target) -> Result<(), LoadgenError> {
        if !self.needs_proxies() || self.proxies.is_some() {
            return Ok(());
        }
        if target.local.is_none() {
            return Err(LoadgenError::Usage(
                "latency and blackhole faults need local masters".into(),
            ));
        }
        // In front of whatever the client reaches now: the masters, or `--rtt`'s proxy.
        let upstreams = target
            .urls
            .iter()
            .map(|url| loopback_address(url))
            .collect::<Result<Vec<_>, _>>()?;
        let proxies = FaultProxies::start_for(upstreams)
            .await
            .map_err(|e| LoadgenError::Failed(format!("starting the fault proxies: {e}")))?;
        target.urls = proxies.urls();
        self.proxies = Some(proxies);
        Ok(())
    }

    /// Takes the log.
    pub fn into_events(self) -> Vec<FaultEvent> {
        self.events
    }

    /// Takes the log so far, leaving it empty (a capacity step's own events).
    pub fn take_events(&mut self) -> Vec<FaultEvent> {
        std::mem::take(&mut self.events)
    }

    /// The faults as given.
    pub fn specs(&self) -> &[FaultSpec] {
        &self.specs
    }

    /// Applies every action due by `since`, earliest first (faults due at the same time in
    /// the order they were given); `first_lock` places the ones timed from it.
    fn apply_due(
        &mut self,
        fanout: FanOut,
        since: Duration,
        first_lock: Option<Duration>,
        target: &Target,
    ) -> Result<(), LoadgenError> {
        loop {
            let due = self
                .actions
                .iter()
                .enumerate()
                .filter(|(i, _)| !self.applied[*i])
                .filter_map(|(i, a)| Some((a.at.due(first_lock)?, i)))
                .filter(|(at, _)| *at <= since)
                .min();
            let Some((_, index)) = due else {
                return Ok(());
            };
            self.applied[index] = true;
            let action = self.actions[index].clone();
            let begun = Instant::now();
            let done = blocking(|| self.apply(&action, target))?;
            self.log_window(&action, begun, Instant::now());
            let fault = self.specs[action.spec].to_string();
            self.log(fanout, (since, since + begun.elapsed()), fault, done);
        }
    }

    /// Logs a step applied at `at` and finished at `done` (both since the measured start).
    fn log(
        &mut self,
        fanout: FanOut,
        (at, done): (Duration, Duration),
        fault: String,
        action: String,
    ) {
        self.events.push(FaultEvent {
            fanout: fanout.as_str().to_string(),
            at_ms: at.as_secs_f64() * 1e3,
            done_ms: Some(done.as_secs_f64() * 1e3),
            fault,
            action,
        });
    }

    /// Applies one step; returns what it did, for the log.
    fn apply(&mut self, action: &Action, target: &Target) -> Result<String, LoadgenError> {
        let local = target
            .local
            .as_ref()
            .ok_or_else(|| LoadgenError::Failed("faults need local masters".into()))?;
        let names = master_names(&action.masters);
        // What `expire` found on each master.
        let mut expired = Vec::new();
        for &i in &action.masters {
            self.apply_to(local, action.step, i, &names, &mut expired)?;
        }
        Ok(describe(action.step, &names, &expired))
    }

    /// Applies `step` to master `i` (one of `names`); `expire` adds what it found to
    /// `expired`.
    fn apply_to(
        &mut self,
        local: &LocalMasters,
        step: Step,
        i: usize,
        names: &str,
        expired: &mut Vec<String>,
    ) -> Result<(), LoadgenError> {
        let failed = |what: &str, e: LocalError| {
            LoadgenError::Failed(format!("fault {what} on {names}: {e}"))
        };
        match (step.kind, step.on) {
            (FaultKind::Kill, true) => {
                local.kill(i).map_err(|e| failed("kill", e))?;
                self.paused.remove(&i);
                self.killed.insert(i);
            }
            (FaultKind::Kill, false) => {
                local.start_again(i).map_err(|e| failed("start again", e))?;
                self.killed.remove(&i);
            }
            (FaultKind::Pause, true) => {
                local.pause(i).map_err(|e| failed("pause", e))?;
                self.paused.insert(i);
            }
            (FaultKind::Pause, false) => {
                local.resume(i).map_err(|e| failed("resume", e))?;
                self.paused.remove(&i);
            }
            (FaultKind::Restart, _) => {
                local.restart(i).map_err(|e| failed("restart", e))?;
                self.paused.remove(&i);
                self.killed.remove(&i);
            }
            (FaultKind::Expire, _) => {
                if self.killed.contains(&i) || self.paused.contains(&i) {
                    expired.push(format!("m{i} is down, nothing to delete"));
                } else if !self.keys.is_empty() {
                    let mut args = vec!["DEL"];
                    args.extend(self.keys.iter().map(String::as_str));
                    let deleted = local.command(i, &args).map_err(|e| failed("expire", e))?;
                    expired.push(format!("deleted {deleted} lock key(s) on m{i}"));
                }
            }
            (FaultKind::Clock(ms), _) => {
                local.shift_clock(i, ms).map_err(|e| failed("clock", e))?;
            }
            (FaultKind::Latency(_) | FaultKind::Blackhole, _) => {
                let proxy = self
                    .proxies
                    .as_ref()
                    .and_then(|p| p.get(i))
                    .ok_or_else(|| {
                        LoadgenError::Failed(format!("no fault proxy in front of m{i}"))
                    })?;
                match (step.kind, step.on) {
                    (FaultKind::Latency(d), true) => {
                        proxy.set_latency(Direction::Downstream, d, Duration::ZERO)
                    }
                    (FaultKind::Latency(_), false) => {
                        proxy.set_latency(Direction::Downstream, Duration::ZERO, Duration::ZERO)
                    }
                    (_, on) => proxy.set_blackhole(on),
                }
            }
            (FaultKind::RestartDelayed, _) => unreachable!("scheduled as a kill and a start"),
        }
        Ok(())
    }

    /// Lifts every fault still on: resumes paused masters, starts killed ones again (empty),
    /// clears the proxies. Returns what it did.
    fn heal(&mut self, target: &Target) -> Result<Vec<String>, LoadgenError> {
        let mut done = Vec::new();
        if let Some(local) = &target.local {
            let paused: Vec<usize> = std::mem::take(&mut self.paused).into_iter().collect();
            for &i in &paused {
                local
                    .resume(i)
                    .map_err(|e| LoadgenError::Failed(format!("resuming m{i}: {e}")))?;
            }
            if !paused.is_empty() {
                done.push(format!("resumed {}", master_names(&paused)));
            }
            let killed: Vec<usize> = std::mem::take(&mut self.killed).into_iter().collect();
            for &i in &killed {
                local
                    .start_again(i)
                    .map_err(|e| LoadgenError::Failed(format!("starting m{i} again: {e}")))?;
            }
            if !killed.is_empty() {
                done.push(format!("started {} again (empty)", master_names(&killed)));
            }
            // Clocks set right again, so the next mode starts on real time.
            let mut reset = Vec::new();
            for i in 0..local.len() {
                let offset = local
                    .clock_offset_ms(i)
                    .map_err(|e| LoadgenError::Failed(format!("m{i}'s clock: {e}")))?;
                if offset != 0 {
                    local.shift_clock(i, -offset).map_err(|e| {
                        LoadgenError::Failed(format!("resetting m{i}'s clock: {e}"))
                    })?;
                    reset.push(i);
                }
            }
            if !reset.is_empty() {
                done.push(format!("set the clock of {} right", master_names(&reset)));
            }
        }
        if let Some(proxies) = &self.proxies {
            if proxies.iter().any(|p| p.faults() != Default::default()) {
                proxies.clear();
                done.push("cleared the proxies".into());
            }
        }
        Ok(done)
    }
}

impl RunHooks for FaultSchedule {
    fn mode_start(&mut self, fanout: FanOut, target: &Target) -> Result<(), LoadgenError> {
        // Faults due at 0 apply before any worker starts (e.g. a master down from the start).
        self.applied.fill(false);
        self.last_tick = Duration::ZERO;
        self.apply_due(fanout, Duration::ZERO, None, target)
    }

    fn tick(
        &mut self,
        fanout: FanOut,
        since_measure_start: Duration,
        first_lock: Option<Duration>,
        target: &Target,
    ) -> Result<(), LoadgenError> {
        self.last_tick = since_measure_start;
        self.apply_due(fanout, since_measure_start, first_lock, target)
    }

    fn mode_done(&mut self, fanout: FanOut, target: &Target) -> Result<(), LoadgenError> {
        let pending = self.applied.iter().filter(|&&done| !done).count();
        let begun = Instant::now();
        let healed = blocking(|| self.heal(target))?;
        if let Some(history) = &self.history {
            for spec in std::mem::take(&mut self.open_windows) {
                history.nemesis(false, &self.specs[spec].to_string(), Instant::now());
            }
        }
        if !healed.is_empty() || pending > 0 {
            let mut action = healed.join("; ");
            if pending > 0 {
                if !action.is_empty() {
                    action.push_str("; ");
                }
                action.push_str(&format!("{pending} step(s) not reached"));
            }
            let at = self.last_tick;
            self.log(
                fanout,
                (at, at + begun.elapsed()),
                "end of mode".into(),
                action,
            );
        }
        self.applied.fill(false);
        Ok(())
    }
}

/// What a step applied to `names` did, for the log (`expired`: what `expire` found).
fn describe(step: Step, names: &str, expired: &[String]) -> String {
    match (step.kind, step.on) {
        (FaultKind::Kill, true) => format!("killed {names}"),
        (FaultKind::Kill, false) => format!("started {names} again (empty)"),
        (FaultKind::Pause, true) => format!("paused {names} (SIGSTOP)"),
        (FaultKind::Pause, false) => format!("resumed {names} (SIGCONT)"),
        (FaultKind::Restart | FaultKind::RestartDelayed, _) => {
            format!("restarted {names} at once (empty)")
        }
        (FaultKind::Latency(d), true) => format!("added {d:?} to every reply of {names}"),
        (FaultKind::Latency(_), false) => format!("removed the latency of {names}"),
        (FaultKind::Blackhole, true) => format!("blackholed {names}"),
        (FaultKind::Blackhole, false) => format!("lifted the blackhole of {names}"),
        (FaultKind::Expire, _) => expired.join("; "),
        (FaultKind::Clock(ms), _) => format!("jumped the wall clock of {names} by {ms:+} ms"),
    }
}

fn master_names(masters: &[usize]) -> String {
    crate::engine::faults::master::master_names(masters, ", ")
}

/// The address of a local master's URL (`redis://127.0.0.1:PORT`).
fn loopback_address(url: &str) -> Result<std::net::SocketAddr, LoadgenError> {
    url.strip_prefix("redis://")
        .and_then(|rest| rest.trim_end_matches('/').parse().ok())
        .ok_or_else(|| LoadgenError::Failed(format!("{url} is not a local master's address")))
}

/// Runs `f`, which blocks (signals, process start, a Redis command), without stalling the
/// other tasks of a multi-threaded runtime.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}
