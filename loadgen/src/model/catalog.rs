//! The one table of figures that carry a 95 % interval or can be named by `--threshold`:
//! each declared once, with its name, meaning, unit, how it is measured from a mode's
//! intervals, which way is better and where it appears. Every consumer reads it: the
//! resampling ([`super::estimates`]), the JSON's `estimates` ([`super::uncertainty::ModeEstimates`]),
//! `--threshold` ([`super::threshold`]), `compare`'s verdicts ([`super::comparison`]), the
//! text, HTML and CSV reports (`crate::render`) and the book's lists; `loadgen/schema.json`
//! is checked against it by a test below. Adding one: [`super`].

use super::mode::{ratio, ModeStats};
use super::uncertainty::{Estimate, ModeEstimates};

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

/// How a figure is measured, which is what its interval resamples. Counters are named as in
/// [`super::counts`] and [`super::interval::Interval`] (a test holds them to both).
#[derive(Debug, Clone, Copy)]
pub enum Measure {
    /// A counter's sum over the intervals' seconds.
    Rate(&'static str),
    /// One counter's sum over another's.
    Share(&'static str, &'static str),
    /// A quantile of the acquire latency.
    AcquireQuantile(f64),
    /// Jain's index over the clients' locks (an interval across repeats only: an interval's
    /// record does not keep each client's locks).
    Fairness,
    /// A whole-run count, exact (no interval); `None` when the mode has no such figure.
    Count(fn(&ModeStats) -> Option<u64>),
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
    /// A headline's key in the JSON's `estimates` (a headline shows with its interval in
    /// every report and has a CSV interval column pair); `None`: named by `--threshold` only.
    pub key: Option<&'static str>,
    /// Which way is better (for `compare`'s verdicts).
    pub higher_is_better: bool,
    /// A rate or a latency, which moves by a few per cent from run to run for no reason worth
    /// acting on: `compare` calls it better or worse only beyond the noise band. A share is
    /// judged on any clear difference: a point of success rate is never noise.
    pub banded: bool,
    /// `compare --threshold NAME.ratio…` may bound B ÷ A.
    pub ratio: bool,
}

impl Figure {
    /// The whole run's value (a rate divides by the measured window, as the table does).
    pub fn whole(&self, m: &ModeStats) -> Option<f64> {
        let count = |name| m.counts.get(name).unwrap_or(0);
        Some(match self.measure {
            Measure::Rate(name) => m.per_second(count(name)),
            Measure::Share(part, whole) => ratio(count(part), count(whole)),
            Measure::AcquireQuantile(q) => m.latency.acquire.quantile(q) as f64,
            Measure::Fairness => m.fairness_index()?,
            Measure::Count(count) => count(m)? as f64,
        })
    }
}

/// The table's rows: name, label, unit, measure, key in `estimates` (`-`: none), which way is
/// better, and the flags `banded` and `ratio` ([`Figure`]); then the meaning.
macro_rules! figures {
    ($($name:literal $label:literal $unit:ident $measure:expr, $key:tt $better:ident
       $(+ $flag:ident)*: $meaning:literal;)*) => {
        [$(Figure {
            name: $name,
            label: $label,
            meaning: $meaning,
            unit: FigureUnit::$unit,
            measure: $measure,
            key: figures!(@key $key),
            higher_is_better: figures!(@is higher $better),
            banded: false $(|| figures!(@is banded $flag))*,
            ratio: false $(|| figures!(@is ratio $flag))*,
        }),*]
    };
    (@key -) => { None };
    (@key $key:literal) => { Some($key) };
    (@is higher higher) => { true };
    (@is banded banded) => { true };
    (@is ratio ratio) => { true };
    (@is $want:ident $got:ident) => { false };
}

use Measure::{AcquireQuantile, Count, Fairness, Rate, Share};

/// Every figure, headlines first, in the order the reports list them.
pub const FIGURES: [Figure; 12] = figures! {
    "goodput" "goodput (acquires/s)" PerSecond Rate("acquired"), "goodput" higher + banded + ratio:
        "acquire calls that returned a lock, per second of the measured window";
    "acquire.success" "acquire success" Share Share("acquired", "acquire_calls"),
        "acquire_success" higher + ratio: "the share of acquire calls that returned a lock";
    "quorum.success" "quorum success" Share Share("attempts_won", "attempts"), "quorum_success"
        higher: "the share of attempts that won a quorum in time";
    "split_votes.share" "split-vote share" Share Share("split_votes", "attempts"),
        "split_vote_share" lower: "the share of attempts lost to a split vote";
    "acquire.p50" "acquire p50" Micros AcquireQuantile(0.50), "acquire_p50_us" lower + banded
        + ratio: "the median latency of an acquire call, µs";
    "acquire.p99" "acquire p99" Micros AcquireQuantile(0.99), "acquire_p99_us" lower + banded
        + ratio: "the 99th percentile latency of an acquire call, µs";
    // What a closed loop cannot hide: a retry policy that lets a few clients take every lock
    // while the others sleep makes calls that waited rare (p99 falls) but starves clients.
    "fairness.jain" "fairness (Jain's index)" Index Fairness, "fairness" higher + ratio:
        "Jain's fairness index over the clients' locks (1: every client got as many); an interval only across repeats (absent: no lock acquired)";
    "acquire.p90" "acquire p90" Micros AcquireQuantile(0.90), - lower + banded:
        "the 90th percentile latency of an acquire call, µs";
    "acquire.p999" "acquire p99.9" Micros AcquireQuantile(0.999), - lower + banded:
        "the 99.9th percentile latency of an acquire call, µs";
    "violations" "mutual-exclusion violations" Count Count(|m| Some(m.counts.violations)), -
        lower: "pairs of holders of one resource whose ownership windows overlapped";
    "stale_writes.accepted" "stale writes accepted" Count
        Count(|m| Some(m.fencing.as_ref()?.stale_writes_accepted)), - lower:
        "writes of a holder whose lock had passed on that the protected resource stored";
    "token_order_violations" "token order violations" Count
        Count(|m| Some(m.fencing.as_ref()?.token_order_violations)), - lower:
        "acquisitions whose fencing token was not above every earlier token of the resource";
};

/// The figure named `name`.
pub fn figure(name: &str) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| f.name == name)
}

/// The headline figures, in the order the reports list them.
pub fn headlines() -> impl Iterator<Item = &'static Figure> {
    FIGURES.iter().filter(|f| f.key.is_some())
}

/// The estimate of figure `name` in a mode's `estimates` (`None`: no headline, or absent).
pub fn estimate(estimates: &ModeEstimates, name: &str) -> Option<Estimate> {
    estimates.figures.get(figure(name)?.key?).copied()
}

/// Every name `--threshold` takes: each figure's, then `NAME.ratio` of those `compare` may
/// bound as B ÷ A.
pub fn threshold_names() -> Vec<String> {
    let plain = FIGURES.iter().map(|f| f.name.to_string());
    let ratios = FIGURES.iter().filter(|f| f.ratio);
    let ratios = ratios.map(|f| format!("{}.ratio", f.name));
    plain.chain(ratios).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The book's lists of every figure (`docs/src/generated/figures.md`; its parts, marked as
    /// mdBook anchors, are included by the results page and the thresholds section): the
    /// counters with their meanings, the figure table, and the names `--threshold` takes. A test
    /// holds the file to this text.
    fn book_list() -> String {
        let mut out = String::from(
            "<!-- Generated from loadgen/src/model/counts.rs and catalog.rs: do not edit; \
             `REDLOCK_BLESS=1 cargo test -p redlock-loadgen --lib catalog` writes it. -->\n\n",
        );
        out.push_str("<!-- ANCHOR: counters -->\n| counter (`counts`) | meaning |\n|---|---|\n");
        for (name, meaning) in crate::model::counts::Counts::MEANINGS {
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
            let key = f.key.map_or(String::new(), |k| format!("`{k}`"));
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

    fn repo_file(path: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        std::fs::read_to_string(root.join(path)).unwrap()
    }

    #[test]
    fn every_counter_measured_is_one_of_a_mode_and_of_an_interval() {
        let i = crate::model::interval::Interval::default();
        let m = ModeStats::new(redlock_core::FanOut::Concurrent, 1, Default::default());
        for f in &FIGURES {
            let names = match f.measure {
                Measure::Rate(n) => vec![n],
                Measure::Share(a, b) => vec![a, b],
                _ => Vec::new(),
            };
            for n in names {
                assert!(
                    i.counter(n).is_some() && m.counts.get(n).is_some(),
                    "{}: {n}",
                    f.name
                );
            }
        }
    }

    #[test]
    fn names_and_keys_are_unique() {
        let mut names: Vec<&str> = FIGURES.iter().map(|f| f.name).collect();
        let mut keys: Vec<&str> = FIGURES.iter().filter_map(|f| f.key).collect();
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
            let key = f.key.unwrap();
            match estimates.get(key).and_then(|p| p.get("description")) {
                Some(d) if d == f.meaning => {}
                Some(d) => problems.push(format!(
                    "{key}: schema.json says {d}, the table {:?}",
                    f.meaning
                )),
                None => problems.push(format!("{key}: no described property in schema.json")),
            }
        }
        let known: Vec<&str> = headlines().filter_map(|f| f.key).collect();
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
