//! The event counters of one mode: they add up exactly, so tasks, modes and files merge by
//! addition (what each figure made of them shows: [`super::figures`]; adding one: [`super`]).
//!
//! A new counter keeps the schema version: a reader that does not know it keeps it in
//! [`Counts::unknown`], adds it up and writes it back. A counter that changes meaning, or
//! anything else an older reader would have to refuse, bumps
//! [`super::header::SCHEMA_VERSION`].

use std::collections::BTreeMap;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The most counters one `counts` object may hold that this version does not know: a newer
/// minor version adds a handful, and the cap keeps a hostile file's many tiny keys within the
/// memory a reader may hold per byte read (docs/src/loadgen-results.md, limits).
pub const MAX_UNKNOWN_COUNTERS: usize = 64;

macro_rules! counts {
    ($($(#[doc = $doc:literal])* $field:ident),* $(,)?) => {
        /// Event counters of one mode (docs/src/design.md#metrics definitions).
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
        pub struct Counts {
            $($(#[doc = $doc])* pub $field: u64,)*
            /// Counters this version does not know (a newer minor version's), by name, never
            /// one of [`Counts::NAMES`]: kept on read, added up and written back, so a merge
            /// or a re-write loses none.
            #[serde(flatten)]
            pub unknown: BTreeMap<String, u64>,
        }

        impl Counts {
            /// Every counter's name (its JSON key), in the order declared.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// Every counter's name and meaning (its doc comment, one line), in the order
            /// declared: what `loadgen/schema.json` says of each.
            pub const MEANINGS: &'static [(&'static str, &'static str)] =
                // Each doc line starts with the space after `///`, which joins it to the last.
                &[$((stringify!($field), concat!($($doc),*).trim_ascii())),*];

            /// Adds every counter of `other`, the unknown ones by name.
            pub fn add(&mut self, other: &Counts) {
                add_counts!(self, other; $($field),*);
                for (name, n) in &other.unknown {
                    let mine = self.unknown.entry(name.clone()).or_default();
                    *mine = mine.saturating_add(*n);
                }
            }

            /// The known counter called `name`.
            pub fn get(&self, name: &str) -> Option<u64> {
                match name {
                    $(stringify!($field) => Some(self.$field),)*
                    _ => None,
                }
            }

            fn get_mut(&mut self, name: &str) -> Option<&mut u64> {
                match name {
                    $(stringify!($field) => Some(&mut self.$field),)*
                    _ => None,
                }
            }
        }
    };
}

/// Read by hand rather than derived: a derived reader buffers every unknown key before it
/// looks at one, so it could neither stop at [`MAX_UNKNOWN_COUNTERS`] nor name an unknown
/// counter whose value is not a count. A missing counter reads as 0; one given twice is
/// refused.
impl<'de> Deserialize<'de> for Counts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct CountsVisitor;

        impl<'de> Visitor<'de> for CountsVisitor {
            type Value = Counts;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of counters, each a non-negative integer")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counts, A::Error> {
                let mut counts = Counts::default();
                let mut seen = [false; Counts::NAMES.len()];
                while let Some(name) = map.next_key::<String>()? {
                    let n: u64 = map.next_value()?;
                    let duplicate = || A::Error::custom(format!("duplicate field `{name}`"));
                    if let Some(i) = Counts::NAMES.iter().position(|&known| known == name) {
                        if std::mem::replace(&mut seen[i], true) {
                            return Err(duplicate());
                        }
                        *counts.get_mut(&name).expect("a known name") = n;
                    } else if counts.unknown.contains_key(&name) {
                        return Err(duplicate());
                    } else if counts.unknown.len() == MAX_UNKNOWN_COUNTERS {
                        return Err(A::Error::custom(format!(
                            "`{name}`: more than {MAX_UNKNOWN_COUNTERS} counters this version does not know"
                        )));
                    } else {
                        counts.unknown.insert(name, n);
                    }
                }
                Ok(counts)
            }
        }

        d.deserialize_map(CountsVisitor)
    }
}

counts! {
    /// Acquire calls made (each makes 1..=retry_count+1 attempts).
    acquire_calls,
    /// Acquire calls that returned a lock.
    acquired,
    /// Acquire calls that lost to contention (NotAcquired).
    not_acquired,
    /// Acquire calls refused because too few masters answered (Unavailable).
    unavailable,
    /// Acquire calls that failed otherwise (Internal).
    other_errors,
    /// Attempts (SET NX PX rounds).
    attempts,
    /// Attempts that won: granted ≥ quorum and validity > 0.
    attempts_won,
    /// Lost attempts with 0 < granted < quorum and at least one denial.
    split_votes,
    /// Split votes followed by another attempt of the same call.
    split_vote_retries,
    /// Acquire calls that needed more than one attempt.
    retried_calls,
    /// Lost attempts with granted = 0 and at least one denial.
    clean_losses,
    /// Failed attempts with no denial (an outage, not contention: docs/src/design.md#metrics).
    unavailable_attempts,
    /// Attempts that won a quorum after their validity ran out.
    expired_attempts,
    /// Releases made.
    releases,
    /// Releases that deleted the key on fewer than all masters.
    partial_releases,
    /// Extends made.
    extends,
    /// Extends that did not renew the lock.
    extend_failures,
    /// Redis commands sent: one per master for every attempt, cleanup, release and extend.
    redis_commands,
    /// Acquire calls cut off by the end-of-run grace (not in `acquire_calls`; their keys were
    /// deleted on every master).
    cancelled_calls,
    /// Open loop: slots intended in the measured window (each started, or dropped).
    scheduled_slots,
    /// Open loop: operations that started more than 1 ms after their intended start.
    late_starts,
    /// Open loop: late starts whose slot was already due when a client became free (every
    /// client was busy at the intended time).
    late_no_free_client,
    /// Open loop: slots of the measured window never started because the run ended first.
    dropped_slots,
    /// Open loop: warm-up slots not yet started when the measurement began, skipped (not run,
    /// not counted: every slot belongs to the phase of its intended start).
    warmup_slots_skipped,
    /// Ownership windows checked for mutual exclusion.
    windows_checked,
    /// Pairs of holders of one resource whose ownership windows overlapped.
    violations,
    /// Single-master baselines: releases that deleted someone else's lock (a `DEL` without
    /// a token after the lock had passed to another holder).
    foreign_releases,
    /// Clients that died holding the lock (the `crash` client fault).
    crashed_clients,
    /// Locks acquired after a client died holding one (the `crash` client fault): 0 means the
    /// dead client's lock was never freed (a stuck lock).
    acquired_after_crash,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use redlock_core::FanOut;
    use serde_json::{json, Value};

    use super::*;
    use crate::model::mode::ModeStats;

    const SCHEMA: &str = include_str!("../../schema.json");

    /// A counter from its declaration to the reports, `retried_calls` ("acquire calls
    /// retried") for one: declared (a key of every mode's `counts`), described as schema.json
    /// does, counted, shown by the figure list's row.
    #[test]
    fn a_counter_is_declared_described_counted_and_shown() {
        assert!(Counts::NAMES.contains(&"retried_calls"));
        let meaning = (
            "retried_calls",
            "Acquire calls that needed more than one attempt.",
        );
        assert!(Counts::MEANINGS.contains(&meaning));
        let mut mode = ModeStats::new(FanOut::Concurrent, 3, Duration::from_secs(1));
        mode.counts.retried_calls += 2;
        let figures = crate::model::figures::figures();
        let figure = figures
            .iter()
            .find(|f| f.label == "acquire calls retried")
            .unwrap();
        assert_eq!((figure.cell)(&mode), "2");
    }

    /// An object's entries in the order written (`serde_json::Map` may sort them).
    struct Ordered(Vec<(String, Value)>);

    impl<'de> Deserialize<'de> for Ordered {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct OrderedVisitor;
            impl<'de> Visitor<'de> for OrderedVisitor {
                type Value = Ordered;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                    let mut entries = Vec::new();
                    while let Some(entry) = map.next_entry()? {
                        entries.push(entry);
                    }
                    Ok(Ordered(entries))
                }
            }
            d.deserialize_map(OrderedVisitor)
        }
    }

    /// The `properties` of schema.json's `counts`, in the order written.
    fn schema_counters() -> Vec<(String, Value)> {
        #[derive(Deserialize)]
        struct Schema {
            #[serde(rename = "$defs")]
            defs: Defs,
        }
        #[derive(Deserialize)]
        struct Defs {
            counts: CountsDef,
        }
        #[derive(Deserialize)]
        struct CountsDef {
            properties: Ordered,
        }
        let schema: Schema = serde_json::from_str(SCHEMA).expect("schema.json has $defs.counts");
        schema.defs.counts.properties.0
    }

    /// How `properties` (schema.json's counters) differ from `meanings` (the `counts!` list),
    /// each naming the counter and both texts.
    fn schema_differences(
        properties: &[(String, Value)],
        meanings: &[(&str, &str)],
    ) -> Vec<String> {
        let mut out = Vec::new();
        let described = |name: &str| properties.iter().find(|(n, _)| n == name).map(|(_, p)| p);
        for &(name, meaning) in meanings {
            match described(name) {
                None => out.push(format!(
                    "`{name}` is missing from schema.json's counts (counts.rs: {meaning:?})"
                )),
                Some(p) if p != &json!({"$ref": "#/$defs/count", "description": meaning}) => {
                    out.push(format!(
                        "`{name}`: schema.json says {p}, counts.rs says {meaning:?} (a #/$defs/count)"
                    ))
                }
                Some(_) => {}
            }
        }
        for (name, p) in properties {
            if !meanings.iter().any(|&(n, _)| n == name) {
                out.push(format!(
                    "`{name}` is in schema.json's counts ({}) but not in the counts! list",
                    p["description"]
                ));
            }
        }
        let order = |names: Vec<&str>| names.join(", ");
        let schema_order = order(properties.iter().map(|(n, _)| n.as_str()).collect());
        let list_order = order(meanings.iter().map(|&(n, _)| n).collect());
        if out.is_empty() && schema_order != list_order {
            out.push(format!(
                "schema.json lists the counters as {schema_order}; counts.rs declares {list_order}"
            ));
        }
        out
    }

    /// schema.json describes every counter with its doc comment, in the declared order, and
    /// nothing else.
    #[test]
    fn schema_json_describes_every_counter_as_declared() {
        let differences = schema_differences(&schema_counters(), Counts::MEANINGS);
        assert!(differences.is_empty(), "{}", differences.join("\n"));
    }

    /// The check above names the counter and both texts when one is missing, extra or
    /// described otherwise.
    #[test]
    fn a_schema_that_differs_from_the_list_is_reported_naming_the_counter() {
        let property = |d: &str| json!({"$ref": "#/$defs/count", "description": d});
        let schema = vec![
            (
                "attempts".to_string(),
                property("Attempts (SET NX PX rounds)."),
            ),
            ("releases".to_string(), property("Releases.")),
            ("extends".to_string(), property("Extends made.")),
        ];
        let list = [
            ("attempts", "Attempts (SET NX PX rounds)."),
            ("releases", "Releases made."),
            ("violations", "Overlapping pairs."),
        ];
        let differences = schema_differences(&schema, &list).join("\n");
        for needle in [
            "`violations` is missing from schema.json's counts (counts.rs: \"Overlapping pairs.\")",
            "`releases`: schema.json says {\"$ref\":\"#/$defs/count\",\"description\":\"Releases.\"}, counts.rs says \"Releases made.\"",
            "`extends` is in schema.json's counts (\"Extends made.\") but not in the counts! list",
        ] {
            assert!(differences.contains(needle), "{needle}\nnot in\n{differences}");
        }
        let same = [
            ("attempts", "Attempts (SET NX PX rounds)."),
            ("releases", "Releases."),
        ];
        let differences = schema_differences(&[schema[1].clone(), schema[0].clone()], &same);
        assert_eq!(
            differences,
            ["schema.json lists the counters as releases, attempts; counts.rs declares attempts, releases"]
        );
    }

    #[test]
    fn every_meaning_is_one_trimmed_line() {
        for &(name, meaning) in Counts::MEANINGS {
            assert!(
                !meaning.is_empty()
                    && meaning.trim() == meaning
                    && !meaning.contains("  ")
                    && !meaning.contains('\n'),
                "{name}: {meaning:?}"
            );
        }
    }

    /// schema.json takes a counter it does not list, as long as it is a count.
    #[test]
    fn schema_json_takes_a_further_counter_that_is_a_count() {
        let schema: Value = serde_json::from_str(SCHEMA).unwrap();
        let counts = json!({"$defs": schema["$defs"], "$ref": "#/$defs/counts"});
        let validator = jsonschema::validator_for(&counts).unwrap();
        assert!(validator.is_valid(&json!({"attempts": 1, "future_counter": 2})));
        for bad in [
            json!({"future_counter": -1}),
            json!({"future_counter": "2"}),
        ] {
            assert!(!validator.is_valid(&bad), "schema.json takes {bad}");
        }
    }

    /// A mode's JSON as written, with `counts` edited.
    fn mode_json(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> String {
        let mut mode = serde_json::to_value(ModeStats::new(
            FanOut::Concurrent,
            3,
            Duration::from_secs(1),
        ))
        .unwrap();
        edit(mode["counts"].as_object_mut().unwrap());
        mode.to_string()
    }

    /// Reads as `document::read` does, the error prefixed with the path at fault.
    fn read<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(text))
            .map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    /// A counter of a newer minor version is read, added up by a merge and written back.
    #[test]
    fn an_unknown_counter_round_trips_and_adds_up() {
        let text = r#"{"attempts": 2, "future_counter": 5}"#;
        let counts: Counts = read(text).unwrap();
        assert_eq!(counts.attempts, 2);
        assert_eq!(
            counts.unknown,
            BTreeMap::from([("future_counter".into(), 5)])
        );
        let written = serde_json::to_value(&counts).unwrap();
        assert_eq!(written["future_counter"], 5);
        assert_eq!(written["attempts"], 2);
        assert_eq!(written.as_object().unwrap().len(), Counts::NAMES.len() + 1);
        assert_eq!(read::<Counts>(&written.to_string()).unwrap(), counts);

        let mut sum = counts.clone();
        sum.add(&read(r#"{"attempts": 1, "future_counter": 3, "later_counter": 1}"#).unwrap());
        assert_eq!(sum.attempts, 3);
        let unknown = [("future_counter".into(), 8), ("later_counter".into(), 1)];
        assert_eq!(sum.unknown, BTreeMap::from(unknown));

        // Inside a mode, as `merge` adds two files' modes and writes the result.
        let text = mode_json(|c| {
            c.insert("future_counter".into(), json!(5));
        });
        let mut mode: ModeStats = read(&text).unwrap();
        mode.add(&read(&text).unwrap());
        let written = serde_json::to_value(&mode).unwrap();
        assert_eq!(written["counts"]["future_counter"], 10);
    }

    /// Keeping unknown counters does not loosen the known ones: a wrong type is still an
    /// error naming the counter; so is an unknown counter that is not a count.
    #[test]
    fn a_counter_that_is_not_a_count_is_an_error_naming_it() {
        for (name, value, expected) in [
            (
                "attempts",
                json!("1"),
                "counts.attempts: invalid type: string \"1\", expected u64",
            ),
            (
                "attempts",
                json!(-1),
                "counts.attempts: invalid value: integer `-1`, expected u64",
            ),
            (
                "future_counter",
                json!(1.5),
                "counts.future_counter: invalid type: floating point `1.5`, expected u64",
            ),
        ] {
            let text = mode_json(|c| {
                c.insert(name.into(), value);
            });
            let e = read::<ModeStats>(&text).unwrap_err();
            assert!(e.starts_with(expected), "{e}");
        }
    }

    #[test]
    fn a_counter_given_twice_or_too_many_unknown_ones_are_refused() {
        for (text, expected) in [
            (
                r#"{"attempts": 1, "attempts": 2}"#,
                "duplicate field `attempts`",
            ),
            (r#"{"future": 1, "future": 2}"#, "duplicate field `future`"),
        ] {
            let e = read::<Counts>(text).unwrap_err();
            assert!(e.contains(expected), "{text}: {e}");
        }
        let many = |n: usize| {
            let counters: serde_json::Map<String, Value> =
                (0..n).map(|i| (format!("future_{i}"), json!(1))).collect();
            Value::Object(counters).to_string()
        };
        let counts: Counts = read(&many(MAX_UNKNOWN_COUNTERS)).unwrap();
        assert_eq!(counts.unknown.len(), MAX_UNKNOWN_COUNTERS);
        let e = read::<Counts>(&many(MAX_UNKNOWN_COUNTERS + 1)).unwrap_err();
        assert!(
            e.contains(&format!(
                "more than {MAX_UNKNOWN_COUNTERS} counters this version does not know"
            )),
            "{e}"
        );
    }
}
