//! `redlock-loadgen collect`: waits (bounded) for every agent's result on the coordinator,
//! prints their merge exactly as `merge` would, one line per agent, how the phases started,
//! and the cross-agent mutual-exclusion check.

use std::time::Duration;

use super::merge::print_merged;
use super::shared::Session;
use crate::cli::CollectArgs;
use crate::commands::output::Outputs;
use crate::engine::coordinator::agent::AgentInfo;
use crate::engine::coordinator::overlap::{self, AgentWindows, Findings};
use crate::engine::coordinator::{key, Coordinator, KEY_TTL, MAX_AGENTS};
use crate::error::LoadgenError;
use crate::model::document::{self, Document};
use crate::model::estimates::judge_modes;
use crate::model::limits;
use crate::model::mode::ModeStats;
use crate::model::threshold::{JudgedThreshold, Threshold};

/// One agent's stored result.
struct Part {
    info: AgentInfo,
    doc: Document,
    windows: Vec<AgentWindows>,
}

pub fn command(args: CollectArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let parts = session.rt.block_on(fetch(&args))?;
    let named: Vec<(String, Document)> = parts
        .iter()
        .map(|p| {
            (
                format!("agent {} ({})", p.info.agent, p.info.host),
                p.doc.clone(),
            )
        })
        .collect();
    let mut merged = crate::merge::merge(named, crate::merge::Allow::default())?;
    let thresholds = judge_whole_run(&mut merged, &args.thresholds)?;
    let mut findings = Findings::default();
    let phases = parts.iter().map(|p| p.windows.len()).max().unwrap_or(0);
    for k in 0..phases {
        let of_phase: Vec<AgentWindows> = parts
            .iter()
            .filter_map(|p| p.windows.get(k).cloned())
            .collect();
        findings.add(&overlap::check(&of_phase));
    }
    let coordination = serde_json::json!({
        "run_id": args.run_id,
        "agents": parts.iter().map(|p| &p.info).collect::<Vec<_>>(),
        "cross_agent": {
            "windows": findings.windows,
            "certain_overlaps": findings.certain,
            "undecidable_pairs": findings.undecidable,
            "max_bound_us": findings.max_bound_us,
            "partial": findings.truncated,
            "certain_examples": findings.examples,
        },
    });
    let violations = print_merged(&merged, &outputs, Some(("coordination", coordination)))?;
    outputs.print_report(&agents_section(&parts, &merged, &findings))?;
    match violations + findings.certain {
        0 => crate::commands::run::check_thresholds(&thresholds),
        n => Err(LoadgenError::Violations(n)),
    }
}

/// `--threshold` on the merged result of a distributed `run` (kept in its report, so the text,
/// JSON and HTML list them); refused for other kinds and for `.ratio` figures.
fn judge_whole_run(
    merged: &mut Document,
    thresholds: &[Threshold],
) -> Result<Vec<JudgedThreshold>, LoadgenError> {
    if thresholds.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(t) = thresholds.iter().find(|t| t.is_ratio()) {
        return Err(LoadgenError::Usage(format!(
            "--threshold '{t}': a .ratio figure compares two results; use it with `compare`"
        )));
    }
    match merged {
        Document::Run(report) => {
            report.thresholds = judge_modes(&report.modes, thresholds);
            Ok(report.thresholds.clone())
        }
        _ => Err(LoadgenError::Usage(
            "--threshold judges the figures of a run; this coordinated run is a sweep or a capacity search".into(),
        )),
    }
}

async fn fetch(args: &CollectArgs) -> Result<Vec<Part>, LoadgenError> {
    let c = Coordinator::connect(&args.coordinator).await?;
    let id = &args.run_id;
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
    // The whole wait, every coordinator request included, ends by the deadline.
    let deadline = tokio::time::Instant::now() + args.wait;
    let mut missing = Vec::new();
    let waited = tokio::time::timeout_at(deadline, wait_for_results(&c, id, agents, &mut missing));
    match waited.await {
        Ok(result) => result?,
        Err(_) => {
            let arrived = agents as usize - missing.len();
            return Err(LoadgenError::Failed(format!(
                "run {id}: only {arrived} of {agents} agents stored a result within {:?} (--wait); missing: agent {}",
                args.wait,
                missing
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let mut parts = Vec::with_capacity(agents as usize);
    for n in 1..=agents {
        let bad = |what: &str, e: String| {
            LoadgenError::Failed(format!("run {id}: agent {n}'s {what}: {e}"))
        };
        // Read only what a result file may hold (the same limit as `report` and `merge`).
        let size: u64 = c
            .query(redis::cmd("STRLEN").arg(key(id, &format!("result:{n}"))))
            .await?;
        limits::check_file_size(size).map_err(|e| bad("result", e))?;
        let text: String = c
            .get(&key(id, &format!("result:{n}")))
            .await?
            .ok_or_else(|| bad("result", "expired".into()))?;
        let doc = document::parse(&text).map_err(|e| bad("result", e))?;
        let info: String = c
            .get(&key(id, &format!("agent:{n}")))
            .await?
            .ok_or_else(|| bad("timings", "missing".into()))?;
        let info: AgentInfo =
            serde_json::from_str(&info).map_err(|e| bad("timings", e.to_string()))?;
        let mut windows = Vec::with_capacity(info.phases.len());
        for phase in &info.phases {
            let bytes: Vec<u8> = c
                .get(&key(id, &format!("windows:{n}:{}", phase.phase)))
                .await?
                .ok_or_else(|| bad("windows", format!("phase {} missing", phase.phase)))?;
            windows.push(AgentWindows::decode(n, &bytes).map_err(|e| bad("windows", e))?);
        }
        parts.push(Part { info, doc, windows });
    }
    Ok(parts)
}

/// Waits until every agent 1..=`agents` stored its result (`missing`: the ones not yet, as
/// last seen), or the run was given up. The caller bounds it by its deadline.
async fn wait_for_results(
    c: &Coordinator,
    id: &str,
    agents: u32,
    missing: &mut Vec<u32>,
) -> Result<(), LoadgenError> {
    *missing = (1..=agents).collect();
    let mut said = false;
    loop {
        let mut still = Vec::new();
        for &n in missing.iter() {
            let exists: bool = c
                .query(redis::cmd("EXISTS").arg(key(id, &format!("result:{n}"))))
                .await?;
            if !exists {
                still.push(n);
            }
        }
        *missing = still;
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

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// One agent's figures for one mode: host, rate, p99, generator CPU, generator-bound.
fn agent_line(agent: &AgentInfo, m: &ModeStats, at: &str) -> String {
    let j = &m.generator.judgement;
    format!(
        "  agent {:<3} {:<24} {:<10} {at}{:>10.0} acquires/s  p99 {:>9.3} ms  gen CPU {:>3.0}%{}",
        agent.agent,
        agent.host,
        m.fanout.as_str(),
        m.acquires_per_s(),
        ms(m.latency.acquire.quantile(0.99)),
        100.0 * m.generator.cpu.core_share(),
        if j.generator_bound {
            "  GENERATOR-BOUND: this agent measured its own machine"
        } else {
            ""
        }
    )
}

fn agents_section(parts: &[Part], merged: &Document, findings: &Findings) -> String {
    let mut out = format!("\nagents ({}):\n", parts.len());
    for p in parts {
        match (&p.doc, merged) {
            (Document::Run(r), _) => {
                for m in &r.modes {
                    out.push_str(&agent_line(&p.info, m, ""));
                    out.push('\n');
                }
            }
            (Document::Capacity(c), Document::Capacity(all)) => {
                // Its share of each answer (or its last step when there is none).
                for a in &all.answers {
                    let share = a.rate_per_s.map(|r| r / parts.len() as f64);
                    let step = c
                        .steps
                        .iter()
                        .rev()
                        .filter(|s| s.fanout == a.fanout)
                        .find(|s| share.is_none_or(|r| (s.rate - r).abs() < 0.5))
                        .or_else(|| c.steps.iter().rev().find(|s| s.fanout == a.fanout));
                    if let Some((s, m)) = step.and_then(|s| Some((s, s.report.modes.first()?))) {
                        let at = format!("step at {:>8.0}/s ", s.rate);
                        out.push_str(&agent_line(&p.info, m, &at));
                        out.push('\n');
                    }
                }
            }
            _ => {}
        }
    }
    out.push_str(
        "phase starts (planned on the coordinator's clock, the same instant for every agent):\n",
    );
    let phases = parts.iter().map(|p| p.info.phases.len()).max().unwrap_or(0);
    for k in 0..phases {
        let of: Vec<_> = parts.iter().filter_map(|p| p.info.phases.get(k)).collect();
        let planned: Vec<u64> = of.iter().map(|s| s.planned_start_unix_us).collect();
        let same = planned.windows(2).all(|w| w[0] == w[1]);
        let late = |f: fn(&crate::engine::coordinator::agent::PhaseStart) -> u64| {
            (
                of.iter().map(|s| f(s)).min().unwrap_or(0),
                of.iter().map(|s| f(s)).max().unwrap_or(0),
            )
        };
        let (late_min, late_max) = late(|s| s.woke_late_us);
        let (_, rtt_max) = late(|s| s.sync_rtt_us);
        out.push_str(&format!(
            "  phase {:<3} {:<10} {} at coordinator {} µs; timers fired {:.3}..{:.3} ms after it (skew {:.3} ms), clock mapping within ±{:.3} ms\n",
            k + 1,
            of.first().map_or("", |s| s.fanout.as_str()),
            if same { "planned" } else { "PLANNED DIFFERENTLY" },
            planned.first().copied().unwrap_or(0),
            ms(late_min),
            ms(late_max),
            ms(late_max - late_min),
            ms(rtt_max.div_ceil(2)),
        ));
    }
    out.push_str(&format!(
        "cross-agent mutual exclusion (ownership windows in coordinator time): {} windows, {} certain overlap(s), {} pair(s) undecidable within the agents' error bounds (at most {:.3} ms){}\n",
        findings.windows,
        findings.certain,
        findings.undecidable,
        ms(findings.max_bound_us),
        if findings.truncated {
            "; PARTIAL: an agent kept only its first windows of a phase"
        } else {
            ""
        }
    ));
    for example in &findings.examples {
        out.push_str(&format!("  CERTAIN OVERLAP {example}\n"));
    }
    out
}
