//! `--percentiles 50,90,99,99.9,99.99`: which latency columns the tables show.

use std::fmt;

use crate::hist::Hist;

/// Percentiles to show, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles(Vec<f64>);

impl Default for Percentiles {
    fn default() -> Self {
        Percentiles(vec![50.0, 90.0, 99.0, 99.9])
    }
}

impl Percentiles {
    /// `50,90,99,99.9`: each in (0, 100], at most 8.
    pub fn parse(text: &str) -> Result<Percentiles, String> {
        let mut list = Vec::new();
        for part in text.split(',') {
            let part = part.trim().trim_start_matches('p');
            let not_a_percentile =
                |_| format!("{part:?} is not a percentile (write e.g. 50,99,99.9)");
            let p: f64 = part.parse().map_err(not_a_percentile)?;
            if !p.is_finite() || p <= 0.0 || p > 100.0 {
                return Err(format!("{part:?}: a percentile is above 0 and at most 100"));
            }
            list.push(p);
        }
        let given = list.len();
        if given > 8 {
            return Err(format!(
                "{text:?}: at most 8 percentiles fit a table row ({given} given)"
            ));
        }
        Ok(Percentiles(list))
    }

    pub fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.0.iter().copied()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Column labels: `p50`, `p99.9`.
    pub fn labels(&self) -> Vec<String> {
        self.0.iter().map(|&p| label(p)).collect()
    }

    /// `h`'s value at each percentile, in ms with 3 decimals.
    pub fn cells_ms(&self, h: &Hist) -> Vec<String> {
        let ms = |&p: &f64| format!("{:.3}", h.quantile(p / 100.0) as f64 / 1000.0);
        self.0.iter().map(ms).collect()
    }
}

impl fmt::Display for Percentiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.labels().join(","))
    }
}

/// `p50`, `p99.9`, `p100`.
pub fn label(p: f64) -> String {
    let text = format!("{p:.4}");
    format!("p{}", text.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_parse_and_label() {
        let p = Percentiles::parse("50, 99.9,p99.99").unwrap();
        assert_eq!(p.labels(), ["p50", "p99.9", "p99.99"]);
        assert_eq!(
            Percentiles::default().labels(),
            ["p50", "p90", "p99", "p99.9"]
        );
        assert!(Percentiles::parse("50,abc").unwrap_err().contains("abc"));
        assert!(Percentiles::parse("0").unwrap_err().contains("above 0"));
        assert!(Percentiles::parse("101").unwrap_err().contains("101"));
        let mut h = Hist::new();
        (1..=1000).for_each(|v| h.record(v));
        assert_eq!(Percentiles::parse("50").unwrap().cells_ms(&h), ["0.500"]);
    }
}
