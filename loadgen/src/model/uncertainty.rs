//! How sure a figure is: 95 % intervals by a moving-block bootstrap over a run's intervals
//! (blocks of ⌈n^⅓⌉ neighbouring intervals keep what neighbours share: a warm-up, a slow
//! minute, a fault), or Student's t over the repeats of `run --repeat`
//! ([`crate::model::student`]). The method, what it covers and what it does not:
//! `docs/src/uncertainty.md`.

use std::ops::Range;

use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};
use serde::{Deserialize, Serialize};

use super::student::{self, Scale};

/// Confidence of every interval the suite reports.
pub use super::student::CONFIDENCE;
/// Fewer units than this give no interval ("too short to say").
pub const MIN_UNITS: usize = 5;
/// Fewer repeats than this give no interval (`run --repeat`: Student's t needs two).
pub const MIN_REPEATS: usize = 2;
/// Bootstrap resamples per figure.
pub const RESAMPLES: usize = 1000;
/// Seed of the resampling: fixed, so a result always reports the same interval.
const SEED: u64 = 0x5eed_2026;

/// A figure with its 95 % interval (`low`/`high` absent when the run was too short).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
}

impl Estimate {
    /// A figure without an interval.
    pub fn bare(value: f64) -> Self {
        Estimate::within(value, None)
    }

    /// Its interval, when there is one.
    pub fn interval(&self) -> Option<(f64, f64)> {
        Some((self.low?, self.high?))
    }

    /// `value` with `interval`, widened to hold it (none: a bare figure).
    pub fn within(value: f64, interval: Option<(f64, f64)>) -> Estimate {
        let (low, high) = interval.map(|(l, h)| (l.min(value), h.max(value))).unzip();
        Estimate { value, low, high }
    }
}

/// A figure and what its interval is taken from: a single run's bootstrap draws, or the
/// figure of each repeat (Student's t in closed form, [`crate::model::student`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Resampled {
    pub value: f64,
    /// One value per resample (empty: too few units to resample, or repeats). Resamples whose
    /// figure is undefined (e.g. no call in the drawn intervals) are left out.
    pub draws: Vec<f64>,
    /// Across repeats ([`across_repeats`]): each repeat's own figure (`None`: undefined in
    /// that repeat); empty otherwise.
    pub per_repeat: Vec<Option<f64>>,
    /// How the figure spreads: what an interval over repeats is taken on.
    pub scale: Scale,
    /// An interval already in closed form (over repeats, per-turn pairs or Welch's), which
    /// [`Resampled::estimate`] gives instead of the draws' percentiles.
    pub exact: Option<(f64, f64)>,
}

impl Resampled {
    fn from_draws(value: f64, draws: Vec<f64>, scale: Scale) -> Resampled {
        Resampled {
            value,
            draws,
            per_repeat: Vec::new(),
            scale,
            exact: None,
        }
    }

    /// A figure known only per repeat (`per_repeat` empty, or fewer than two defined: no
    /// interval): Student's t over the repeats' own figures on `scale`.
    pub fn of_repeats(value: f64, per_repeat: Vec<Option<f64>>, scale: Scale) -> Resampled {
        let defined: Vec<f64> = per_repeat.iter().flatten().copied().collect();
        Resampled {
            per_repeat,
            ..Resampled::closed_form(value, student::interval(&defined, scale), scale)
        }
    }

    fn closed_form(value: f64, interval: Option<(f64, f64)>, scale: Scale) -> Resampled {
        Resampled {
            exact: interval,
            ..Resampled::from_draws(value, Vec::new(), scale)
        }
    }

    /// The figure with its interval, widened to hold the figure itself (a geometric mean of
    /// repeats and the figure over all of them can differ).
    pub fn estimate(&self) -> Estimate {
        let interval = self.exact.or_else(|| percentile_interval(&self.draws));
        Estimate::within(self.value, interval)
    }

    /// The repeats' figures that are defined.
    fn defined(&self) -> Vec<f64> {
        self.per_repeat.iter().flatten().copied().collect()
    }

    /// Draws to pair with a single run's: the bootstrap's own, or Student's t draws of the
    /// mean over the repeats.
    fn draws_to_pair(&self) -> Vec<f64> {
        if self.per_repeat.is_empty() {
            return self.draws.clone();
        }
        student::draws(&self.defined(), self.scale, RESAMPLES, SEED).unwrap_or_default()
    }

    /// Whether both are sets of repeats with an interval of their own (Welch's applies).
    fn both_repeated(&self, other: &Resampled) -> bool {
        let enough = |r: &Resampled| r.defined().len() >= student::MIN_VALUES;
        enough(self) && enough(other)
    }

    /// `self ÷ other`, the two taken as independent (two modes, two runs): Welch's interval on
    /// the logarithms for two sets of repeats; otherwise resample i of one paired with
    /// resample i of the other. `None` when `other` is 0.
    pub fn ratio(&self, other: &Resampled) -> Option<Resampled> {
        if other.value == 0.0 {
            return None;
        }
        let value = self.value / other.value;
        if self.both_repeated(other) {
            if let Some(interval) = student::welch_ratio(&self.defined(), &other.defined()) {
                return Some(Resampled::closed_form(value, Some(interval), Scale::Log));
            }
        }
        Some(self.pair_with(other, |a, b| (b != 0.0).then(|| a / b), value))
    }

    /// `self ÷ other` for two results measured in the same repeats (`run --fanout both
    /// --repeat N`, `compare --run`): each repeat's own ratio, Student's t over their
    /// logarithms (a geometric interval: a ratio of positive figures never reaches 0), so what
    /// moves from repeat to repeat moves both and cancels. `None` unless both hold as many
    /// repeats and at least two of them give a ratio.
    pub fn paired_ratio(&self, other: &Resampled) -> Option<Resampled> {
        self.paired(other, |a, b| (b != 0.0).then(|| a / b), Scale::Log)
    }

    /// `self − other` for two results measured in turns, repeat by repeat (`compare --run`):
    /// each repeat's own difference, Student's t over them, as [`Resampled::paired_ratio`].
    /// `None` unless both hold as many repeats and at least two of them give a difference.
    pub fn paired_difference(&self, other: &Resampled) -> Option<Resampled> {
        self.paired(other, |a, b| Some(a - b), Scale::Signed)
    }

    /// `combine` of the two figures, its interval Student's t on `scale` over `combine(self's
    /// repeat r, other's repeat r)` for every repeat both define (`None`: undefined, the
    /// repeats do not line up, or fewer than two pairs).
    fn paired(
        &self,
        other: &Resampled,
        combine: impl Fn(f64, f64) -> Option<f64>,
        scale: Scale,
    ) -> Option<Resampled> {
        let value = combine(self.value, other.value)?;
        if self.per_repeat.len() != other.per_repeat.len() {
            return None;
        }
        let pairs = self.per_repeat.iter().zip(&other.per_repeat);
        let pairs = pairs.filter_map(|(a, b)| combine((*a)?, (*b)?));
        let pairs: Vec<f64> = pairs.filter(|x| x.is_finite()).collect();
        let interval = student::interval(&pairs, scale);
        (pairs.len() >= student::MIN_VALUES).then(|| Resampled::closed_form(value, interval, scale))
    }

    /// `self − other`, independent as in [`Resampled::ratio`] (Welch's on the figures).
    pub fn difference(&self, other: &Resampled) -> Resampled {
        let value = self.value - other.value;
        if self.both_repeated(other) {
            let interval = student::welch_difference(&self.defined(), &other.defined());
            return Resampled::closed_form(value, interval, Scale::Signed);
        }
        self.pair_with(other, |a, b| Some(a - b), value)
    }

    fn pair_with(
        &self,
        other: &Resampled,
        combine: impl Fn(f64, f64) -> Option<f64>,
        value: f64,
    ) -> Resampled {
        // Pairing needs as many draws on both sides; a side with none gives no interval.
        // Two sides with as many units drew the same blocks in the same order (one seed):
        // pairing draw i with the other's draw from the far end keeps the two independent, as
        // two runs are, instead of moving together with the blocks they share.
        let (mine, theirs) = (self.draws_to_pair(), other.draws_to_pair());
        let pairs = mine.iter().zip(theirs.iter().rev());
        let draws = pairs.filter_map(|(&a, &b)| combine(a, b));
        let draws = draws.filter(|x| x.is_finite()).collect();
        Resampled::from_draws(value, draws, Scale::Signed)
    }
}

/// A mode's headline figures with their intervals (the JSON mode's `estimates`): one per
/// headline of the figure table (`super::catalog`, which reads them by figure name), under
/// its key (`goodput`, `acquire_p99_us`, …). A key a newer version added is kept as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeEstimates {
    /// Intervals resampled (fewer than 5: no interval, too short to say), or repeats.
    pub units: usize,
    /// What `units` counts: the run's intervals or, with `run --repeat`, its repeats.
    #[serde(default)]
    pub unit: Unit,
    /// Each headline figure's estimate by its key (fairness is absent when no lock was
    /// acquired, or in a file written before it was a headline).
    #[serde(flatten)]
    pub figures: std::collections::BTreeMap<String, Estimate>,
}

/// What the intervals of a mode were taken over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// A moving-block bootstrap over the run's intervals.
    #[default]
    Interval,
    /// Student's t over the repeats of `run --repeat`.
    Repeat,
}

impl Unit {
    /// Too few units to give an interval.
    pub fn too_few(self, units: usize) -> bool {
        match self {
            Unit::Interval => units < MIN_UNITS,
            Unit::Repeat => units < MIN_REPEATS,
        }
    }
}

/// Where a ratio's (or a difference's) interval puts the first figure against the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// The whole interval is above 1 (ratio) or 0 (difference).
    Higher,
    /// The whole interval is below.
    Lower,
    /// The interval holds 1 (or 0): the data do not tell the two apart.
    NoClearDifference,
    /// Too few units on one side to compute an interval.
    TooShort,
}

impl Order {
    /// The order a ratio's estimate shows (`neutral` = 1 for a ratio, 0 for a difference).
    pub fn of(estimate: &Estimate, neutral: f64) -> Order {
        match estimate.interval() {
            None => Order::TooShort,
            Some((low, _)) if low > neutral => Order::Higher,
            Some((_, high)) if high < neutral => Order::Lower,
            Some(_) => Order::NoClearDifference,
        }
    }

    /// In words, for the reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Higher => "higher",
            Order::Lower => "lower",
            Order::NoClearDifference => "no clear difference",
            Order::TooShort => "too short to say",
        }
    }
}

/// Draws for `figure` over units measured in `segments` (the spans of one run's intervals, or
/// one span per repeat of `run --repeat`): a moving-block bootstrap over the units of a single
/// segment ([`bootstrap`]); with two or more segments, Student's t over the segments' own
/// figures on `scale` ([`across_repeats`]).
pub fn resample_segments(
    segments: &[Range<usize>],
    scale: Scale,
    figure: impl FnMut(&[usize]) -> Option<f64>,
) -> Option<Resampled> {
    match segments {
        [] => None,
        [one] => {
            debug_assert_eq!(one.start, 0, "a single run's intervals start at 0");
            bootstrap(one.len(), scale, figure)
        }
        _ => across_repeats(segments, scale, figure),
    }
}

/// Independent repeats (the method of independent replications): the figure of each repeat
/// and Student's t over them in closed form, x̄ ± t(N−1)·s/√N — on the logarithms for a
/// [`Scale::Log`] figure (a geometric interval). What the repeats differ by (the machine's
/// other work between them, where the threads ran) is in s; a run's noise within one stretch
/// of time is in it too, since each repeat's figure carries its own.
pub fn across_repeats(
    segments: &[Range<usize>],
    scale: Scale,
    mut figure: impl FnMut(&[usize]) -> Option<f64>,
) -> Option<Resampled> {
    let all: Vec<usize> = segments.iter().flat_map(Clone::clone).collect();
    let value = figure(&all)?;
    let mut of =
        |s: &Range<usize>| figure(&s.clone().collect::<Vec<_>>()).filter(|x| x.is_finite());
    let per_repeat: Vec<Option<f64>> = segments.iter().map(&mut of).collect();
    Some(Resampled::of_repeats(value, per_repeat, scale))
}

/// Resamples `units` units in blocks and computes `figure` on each resample.
///
/// `figure` gets the indexes of the drawn units (with repeats; n of them) and returns the
/// figure, or `None` when it is undefined for that draw. The figure of the whole run is
/// `figure(0..n)`.
pub fn bootstrap(
    units: usize,
    scale: Scale,
    mut figure: impl FnMut(&[usize]) -> Option<f64>,
) -> Option<Resampled> {
    let all: Vec<usize> = (0..units).collect();
    let value = figure(&all)?;
    if units < MIN_UNITS {
        return Some(Resampled::from_draws(value, Vec::new(), scale));
    }
    let block = block_length(units);
    let starts = units - block + 1;
    let mut rng = SmallRng::seed_from_u64(SEED ^ units as u64);
    let mut drawn = Vec::with_capacity(units);
    let mut draws = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        drawn.clear();
        while drawn.len() < units {
            let start = rng.random_range(0..starts);
            let take = block.min(units - drawn.len());
            drawn.extend(start..start + take);
        }
        if let Some(x) = figure(&drawn).filter(|x| x.is_finite()) {
            draws.push(x);
        }
    }
    Some(Resampled::from_draws(value, draws, scale))
}

/// ⌈n^⅓⌉, at least 1 and at most n.
fn block_length(units: usize) -> usize {
    ((units as f64).cbrt().ceil() as usize).clamp(1, units)
}

/// A ratio of sums over the drawn units measured in `segments` (see [`resample_segments`]):
/// success rates, shares, and goodput (den = the interval's length in seconds).
pub fn ratio_of_sums_in(
    segments: &[Range<usize>],
    num: &[f64],
    den: &[f64],
    scale: Scale,
) -> Option<Resampled> {
    debug_assert_eq!(num.len(), den.len());
    resample_segments(segments, scale, |drawn| {
        let add = |(n, d), &i: &usize| (n + num[i], d + den[i]);
        let (n, d) = drawn.iter().fold((0.0, 0.0), add);
        (d > 0.0).then(|| n / d)
    })
}

/// The 2.5th and 97.5th percentiles of `draws` (None with fewer than 20 draws: too few to
/// place a 95 % bound between two of them).
fn percentile_interval(draws: &[f64]) -> Option<(f64, f64)> {
    if draws.len() < 20 {
        return None;
    }
    let mut sorted = draws.to_vec();
    sorted.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let at =
        |q: f64| sorted[((q * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1)];
    Some((at(tail), at(1.0 - tail)))
}

#[cfg(test)]
mod tests {
    // The bootstrap, Student's t over repeats and the pairings, on made-up series.
    use super::*;

    impl Estimate {
        fn covers(&self, x: f64) -> bool {
            self.interval().is_some_and(|(lo, hi)| lo <= x && x <= hi)
        }
    }

    /// [`ratio_of_sums_in`] over one run.
    fn ratio_of_sums(num: &[f64], den: &[f64], scale: Scale) -> Option<Resampled> {
        ratio_of_sums_in(std::slice::from_ref(&(0..num.len())), num, den, scale)
    }

    fn steady(n: usize, per_unit: f64) -> Vec<f64> {
        // A little deterministic wobble, so the intervals are not empty.
        (0..n)
            .map(|i| per_unit * (1.0 + 0.05 * ((i * 7 % 11) as f64 - 5.0) / 5.0))
            .collect()
    }

    #[test]
    fn a_steady_series_gives_a_narrow_interval_around_its_figure() {
        let acquired = steady(30, 1000.0);
        let seconds = vec![1.0; 30];
        let goodput = ratio_of_sums(&acquired, &seconds, Scale::NonNegative)
            .unwrap()
            .estimate();
        let (low, high) = goodput.interval().expect("30 intervals give an interval");
        assert!(low <= goodput.value && goodput.value <= high, "{goodput:?}");
        assert!(low > 950.0 && high < 1050.0, "{goodput:?}");
    }

    #[test]
    fn too_few_intervals_give_no_interval() {
        let goodput = ratio_of_sums(&[10.0; 4], &[1.0; 4], Scale::NonNegative).unwrap();
        assert!(goodput.draws.is_empty());
        assert_eq!(goodput.estimate().interval(), None);
        assert_eq!(Order::of(&goodput.estimate(), 1.0), Order::TooShort);
    }

    #[test]
    fn the_same_series_twice_shows_no_clear_difference_and_a_real_gap_shows_an_order() {
        let seconds = vec![1.0; 20];
        let a = ratio_of_sums(&steady(20, 1000.0), &seconds, Scale::NonNegative).unwrap();
        let a_again = ratio_of_sums(&steady(20, 1000.0), &seconds, Scale::NonNegative).unwrap();
        let same = a.ratio(&a_again).unwrap().estimate();
        assert_eq!(Order::of(&same, 1.0), Order::NoClearDifference, "{same:?}");
        let b = ratio_of_sums(&steady(20, 1500.0), &seconds, Scale::NonNegative).unwrap();
        let faster = b.ratio(&a).unwrap().estimate();
        assert_eq!(Order::of(&faster, 1.0), Order::Higher, "{faster:?}");
        assert!(faster.covers(1.5), "{faster:?}");
        assert_eq!(Order::of(&a.difference(&b).estimate(), 0.0), Order::Lower);
    }

    #[test]
    fn a_burst_in_one_interval_widens_the_interval() {
        let seconds = vec![1.0; 20];
        let calm = ratio_of_sums(&steady(20, 1000.0), &seconds, Scale::NonNegative)
            .unwrap()
            .estimate();
        let mut bursty = steady(20, 1000.0);
        bursty[7] = 10_000.0;
        let bursty = ratio_of_sums(&bursty, &seconds, Scale::NonNegative)
            .unwrap()
            .estimate();
        let width = |e: &Estimate| e.high.unwrap() - e.low.unwrap();
        assert!(width(&bursty) > 5.0 * width(&calm), "{calm:?} {bursty:?}");
    }

    #[test]
    fn the_same_input_gives_the_same_interval() {
        let seconds = vec![1.0; 12];
        let one = ratio_of_sums(&steady(12, 300.0), &seconds, Scale::NonNegative)
            .unwrap()
            .estimate();
        let two = ratio_of_sums(&steady(12, 300.0), &seconds, Scale::NonNegative)
            .unwrap()
            .estimate();
        assert_eq!(one, two);
    }

    #[test]
    fn repeats_give_students_t_over_their_own_figures() {
        // Five repeats of four intervals each; repeat r measured 100 + 10·r per interval.
        let segments: Vec<Range<usize>> = (0..5).map(|r| r * 4..r * 4 + 4).collect();
        let per_interval: Vec<f64> = (0..20).map(|i| 100.0 + 10.0 * (i / 4) as f64).collect();
        let seconds = vec![1.0; 20];
        let e = ratio_of_sums_in(&segments, &per_interval, &seconds, Scale::NonNegative)
            .unwrap()
            .estimate();
        // Mean 120, s = 15.81, t(4) = 2.776: 120 ± 19.63, in closed form.
        let (low, high) = e.interval().expect("five repeats give an interval");
        assert!((e.value - 120.0).abs() < 1e-9, "{e:?}");
        assert!(
            (low - 100.37).abs() < 0.01 && (high - 139.63).abs() < 0.01,
            "{e:?}"
        );
        // One repeat alone says nothing about the spread between repeats.
        let one = across_repeats(&segments[..1], Scale::NonNegative, |d| Some(d.len() as f64));
        assert_eq!(one.unwrap().estimate().interval(), None);
        // Identical repeats: no spread at all.
        let same = ratio_of_sums_in(&segments, &[100.0; 20], &seconds, Scale::NonNegative)
            .unwrap()
            .estimate();
        assert_eq!(same.interval(), Some((100.0, 100.0)));
    }

    #[test]
    fn two_modes_of_the_same_repeats_pair_up_and_their_drift_cancels() {
        // Five repeats drifting from 100 to 500 per interval; mode b measures twice mode a in
        // each repeat.
        let segments: Vec<Range<usize>> = (0..5).map(|r| r * 4..r * 4 + 4).collect();
        let a: Vec<f64> = (0..20).map(|i| 100.0 * (1 + i / 4) as f64).collect();
        let b: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let seconds = vec![1.0; 20];
        let (a, b) = (
            ratio_of_sums_in(&segments, &a, &seconds, Scale::NonNegative).unwrap(),
            ratio_of_sums_in(&segments, &b, &seconds, Scale::NonNegative).unwrap(),
        );
        let paired = b.paired_ratio(&a).unwrap().estimate();
        let (low, high) = paired.interval().unwrap();
        assert!(
            (low - 2.0).abs() < 1e-9 && (high - 2.0).abs() < 1e-9,
            "{paired:?}"
        );
        // Taken as independent, the drift hides the difference.
        let apart = b.ratio(&a).unwrap().estimate();
        assert_eq!(
            Order::of(&apart, 1.0),
            Order::NoClearDifference,
            "{apart:?}"
        );
        // A single run has no repeats to pair.
        let single = ratio_of_sums(&[1.0; 20], &seconds, Scale::NonNegative).unwrap();
        assert!(single.paired_ratio(&single).is_none());
    }

    #[test]
    fn two_sides_in_turns_pair_their_differences_and_keep_their_sign() {
        // Five turns drifting from 100 to 500 per interval; side b measures 50 less than side
        // a in each turn, noise of ±5 on top.
        let segments: Vec<Range<usize>> = (0..5).map(|r| r * 4..r * 4 + 4).collect();
        let a: Vec<f64> = (0..20).map(|i| 100.0 * (1 + i / 4) as f64).collect();
        let b: Vec<f64> = (0..20)
            .map(|i| a[i] - 50.0 + if (i / 4) % 2 == 0 { 5.0 } else { -5.0 })
            .collect();
        let seconds = vec![1.0; 20];
        let (a, b) = (
            ratio_of_sums_in(&segments, &a, &seconds, Scale::NonNegative).unwrap(),
            ratio_of_sums_in(&segments, &b, &seconds, Scale::NonNegative).unwrap(),
        );
        let paired = b.paired_difference(&a).unwrap().estimate();
        let (low, high) = paired.interval().unwrap();
        // Below zero (no clamp at 0, unlike a figure's own draws), around −50, narrow.
        assert!(low < -50.0 && -50.0 < high && high < 0.0, "{paired:?}");
        assert_eq!(Order::of(&paired, 0.0), Order::Lower, "{paired:?}");
        // Taken as independent, the drift hides the difference.
        let apart = b.difference(&a).estimate();
        assert_eq!(
            Order::of(&apart, 0.0),
            Order::NoClearDifference,
            "{apart:?}"
        );
        // Repeats that do not line up (a side stopped early) do not pair.
        let short =
            ratio_of_sums_in(&segments[..3], &[1.0; 12], &[1.0; 12], Scale::NonNegative).unwrap();
        assert!(short.paired_difference(&a).is_none());
    }

    #[test]
    fn a_ratio_of_a_skewed_positive_figure_never_reaches_zero() {
        // A p99 per turn: side b is far slower in one turn of five, a little in the others.
        let segments: Vec<Range<usize>> = (0..5).map(|r| r..r + 1).collect();
        let a = [100.0, 120.0, 90.0, 110.0, 100.0];
        let b = [130.0, 150.0, 40_000.0, 140.0, 120.0];
        let of = |v: [f64; 5]| across_repeats(&segments, Scale::Log, |d| Some(v[d[0]])).unwrap();
        let (a, b) = (of(a), of(b));
        let ratio = b.paired_ratio(&a).unwrap().estimate();
        let (low, _) = ratio.interval().unwrap();
        assert!(low > 0.1, "{ratio:?}");
        // Taken as independent sets of repeats (Welch's on the logarithms): positive too.
        let apart = b.ratio(&a).unwrap().estimate();
        assert!(apart.low.unwrap() > 0.0, "{apart:?}");
        // Repeats against a single run's bootstrap draws: their draws pair.
        let single = ratio_of_sums(&[110.0; 20], &[1.0; 20], Scale::NonNegative).unwrap();
        let mixed = a.ratio(&single).unwrap().estimate();
        assert!(mixed.covers(1.0), "{mixed:?}");
    }

    #[test]
    fn an_undefined_figure_is_none_and_blocks_never_pass_the_end() {
        assert!(ratio_of_sums(&[0.0; 6], &[0.0; 6], Scale::NonNegative).is_none());
        for n in 1..50 {
            let b = block_length(n);
            assert!(b >= 1 && b <= n, "n {n} block {b}");
        }
        // Every drawn index is in range (the closure would panic otherwise).
        let units = 17;
        bootstrap(units, Scale::NonNegative, |drawn| {
            assert_eq!(drawn.len(), units);
            assert!(drawn.iter().all(|&i| i < units));
            Some(1.0)
        })
        .unwrap();
    }
}
