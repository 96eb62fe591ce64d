//! The one table of figures that carry a 95 % interval or can be named by `--threshold`:
//! each declared once, with its name, meaning, unit, how it is measured from a mode's
//! intervals, which way is better and where it appears. Every consumer reads it: the
//! resampling ([`super::estimates`]), the JSON's `estimates` ([`super::uncertainty::ModeEstimates`]),
//! `--threshold` ([`super::threshold`]), `compare`'s verdicts ([`super::comparison`]), the
//! text, HTML and CSV reports (`crate::render`) and the book's lists ([`book_list`]);
//! `loadgen/schema.json` is checked against it by a test below.
//!
//! # Adding a figure with an interval and a threshold name
//!
//! From counters an interval already records (`super::interval::Interval`): **3 files** —
//! its entry in [`FIGURES`] here; its property in `loadgen/schema.json`'s `estimates` (its
//! `description` is the entry's `meaning`; a test names what differs); and the book's lists,
//! `docs/src/generated/figures.md`, rewritten from the table by
//! `REDLOCK_BLESS=1 cargo test -p redlock-loadgen --lib catalog` (a test fails until it is).
//! Reports, CSV columns, thresholds, `compare`, the resampling and the book's figure and
//! threshold tables follow from the entry. A figure of
//! a new counter also needs the counter (`super::counts`, and `interval.rs` when it is
//! counted per interval) and the line where the engine's recorder counts it.

use super::interval::Interval;
use super::mode::ModeStats;
use super::uncertainty::{Estimate, ModeEstimates, Unit};

/// What a figure's value is, which fixes how it is written and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureUnit {
    /// Events per second of the measured window.
    PerSecond,
    /// A fraction (written as a percentage).
    Share,
    /// A latency in µs (written in ms; a threshold's bound takes `us`, `ms` or `s`).
    Micros,
    /// A dimensionless index (Jain's, 0 to 1).
    Index,
    /// An exact count.
    Count,
}

/// How a figure is measured from a mode's intervals, which is what its interval resamples.
#[derive(Debug, Clone, Copy)]
pub enum Measure {
    /// A counter's sum over the intervals' seconds.
    Rate(fn(&Interval) -> u64),
    /// One counter's sum over another's.
    Share(fn(&Interval) -> u64, fn(&Interval) -> u64),
    /// A quantile of the acquire latency.
    AcquireQuantile(f64),
    /// Jain's index over the clients' locks (an interval across repeats only: an interval's
    /// record does not keep each client's locks).
    Fairness,
    /// A whole-run count, exact (no interval); `None` when the mode has no such figure.
    Count(fn(&ModeStats) -> Option<u64>),
}

/// Where a figure shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A headline: with its interval in every report, a CSV interval column pair, and the
    /// JSON's `estimates` under `key`.
    Headline { key: &'static str },
    /// Named by `--threshold` only.
    Threshold,
}

/// One figure.
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    /// Its name: in `--threshold`, `compare`'s ratios and the CSV's interval columns.
    pub name: &'static str,
    pub label: &'static str,
    /// What it measures, in a sentence (the schema's description).
    pub meaning: &'static str,
    pub unit: FigureUnit,
    pub measure: Measure,
    /// The whole run's value (a rate divides by the measured window, as the table does).
    pub whole: fn(&ModeStats) -> Option<f64>,
    /// Which way is better (for `compare`'s verdicts).
    pub higher_is_better: bool,
    /// A rate or a latency, which moves by a few per cent from run to run for no reason worth
    /// acting on: `compare` calls it better or worse only beyond the noise band. A share is
    /// judged on any clear difference: a point of success rate is never noise.
    pub banded: bool,
    pub role: Role,
    /// `compare --threshold NAME.ratio…` may bound B ÷ A.
    pub ratio: bool,
}

impl Figure {
    /// Its key in the JSON's `estimates`, when it is a headline.
    pub fn estimate_key(&self) -> Option<&'static str> {
        match self.role {
            Role::Headline { key } => Some(key),
            Role::Threshold => None,
        }
    }
}

const fn headline(key: &'static str) -> Role {
    Role::Headline { key }
}

/// Every figure, headlines first, in the order the reports list them.
pub const FIGURES: [Figure; 12] = [
    Figure {
        name: "goodput",
        label: "goodput (acquires/s)",
        meaning: "acquire calls that returned a lock, per second of the measured window",
        unit: FigureUnit::PerSecond,
        measure: Measure::Rate(|i| i.acquired),
        whole: |m| Some(m.acquires_per_s()),
        higher_is_better: true,
        banded: true,
        role: headline("goodput"),
        ratio: true,
    },
    Figure {
        name: "acquire.success",
        label: "acquire success",
        meaning: "the share of acquire calls that returned a lock",
        unit: FigureUnit::Share,
        measure: Measure::Share(|i| i.acquired, |i| i.acquire_calls),
        whole: |m| Some(m.acquire_success_rate()),
        higher_is_better: true,
        banded: false,
        role: headline("acquire_success"),
        ratio: true,
    },
    Figure {
        name: "quorum.success",
        label: "quorum success",
        meaning: "the share of attempts that won a quorum in time",
        unit: FigureUnit::Share,
        measure: Measure::Share(|i| i.attempts_won, |i| i.attempts),
        whole: |m| Some(m.quorum_success_rate()),
        higher_is_better: true,
        banded: false,
        role: headline("quorum_success"),
        ratio: false,
    },
    Figure {
        name: "split_votes.share",
        label: "split-vote share",
        meaning: "the share of attempts lost to a split vote",
        unit: FigureUnit::Share,
        measure: Measure::Share(|i| i.split_votes, |i| i.attempts),
        whole: |m| Some(super::mode::ratio(m.counts.split_votes, m.counts.attempts)),
        higher_is_better: false,
        banded: false,
        role: headline("split_vote_share"),
        ratio: false,
    },
    Figure {
        name: "acquire.p50",
        label: "acquire p50",
        meaning: "the median latency of an acquire call, µs",
        unit: FigureUnit::Micros,
        measure: Measure::AcquireQuantile(0.50),
        whole: |m| Some(m.latency.acquire.quantile(0.50) as f64),
        higher_is_better: false,
        banded: true,
        role: headline("acquire_p50_us"),
        ratio: true,
    },
    Figure {
        name: "acquire.p99",
        label: "acquire p99",
        meaning: "the 99th percentile latency of an acquire call, µs",
        unit: FigureUnit::Micros,
        measure: Measure::AcquireQuantile(0.99),
        whole: |m| Some(m.latency.acquire.quantile(0.99) as f64),
        higher_is_better: false,
        banded: true,
        role: headline("acquire_p99_us"),
        ratio: true,
    },
    // What a closed loop cannot hide: a retry policy that lets a few clients take every lock
    // while the others sleep makes calls that waited rare (p99 falls) but starves clients.
    Figure {
        name: "fairness.jain",
        label: "fairness (Jain's index)",
        meaning: "Jain's fairness index over the clients' locks (1: every client got as many); an interval only across repeats (absent: no lock acquired)",
        unit: FigureUnit::Index,
        measure: Measure::Fairness,
        whole: |m| m.fairness_index(),
        higher_is_better: true,
        banded: false,
        role: headline("fairness"),
        ratio: true,
    },
    Figure {
        name: "acquire.p90",
        label: "acquire p90",
        meaning: "the 90th percentile latency of an acquire call, µs",
        unit: FigureUnit::Micros,
        measure: Measure::AcquireQuantile(0.90),
        whole: |m| Some(m.latency.acquire.quantile(0.90) as f64),
        higher_is_better: false,
        banded: true,
        role: Role::Threshold,
        ratio: false,
    },
    Figure {
        name: "acquire.p999",
        label: "acquire p99.9",
        meaning: "the 99.9th percentile latency of an acquire call, µs",
        unit: FigureUnit::Micros,
        measure: Measure::AcquireQuantile(0.999),
        whole: |m| Some(m.latency.acquire.quantile(0.999) as f64),
        higher_is_better: false,
        banded: true,
        role: Role::Threshold,
        ratio: false,
    },
    Figure {
        name: "violations",
        label: "mutual-exclusion violations",
        meaning: "pairs of holders of one resource whose ownership windows overlapped",
        unit: FigureUnit::Count,
        measure: Measure::Count(|m| Some(m.counts.violations)),
        whole: |m| Some(m.counts.violations as f64),
        higher_is_better: false,
        banded: false,
        role: Role::Threshold,
        ratio: false,
    },
    Figure {
        name: "stale_writes.accepted",
        label: "stale writes accepted",
        meaning: "writes of a holder whose lock had passed on that the protected resource stored",
        unit: FigureUnit::Count,
        measure: Measure::Count(|m| Some(m.fencing.as_ref()?.stale_writes_accepted)),
        whole: |m| Some(m.fencing.as_ref()?.stale_writes_accepted as f64),
        higher_is_better: false,
        banded: false,
        role: Role::Threshold,
        ratio: false,
    },
    Figure {
        name: "token_order_violations",
        label: "token order violations",
        meaning: "acquisitions whose fencing token was not above every earlier token of the resource",
        unit: FigureUnit::Count,
        measure: Measure::Count(|m| Some(m.fencing.as_ref()?.token_order_violations)),
        whole: |m| Some(m.fencing.as_ref()?.token_order_violations as f64),
        higher_is_better: false,
        banded: false,
        role: Role::Threshold,
        ratio: false,
    },
];

/// The figure named `name`.
pub fn figure(name: &str) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| f.name == name)
}

/// The headline figures, in the order the reports list them.
pub fn headlines() -> impl Iterator<Item = &'static Figure> {
    FIGURES
        .iter()
        .filter(|f| matches!(f.role, Role::Headline { .. }))
}

/// The estimate of figure `name` in a mode's `estimates` (`None`: no headline, or absent).
pub fn estimate(estimates: &ModeEstimates, name: &str) -> Option<Estimate> {
    estimates
        .figures
        .get(figure(name)?.estimate_key()?)
        .copied()
}

/// A mode's `estimates` of the headline figures given by name (others are left out).
pub fn estimates(units: usize, unit: Unit, figures: &[(&str, Estimate)]) -> ModeEstimates {
    let keyed = figures.iter().filter_map(|(name, e)| {
        let key = figure(name)?.estimate_key()?;
        Some((key.to_string(), *e))
    });
    ModeEstimates {
        units,
        unit,
        figures: keyed.collect(),
    }
}

/// Every name `--threshold` takes: each figure's, then `NAME.ratio` of those `compare` may
/// bound as B ÷ A.
pub fn threshold_names() -> Vec<String> {
    let plain = FIGURES.iter().map(|f| f.name.to_string());
    let ratios = FIGURES.iter().filter(|f| f.ratio);
    plain
        .chain(ratios.map(|f| format!("{}.ratio", f.name)))
        .collect()
}

/// The book's lists of every figure (`docs/src/generated/figures.md`; its parts, marked as
/// mdBook anchors, are included by the results page and the thresholds section): the
/// counters with their meanings, the figure table, and the names `--threshold` takes. A test
/// holds the file to this text.
pub fn book_list() -> String {
    let mut out = String::from(
        "<!-- Generated from loadgen/src/model/counts.rs and catalog.rs: do not edit; \
         `REDLOCK_BLESS=1 cargo test -p redlock-loadgen --lib catalog` writes it. -->\n\n",
    );
    out.push_str("<!-- ANCHOR: counters -->\n| counter (`counts`) | meaning |\n|---|---|\n");
    for (name, meaning) in super::counts::Counts::MEANINGS {
        out.push_str(&format!("| `{name}` | {meaning} |\n"));
    }
    out.push_str("<!-- ANCHOR_END: counters -->\n\n<!-- ANCHOR: figures -->\n");
    out.push_str(
        "| figure | meaning | unit | interval | in `estimates` |\n|---|---|---|---|---|\n",
    );
    for f in &FIGURES {
        let interval = match f.measure {
            Measure::Count(_) => "none (exact)",
            Measure::Fairness => "across repeats",
            _ => "95 %",
        };
        let key = f.estimate_key().map_or(String::new(), |k| format!("`{k}`"));
        let unit = unit_words(f.unit).0;
        out.push_str(&format!(
            "| `{}` | {} | {unit} | {interval} | {key} |\n",
            f.name, f.meaning
        ));
    }
    out.push_str("<!-- ANCHOR_END: figures -->\n\n<!-- ANCHOR: thresholds -->\n");
    out.push_str("| figure | unit of VALUE |\n|---|---|\n");
    for f in &FIGURES {
        out.push_str(&format!("| `{}` | {} |\n", f.name, unit_words(f.unit).1));
    }
    for f in FIGURES.iter().filter(|f| f.ratio) {
        out.push_str(&format!(
            "| `{}.ratio` | B ÷ A (`compare` only) |\n",
            f.name
        ));
    }
    out.push_str("<!-- ANCHOR_END: thresholds -->\n");
    out
}

/// A unit in words, and how a threshold's bound in it is written.
fn unit_words(unit: FigureUnit) -> (&'static str, &'static str) {
    match unit {
        FigureUnit::PerSecond => ("per second", "per second (acquires/s)"),
        FigureUnit::Share => ("share", "`99.9%` or a fraction `0.999`"),
        FigureUnit::Micros => ("µs", "`us`, `ms` or `s`"),
        FigureUnit::Index => ("index, 0 to 1", "the index, 0 to 1"),
        FigureUnit::Count => ("count", "a count"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_file(path: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        std::fs::read_to_string(root.join(path)).unwrap()
    }

    #[test]
    fn names_and_keys_are_unique() {
        let mut names: Vec<&str> = FIGURES.iter().map(|f| f.name).collect();
        let mut keys: Vec<&str> = FIGURES.iter().filter_map(|f| f.estimate_key()).collect();
        let (n, k) = (names.len(), keys.len());
        names.sort_unstable();
        names.dedup();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!((names.len(), keys.len()), (n, k));
    }

    #[test]
    fn the_schema_describes_every_headline_estimate_as_the_table_does() {
        let schema: serde_json::Value =
            serde_json::from_str(&repo_file("loadgen/schema.json")).unwrap();
        let estimates = schema
            .pointer("/$defs/mode/properties/estimates/properties")
            .and_then(|p| p.as_object())
            .expect("schema.json: $defs.mode.properties.estimates.properties");
        let mut problems = Vec::new();
        for f in headlines() {
            let key = f.estimate_key().unwrap();
            match estimates.get(key).and_then(|p| p.get("description")) {
                Some(d) if d == f.meaning => {}
                Some(d) => problems.push(format!(
                    "{key}: schema.json says {d}, the table {:?}",
                    f.meaning
                )),
                None => problems.push(format!("{key}: no described property in schema.json")),
            }
        }
        let known: Vec<&str> = headlines().filter_map(|f| f.estimate_key()).collect();
        for key in estimates.keys() {
            if !["units", "unit"].contains(&key.as_str()) && !known.contains(&key.as_str()) {
                problems.push(format!("{key}: in schema.json but not in the figure table"));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn the_book_s_figure_list_is_the_one_the_tables_make() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../docs/src/generated/figures.md");
        let made = book_list();
        if std::env::var_os("REDLOCK_BLESS").is_some() {
            std::fs::write(&path, &made).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == made,
            "{} differs from the counters and the figure table: run `REDLOCK_BLESS=1 cargo test \
             -p redlock-loadgen --lib catalog` and commit it",
            path.display()
        );
    }
}
