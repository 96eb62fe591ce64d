//! The service-level objective a capacity step must meet: latency bounds on the whole acquire
//! (from the intended start), a minimum acquire success rate, and no mutual-exclusion
//! violation; the step must also have run the rate it was asked for.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::mode::ModeStats;
use crate::model::percentiles::label;
use crate::model::values::parse_duration;

/// One bound: the acquire's `percentile` below `bound`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub percentile: f64,
    pub bound_us: u64,
}

/// `--slo 'p99<10ms'` (several: `p99<10ms,p99.9<50ms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub bounds: Vec<Bound>,
}

impl Slo {
    pub fn parse(text: &str) -> Result<Slo, String> {
        let mut bounds = Vec::new();
        for term in text.split(',') {
            let term = term.trim();
            let (p, d) = term
                .split_once("<=")
                .or_else(|| term.split_once('<'))
                .ok_or_else(|| format!("{term:?}: write PERCENTILE<DURATION, e.g. p99<10ms"))?;
            let p = p.trim();
            let percentile: f64 = p
                .strip_prefix('p')
                .and_then(|n| n.parse().ok())
                .filter(|n: &f64| *n > 0.0 && *n <= 100.0)
                .ok_or_else(|| format!("{term:?}: {p:?} is not a percentile like p99 or p99.9"))?;
            let bound = parse_duration(d.trim()).map_err(|e| format!("{term:?}: {e}"))?;
            if bound.is_zero() {
                return Err(format!("{term:?}: the bound must be above zero"));
            }
            bounds.push(Bound {
                percentile,
                bound_us: bound.as_micros() as u64,
            });
        }
        Ok(Slo { bounds })
    }
}

impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms: Vec<String> = self
            .bounds
            .iter()
            .map(|b| {
                format!(
                    "{}<{:?}",
                    label(b.percentile),
                    Duration::from_micros(b.bound_us)
                )
            })
            .collect();
        f.write_str(&terms.join(","))
    }
}

/// `99.9%` or `0.999`.
pub fn parse_share(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("{text:?} is not a share; write e.g. 99.9% or 0.999"))?;
    if !(0.0..=1.0).contains(&value) {
        return Err(format!("{text:?}: a share is between 0% and 100%"));
    }
    // 99.9 / 100 is 0.9990000000000001 in binary: keep what was meant (results print it).
    Ok((value * 1e9).round() / 1e9)
}

/// What a step must show to pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    pub slo: Slo,
    pub min_success: f64,
}

impl Objective {
    /// Why mode `m` of `report` misses the objective (empty: it meets it).
    pub fn failures(&self, m: &ModeStats, target_missed: bool) -> Vec<String> {
        let mut out = Vec::new();
        if m.counts.acquire_calls == 0 {
            out.push("no acquire call completed".into());
            return out;
        }
        for b in &self.slo.bounds {
            let value = m.latency.acquire.quantile(b.percentile / 100.0);
            if value > b.bound_us {
                out.push(format!(
                    "{} {:.3} ms > {:.3} ms",
                    label(b.percentile),
                    value as f64 / 1000.0,
                    b.bound_us as f64 / 1000.0
                ));
            }
        }
        let success = m.acquire_success_rate();
        if success < self.min_success {
            out.push(format!(
                "success {:.3}% < {:.3}%",
                100.0 * success,
                100.0 * self.min_success
            ));
        }
        if m.counts.violations > 0 {
            out.push(format!("{} violations", m.counts.violations));
        }
        // Lateness is in the latency already (it counts from the intended start); a rate
        // that was not reached is not a pass, whoever was slow (the answer says if it was the
        // generator).
        if target_missed {
            out.push(format!("rate missed ({:.0}/s started)", m.started_per_s()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slos_and_shares_parse_and_name_bad_values() {
        let slo = Slo::parse("p99<10ms").unwrap();
        assert_eq!(
            slo.bounds,
            [Bound {
                percentile: 99.0,
                bound_us: 10_000
            }]
        );
        assert_eq!(slo.to_string(), "p99<10ms");
        let two = Slo::parse("p99<10ms, p99.9<=50ms").unwrap();
        assert_eq!(two.bounds.len(), 2);
        assert_eq!(two.bounds[1].percentile, 99.9);
        for bad in ["99<10ms", "p99>10ms", "p99<soon", "p0<1ms", "p99<0ms"] {
            let err = Slo::parse(bad).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
        assert_eq!(parse_share("99.9%").unwrap().to_string(), "0.999");
        assert_eq!(parse_share("5%").unwrap().to_string(), "0.05");
        assert_eq!(parse_share("0.5").unwrap(), 0.5);
        assert!(parse_share("120%").unwrap_err().contains("120%"));
    }
}
