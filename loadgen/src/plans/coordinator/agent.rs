//! One agent of a coordinated run: joins, starts every phase at the planned instant (as the
//! runner's [`RunHooks`]), keeps its ownership windows in coordinator time, and stores its
//! result, timings and windows on the coordinator when it is done.

use std::time::{Duration, Instant};

use futures_util::future::LocalBoxFuture;
use redlock_core::FanOut;
use serde::{Deserialize, Serialize};

use super::clock::{self, Sync};
use super::overlap::{AgentWindows, CoordWindow, MAX_WINDOWS};
use super::{given_up, host_name, key, Coordination, Coordinator, KEY_TTL};
use crate::engine::checker::Window;
use crate::engine::config::RunConfig;
use crate::engine::hooks::RunHooks;
use crate::engine::runner::RunResult;
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::model::document;
use crate::model::report::Report;
use crate::signals::Signals;

/// The last stretch before a planned start spent yielding instead of sleeping.
const SPIN_BEFORE_START: Duration = Duration::from_millis(2);

/// How one phase started on one agent (stored under `agent:n`, shown by `collect`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PhaseStart {
    pub phase: u32,
    pub fanout: String,
    /// The planned start of the warm-up, coordinator µs since the Unix epoch (the same for
    /// every agent).
    pub planned_start_unix_us: u64,
    /// Round trip of the `TIME` sample this agent mapped the instant with, µs.
    pub sync_rtt_us: u64,
    /// How late this agent's timer fired after the planned instant (its own clock), µs.
    pub woke_late_us: u64,
    /// Error bound of this phase's windows in coordinator time, µs (see `overlap`).
    pub bound_us: u64,
}

/// The most phases an agent's timings may list: as many as a result may hold steps
/// ([`crate::model::limits::MAX_ITEMS`]; a capacity search takes at most about 1,200).
pub const MAX_PHASES: usize = crate::model::limits::MAX_ITEMS;
/// The largest timings record (`agent:n`) `collect` reads: 1 MiB, room for [`MAX_PHASES`]
/// phases of about 200 bytes each.
pub const MAX_INFO_BYTES: u64 = 1 << 20;

/// What an agent stores about itself besides its result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentInfo {
    pub agent: u32,
    pub host: String,
    pub phases: Vec<PhaseStart>,
}

#[derive(Debug)]
struct Phase {
    start: PhaseStart,
    sync: Sync,
    /// Its windows (their agent and bound set by [`Agent::finish`]).
    windows: AgentWindows,
}

/// A joined agent.
#[derive(Debug)]
pub struct Agent {
    pub(super) coordinator: Coordinator,
    pub run_id: String,
    /// 1-based, in the order agents joined.
    pub number: u32,
    pub agents: u32,
    pub(super) join_timeout: Duration,
    host: String,
    phases: Vec<Phase>,
    /// Phases already aligned: the others are of the current `runner::run` call.
    aligned: usize,
    /// A signal ends any wait for the others (and the run, for everybody).
    pub(super) signals: Signals,
}

impl Agent {
    /// Connects to the coordinator and registers under the run id (`kind`: run or capacity).
    pub async fn join(
        c: &Coordination,
        kind: &str,
        signals: &Signals,
    ) -> Result<Agent, LoadgenError> {
        let coordinator = Coordinator::connect(&c.url).await?;
        let run_id = coordinator.run_id(c.run_id.as_deref()).await?;
        for (name, mine) in [("agents", c.agents.to_string()), ("kind", kind.to_string())] {
            let theirs = coordinator.set_once(&key(&run_id, name), &mine).await?;
            if theirs != mine {
                return Err(LoadgenError::Usage(format!(
                    "run {run_id} on coordinator {}: its agents run with {name} {theirs}, this one with {mine}",
                    coordinator.shown
                )));
            }
        }
        let joined = key(&run_id, "joined");
        let number: u32 = coordinator.query(redis::cmd("INCR").arg(&joined)).await?;
        let ttl = KEY_TTL.as_secs();
        coordinator
            .query::<()>(redis::cmd("EXPIRE").arg(&joined).arg(ttl))
            .await?;
        if number > c.agents {
            return Err(LoadgenError::Usage(format!(
                "run {run_id} already has its --agents {} agents (this would be number {number})",
                c.agents
            )));
        }
        if number == c.agents {
            coordinator.close_open_run(&run_id).await?;
        }
        eprintln!(
            "redlock-loadgen: agent {number} of {} joined run {run_id} on coordinator {}; collect with: redlock-loadgen collect --coordinator URL --run-id {run_id}",
            c.agents, coordinator.shown
        );
        Ok(Agent {
            coordinator,
            run_id,
            number,
            agents: c.agents,
            join_timeout: c.join_timeout,
            host: host_name(),
            phases: Vec::new(),
            aligned: 0,
            signals: signals.clone(),
        })
    }

    /// The coordinator key `name` of this run.
    pub(super) fn key(&self, name: &str) -> String {
        key(&self.run_id, name)
    }

    async fn start_phase(
        &mut self,
        fanout: FanOut,
        warmup: Duration,
    ) -> Result<Option<Instant>, LoadgenError> {
        let phase = self.phases.len() as u32 + 1;
        let what = if phase == 1 {
            "joined".to_string()
        } else {
            format!("reached phase {phase} ({} fan-out)", fanout.as_str())
        };
        let (planned, sync) = self.barrier(phase, &what, warmup).await?;
        let local = sync.to_local(planned);
        // tokio's timers fire on whole milliseconds: sleep until just before, then yield
        // until the instant (a start within tens of µs of the plan when the core is free).
        tokio::time::sleep_until((local - SPIN_BEFORE_START).into()).await;
        while Instant::now() < local {
            tokio::task::yield_now().await;
        }
        let woke_late = Instant::now().saturating_duration_since(local);
        self.phases.push(Phase {
            start: PhaseStart {
                phase,
                fanout: fanout.as_str().to_string(),
                planned_start_unix_us: planned,
                sync_rtt_us: sync.rtt_us,
                woke_late_us: woke_late.as_micros() as u64,
                bound_us: 0,
            },
            sync,
            windows: AgentWindows::default(),
        });
        Ok(Some(local))
    }

    /// Puts the measured windows of the phases of `result` on the coordinator's timeline
    /// (every agent's measured window then starts at the same whole second).
    pub fn align(&mut self, result: &mut RunResult) {
        let warmup_us = result.config.warmup.as_micros() as u64;
        for (mode, phase) in result.modes.iter_mut().zip(&self.phases[self.aligned..]) {
            mode.measured_from_unix_ms = (phase.start.planned_start_unix_us + warmup_us) / 1000;
        }
        self.aligned = self.phases.len();
    }

    /// Stores this agent's result (`--json` text), timings and windows. The windows' error
    /// bounds come from a last clock synchronisation now.
    pub async fn finish(&mut self, result_json: &str) -> Result<(), LoadgenError> {
        let end = clock::sync(&self.coordinator).await?;
        let n = self.number;
        for phase in &mut self.phases {
            phase.start.bound_us = phase.sync.bound_until(&end);
            let windows = AgentWindows {
                agent: n,
                bound_us: phase.start.bound_us,
                ..std::mem::take(&mut phase.windows)
            };
            let name = key(&self.run_id, &format!("windows:{n}:{}", phase.start.phase));
            self.coordinator.put(&name, windows.encode()).await?;
        }
        let phases = self.phases.iter().map(|p| p.start.clone()).collect();
        let info = AgentInfo {
            agent: n,
            host: self.host.clone(),
            phases,
        };
        let info = serde_json::to_string(&info).expect("agent info serializes");
        self.put(&format!("agent:{n}"), info).await?;
        self.put(&format!("result:{n}"), result_json).await
    }

    /// Stores `value` under the coordinator key `name` of this run.
    async fn put(&self, name: &str, value: impl redis::ToRedisArgs) -> Result<(), LoadgenError> {
        self.coordinator.put(&self.key(name), value).await
    }

    /// Gives the run up for everybody (best effort): the others stop at their next barrier
    /// with `why` instead of waiting out the join timeout, and agents without `--run-id` open
    /// a new run instead of joining this one.
    pub async fn abandon(&self, why: &str) {
        let text = format!("agent {} ({}) failed: {why}", self.number, self.host);
        let _ = self
            .coordinator
            .set_once(&self.key("abandoned"), &text)
            .await;
        let _ = self.coordinator.close_open_run(&self.run_id).await;
    }

    /// Capacity: stores this agent's result of step `step`, waits (bounded by the join
    /// timeout) for every agent's, and returns their merge — the same on every agent, so
    /// every agent's search takes the same next step.
    pub async fn exchange(&self, step: u32, report: &Report) -> Result<Report, LoadgenError> {
        let mine = crate::render::json::render(report);
        let name = |n: u32| format!("step:{step}:{n}");
        self.put(&name(self.number), mine).await?;
        let deadline = Instant::now() + self.join_timeout + crate::engine::runner::GRACE;
        let mut parts = Vec::with_capacity(self.agents as usize);
        for n in 1..=self.agents {
            let text = loop {
                let c = &self.coordinator;
                if let Some(text) = c.get::<String>(&self.key(&name(n))).await? {
                    break text;
                }
                if let Some(why) = c.get::<String>(&self.key("abandoned")).await? {
                    return Err(given_up(&self.run_id, &why));
                }
                if let Some(signal) = self.signals.received() {
                    self.abandon(&format!("interrupted by {signal}")).await;
                    return Err(LoadgenError::Interrupted(signal));
                }
                if Instant::now() >= deadline {
                    let why = format!(
                        "agent {n}'s result of step {step} did not arrive within {:?} (--join-timeout)",
                        self.join_timeout
                    );
                    self.abandon(&why).await;
                    return Err(LoadgenError::Failed(format!("run {}: {why}", self.run_id)));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            };
            let failed =
                |why: String| LoadgenError::Failed(format!("agent {n}'s step {step}{why}"));
            let doc = document::parse(&text).map_err(|e| failed(format!(": {e}")))?;
            let kind = doc.kind();
            let report = doc.into_run();
            let report = report.ok_or_else(|| failed(format!(" is a {kind} result")))?;
            parts.push((format!("agent {n}"), *report));
        }
        crate::merge::merge_runs(parts, crate::merge::Allow::default())
    }
}

impl RunHooks for Agent {
    fn start_at(
        &mut self,
        fanout: FanOut,
        warmup: Duration,
    ) -> LocalBoxFuture<'_, Result<Option<Instant>, LoadgenError>> {
        Box::pin(self.start_phase(fanout, warmup))
    }

    fn windows(&mut self, _fanout: FanOut, windows: &[Window]) {
        let Some(phase) = self.phases.last_mut() else {
            return;
        };
        let base = phase.start.planned_start_unix_us;
        let kept = windows.len().min(MAX_WINDOWS);
        phase.windows.truncated = windows.len() > kept;
        phase.windows.windows = windows[..kept]
            .iter()
            .map(|w| CoordWindow {
                resource: w.resource,
                // Rounded inwards: the check only ever under-states an overlap.
                start_us: base + w.start_ns.div_ceil(1000),
                end_us: base + w.end_ns / 1000,
                token: w.token,
            })
            .collect();
    }
}

/// What an agent's run tells its command: what is about to run, and the report of a result.
pub type AgentHooks<'a> = (
    &'a dyn Fn(&Agent, &Target),
    &'a dyn Fn(&RunResult) -> Report,
);

/// `run --coordinator`: joins the run on the coordinator, requires a quorum of `target`, runs
/// `cfg` with every phase started at the agents' common instant, and stores this agent's
/// report (made by `report_of`) for `collect`; a failure gives the run up for every agent.
pub async fn run_as_agent(
    cfg: &RunConfig,
    target: &mut Target,
    c: &Coordination,
    signals: &Signals,
    (announce, report_of): AgentHooks<'_>,
) -> Result<Report, LoadgenError> {
    let mut agent = Agent::join(c, "run", signals).await?;
    let outcome = async {
        target.probe_versions().await;
        crate::engine::probe::require_quorum(target, cfg.quorum).await?;
        announce(&agent, target);
        let mut result = crate::engine::runner::run(cfg, target, &mut agent, signals).await?;
        agent.align(&mut result);
        let report = report_of(&result);
        agent.finish(&crate::render::json::render(&report)).await?;
        Ok::<_, LoadgenError>(report)
    }
    .await;
    if let Err(e) = &outcome {
        agent.abandon(&e.to_string()).await;
    }
    outcome
}
