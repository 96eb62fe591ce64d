//! The headline figures of a mode with their 95 % intervals, resampled from the mode's own
//! per-interval records ([`super::uncertainty`] holds the method). Rates and shares are ratios
//! of sums over the drawn intervals; percentiles are read from the drawn intervals' latency
//! histograms added together.

use hdrhistogram::iterators::IterationValue;
use serde::{Deserialize, Serialize};

use super::catalog::{self, Measure};
use super::interval::Interval;
use super::mode::ModeStats;
use super::repeats;
use super::student::Scale;
use super::threshold::{JudgedThreshold, Threshold};
pub use super::uncertainty::ModeEstimates;
use super::uncertainty::{ratio_of_sums_in, resample_segments, Estimate, Order, Resampled, Unit};

/// One ratio between two modes or runs with its interval and what the interval says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    /// The headline figure's name ([`super::catalog`]).
    pub figure: String,
    #[serde(flatten)]
    pub ratio: Estimate,
    pub order: Order,
}

/// Figure `name` of `m` ([`super::catalog`]), resampled (`None`: undefined, e.g. no call at
/// all, or a figure with no interval).
pub fn resample(m: &ModeStats, name: &str) -> Option<Resampled> {
    let figure = catalog::figure(name)?;
    let sums = |name| -> Vec<f64> {
        let count = |i: &Interval| i.counter(name).unwrap_or(0) as f64;
        m.intervals.iter().map(count).collect()
    };
    let (num, den, scale) = match figure.measure {
        Measure::Rate(count) => (
            sums(count),
            repeats::interval_seconds(m),
            Scale::NonNegative,
        ),
        Measure::Share(part, whole) => (sums(part), sums(whole), Scale::Share),
        Measure::AcquireQuantile(q) => return percentile(m, q),
        Measure::Fairness => return fairness(m),
        Measure::Count(_) => return None,
    };
    ratio_of_sums_in(&repeats::segments(m), &num, &den, scale)
}

/// Jain's fairness index over the clients' locks: across repeats, the mean of each repeat's
/// own index with Student's t over them (the index over all repeats' locks added per client
/// would be higher than any one run's: a client starved in one repeat wins in another); a
/// single run has no interval (its intervals do not keep each client's locks).
fn fairness(m: &ModeStats) -> Option<Resampled> {
    let whole = m.fairness_index()?;
    let per_repeat: Vec<Option<f64>> = match m.repeats.len() {
        0 | 1 => Vec::new(),
        _ => m.repeats.iter().map(|r| r.jain_index).collect(),
    };
    let own: Vec<f64> = per_repeat.iter().flatten().copied().collect();
    let value = match own.len() {
        0 => whole,
        n => own.iter().sum::<f64>() / n as f64,
    };
    Some(Resampled::of_repeats(value, per_repeat, Scale::Share))
}

/// Quantile `q` of the acquire latency over the drawn intervals, µs.
fn percentile(m: &ModeStats, q: f64) -> Option<Resampled> {
    // Each interval's histogram as (bucket, count) over one sorted list of the values seen
    // anywhere, so a resample adds sparse counts into one dense array instead of histograms.
    // Unpacked one interval at a time: a decoded histogram is a dense array of counters, and
    // an hour of intervals held decoded at once would take hundreds of times the file's size.
    let recorded = |i: &Interval| -> Vec<(u64, u64)> {
        let h = i.acquire.unpack();
        let pair = |v: IterationValue<u64>| (v.value_iterated_to(), v.count_at_value());
        h.inner().iter_recorded().map(pair).collect()
    };
    let recorded: Vec<Vec<(u64, u64)>> = m.intervals.iter().map(recorded).collect();
    let mut values: Vec<u64> = recorded.iter().flatten().map(|&(v, _)| v).collect();
    values.sort_unstable();
    values.dedup();
    let at = |v: u64| values.binary_search(&v).unwrap_or(0);
    let sparse = |pairs: Vec<(u64, u64)>| pairs.into_iter().map(|(v, n)| (at(v), n)).collect();
    let sparse: Vec<Vec<(usize, u64)>> = recorded.into_iter().map(sparse).collect();
    let whole = m.latency.acquire.quantile(q) as f64;
    let mut dense = vec![0u64; values.len()];
    let mut resampled = resample_segments(&repeats::segments(m), Scale::Log, |drawn| {
        dense.iter_mut().for_each(|c| *c = 0);
        let mut total = 0u64;
        for &i in drawn {
            for &(at, n) in &sparse[i] {
                dense[at] += n;
                total += n;
            }
        }
        if total == 0 {
            return None;
        }
        // The value below which a share q of the calls lie (HdrHistogram's rule: at least one).
        let rank = ((q * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        dense.iter().zip(&values).find_map(|(&n, &v)| {
            seen += n;
            (seen >= rank).then_some(v as f64)
        })
    })?;
    // The headline is the whole run's histogram (the same calls, read without resampling).
    if m.latency.acquire.count() > 0 {
        resampled.value = whole;
    }
    Some(resampled)
}

/// Figure `name` of `m` (a threshold's figure) with its interval where it has one; `None`
/// when the mode has no such figure.
pub fn figure_of(m: &ModeStats, name: &str) -> Option<Estimate> {
    if let Measure::Count(count) = catalog::figure(name)?.measure {
        return Some(Estimate::bare(count(m)? as f64));
    }
    let kept = m.estimates.as_ref();
    let kept = kept.and_then(|e| catalog::estimate(e, name));
    kept.or_else(|| Some(resample(m, name)?.estimate()))
}

/// Every threshold judged on every mode of a run, in the order given.
pub fn judge_modes(modes: &[ModeStats], thresholds: &[Threshold]) -> Vec<JudgedThreshold> {
    thresholds
        .iter()
        .flat_map(|t| {
            modes.iter().map(move |m| JudgedThreshold {
                mode: m.label().into(),
                verdict: t.judge(figure_of(m, &t.figure)),
            })
        })
        .collect()
}

/// `m`'s headline figures with their intervals (`None` when the mode has no intervals). A
/// figure with no interval keeps its whole-run value; a rate's value divides by the measured
/// window, as the table does.
pub fn of_mode(m: &ModeStats) -> Option<ModeEstimates> {
    if m.intervals.is_empty() {
        return None;
    }
    let (units, unit) = match m.repeats.len() {
        0 | 1 => (m.intervals.len(), Unit::Interval),
        n => (n, Unit::Repeat),
    };
    let mut figures = std::collections::BTreeMap::new();
    for f in catalog::headlines() {
        let e = match (resample(m, f.name), f.measure, f.whole(m)) {
            // A rate's value is the whole window's; fairness across repeats is their mean.
            (Some(r), Measure::Rate(_), Some(whole)) => {
                Estimate::within(whole, r.estimate().interval())
            }
            (Some(r), ..) => r.estimate(),
            (None, Measure::Fairness, _) | (None, _, None) => continue,
            (None, _, Some(whole)) => Estimate::bare(whole),
        };
        if let Some(key) = f.key {
            figures.insert(key.to_string(), e);
        }
    }
    Some(ModeEstimates {
        units,
        unit,
        figures,
    })
}

/// `a ÷ b` for every headline figure both define, with its interval and order.
pub fn ratios(a: &ModeStats, b: &ModeStats) -> Vec<RatioEstimate> {
    catalog::headlines()
        .filter_map(|f| {
            let (a, b) = (resample(a, f.name)?, resample(b, f.name)?);
            // Two modes of the same repeats pair up repeat by repeat; otherwise independent.
            let ratio = a.paired_ratio(&b).or_else(|| a.ratio(&b))?.estimate();
            Some(RatioEstimate {
                figure: f.name.into(),
                ratio,
                order: Order::of(&ratio, 1.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use redlock_core::FanOut;

    use super::*;
    use crate::hist::{Hist, PackedHist};

    fn mode(per_interval: &[(u64, u64)], n_intervals: usize) -> ModeStats {
        let mut m = ModeStats::new(FanOut::Concurrent, 3, Duration::from_millis(100));
        m.duration = Duration::from_millis(100 * n_intervals as u64);
        for i in 0..n_intervals {
            let (acquired, latency_us) = per_interval[i % per_interval.len()];
            let mut h = Hist::new();
            for k in 0..acquired {
                h.record(latency_us + k % 7);
            }
            m.latency.acquire.add(&h);
            m.counts.acquired += acquired;
            m.counts.acquire_calls += acquired;
            m.add_intervals([(
                i,
                Interval {
                    acquired,
                    acquire_calls: acquired,
                    attempts: acquired,
                    attempts_won: acquired,
                    acquire: PackedHist::pack(&h),
                    ..Interval::default()
                },
            )]);
        }
        m
    }

    #[test]
    fn every_headline_figure_gets_an_interval_around_the_runs_own_figure() {
        let m = mode(&[(100, 1000), (110, 1100), (90, 900), (105, 1200)], 20);
        let e = of_mode(&m).unwrap();
        // Fairness has an interval only across repeats (see the test below).
        for f in catalog::headlines().filter(|f| f.name != "fairness.jain") {
            let est = catalog::estimate(&e, f.name).unwrap();
            let (low, high) = est.interval().unwrap_or_else(|| panic!("{}", f.name));
            assert!(low <= est.value && est.value <= high, "{}: {est:?}", f.name);
        }
        assert_eq!(
            catalog::estimate(&e, "goodput").unwrap().value,
            m.acquires_per_s()
        );
        assert_eq!(
            catalog::estimate(&e, "acquire.p99").unwrap().value,
            m.latency.acquire.quantile(0.99) as f64
        );
        let p50 = catalog::estimate(&e, "acquire.p50").unwrap();
        let (low, high) = p50.interval().unwrap();
        assert!(low >= 900.0 && high <= 1210.0, "{p50:?}");
    }

    #[test]
    fn fairness_takes_its_interval_across_each_repeats_own_index() {
        let with_locks = |per_worker: Vec<u64>| {
            let mut m = mode(&[(100, 1000)], 5);
            m.fairness.acquired_per_worker = per_worker;
            m
        };
        // One run: the figure, no interval (its intervals do not keep each client's locks).
        let single = with_locks(vec![10, 10, 10, 10]);
        let e = figure_of(&single, "fairness.jain").unwrap();
        assert_eq!((e.value, e.interval()), (1.0, None));
        // Three repeats: even, one client starved, even again. The whole mode adds each
        // client's locks across repeats; the interval is over the repeats' own indexes.
        let mut whole = with_locks(vec![10, 10, 10, 10]);
        super::repeats::append(&mut whole, &with_locks(vec![30, 10, 0, 0]));
        super::repeats::append(&mut whole, &with_locks(vec![10, 10, 10, 10]));
        let own: Vec<Option<f64>> = whole.repeats.iter().map(|r| r.jain_index).collect();
        assert_eq!(own, [Some(1.0), Some(0.4), Some(1.0)]);
        let e = resample(&whole, "fairness.jain").unwrap().estimate();
        assert!((e.value - 0.8).abs() < 1e-9, "the repeats' mean: {e:?}");
        let (low, high) = e.interval().expect("three repeats give an interval");
        assert!(low < 0.5 && high == 1.0, "{e:?}");
        // A mode with no lock has no fairness to speak of.
        assert!(figure_of(&with_locks(vec![0, 0]), "fairness.jain").is_none());
    }

    #[test]
    fn a_short_run_has_figures_but_no_intervals() {
        let e = of_mode(&mode(&[(100, 1000)], 4)).unwrap();
        assert_eq!(e.units, 4);
        let goodput = catalog::estimate(&e, "goodput").unwrap();
        assert_eq!(goodput.interval(), None);
        assert!(goodput.value > 0.0);
    }

    #[test]
    fn ratios_tell_a_real_gap_from_noise() {
        let slow = mode(&[(100, 1000), (110, 1100), (90, 900)], 15);
        let fast = mode(&[(300, 400), (330, 440), (270, 360)], 15);
        let r = ratios(&fast, &slow);
        let goodput = r.iter().find(|r| r.figure == "goodput").unwrap();
        assert_eq!(goodput.order, Order::Higher, "{goodput:?}");
        let p99 = r.iter().find(|r| r.figure == "acquire.p99").unwrap();
        assert_eq!(p99.order, Order::Lower, "{p99:?}");
        let same = ratios(&slow, &slow.clone());
        assert!(same
            .iter()
            .filter(|r| r.figure != "acquire.success" && r.figure != "quorum.success")
            .all(|r| r.order == Order::NoClearDifference));
    }
}
