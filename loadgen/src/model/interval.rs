//! One interval of the measured window: what completed in it (docs/src/design.md#metrics). The
//! run's control loop receives each task's finished intervals from its [`crate::engine::recorder`],
//! adds them into the result's series and hands the same intervals to the live exporter
//! (`run --prometheus`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::hist::PackedHist;

/// Declares [`Interval`] with its counters (each added by [`Interval::add`] and named for
/// [`super::catalog`] by [`Interval::counter`]) before its other fields.
macro_rules! interval {
    ($($(#[$meta:meta])* $counter:ident,)* ; $($rest:tt)*) => {
        /// One interval of the measured window (`interval_ms` long, 1 s by default): what
        /// completed in it. Histograms are kept packed ([`PackedHist`]) so an hour of
        /// intervals stays small.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        pub struct Interval {
            /// Its position in the measured window (starts at `index × interval_ms`; schema
            /// version 2 and 3 results: `second`).
            #[serde(alias = "second")]
            pub index: usize,
            $($(#[$meta])* pub $counter: u64,)*
            $($rest)*
        }

        impl Interval {
            /// The counter called `name` (as in [`super::counts::Counts`]), if it has one.
            pub fn counter(&self, name: &str) -> Option<u64> {
                match name {
                    $(stringify!($counter) => Some(self.$counter),)*
                    _ => None,
                }
            }

            fn add_counters(&mut self, other: &Interval) {
                add_counts!(self, other; $($counter),*);
            }

            /// Adds its counters to a mode's whole-run ones of the same names (the recorder
            /// counts each such event once, in its interval).
            pub fn add_to(&self, counts: &mut super::counts::Counts) {
                add_counts!(counts, self; $($counter),*);
            }
        }
    };
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

// The counters mean what the mode's of the same name do ([`super::counts::Counts`]); those
// that schema version 2 lacked read as 0.
interval! {
    acquire_calls,
    acquired,
    #[serde(default)] not_acquired,
    #[serde(default)] unavailable,
    #[serde(default)] other_errors,
    attempts,
    #[serde(default)] attempts_won,
    split_votes,
    #[serde(default)] clean_losses,
    #[serde(default)] unavailable_attempts,
    #[serde(default)] expired_attempts,
    #[serde(default)] releases,
    ;
    /// When the interval's first and last locks were acquired, ms from the start of the
    /// measured window (absent: none was; they sharpen the edges of an
    /// [`super::outage::Outage`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_acquired_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_acquired_ms: Option<u64>,
    /// The longest the generator's control loop woke late in this interval, ms: a stretch in
    /// which the load generator itself was not running (a busy machine), so the masters went
    /// unobserved then. 0 (absent) when it woke on time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub generator_stall_ms: u64,
    /// p50, p99 and p99.9 of `acquire`, µs (derived).
    #[serde(default)]
    pub acquire_p50_us: u64,
    pub acquire_p99_us: u64,
    #[serde(default)]
    pub acquire_p999_us: u64,
    /// Whole-acquire latency of the calls that completed in this interval, µs.
    #[serde(rename = "acquire_hdr")]
    pub acquire: PackedHist,
    /// Attempts that completed in this interval, µs.
    #[serde(rename = "attempt_hdr", default)]
    pub attempt: PackedHist,
    /// Releases that completed in this interval, µs.
    #[serde(rename = "release_hdr", default)]
    pub release: PackedHist,
    /// Per master (in `masters` order): round trips of its answered attempt requests, µs.
    #[serde(rename = "round_trip_hdr", default)]
    pub round_trip: Vec<PackedHist>,
    /// Open loop: the start lag (actual − intended start) of the operations that started in
    /// this interval, µs (absent in closed loop).
    #[serde(rename = "start_lag_hdr", default, skip_serializing_if = "PackedHist::is_empty")]
    pub start_lag: PackedHist,
    /// Failed master requests of any operation (attempt, cleanup, release, extend), by master
    /// and failure kind (absent: none failed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<MasterFailures>,
    /// `acquire` split by how the calls ended (`acquire` is their sum), as a task sends it.
    /// Only the live figures read it (their histogram is labelled by outcome): the run's
    /// series drops it once they have, and result files hold `acquire` alone.
    #[serde(skip)]
    pub acquire_by_outcome: BTreeMap<CallOutcome, PackedHist>,
}

/// How an acquire call ended: the `redlock.outcome` of docs/src/design.md#observability (a call
/// cut off at the end of a run is counted in `cancelled_calls`, without a latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CallOutcome {
    Acquired,
    /// Lost to contention.
    NotAcquired,
    /// Too few masters answered.
    Unavailable,
    /// Any other error.
    Error,
}

impl CallOutcome {
    pub const ALL: [CallOutcome; 4] = [
        CallOutcome::Acquired,
        CallOutcome::NotAcquired,
        CallOutcome::Unavailable,
        CallOutcome::Error,
    ];

    /// Its `redlock.outcome` value, in the library's vocabulary.
    pub fn as_str(self) -> &'static str {
        self.vocabulary().as_str()
    }

    /// The library's name for it (a cancelled call has no latency here, so no outcome).
    pub fn vocabulary(self) -> redlock_core::AcquireOutcome {
        use redlock_core::AcquireOutcome;
        match self {
            CallOutcome::Acquired => AcquireOutcome::Acquired,
            CallOutcome::NotAcquired => AcquireOutcome::NotAcquired,
            CallOutcome::Unavailable => AcquireOutcome::Unavailable,
            CallOutcome::Error => AcquireOutcome::Error,
        }
    }
}

/// Failed requests to one master of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MasterFailures {
    /// Its position in the result's `masters`.
    pub master: usize,
    /// The failure kind, as the core's `error.type`: `timeout`, `connection`, `server`,
    /// `protocol`, `auth`, `tls`, `overloaded` or `other`.
    pub error_type: String,
    pub requests: u64,
}

impl Interval {
    /// Adds the counts and the histograms of `other` (the index stays this one's).
    pub fn add(&mut self, other: &Interval) {
        self.generator_stall_ms = self.generator_stall_ms.max(other.generator_stall_ms);
        self.add_counters(other);
        let firsts = [self.first_acquired_ms, other.first_acquired_ms];
        self.first_acquired_ms = firsts.into_iter().flatten().min();
        self.last_acquired_ms = self.last_acquired_ms.max(other.last_acquired_ms);
        self.acquire.add(&other.acquire);
        self.attempt.add(&other.attempt);
        self.release.add(&other.release);
        super::add_each(&mut self.round_trip, &other.round_trip, PackedHist::add);
        self.start_lag.add(&other.start_lag);
        for f in &other.failures {
            let same = |mine: &&mut MasterFailures| {
                (mine.master, &mine.error_type) == (f.master, &f.error_type)
            };
            match self.failures.iter_mut().find(same) {
                Some(mine) => mine.requests = mine.requests.saturating_add(f.requests),
                None => self.failures.push(f.clone()),
            }
        }
        for (outcome, h) in &other.acquire_by_outcome {
            self.acquire_by_outcome.entry(*outcome).or_default().add(h);
        }
    }
}
