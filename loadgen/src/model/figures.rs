//! The one list of figures of a mode, which the text report, the HTML report and the CSV all
//! read.
//!
//! # How to add a figure
//!
//! A counter: its declaration in [`super::counts`] (with its meaning, which `schema.json`'s
//! description must repeat: a test names any difference), where `crate::engine::recorder`
//! counts it, and its line in [`figures`] here (label, cell, when shown, concurrent ÷
//! sequential ratio, CSV columns); [`super::counts`] shows it done. A figure with a 95 %
//! interval or a `--threshold` name is an entry of the figure table, [`super::catalog`],
//! which says what else it takes. A figure computed from others gets its function on
//! [`ModeStats`] (its `derive` if stored).

use super::fencing::FencingStats;
use super::mode::ModeStats;

pub fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

pub fn per_s(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A figure that only Redlock's vote has ("n/a" for the single-master baselines).
fn vote_only(m: &ModeStats, figure: impl std::fmt::Display) -> String {
    if m.lock.votes() {
        figure.to_string()
    } else {
        "n/a".into()
    }
}

/// A figure only the single-master baselines have ("n/a" for Redlock, whose release never
/// deletes another holder's key).
fn vote_free(m: &ModeStats, figure: u64) -> String {
    if m.lock.votes() {
        "n/a".into()
    } else {
        figure.to_string()
    }
}

/// One figure: its row in the text and HTML tables, and its columns in the CSV.
#[derive(Debug)]
pub struct Figure {
    pub label: &'static str,
    /// Shown when any mode passes (most rows: always).
    pub shown: fn(&ModeStats) -> bool,
    pub cell: fn(&ModeStats) -> String,
    /// The value whose concurrent ÷ sequential ratio the text shows, if any.
    pub ratio: Option<fn(&ModeStats) -> f64>,
    /// CSV columns (name, value), always written.
    pub columns: Vec<Column>,
    /// The headline figure ([`super::catalog`]) this row shows, whose ratio carries an
    /// interval.
    pub headline: Option<&'static str>,
}

/// A CSV column: its name and its value of a mode.
pub type Column = (&'static str, fn(&ModeStats) -> String);

impl Figure {
    fn csv(mut self, name: &'static str, value: fn(&ModeStats) -> String) -> Figure {
        self.columns.push((name, value));
        self
    }

    fn headline(mut self, name: &'static str) -> Figure {
        self.headline = Some(name);
        self
    }
}

/// Every figure, in the order the tables show them.
pub fn figures() -> Vec<Figure> {
    [
        calls(),
        losses(),
        commands_and_releases(),
        open_loop(),
        generator_and_safety(),
        fencing_rows(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A figure shown for every mode; `ratio`: the value whose concurrent ÷ sequential ratio the
/// text shows.
fn line(
    label: &'static str,
    cell: fn(&ModeStats) -> String,
    ratio: Option<fn(&ModeStats) -> f64>,
) -> Figure {
    Figure {
        label,
        shown: |_| true,
        cell,
        ratio,
        columns: Vec::new(),
        headline: None,
    }
}

/// A figure shown when any mode passes `shown`.
fn when(
    label: &'static str,
    shown: fn(&ModeStats) -> bool,
    cell: fn(&ModeStats) -> String,
) -> Figure {
    Figure {
        label,
        shown,
        cell,
        ratio: None,
        columns: Vec::new(),
        headline: None,
    }
}

/// Shown in open loop only.
fn open_loop_only(m: &ModeStats) -> bool {
    m.counts.scheduled_slots > 0
}

/// What became of the acquire calls: goodput, success, attempts, retries, quorum.
fn calls() -> Vec<Figure> {
    vec![
        line(
            "acquires/s (goodput)",
            |m| per_s(m.acquires_per_s()),
            Some(|m| m.acquires_per_s()),
        )
        .csv("acquires_per_s", |m| format!("{:.1}", m.acquires_per_s()))
        .headline("goodput"),
        line(
            "acquire calls",
            |m| m.counts.acquire_calls.to_string(),
            None,
        )
        .csv("acquire_calls", |m| m.counts.acquire_calls.to_string()),
        line(
            "acquire success rate",
            |m| pct(m.acquire_success_rate()),
            Some(|m| m.acquire_success_rate()),
        )
        .csv("acquire_success_rate", |m| {
            format!("{:.6}", m.acquire_success_rate())
        })
        .headline("acquire.success"),
        line(
            "attempts",
            |m| m.counts.attempts.to_string(),
            Some(|m| m.counts.attempts as f64),
        )
        .csv("lost_attempts", |m| {
            let c = &m.counts;
            c.attempts.saturating_sub(c.attempts_won).to_string()
        })
        .csv("retries", |m| {
            let c = &m.counts;
            c.attempts.saturating_sub(c.acquire_calls).to_string()
        }),
        line(
            "acquire calls retried",
            |m| m.counts.retried_calls.to_string(),
            None,
        )
        .csv("retried_calls", |m| m.counts.retried_calls.to_string()),
        line(
            "quorum success rate",
            |m| vote_only(m, pct(m.quorum_success_rate())),
            Some(|m| m.quorum_success_rate()),
        )
        .csv("quorum_success_rate", |m| {
            format!("{:.6}", m.quorum_success_rate())
        })
        .headline("quorum.success"),
    ]
}

/// How attempts and calls were lost, and the masters' failures.
fn losses() -> Vec<Figure> {
    vec![
        line(
            "split votes",
            |m| vote_only(m, m.counts.split_votes),
            Some(|m| m.counts.split_votes as f64),
        )
        .csv("split_votes", |m| m.counts.split_votes.to_string()),
        line(
            "split-vote retries",
            |m| vote_only(m, m.counts.split_vote_retries),
            Some(|m| m.counts.split_vote_retries as f64),
        ),
        line(
            "clean losses",
            |m| m.counts.clean_losses.to_string(),
            Some(|m| m.counts.clean_losses as f64),
        ),
        line(
            "unavailable attempts (no denial)",
            |m| m.counts.unavailable_attempts.to_string(),
            None,
        )
        .csv("unavailable_attempts", |m| {
            m.counts.unavailable_attempts.to_string()
        }),
        line(
            "expired attempts",
            |m| vote_only(m, m.counts.expired_attempts),
            None,
        ),
        line(
            "acquire errors: not acquired",
            |m| m.counts.not_acquired.to_string(),
            None,
        ),
        line(
            "acquire errors: unavailable",
            |m| m.counts.unavailable.to_string(),
            None,
        ),
        line(
            "acquire errors: other",
            |m| m.counts.other_errors.to_string(),
            None,
        ),
    ]
}

/// The commands sent, releases, extends, and what breaks the baselines.
fn commands_and_releases() -> Vec<Figure> {
    vec![
        line(
            "master errors / timeouts",
            |m| {
                let e: u64 = m.masters.iter().map(|s| s.errors).sum();
                let t: u64 = m.masters.iter().map(|s| s.timeouts).sum();
                format!("{e} / {t}")
            },
            None,
        ),
        line(
            "redis commands/s",
            |m| per_s(m.redis_commands_per_s()),
            Some(|m| m.redis_commands_per_s()),
        ),
        line(
            "redis commands per cycle",
            |m| format!("{:.2}", m.redis_commands_per_cycle()),
            Some(|m| m.redis_commands_per_cycle()),
        ),
        line(
            "releases (partial)",
            |m| format!("{} ({})", m.counts.releases, m.counts.partial_releases),
            None,
        ),
        when(
            "releases of another's lock",
            |m| !m.lock.votes(),
            |m| vote_free(m, m.counts.foreign_releases),
        ),
        when(
            "clients crashed holding the lock",
            |m| m.counts.crashed_clients > 0,
            |m| m.counts.crashed_clients.to_string(),
        ),
        when(
            "extends (failed)",
            |m| m.counts.extends > 0,
            |m| format!("{} ({})", m.counts.extends, m.counts.extend_failures),
        ),
    ]
}

/// The open loop's slots, and calls cut off at the end.
fn open_loop() -> Vec<Figure> {
    vec![
        when("open loop: slots scheduled", open_loop_only, |m| {
            m.counts.scheduled_slots.to_string()
        }),
        when("open loop: started/s", open_loop_only, |m| {
            per_s(m.started_per_s())
        })
        .csv("started_per_s", |m| format!("{:.1}", m.started_per_s())),
        when("open loop: late starts / dropped", open_loop_only, |m| {
            format!("{} / {}", m.counts.late_starts, m.counts.dropped_slots)
        })
        .csv("late_starts", |m| m.counts.late_starts.to_string())
        .csv("dropped_slots", |m| m.counts.dropped_slots.to_string()),
        when("  late with no client free", open_loop_only, |m| {
            m.counts.late_no_free_client.to_string()
        }),
        when("  warm-up slots skipped", open_loop_only, |m| {
            m.counts.warmup_slots_skipped.to_string()
        }),
        when(
            "acquires cut off at the end",
            |m| m.counts.cancelled_calls > 0,
            |m| m.counts.cancelled_calls.to_string(),
        ),
    ]
}

/// The generator's own cost, fairness, and the mutual-exclusion check.
fn generator_and_safety() -> Vec<Figure> {
    vec![
        line(
            "generator CPU per cycle (µs)",
            |m| format!("{:.1}", m.cpu_per_cycle_us()),
            Some(|m| m.cpu_per_cycle_us()),
        )
        .csv("generator_cpu_per_cycle_us", |m| {
            format!("{:.1}", m.cpu_per_cycle_us())
        }),
        line(
            "generator CPU (share of cores)",
            |m| {
                format!(
                    "{:.0}% of {}",
                    100.0 * m.generator.cpu.core_share(),
                    m.generator.cpu.cores
                )
            },
            None,
        )
        .csv("generator_core_share", |m| {
            format!("{:.4}", m.generator.cpu.core_share())
        })
        .csv("generator_bound", |m| {
            m.generator.judgement.generator_bound.to_string()
        }),
        line(
            "fairness: acquired per worker",
            |m| format!("{}..{}", m.fairness.min_acquired, m.fairness.max_acquired),
            None,
        ),
        line(
            "fairness: Jain's index",
            |m| format!("{:.3}", m.jain_index()),
            None,
        ),
        line(
            "mutual-exclusion violations",
            |m| m.counts.violations.to_string(),
            None,
        )
        .csv("violations", |m| m.counts.violations.to_string()),
        line(
            "  (ownership windows checked)",
            |m| m.counts.windows_checked.to_string(),
            None,
        ),
    ]
}

/// Fencing tokens and the protected resource's writes.
fn fencing_rows() -> Vec<Figure> {
    vec![
        when("fencing tokens issued", fenced, |m| {
            fencing(m, |f| f.tokens_issued)
        }),
        when("token order violations", fenced, |m| {
            fencing(m, |f| f.token_order_violations)
        }),
        when("storage writes (refused)", writes_storage, |m| {
            let f = m.fencing.clone().unwrap_or_default();
            format!("{} ({})", f.storage_writes, f.storage_writes_rejected)
        }),
        when("stale writes accepted", writes_storage, |m| {
            match m.fencing.as_ref().filter(|f| f.storage_took_no_write()) {
                Some(f) => format!(
                    "UNKNOWN: the storage took no write ({} errors)",
                    f.storage_errors
                ),
                None => fencing(m, |f| f.stale_writes_accepted),
            }
        }),
        when("stale writes rejected", writes_storage, |m| {
            fencing(m, |f| f.stale_writes_rejected)
        }),
        when("storage write errors", writes_storage, |m| {
            fencing(m, |f| f.storage_errors)
        }),
    ]
}

fn fenced(m: &ModeStats) -> bool {
    m.fencing.as_ref().is_some_and(|f| f.fenced)
}

fn writes_storage(m: &ModeStats) -> bool {
    m.fencing.is_some()
}

/// A fencing figure of `m` (0 when the mode has none).
fn fencing(m: &ModeStats, figure: impl Fn(&FencingStats) -> u64) -> String {
    m.fencing.as_ref().map_or(0, figure).to_string()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use redlock_core::FanOut;
    use serde_json::{json, Value};

    use super::*;
    use crate::model::counts::Counts;

    #[test]
    fn every_row_s_headline_is_one_of_the_figure_table_s() {
        for f in figures() {
            if let Some(name) = f.headline {
                let headline = crate::model::catalog::figure(name).and_then(|h| h.key);
                assert!(
                    headline.is_some(),
                    "{}: {name} is no headline of the figure table",
                    f.label
                );
            }
        }
    }

    fn schema_def(name: &str) -> Value {
        let text = include_str!("../../schema.json");
        let schema: Value = serde_json::from_str(text).expect("schema.json parses");
        json!({"$defs": schema["$defs"], "$ref": format!("#/$defs/{name}")})
    }

    /// The schema's check takes the counters from the model: each one, with a value, is a
    /// valid `counts` of schema.json and reads back as itself; a value that is not a count
    /// is refused.
    #[test]
    fn schema_json_takes_every_counter_and_every_mode_field() {
        let every: serde_json::Map<String, Value> = Counts::NAMES
            .iter()
            .zip(1u64..)
            .map(|(name, n)| (name.to_string(), n.into()))
            .collect();
        let every = Value::Object(every);
        let counts: Counts = serde_json::from_value(every.clone()).expect("every name reads");
        assert_eq!(
            serde_json::to_value(counts).unwrap(),
            every,
            "NAMES = the fields"
        );
        let validator = jsonschema::validator_for(&schema_def("counts")).unwrap();
        assert!(validator.is_valid(&every), "schema.json refuses a counter");
        for bad in [
            json!({"attempts": -1}),
            json!({"attempts": "1"}),
            json!({"A b": 1}),
        ] {
            assert!(!validator.is_valid(&bad), "schema.json takes {bad}");
        }
        let mode = serde_json::to_value(ModeStats::new(
            FanOut::Concurrent,
            3,
            Duration::from_secs(1),
        ))
        .unwrap();
        let validator = jsonschema::validator_for(&schema_def("mode")).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&mode)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "a mode does not match schema.json: {errors:?}"
        );
    }

    #[test]
    fn every_csv_column_is_named_once() {
        let names: Vec<&str> = figures()
            .iter()
            .flat_map(|f| f.columns.iter().map(|c| c.0))
            .collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }
}
