//! The result model: one set of types that a run, a merge or a file read builds once, that
//! `--json` serialises as is (`loadgen/schema.json`) and that every renderer reads. There is
//! no second, "JSON" copy of a result and no conversion between the two.
//!
//! - [`header`]: what every result file shares (schema version, kind, tool, run id, start,
//!   interruption, merge provenance);
//! - [`interval`]: one interval of a mode's per-interval series ([`interval::Interval`]);
//! - [`mode`]: what one fan-out mode measured ([`mode::ModeStats`]: counters, histograms, the
//!   per-second series, and the figures derived from them); [`counts`] its counters,
//!   [`mode_sections`] its other sections (per master, latency, the generator, fairness,
//!   rates), [`figures`] the one list of figures every table reads;
//! - [`report`]: a run's result ([`report::Report`]), also one level of a sweep, one step of
//!   a capacity search and one row of the scenarios matrix; [`sweep`], [`capacity`] and
//!   [`scenarios`] hold those;
//! - [`document`]: any result file, told apart by `kind`, read back for `merge`.
//!
//! # How to add a figure
//!
//! - A counter: its entry in the `counts!` list of [`counts`] (its doc comment is its meaning),
//!   its property in `loadgen/schema.json`'s `counts` (described by that meaning), the line of
//!   `engine/recorder.rs` that counts it, and its row in [`figures`] (label, cell, when shown,
//!   ratio, CSV columns), which the text, HTML and CSV reports read; counted per interval, its
//!   line in [`interval`]'s list too.
//! - A figure with a 95 % interval or a `--threshold` name: its entry in [`catalog::FIGURES`],
//!   a headline's property in schema.json's `estimates`, and the book's lists
//!   (`docs/src/generated/figures.md`, rewritten by `REDLOCK_BLESS=1 cargo test -p
//!   redlock-loadgen --lib catalog`); reports, CSV columns, thresholds, `compare` and the
//!   resampling follow from the entry.
//! - A histogram or list: its line in [`mode::ModeStats::add_measurements`]; a figure computed
//!   from others: its function on [`mode::ModeStats`] (and its line in
//!   [`mode::ModeStats::derive`] if stored).
//!
//! Tests name whatever disagrees with the declarations (schema.json, the book's lists).
//! JSON needs nothing more: the field is serialised where it is declared. A field old files
//! lack gets `#[serde(default)]`; a new counter keeps the version (readers keep counters they
//! do not know); a key that moves or changes meaning bumps [`header::SCHEMA_VERSION`] and
//! keeps the old version readable in [`document`].

/// An enum whose variants are written by name: the enum (its derives given, Serialize or
/// Deserialize among them) with each variant renamed for serde, its names as `as_str`, every
/// variant in order as `ALL`, and `Display` by name.
macro_rules! named {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$doc:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        pub enum $name { $($(#[$doc])* #[serde(rename = $text)] $variant,)* }

        impl $name {
            pub const ALL: [$name; [$($text),*].len()] = [$($name::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// Adds the counters named of `$from` to `$into`'s, saturating (a file's counters may be
/// anything up to 2^64 − 1).
macro_rules! add_counts {
    ($into:expr, $from:expr; $($field:ident),* $(,)?) => {
        $($into.$field = $into.$field.saturating_add($from.$field);)*
    };
}

/// Adds `theirs` to `mine` place by place, `mine` first grown to as many places.
fn add_each<T: Clone + Default>(mine: &mut Vec<T>, theirs: &[T], add: impl Fn(&mut T, &T)) {
    if mine.len() < theirs.len() {
        mine.resize(theirs.len(), T::default());
    }
    mine.iter_mut()
        .zip(theirs)
        .for_each(|(mine, theirs)| add(mine, theirs));
}

/// `num / den`, 0 unless `den` is above 0.
pub fn per(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

pub mod capacity;
pub mod catalog;
pub mod comparison;
pub mod counts;
pub mod document;
pub mod estimates;
pub mod fencing;
pub mod figures;
pub mod gate;
pub mod generator;
pub mod header;
pub mod interval;
pub mod limits;
pub mod lock;
pub mod mode;
pub mod mode_sections;
pub mod outage;
pub mod percentiles;
pub mod repeats;
pub mod report;
pub mod scenarios;
pub mod student;
pub mod sweep;
pub mod threshold;
pub mod uncertainty;
pub mod values;
