//! The event counters of one mode: they add up exactly, so tasks, modes and files merge by
//! addition (what each figure made of them shows: [`super::figures`]).
//!
//! # Adding a counter: three files
//!
//! 1. here, `loadgen/src/model/counts.rs`: one more entry of the `counts!` list, with its
//!    doc comment. Adding up, merging, the JSON key and the schema follow from it:
//!    `loadgen/schema.json` takes any counter, and its check (a test of [`super::figures`])
//!    reads the list from [`Counts::NAMES`];
//! 2. `loadgen/src/engine/recorder.rs`: where the engine counts it;
//! 3. `loadgen/src/model/figures.rs`: its line in the one figure list (label, cell, when
//!    shown, ratio, CSV columns), which the text, HTML and CSV reports all read.
//!
//! `retried_calls` ("acquire calls retried") took exactly those three:
//!
//! ```
//! use redlock_loadgen::model::{counts::Counts, figures::figures, mode::ModeStats};
//! # use std::time::Duration;
//! // 1. declared: a key of every mode's `counts` in the JSON, added up by merges
//! assert!(Counts::NAMES.contains(&"retried_calls"));
//! // 2. counted (the recorder adds 1 when a call makes its second attempt)
//! let mut mode = ModeStats::new(redlock_core::FanOut::Concurrent, 3, Duration::from_secs(1));
//! mode.counts.retried_calls += 2;
//! // 3. shown: the figure list's line, read by every report
//! let figure = figures().into_iter().find(|f| f.label == "acquire calls retried").unwrap();
//! assert_eq!((figure.cell)(&mode), "2");
//! ```

use serde::{Deserialize, Serialize};

macro_rules! counts {
    ($($(#[$doc:meta])* $field:ident),* $(,)?) => {
        /// Event counters of one mode (docs/src/design.md#metrics definitions).
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct Counts {
            $($(#[$doc])* pub $field: u64,)*
        }

        impl Counts {
            /// Every counter's name (its JSON key), in the order declared.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// Adds every counter of `other`.
            pub fn add(&mut self, other: &Counts) {
                $(self.$field = self.$field.saturating_add(other.$field);)*
            }
        }
    };
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
