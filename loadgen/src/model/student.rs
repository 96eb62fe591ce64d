//! Student's t intervals in closed form: over a figure's repeats, over the per-turn
//! differences or ratios of two sides measured in turns, and between two independent sets of
//! repeats (Welch's). The quantiles are exact (`statrs`), not simulated: with two repeats the
//! t distribution has one degree of freedom (Cauchy tails), where any number of random draws
//! gives a 97.5th percentile that moves from seed to seed.

use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};
use statrs::distribution::{ContinuousCDF as _, StudentsT};

/// Confidence of every interval the suite reports.
pub const CONFIDENCE: f64 = 0.95;

/// Fewer values than this give no interval (the spread needs two).
pub const MIN_VALUES: usize = 2;

/// How a figure's spread across repeats is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Any sign: a difference.
    Signed,
    /// At least 0: a count or a rate.
    NonNegative,
    /// A share, from 0 to 1.
    Share,
    /// Positive and skewed (a latency percentile, a ratio of two figures): the interval is
    /// taken on the logarithms and mapped back (a geometric interval), so it never reaches 0
    /// and is as wide in "× 2" as in "÷ 2". Values holding a 0 are read as
    /// [`Scale::NonNegative`].
    Log,
}

impl Scale {
    /// The lowest and the highest value a figure on this scale takes.
    fn bounds(self) -> (f64, f64) {
        match self {
            Scale::Signed => (f64::NEG_INFINITY, f64::INFINITY),
            Scale::NonNegative | Scale::Log => (0.0, f64::INFINITY),
            Scale::Share => (0.0, 1.0),
        }
    }
}

/// The two-sided Student's t quantile at [`CONFIDENCE`] with `df` degrees of freedom (`df`
/// may be fractional, as Welch's is).
pub fn t_quantile(df: f64) -> Option<f64> {
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    Some(t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0))
}

/// Mean, sample variance and count of at least [`MIN_VALUES`] values.
#[derive(Debug, Clone, Copy)]
struct Summary {
    n: f64,
    mean: f64,
    variance: f64,
}

fn summary(values: &[f64]) -> Option<Summary> {
    if values.len() < MIN_VALUES || values.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(Summary { n, mean, variance })
}

/// x̄ ± t(n − 1)·s/√n over `values`, on `scale` (`None` with fewer than [`MIN_VALUES`]).
pub fn interval(values: &[f64], scale: Scale) -> Option<(f64, f64)> {
    if let Some(logs) = logarithms(values, scale) {
        let (low, high) = linear(&logs)?;
        return Some((low.exp(), high.exp()));
    }
    let (low, high) = linear(values)?;
    let (floor, ceiling) = scale.bounds();
    Some((low.clamp(floor, ceiling), high.clamp(floor, ceiling)))
}

/// The values' logarithms when `scale` is [`Scale::Log`] and every value is positive.
fn logarithms(values: &[f64], scale: Scale) -> Option<Vec<f64>> {
    (scale == Scale::Log && values.iter().all(|&x| x > 0.0))
        .then(|| values.iter().map(|x| x.ln()).collect())
}

fn linear(values: &[f64]) -> Option<(f64, f64)> {
    let s = summary(values)?;
    let half = if s.variance == 0.0 {
        0.0
    } else {
        t_quantile(s.n - 1.0)? * (s.variance / s.n).sqrt()
    };
    Some((s.mean - half, s.mean + half))
}

/// Welch's interval for mean(b) − mean(a), two independent sets of repeats (each side's own
/// variance; Welch–Satterthwaite degrees of freedom).
pub fn welch_difference(b: &[f64], a: &[f64]) -> Option<(f64, f64)> {
    let (sb, sa) = (summary(b)?, summary(a)?);
    let (vb, va) = (sb.variance / sb.n, sa.variance / sa.n);
    let difference = sb.mean - sa.mean;
    let squared_error = vb + va;
    if squared_error == 0.0 {
        return Some((difference, difference));
    }
    let df = squared_error.powi(2) / (vb.powi(2) / (sb.n - 1.0) + va.powi(2) / (sa.n - 1.0));
    let half = t_quantile(df)? * squared_error.sqrt();
    Some((difference - half, difference + half))
}

/// Welch's interval on the logarithms, mapped back: the ratio of the two sides' geometric
/// means, b ÷ a (`None` unless every value is positive).
pub fn welch_ratio(b: &[f64], a: &[f64]) -> Option<(f64, f64)> {
    let (lb, la) = (logarithms(b, Scale::Log)?, logarithms(a, Scale::Log)?);
    let (low, high) = welch_difference(&lb, &la)?;
    Some((low.exp(), high.exp()))
}

/// `count` draws of the mean over `values` (x̄ + s/√n·T, T a Student's t with n − 1 degrees of
/// freedom, on `scale`), from a fixed seed: only where a set of repeats meets a single run's
/// bootstrap draws, whose ratio or difference has no closed form.
pub fn draws(values: &[f64], scale: Scale, count: usize, seed: u64) -> Option<Vec<f64>> {
    let logs = logarithms(values, scale);
    let s = summary(logs.as_deref().unwrap_or(values))?;
    let t = StudentsT::new(0.0, 1.0, s.n - 1.0).ok()?;
    let standard_error = (s.variance / s.n).sqrt();
    let mut rng = SmallRng::seed_from_u64(seed ^ ((values.len() as u64) << 32));
    let (floor, ceiling) = scale.bounds();
    let mut draw = |_| {
        // The open interval (0, 1): a quantile at 0 or 1 is infinite.
        let u: f64 = rng.random_range(f64::EPSILON..1.0 - f64::EPSILON);
        let x = s.mean + standard_error * t.inverse_cdf(u);
        let x = if logs.is_some() { x.exp() } else { x };
        x.clamp(floor, ceiling)
    };
    Some((0..count).map(&mut draw).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn the_quantiles_are_the_tabulated_ones() {
        // Two-sided 95 %: 12.706 (1 df), 4.303 (2), 2.776 (4), 2.262 (9), 1.960 (∞).
        for (df, t) in [(1.0, 12.706), (2.0, 4.303), (4.0, 2.776), (9.0, 2.262)] {
            let q = t_quantile(df).unwrap();
            assert!(close(q, t, 5e-4), "df {df}: {q}");
        }
        assert!(close(t_quantile(1e6).unwrap(), 1.960, 1e-3));
    }

    #[test]
    fn an_interval_over_repeats_is_the_textbook_one() {
        // Mean 120, s = 15.81, t(4) = 2.776: 120 ± 19.63.
        let (low, high) = interval(&[100.0, 110.0, 120.0, 130.0, 140.0], Scale::Signed).unwrap();
        assert!(
            close(low, 100.37, 0.01) && close(high, 139.63, 0.01),
            "{low} {high}"
        );
        assert_eq!(interval(&[5.0], Scale::Signed), None);
        let (low, high) = interval(&[5.0, 5.0, 5.0], Scale::Log).unwrap();
        assert!(
            close(low, 5.0, 1e-12) && close(high, 5.0, 1e-12),
            "{low} {high}"
        );
    }

    #[test]
    fn a_skewed_positive_figure_gets_a_geometric_interval_that_never_reaches_zero() {
        // Per-turn p99 ratios of a skewed figure: one turn far out.
        let ratios = [1.1, 0.9, 2.5, 40.0, 1.3];
        let (low, high) = interval(&ratios, Scale::Log).unwrap();
        assert!(low > 0.0 && high > 1.0, "{low} {high}");
        // Linear t on the same values reaches below 0 (clamped there).
        let (linear_low, _) = interval(&ratios, Scale::NonNegative).unwrap();
        assert_eq!(linear_low, 0.0);
        // Symmetric in × and ÷: the interval of the reciprocals is the reciprocal interval.
        let inverse: Vec<f64> = ratios.iter().map(|r| 1.0 / r).collect();
        let (inv_low, inv_high) = interval(&inverse, Scale::Log).unwrap();
        assert!(close(inv_low, 1.0 / high, 1e-9) && close(inv_high, 1.0 / low, 1e-9));
        // A 0 among the values: read on the linear scale, clamped at 0.
        assert_eq!(interval(&[0.0, 0.0, 0.0], Scale::Log), Some((0.0, 0.0)));
    }

    #[test]
    fn shares_stay_between_zero_and_one() {
        let (low, high) = interval(&[1.0, 0.2, 1.0], Scale::Share).unwrap();
        assert!(low >= 0.0 && high <= 1.0, "{low} {high}");
    }

    #[test]
    fn welch_takes_each_side_its_own_variance() {
        // Equal sizes and variances: Welch's df is 2(n − 1) = 8, half-width t(8)·√(2s²/n).
        let a = [10.0, 11.0, 12.0, 13.0, 14.0];
        let b = [20.0, 21.0, 22.0, 23.0, 24.0];
        let (low, high) = welch_difference(&b, &a).unwrap();
        let half = 2.306 * (2.0 * 2.5 / 5.0_f64).sqrt();
        assert!(close(low, 10.0 - half, 0.01) && close(high, 10.0 + half, 0.01));
        let (low, high) = welch_ratio(&b, &a).unwrap();
        assert!(low > 1.0 && low < 2.0 && high > 2.0, "{low} {high}");
        assert_eq!(welch_ratio(&b, &[0.0, 1.0]), None);
        assert_eq!(welch_difference(&[3.0, 3.0], &[1.0, 1.0]), Some((2.0, 2.0)));
    }

    #[test]
    fn draws_follow_the_interval_and_respect_the_scale() {
        let values = [100.0, 110.0, 120.0, 130.0, 140.0];
        let mut d = draws(&values, Scale::NonNegative, 4000, 7).unwrap();
        d.sort_by(f64::total_cmp);
        let (low, high) = (d[100], d[3899]);
        assert!(
            close(low, 100.4, 3.0) && close(high, 139.6, 3.0),
            "{low} {high}"
        );
        let shares = draws(&[1.0, 0.2, 1.0], Scale::Share, 500, 7).unwrap();
        assert!(shares.iter().all(|&x| (0.0..=1.0).contains(&x)));
        assert_eq!(draws(&values[..1], Scale::Signed, 10, 7), None);
    }
}
