//! The one list of figures of a mode, which the text report, the HTML report and the CSV all
//! read (adding one: [`super`]; a figure with an interval is in [`super::catalog`]).

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

fn column(name: &'static str, value: fn(&ModeStats) -> String) -> Column {
    (name, value)
}

/// The rows: `LABEL [if SHOWN] => CELL`, then optionally `ratio` (the value whose concurrent
/// ÷ sequential ratio the text shows), `headline` and any `csv` columns.
macro_rules! rows {
    ($($label:literal $(if $shown:expr)? => $cell:expr $(, ratio $ratio:expr)?
       $(, headline $headline:literal)? $(, csv $column:literal $value:expr)*;)*) => {
        vec![$(Figure {
            label: $label,
            shown: rows!(@or $($shown)?),
            cell: $cell,
            ratio: rows!(@some $($ratio)?),
            columns: vec![$(column($column, $value)),*],
            headline: rows!(@some $($headline)?),
        }),*]
    };
    (@or) => { |_| true };
    (@or $shown:expr) => { $shown };
    (@some) => { None };
    (@some $x:expr) => { Some($x) };
}

/// Every figure, in the order the tables show them: what became of the acquire calls, how
/// attempts and calls were lost, the commands sent and what breaks the baselines, the open
/// loop's slots, the generator's own cost, fairness and the mutual-exclusion check, fencing.
pub fn figures() -> Vec<Figure> {
    let mut all = call_figures();
    all.extend(load_and_safety_figures());
    all
}

/// The acquire calls and attempts, the commands sent, releases and what breaks the baselines.
fn call_figures() -> Vec<Figure> {
    rows! {
        "acquires/s (goodput)" => |m| per_s(m.acquires_per_s()), ratio |m| m.acquires_per_s(),
            headline "goodput", csv "acquires_per_s" |m| format!("{:.1}", m.acquires_per_s());
        "acquire calls" => |m| m.counts.acquire_calls.to_string(),
            csv "acquire_calls" |m| m.counts.acquire_calls.to_string();
        "acquire success rate" => |m| pct(m.acquire_success_rate()),
            ratio |m| m.acquire_success_rate(), headline "acquire.success",
            csv "acquire_success_rate" |m| format!("{:.6}", m.acquire_success_rate());
        "attempts" => |m| m.counts.attempts.to_string(), ratio |m| m.counts.attempts as f64,
            csv "lost_attempts" |m| lost(m.counts.attempts, m.counts.attempts_won),
            csv "retries" |m| lost(m.counts.attempts, m.counts.acquire_calls);
        "acquire calls retried" => |m| m.counts.retried_calls.to_string(),
            csv "retried_calls" |m| m.counts.retried_calls.to_string();
        "quorum success rate" => |m| vote_only(m, pct(m.quorum_success_rate())),
            ratio |m| m.quorum_success_rate(), headline "quorum.success",
            csv "quorum_success_rate" |m| format!("{:.6}", m.quorum_success_rate());
        "split votes" => |m| vote_only(m, m.counts.split_votes),
            ratio |m| m.counts.split_votes as f64,
            csv "split_votes" |m| m.counts.split_votes.to_string();
        "split-vote retries" => |m| vote_only(m, m.counts.split_vote_retries),
            ratio |m| m.counts.split_vote_retries as f64;
        "clean losses" => |m| m.counts.clean_losses.to_string(),
            ratio |m| m.counts.clean_losses as f64;
        "unavailable attempts (no denial)" => |m| m.counts.unavailable_attempts.to_string(),
            csv "unavailable_attempts" |m| m.counts.unavailable_attempts.to_string();
        "expired attempts" => |m| vote_only(m, m.counts.expired_attempts);
        "acquire errors: not acquired" => |m| m.counts.not_acquired.to_string();
        "acquire errors: unavailable" => |m| m.counts.unavailable.to_string();
        "acquire errors: other" => |m| m.counts.other_errors.to_string();
        "master errors / timeouts" => |m| {
            let e: u64 = m.masters.iter().map(|s| s.errors).sum();
            let t: u64 = m.masters.iter().map(|s| s.timeouts).sum();
            format!("{e} / {t}")
        };
        "redis commands/s" => |m| per_s(m.redis_commands_per_s()),
            ratio |m| m.redis_commands_per_s();
        "redis commands per cycle" => |m| format!("{:.2}", m.redis_commands_per_cycle()),
            ratio |m| m.redis_commands_per_cycle();
        "releases (partial)"
            => |m| format!("{} ({})", m.counts.releases, m.counts.partial_releases);
        // Only the single-master baselines have it ("n/a" for Redlock, whose release never
        // deletes another holder's key).
        "releases of another's lock" if |m| !m.lock.votes() => |m| {
            let n = m.counts.foreign_releases;
            if m.lock.votes() { "n/a".into() } else { n.to_string() }
        };
        "clients crashed holding the lock" if |m| m.counts.crashed_clients > 0
            => |m| m.counts.crashed_clients.to_string();
        "extends (failed)" if |m| m.counts.extends > 0
            => |m| format!("{} ({})", m.counts.extends, m.counts.extend_failures);
    }
}

/// The open loop's slots, the generator's own cost, fairness, the mutual-exclusion check and
/// fencing.
fn load_and_safety_figures() -> Vec<Figure> {
    rows! {
        "open loop: slots scheduled" if open_loop => |m| m.counts.scheduled_slots.to_string();
        "open loop: started/s" if open_loop => |m| per_s(m.started_per_s()),
            csv "started_per_s" |m| format!("{:.1}", m.started_per_s());
        "open loop: late starts / dropped" if open_loop
            => |m| format!("{} / {}", m.counts.late_starts, m.counts.dropped_slots),
            csv "late_starts" |m| m.counts.late_starts.to_string(),
            csv "dropped_slots" |m| m.counts.dropped_slots.to_string();
        "  late with no client free" if open_loop => |m| m.counts.late_no_free_client.to_string();
        "  warm-up slots skipped" if open_loop => |m| m.counts.warmup_slots_skipped.to_string();
        "acquires cut off at the end" if |m| m.counts.cancelled_calls > 0
            => |m| m.counts.cancelled_calls.to_string();
        "generator CPU per cycle (µs)" => |m| format!("{:.1}", m.cpu_per_cycle_us()),
            ratio |m| m.cpu_per_cycle_us(),
            csv "generator_cpu_per_cycle_us" |m| format!("{:.1}", m.cpu_per_cycle_us());
        "generator CPU (share of cores)" => |m| {
            let cpu = &m.generator.cpu;
            format!("{:.0}% of {}", 100.0 * cpu.core_share(), cpu.cores)
        },
            csv "generator_core_share" |m| format!("{:.4}", m.generator.cpu.core_share()),
            csv "generator_bound" |m| m.generator.judgement.generator_bound.to_string();
        "fairness: acquired per worker"
            => |m| format!("{}..{}", m.fairness.min_acquired, m.fairness.max_acquired);
        "fairness: Jain's index" => |m| format!("{:.3}", m.jain_index());
        "mutual-exclusion violations" => |m| m.counts.violations.to_string(),
            csv "violations" |m| m.counts.violations.to_string();
        "  (ownership windows checked)" => |m| m.counts.windows_checked.to_string();
        "fencing tokens issued" if fenced => |m| fencing(m, |f| f.tokens_issued);
        "token order violations" if fenced => |m| fencing(m, |f| f.token_order_violations);
        "storage writes (refused)" if writes_storage => |m| {
            let f = m.fencing.clone().unwrap_or_default();
            format!("{} ({})", f.storage_writes, f.storage_writes_rejected)
        };
        "stale writes accepted" if writes_storage => |m| {
            match m.fencing.as_ref().filter(|f| f.storage_took_no_write()) {
                Some(f) => {
                    format!("UNKNOWN: the storage took no write ({} errors)", f.storage_errors)
                }
                None => fencing(m, |f| f.stale_writes_accepted),
            }
        };
        "stale writes rejected" if writes_storage => |m| fencing(m, |f| f.stale_writes_rejected);
        "storage write errors" if writes_storage => |m| fencing(m, |f| f.storage_errors);
    }
}

/// `all − won`, as a CSV cell (saturating: a file's counters may be anything).
fn lost(all: u64, won: u64) -> String {
    all.saturating_sub(won).to_string()
}

/// Shown in open loop only.
fn open_loop(m: &ModeStats) -> bool {
    m.counts.scheduled_slots > 0
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
