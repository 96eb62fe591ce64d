//! Collecting a coordinated run: wait (bounded) for every agent's result on the coordinator,
//! read each within its limits (`STRLEN` first, never whole), merge them, and check the
//! agents' ownership windows against each other. `crate::commands::collect` prints it.
//!
//! Everything (connecting, waiting, reading, decoding, merging, the check) ends by the wait
//! given, and at once on SIGINT/SIGTERM/SIGHUP: the CPU-bound stages run on a thread of their
//! own ([`offload`]) that [`collect`] stops waiting for (and tells to stop).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use super::agent::{AgentInfo, MAX_INFO_BYTES, MAX_PHASES};
use super::overlap::{self, AgentWindows, Findings, MAX_WINDOWS_BYTES};
use super::{key, Coordinator, KEY_TTL, MAX_AGENTS};
use crate::error::LoadgenError;
use crate::model::document::{self, Document};
use crate::model::limits;
use crate::signals::{Signal, Signals, Stop};

/// What `collect` asks for: the coordinator, the run, and how long it may take (`--wait`).
#[derive(Debug, Clone)]
pub struct Collecting {
    pub coordinator: String,
    pub run_id: String,
    pub wait: Duration,
}

/// Everything read and judged before the report is printed: every agent's timings and
/// result (agent 1 first), their merge, and the cross-agent check.
#[derive(Debug)]
pub struct Collected {
    pub infos: Vec<AgentInfo>,
    pub docs: Vec<Document>,
    pub merged: Document,
    pub findings: Findings,
}

/// Where `collect` is: in words (said when a signal stops it), and the error should `--wait`
/// run out there.
#[derive(Debug, Default)]
struct Stage {
    words: String,
    ran_out: String,
}

impl Collecting {
    /// The stage of doing `what`.
    fn doing(&self, what: String) -> Stage {
        let (id, wait) = (&self.run_id, self.wait);
        let ran_out = format!(
            "run {id}: collect did not finish within {wait:?} (--wait): it was {what}; no report was printed (a longer --wait gives it more time)"
        );
        Stage {
            words: what,
            ran_out,
        }
    }
}

/// Every agent's stored result read, merged and checked across agents ([`gather`]), ended
/// by `--wait` (an error naming the stage) or a signal (128 + its number).
pub async fn collect(asked: &Collecting, signals: &Signals) -> Result<Collected, LoadgenError> {
    let deadline = tokio::time::Instant::now() + asked.wait;
    let progress = RefCell::new(asked.doing(format!(
        "connecting to the coordinator {}",
        redlock_core::redact_url(&asked.coordinator)
    )));
    let cancel = Stop::new();
    let out = tokio::select! {
        out = gather(asked, &progress, &cancel) => out,
        () = signals.stop.wait() => {
            let signal = signals.received().unwrap_or(Signal::Sigint);
            // The error's own words promise a partial report; say what collect was doing.
            eprintln!("redlock-loadgen: collect stopped by {signal} while {}; no report was printed", progress.borrow().words);
            Err(LoadgenError::Interrupted(signal))
        }
        () = tokio::time::sleep_until(deadline) => Err(LoadgenError::Failed(progress.take().ran_out)),
    };
    // A worker thread still running stops at its next look at the flag; its answer is dropped.
    cancel.set();
    out
}

/// Runs CPU-bound `work` on a thread of its own, so a signal or the deadline can stop
/// waiting for it (and the process can end without joining it); `work` gets the flag that
/// says it was abandoned.
async fn offload<T: Send + 'static>(
    cancel: &Arc<Stop>,
    work: impl FnOnce(&Stop) -> Result<T, LoadgenError> + Send + 'static,
) -> Result<T, LoadgenError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let cancel = Arc::clone(cancel);
    std::thread::Builder::new()
        .name("collect".into())
        .spawn(move || {
            let _ = tx.send(work(&cancel));
        })
        .map_err(|e| LoadgenError::Failed(format!("starting a thread: {e}")))?;
    rx.await
        .map_err(|_| LoadgenError::Failed("collect's worker thread panicked".into()))?
}

/// The error for a stage stopped by [`collect`] (never shown: `collect` returns its own).
fn stopped() -> LoadgenError {
    LoadgenError::Failed("collect was stopped".into())
}

/// Agent `n`'s `what` is refused: `why`.
fn bad(id: &str, n: u32, what: &str, why: impl std::fmt::Display) -> LoadgenError {
    LoadgenError::Failed(format!("run {id}: agent {n}'s {what}: {why}"))
}

async fn gather(
    asked: &Collecting,
    progress: &RefCell<Stage>,
    cancel: &Arc<Stop>,
) -> Result<Collected, LoadgenError> {
    let c = Coordinator::connect(&asked.coordinator).await?;
    let g = Gathering {
        c,
        asked,
        id: &asked.run_id,
        progress,
        cancel,
    };
    let agents = g.agent_count().await?;
    g.wait_for_results(agents).await?;
    let mut infos = Vec::with_capacity(agents as usize);
    for n in 1..=agents {
        infos.push(g.timings(n).await?);
    }
    let limit = format!(
        "{} MiB, the most a result file may hold",
        limits::MAX_FILE_BYTES >> 20
    );
    let mut texts = Vec::with_capacity(agents as usize);
    for n in 1..=agents {
        let field = ("result", &*format!("result:{n}"));
        texts.push(g.read(n, field, (limits::MAX_FILE_BYTES, &limit)).await?);
    }
    g.doing(format!("decoding and merging the {agents} agents' results"));
    let id = asked.run_id.clone();
    let merge = move |cancel: &Stop| merge_results(id, texts, cancel);
    let (docs, merged) = offload(cancel, merge).await?;
    let findings = g.check_windows(&infos).await?;
    Ok(Collected {
        infos,
        docs,
        merged,
        findings,
    })
}

/// One `collect` under way: the coordinator, the run, where it is, and the flag that stops
/// its worker threads.
struct Gathering<'a> {
    c: Coordinator,
    asked: &'a Collecting,
    id: &'a str,
    progress: &'a RefCell<Stage>,
    cancel: &'a Arc<Stop>,
}

impl Gathering<'_> {
    fn doing(&self, what: String) {
        *self.progress.borrow_mut() = self.asked.doing(what);
    }

    /// The run's agent count, within 1..=[`MAX_AGENTS`].
    async fn agent_count(&self) -> Result<u32, LoadgenError> {
        let (c, id) = (&self.c, self.id);
        self.doing(format!("reading run {id}'s agent count"));
        let agents: u32 = c.get(&key(id, "agents")).await?.ok_or_else(|| {
            LoadgenError::Usage(format!(
                "coordinator {} knows no run {id} (no agent joined it, or its keys expired after {} h)",
                c.shown,
                KEY_TTL.as_secs() / 3600
            ))
        })?;
        if !(1..=MAX_AGENTS).contains(&agents) {
            return Err(LoadgenError::Failed(format!(
                "coordinator {}: run {id}'s agent count (key {}) is {agents}, not 1 to {MAX_AGENTS}: not a run redlock-loadgen started",
                c.shown,
                key(id, "agents")
            )));
        }
        Ok(agents)
    }

    /// Reads agent `n`'s `what`, stored under `name`, within `max` bytes: its length first
    /// (`STRLEN`), then at most `max` + 1 bytes of it (`GETRANGE`), so a value that grew in
    /// between is not read whole either. More is refused (naming the agent, the field, the key
    /// and both sizes) before any of it is read: a refused value costs no memory here.
    async fn read(
        &self,
        n: u32,
        (what, name): (&str, &str),
        (max, limit): (u64, &str),
    ) -> Result<Vec<u8>, LoadgenError> {
        self.doing(format!("reading agent {n}'s {what}"));
        let k = key(self.id, name);
        let too_large = |size| {
            let why = format!("{size} bytes under key {k}, more than the {max} bytes read ({limit}); nothing of it was read");
            bad(self.id, n, what, why)
        };
        let size: u64 = self.c.query(redis::cmd("STRLEN").arg(&k)).await?;
        if size > max {
            return Err(too_large(size));
        }
        let mut bytes = Vec::new();
        if size > 0 {
            bytes = self
                .c
                .query(redis::cmd("GETRANGE").arg(&k).arg(0).arg(max))
                .await?;
        }
        match bytes.len() as u64 {
            // No such key (or an empty string: nothing the agents store is empty).
            0 => Err(bad(self.id, n, what, format!("missing (key {k})"))),
            size if size > max => Err(too_large(size)),
            _ => Ok(bytes),
        }
    }

    /// Agent `n`'s timings (`agent:n`): at most [`MAX_INFO_BYTES`] and [`MAX_PHASES`] phases.
    async fn timings(&self, n: u32) -> Result<AgentInfo, LoadgenError> {
        let limit = format!(
            "{} MiB, room for the most phases an agent runs, {MAX_PHASES}",
            MAX_INFO_BYTES >> 20
        );
        let name = format!("agent:{n}");
        let bytes = self
            .read(n, ("timings", &name), (MAX_INFO_BYTES, &limit))
            .await?;
        let bad = |why: String| bad(self.id, n, "timings", why);
        let info: AgentInfo = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
        if info.phases.len() > MAX_PHASES {
            let phases = info.phases.len();
            return Err(bad(format!("{phases} phases, at most {MAX_PHASES}")));
        }
        if info.agent != n {
            return Err(bad(format!("they name agent {}", info.agent)));
        }
        Ok(info)
    }

    /// The cross-agent check, phase by phase (so only one phase's windows are held at a time).
    async fn check_windows(&self, infos: &[AgentInfo]) -> Result<Findings, LoadgenError> {
        let (id, cancel) = (self.id, self.cancel);
        let limit = format!("{} windows", overlap::MAX_WINDOWS);
        let mut findings = Findings::default();
        let phases = infos.iter().map(|i| i.phases.len()).max().unwrap_or(0);
        if phases > 0 {
            eprintln!(
                "redlock-loadgen: checking mutual exclusion across the {} agents of run {id} ({phases} phase(s))",
                infos.len()
            );
        }
        for k in 0..phases {
            let mut of_phase = Vec::with_capacity(infos.len());
            for info in infos {
                let Some(phase) = info.phases.get(k) else {
                    continue;
                };
                let (n, p) = (info.agent, phase.phase);
                let what = (
                    &*format!("windows of phase {p}"),
                    &*format!("windows:{n}:{p}"),
                );
                let bytes = self.read(n, what, (MAX_WINDOWS_BYTES, &limit)).await?;
                self.doing(format!("decoding agent {n}'s windows of phase {p}"));
                let id = id.to_string();
                let decode = move |_: &Stop| {
                    AgentWindows::decode(n, &bytes).map_err(|e| bad(&id, n, "windows", e))
                };
                of_phase.push(offload(cancel, decode).await?);
            }
            let windows: usize = of_phase.iter().map(|a| a.windows.len()).sum();
            self.doing(format!(
                "checking the {windows} windows of phase {} of {} agents for overlaps",
                k + 1,
                of_phase.len()
            ));
            let check =
                move |cancel: &Stop| overlap::check(of_phase, cancel).map_err(|_| stopped());
            findings.add(&offload(cancel, check).await?);
        }
        Ok(findings)
    }

    /// Waits until every agent 1..=`agents` stored its result (the stage: the ones not yet,
    /// as last seen), or the run was given up. The caller bounds it by its deadline.
    async fn wait_for_results(&self, agents: u32) -> Result<(), LoadgenError> {
        let (c, id) = (&self.c, self.id);
        let mut missing: Vec<u32> = (1..=agents).collect();
        let mut said = false;
        loop {
            let list: Vec<String> = missing.iter().map(u32::to_string).collect();
            *self.progress.borrow_mut() = Stage {
                words: format!("waiting for {} of {agents} agents' results", missing.len()),
                ran_out: format!(
                    "run {id}: only {} of {agents} agents stored a result within {:?} (--wait); missing: agent {}",
                    agents as usize - missing.len(),
                    self.asked.wait,
                    list.join(", ")
                ),
            };
            let mut still = Vec::new();
            for &n in missing.iter() {
                let exists: bool = c
                    .query(redis::cmd("EXISTS").arg(key(id, &format!("result:{n}"))))
                    .await?;
                if !exists {
                    still.push(n);
                }
            }
            missing = still;
            if missing.is_empty() {
                return Ok(());
            }
            let arrived = agents as usize - missing.len();
            if let Some(why) = c.get::<String>(&key(id, "abandoned")).await? {
                return Err(LoadgenError::Failed(format!(
                    "run {id} was given up: {why} ({arrived} of {agents} results stored)"
                )));
            }
            if !said {
                said = true;
                eprintln!(
                    "redlock-loadgen: waiting for {} of {agents} results of run {id}",
                    missing.len()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// Parses the results (agent 1 first) and merges them as `merge` would.
fn merge_results(
    id: String,
    texts: Vec<Vec<u8>>,
    cancel: &Stop,
) -> Result<(Vec<Document>, Document), LoadgenError> {
    let mut docs = Vec::with_capacity(texts.len());
    for (n, text) in (1..).zip(texts) {
        if cancel.is_set() {
            return Err(stopped());
        }
        let text = String::from_utf8(text).map_err(|e| bad(&id, n, "result", e))?;
        docs.push(document::parse(&text).map_err(|e| bad(&id, n, "result", e))?);
    }
    let named = (1..)
        .zip(&docs)
        .map(|(n, doc): (u32, &Document)| (format!("agent {n}"), doc.clone()))
        .collect();
    let merged = crate::merge::merge(named, crate::merge::Allow::default())?;
    Ok((docs, merged))
}
