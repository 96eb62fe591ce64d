//! The service-level objective a capacity step must meet: latency bounds on the whole acquire
//! (from the intended start), a minimum acquire success rate, and no mutual-exclusion
//! violation; the step must also have run the rate it was asked for.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::catalog::{Measure::AcquireQuantile, FIGURES};
use crate::model::estimates::figure_of;
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
            let split = term.split_once("<=").or_else(|| term.split_once('<'));
            let how = || format!("{term:?}: write PERCENTILE<DURATION, e.g. p99<10ms");
            let (p, d) = split.ok_or_else(how)?;
            let p = p.trim();
            let percentile = p.strip_prefix('p').and_then(|n| n.parse().ok());
            let percentile = percentile.filter(|n: &f64| *n > 0.0 && *n <= 100.0);
            let not = || format!("{term:?}: {p:?} is not a percentile like p99 or p99.9");
            let percentile = percentile.ok_or_else(not)?;
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
        let term = |b: &Bound| {
            let bound = Duration::from_micros(b.bound_us);
            format!("{}<{bound:?}", label(b.percentile))
        };
        let terms: Vec<String> = self.bounds.iter().map(term).collect();
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
    /// `--min-calls`: the calls a step needs, set lower than [`calls_for`]'s rule (absent:
    /// the rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_calls: Option<u64>,
}

/// Calls a step needs for acquire percentile `percentile` to rest on at least 10 calls at or
/// beyond it: ⌈10 ÷ (1 − p)⌉, so p50 20, p99 1,000, p99.9 10,000. Fewer, and the percentile is
/// one or two calls' latency: a p99 of 48 calls is their slowest. The maximum (p100) is exact
/// whatever the count: 10 calls.
pub fn calls_for(percentile: f64) -> u64 {
    let beyond = 1.0 - percentile / 100.0;
    if beyond <= 0.0 {
        return 10;
    }
    // 10 ÷ 0.01 is 999.9999999999999 in binary: round off that error before the ceiling.
    (10.0 / beyond - 1e-6).ceil() as u64
}

/// What made a step unsafe, whatever its latency: mutual-exclusion violations and, fenced,
/// tokens out of order or stale writes the resource accepted (empty: none). A step with any
/// is never a pass: capacity is the rate the lock holds at *safely*.
pub fn unsafe_because(m: &ModeStats) -> Vec<String> {
    let mut out = Vec::new();
    if m.counts.violations > 0 {
        out.push(format!("{} violations", m.counts.violations));
    }
    if let Some(f) = &m.fencing {
        if f.token_order_violations > 0 {
            out.push(format!(
                "{} token-order violations",
                f.token_order_violations
            ));
        }
        if f.stale_writes_accepted > 0 {
            out.push(format!("{} stale writes accepted", f.stale_writes_accepted));
        }
    }
    out
}

/// The figure of the table ([`crate::model::catalog`]) that carries the interval of an acquire
/// percentile (`None`: that percentile has none).
fn percentile_figure(percentile: f64) -> Option<&'static str> {
    FIGURES.iter().find_map(|f| match f.measure {
        AcquireQuantile(q) if (100.0 * q - percentile).abs() < 1e-9 => Some(f.name),
        _ => None,
    })
}

impl Objective {
    /// The calls a step needs and the term that needs them ("p99"): `--min-calls` when given
    /// (named so), else the most demanding percentile's by [`calls_for`].
    pub fn calls_needed(&self) -> (u64, String) {
        if let Some(n) = self.min_calls {
            return (n, "--min-calls".into());
        }
        let needs = |b: &Bound| (calls_for(b.percentile), label(b.percentile));
        let most = self.slo.bounds.iter().map(needs).max_by_key(|(n, _)| *n);
        most.unwrap_or((1, "the objective".into()))
    }

    /// The lowest rate whose step, measured for `measured`, holds [`Objective::calls_needed`],
    /// and why, in words.
    pub fn rate_floor(&self, measured: Duration) -> (f64, String) {
        let (calls, term) = self.calls_needed();
        let rate = (calls as f64 / measured.as_secs_f64().max(1e-3)).ceil();
        let why = match self.min_calls {
            Some(_) => format!(
                "a {measured:?} step holds the {calls} calls set by --min-calls (below the rule: its percentiles rest on fewer calls)"
            ),
            None => format!(
                "a {measured:?} step holds the {} calls a {term} needs (10 at or beyond it)",
                crate::model::values::grouped(calls as f64)
            ),
        };
        (rate, why)
    }

    /// Why mode `m` of `report` misses the objective (empty: it meets it).
    pub fn failures(&self, m: &ModeStats, target_missed: bool) -> Vec<String> {
        let mut out = Vec::new();
        if m.counts.acquire_calls == 0 {
            out.push("no acquire call completed".into());
            return out;
        }
        let (needed, term) = self.calls_needed();
        if m.counts.acquire_calls < needed {
            out.push(format!(
                "{term} rests on {} calls (needs {needed})",
                m.counts.acquire_calls
            ));
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
        out.extend(unsafe_because(m));
        // Lateness is in the latency already (it counts from the intended start); a rate
        // that was not reached is not a pass, whoever was slow (the answer says if it was the
        // generator).
        if target_missed {
            out.push(format!("rate missed ({:.0}/s started)", m.started_per_s()));
        }
        out
    }

    /// The objective in words: `p99<10ms and success ≥ 99.900%`.
    pub fn describe(&self) -> String {
        format!(
            "{} and success ≥ {:.3}%",
            self.slo,
            100.0 * self.min_success
        )
    }

    /// The terms of the objective whose 95 % interval in `m` contains their bound, so that
    /// noise may have decided the step's verdict, each in words ("p99 interval 8.100–12.400
    /// ms straddled 10.000 ms"). Empty when the verdict does not hinge on them: every interval
    /// is clear of its bound, or the step fails for a reason no interval covers (a missed
    /// rate, a violation, a figure clear of its bound on the failing side).
    pub fn straddled(&self, m: &ModeStats, failures: &[String]) -> Vec<String> {
        // Each term: its name, figure and bound, and whether a pass is at or below the bound
        // (a latency) or at or above it (the success).
        let latencies = self.slo.bounds.iter().map(|b| {
            let figure = percentile_figure(b.percentile);
            (label(b.percentile), figure, b.bound_us as f64, true)
        });
        let success = (
            "success".to_string(),
            Some("acquire.success"),
            self.min_success,
            false,
        );
        let mut straddled = Vec::new();
        // Failures of terms whose interval straddles: any other failure decides the step.
        let mut explained = 0;
        for (name, figure, bound, below) in latencies.chain([success]) {
            let interval = figure.and_then(|f| figure_of(m, f)?.interval());
            let straddles = |&(l, h): &(f64, f64)| match below {
                true => l <= bound && bound < h,
                false => l < bound && bound <= h,
            };
            let Some((low, high)) = interval.filter(straddles) else {
                continue;
            };
            let show = |x: f64| if below { x / 1000.0 } else { 100.0 * x };
            let unit = if below { " ms" } else { "%" };
            let (low, high, bound) = (show(low), show(high), show(bound));
            straddled.push(format!(
                "{name} interval {low:.3}–{high:.3}{unit} straddled {bound:.3}{unit}"
            ));
            let prefix = format!("{name} ");
            explained += failures.iter().filter(|f| f.starts_with(&prefix)).count();
        }
        if explained < failures.len() {
            return Vec::new();
        }
        straddled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::uncertainty::{Estimate, Unit};

    /// A mode's `estimates` of the headline figures given by name (others are left out).
    fn estimates(
        units: usize,
        unit: Unit,
        figures: &[(&str, Estimate)],
    ) -> crate::model::uncertainty::ModeEstimates {
        let keyed = figures.iter().filter_map(|(name, e)| {
            let key = crate::model::catalog::figure(name)?.key?;
            Some((key.to_string(), *e))
        });
        crate::model::uncertainty::ModeEstimates {
            units,
            unit,
            figures: keyed.collect(),
        }
    }

    /// A mode whose p99 and success carry the given 95 % intervals.
    fn mode_with(p99_us: (f64, f64), success: (f64, f64)) -> ModeStats {
        let e = |(low, high): (f64, f64)| Estimate {
            value: (low + high) / 2.0,
            low: Some(low),
            high: Some(high),
        };
        let mut m = ModeStats::new(
            redlock_core::FanOut::Concurrent,
            3,
            Duration::from_millis(100),
        );
        m.estimates = Some(estimates(
            10,
            Default::default(),
            &[
                ("goodput", Estimate::bare(100.0)),
                ("acquire.success", e(success)),
                ("quorum.success", Estimate::bare(1.0)),
                ("split_votes.share", Estimate::bare(0.0)),
                ("acquire.p50", Estimate::bare(1000.0)),
                ("acquire.p99", e(p99_us)),
            ],
        ));
        m
    }

    #[test]
    fn a_step_is_unsafe_with_any_violation_and_fenced_with_a_token_or_a_stale_write() {
        let mut m = mode_with((1_000.0, 2_000.0), (1.0, 1.0));
        assert!(unsafe_because(&m).is_empty());
        m.fencing = Some(Default::default());
        assert!(unsafe_because(&m).is_empty());
        m.counts.violations = 2;
        let fencing = m.fencing.as_mut().unwrap();
        fencing.token_order_violations = 1;
        fencing.stale_writes_accepted = 3;
        // Rejected stale writes are fencing doing its job: safe.
        fencing.stale_writes_rejected = 5;
        assert_eq!(
            unsafe_because(&m),
            [
                "2 violations",
                "1 token-order violations",
                "3 stale writes accepted"
            ]
        );
        let objective = Objective {
            slo: Slo::parse("p99<10ms").unwrap(),
            min_success: 0.5,
            min_calls: Some(1),
        };
        m.counts.acquire_calls = 10;
        m.counts.acquired = 10;
        let failures = objective.failures(&m, false);
        assert!(
            failures.contains(&"3 stale writes accepted".to_string()),
            "{failures:?}"
        );
        assert!(objective.straddled(&m, &failures).is_empty());
    }

    #[test]
    fn a_verdict_hinges_on_noise_only_when_every_failure_has_a_straddling_interval() {
        let objective = Objective {
            slo: Slo::parse("p99<10ms").unwrap(),
            min_success: 0.999,
            min_calls: None,
        };
        let p99_failed = vec!["p99 11.000 ms > 10.000 ms".to_string()];
        // p99's interval holds 10 ms: the failure may be noise.
        let m = mode_with((8_000.0, 12_000.0), (1.0, 1.0));
        assert_eq!(
            objective.straddled(&m, &p99_failed),
            ["p99 interval 8.000–12.000 ms straddled 10.000 ms"]
        );
        // A pass straddles too (it may be luck), success's interval as well.
        let m = mode_with((8_000.0, 12_000.0), (0.998, 1.0));
        assert_eq!(objective.straddled(&m, &[]).len(), 2);
        // Clear of the bound on the failing side: the failure stands.
        let m = mode_with((10_500.0, 12_000.0), (1.0, 1.0));
        assert!(objective.straddled(&m, &p99_failed).is_empty());
        // At the bound on the passing side (a pass is p99 ≤ 10 ms): no straddle.
        let m = mode_with((8_000.0, 10_000.0), (1.0, 1.0));
        assert!(objective.straddled(&m, &[]).is_empty());
        // Another failure no interval covers decides the step whatever the noise.
        let m = mode_with((8_000.0, 12_000.0), (1.0, 1.0));
        let missed = vec![p99_failed[0].clone(), "rate missed (90/s started)".into()];
        assert!(objective.straddled(&m, &missed).is_empty());
    }

    #[test]
    fn a_percentile_needs_ten_calls_beyond_it_and_the_search_a_rate_that_gives_them() {
        assert_eq!(calls_for(50.0), 20);
        assert_eq!(calls_for(99.0), 1_000);
        assert_eq!(calls_for(99.9), 10_000);
        assert_eq!(calls_for(100.0), 10);
        let objective = |slo: &str, min_calls| Objective {
            slo: Slo::parse(slo).unwrap(),
            min_success: 0.999,
            min_calls,
        };
        let both = objective("p50<1ms,p99.9<50ms", None);
        assert_eq!(both.calls_needed(), (10_000, "p99.9".to_string()));
        let (rate, why) = objective("p99<10ms", None).rate_floor(Duration::from_secs(3));
        assert_eq!(rate, 334.0);
        assert!(why.contains("1,000 calls a p99 needs"), "{why}");
        let lowered = objective("p99<10ms", Some(30));
        assert_eq!(lowered.rate_floor(Duration::from_secs(3)).0, 10.0);
        // A step short of the calls fails, naming the count.
        let mut m = ModeStats::new(
            redlock_core::FanOut::Concurrent,
            3,
            Duration::from_millis(100),
        );
        m.counts.acquire_calls = 48;
        m.counts.acquired = 48;
        let failures = objective("p99<10s", None).failures(&m, false);
        assert_eq!(failures, ["p99 rests on 48 calls (needs 1000)"]);
    }

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
