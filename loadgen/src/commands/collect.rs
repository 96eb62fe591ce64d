//! `redlock-loadgen collect`: every agent's result of a coordinated run, gathered and checked
//! by the plan ([`crate::plans::coordinator::collect`]), printed exactly as `merge` would, one
//! line per agent, how the phases started, and the cross-agent mutual-exclusion check.

use super::merge::print_merged;
use super::shared::Session;
use crate::cli::CollectArgs;
use crate::commands::output::Outputs;
use crate::error::LoadgenError;
use crate::model::document::Document;
use crate::model::gate::{Gate, GatePolicy};
use crate::model::mode::ModeStats;
use crate::model::threshold::Threshold;
use crate::plans::coordinator::agent::AgentInfo;
use crate::plans::coordinator::collect::{collect, Collected, Collecting};
use crate::plans::coordinator::overlap::Findings;

pub fn command(args: CollectArgs, session: &Session) -> Result<(), LoadgenError> {
    let outputs = Outputs::check(&args.output)?;
    let asked = Collecting {
        coordinator: args.coordinator.clone(),
        run_id: args.run_id.clone(),
        wait: args.wait,
    };
    let Collected {
        infos,
        docs,
        mut merged,
        findings,
    } = session.rt.block_on(collect(&asked, &session.signals))?;
    let gate = judge_whole_run(&mut merged, &args.thresholds, args.gate)?;
    let coordination = serde_json::json!({
        "run_id": args.run_id,
        "agents": infos,
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
    outputs.print_report(&agents_section(&infos, &docs, &merged, &findings))?;
    // Writing the report is short and not cut off; a signal during it still sets the exit code.
    if let Some(signal) = session.signals.received() {
        return Err(LoadgenError::Interrupted(signal));
    }
    match violations + findings.certain {
        0 => crate::commands::run::check_thresholds(gate.as_ref()),
        n => Err(LoadgenError::Violations(n)),
    }
}

/// `--threshold` on the merged result of a distributed `run` (kept in its report, so the text,
/// JSON and HTML list them); refused for other kinds and for `.ratio` figures.
fn judge_whole_run(
    merged: &mut Document,
    thresholds: &[Threshold],
    policy: GatePolicy,
) -> Result<Option<Gate>, LoadgenError> {
    if thresholds.is_empty() {
        return Ok(None);
    }
    super::shared::refuse_ratio(thresholds)?;
    let Document::Run(report) = merged else {
        return Err(LoadgenError::Usage(
            "--threshold judges the figures of a run; this coordinated run is a sweep or a capacity search".into(),
        ));
    };
    report.judge_thresholds(thresholds, policy);
    Ok(report.gate.clone())
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// One agent's figures for one mode (a line): host, rate, p99, generator CPU, generator-bound.
fn agent_line(agent: &AgentInfo, m: &ModeStats, at: &str) -> String {
    let j = &m.generator.judgement;
    format!(
        "  agent {:<3} {:<24} {:<10} {at}{:>10.0} acquires/s  p99 {:>9.3} ms  gen CPU {:>3.0}%{}\n",
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

fn agents_section(
    infos: &[AgentInfo],
    docs: &[Document],
    merged: &Document,
    findings: &Findings,
) -> String {
    let mut out = format!("\nagents ({}):\n", infos.len());
    for (info, doc) in infos.iter().zip(docs) {
        match (doc, merged) {
            (Document::Run(r), _) => {
                for m in &r.modes {
                    out.push_str(&agent_line(info, m, ""));
                }
            }
            (Document::Capacity(c), Document::Capacity(all)) => {
                // Its share of each answer (or its last step when there is none).
                for a in &all.answers {
                    let share = a.rate_per_s.map(|r| r / infos.len() as f64);
                    let of_mode = || c.steps.iter().rev().filter(|s| s.fanout == a.fanout);
                    let step = of_mode()
                        .find(|s| share.is_none_or(|r| (s.rate - r).abs() < 0.5))
                        .or_else(|| of_mode().next());
                    if let Some((s, m)) = step.and_then(|s| Some((s, s.report.modes.first()?))) {
                        let at = format!("step at {:>8.0}/s ", s.rate);
                        out.push_str(&agent_line(info, m, &at));
                    }
                }
            }
            _ => {}
        }
    }
    out.push_str(
        "phase starts (planned on the coordinator's clock, the same instant for every agent):\n",
    );
    let phases = infos.iter().map(|i| i.phases.len()).max().unwrap_or(0);
    for k in 0..phases {
        let of: Vec<_> = infos.iter().filter_map(|i| i.phases.get(k)).collect();
        let planned = of.first().map_or(0, |s| s.planned_start_unix_us);
        let same = of.iter().all(|s| s.planned_start_unix_us == planned);
        let late = || of.iter().map(|s| s.woke_late_us);
        let (late_min, late_max) = (late().min().unwrap_or(0), late().max().unwrap_or(0));
        let rtt_max = of.iter().map(|s| s.sync_rtt_us).max().unwrap_or(0);
        out.push_str(&format!(
            "  phase {:<3} {:<10} {} at coordinator {} µs; timers fired {:.3}..{:.3} ms after it (skew {:.3} ms), clock mapping within ±{:.3} ms\n",
            k + 1,
            of.first().map_or("", |s| s.fanout.as_str()),
            if same { "planned" } else { "PLANNED DIFFERENTLY" },
            planned,
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
