//! Thresholds for CI gates: `--threshold EXPR` on `run` and `compare`.
//!
//! An expression is `FIGURE OP VALUE`: `acquire.p99<10ms`, `acquire.success>=99.9%`,
//! `violations==0`, `goodput>=2000`, and on `compare` the ratio of B to A, `goodput.ratio>=0.95`.
//! The verdict is taken on the measured figure with its 95 % interval: met, not met, or
//! unclear when the interval reaches across the bound (a verdict noise could turn); what
//! fails the gate is the gate's policy (`model::gate`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::catalog::{self, FigureUnit};
use super::uncertainty::Estimate;

/// The unit of the figure a threshold names ([`super::catalog`]), which fixes how its bound is
/// written: a latency with `us`, `µs`, `ms` or `s`, a share as `99.9%` or `0.999`, anything
/// else bare (`NAME.ratio`, B ÷ A, is an index).
fn unit_of(name: &str) -> Option<FigureUnit> {
    match name.strip_suffix(".ratio") {
        Some(base) => catalog::figure(base)
            .filter(|f| f.ratio)
            .map(|_| FigureUnit::Index),
        None => Some(catalog::figure(name)?.unit),
    }
}

named! {
    /// A comparison operator (in the order they are tried when read: `<=` before `<`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Op {
        Le = "<=",
        Ge = ">=",
        Eq = "==",
        Lt = "<",
        Gt = ">",
    }
}

impl Op {
    fn holds(self, measured: f64, bound: f64) -> bool {
        match self {
            Op::Lt => measured < bound,
            Op::Le => measured <= bound,
            Op::Gt => measured > bound,
            Op::Ge => measured >= bound,
            Op::Eq => measured == bound,
        }
    }
}

/// One parsed `--threshold` (the bound in the figure's own unit: µs, a fraction or a number).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Threshold {
    /// The expression as the user wrote it.
    pub expr: String,
    pub figure: String,
    pub op: Op,
    pub bound: f64,
}

/// A threshold judged against a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdVerdict {
    #[serde(flatten)]
    pub threshold: Threshold,
    /// The measured figure and its interval (`None`: the result has no such figure).
    pub measured: Option<Estimate>,
    pub passed: bool,
    /// The interval reaches across the bound: noise could turn the verdict.
    pub uncertain: bool,
    /// Met, not met or unclear, the interval taken into account.
    #[serde(default)]
    pub judgement: ThresholdJudgement,
}

/// One threshold's verdict, its interval taken into account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdJudgement {
    Met,
    NotMet,
    /// Also what a result file written before judgements were recorded reads as.
    #[default]
    Unclear,
}

impl ThresholdJudgement {
    /// The judgement of a threshold `passed` by its value, `uncertain` when its interval
    /// reaches across the bound, and `measured` when the figure was there.
    pub fn of(measured: bool, passed: bool, uncertain: bool) -> ThresholdJudgement {
        match (measured, passed, uncertain) {
            (true, _, true) => ThresholdJudgement::Unclear,
            (true, true, false) => ThresholdJudgement::Met,
            _ => ThresholdJudgement::NotMet,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ThresholdJudgement::Met => "met",
            ThresholdJudgement::NotMet => "NOT MET",
            ThresholdJudgement::Unclear => "unclear",
        }
    }
}

impl ThresholdVerdict {
    /// Its judgement, from what it holds (files written before judgements were recorded hold
    /// no `judgement`).
    pub fn judged(&self) -> ThresholdJudgement {
        ThresholdJudgement::of(self.measured.is_some(), self.passed, self.uncertain)
    }
}

/// A verdict and where its figure was read (a mode of a run; in `compare`, a result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgedThreshold {
    pub mode: String,
    #[serde(flatten)]
    pub verdict: ThresholdVerdict,
}

impl Threshold {
    /// Whether it judges a ratio between results (`compare` only).
    pub fn is_ratio(&self) -> bool {
        self.figure.ends_with(".ratio")
    }

    /// Judges the threshold against `measured` (None: the figure is missing, which fails).
    pub fn judge(&self, measured: Option<Estimate>) -> ThresholdVerdict {
        let passed = measured.is_some_and(|m| self.op.holds(m.value, self.bound));
        let uncertain = measured
            .and_then(|m| m.interval())
            .is_some_and(|(low, high)| {
                self.op.holds(low, self.bound) != self.op.holds(high, self.bound)
            });
        ThresholdVerdict {
            threshold: self.clone(),
            measured,
            passed,
            uncertain,
            judgement: ThresholdJudgement::of(measured.is_some(), passed, uncertain),
        }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.expr)
    }
}

impl FromStr for Threshold {
    type Err = String;

    fn from_str(expr: &str) -> Result<Self, String> {
        let trimmed = expr.trim();
        let at = trimmed.find(['<', '>', '=']).ok_or_else(|| {
            format!("'{expr}' has no comparison: write FIGURE OP VALUE, e.g. acquire.p99<10ms")
        })?;
        let (figure, rest) = trimmed.split_at(at);
        let figure = figure.trim();
        let op = Op::ALL.into_iter().find(|op| rest.starts_with(op.as_str()));
        let op =
            op.ok_or_else(|| format!("'{expr}': the operator must be one of <, <=, >, >=, =="))?;
        let value = rest[op.as_str().len()..].trim();
        let unit = unit_of(figure).ok_or_else(|| {
            let names = catalog::threshold_names().join(", ");
            format!("'{expr}': unknown figure '{figure}' (one of: {names})")
        })?;
        let bound = parse_bound(value, unit).map_err(|why| format!("'{expr}': {why}"))?;
        Ok(Threshold {
            expr: trimmed.to_string(),
            figure: figure.to_string(),
            op,
            bound,
        })
    }
}

/// A bound in the figure's own unit.
fn parse_bound(value: &str, unit: FigureUnit) -> Result<f64, String> {
    let numeric = |c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e';
    let (number, written) = value.split_at(value.find(|c| !numeric(c)).unwrap_or(value.len()));
    let number = number.parse().ok().filter(|x: &f64| x.is_finite());
    let number = number.ok_or_else(|| format!("'{value}' is not a number"))?;
    let scaled = match (unit, written.trim()) {
        (FigureUnit::Micros, "us" | "µs") => number,
        (FigureUnit::Micros, "ms") => number * 1e3,
        (FigureUnit::Micros, "s") => number * 1e6,
        (FigureUnit::Micros, other) => {
            return Err(format!("a latency needs a unit (us, ms or s), not '{other}'"))
        }
        // Shifting the decimal point in the text keeps 99.9% exactly 0.999 (a division by
        // 100 would round to 0.9990000000000001 and fail a measured 0.999).
        (FigureUnit::Share, "%") => format!("{number}e-2").parse().unwrap_or(number / 100.0),
        (FigureUnit::Share, "") if (0.0..=1.0).contains(&number) => number,
        (FigureUnit::Share, other) => {
            return Err(format!("a share is written as a percentage (99.9%) or a fraction in [0, 1], not '{number}{other}'"))
        }
        (_, "") => number,
        (_, other) => return Err(format!("this figure takes no unit, not '{other}'")),
    };
    if scaled < 0.0 {
        return Err(format!("'{value}' is negative"));
    }
    Ok(scaled)
}

/// The report's line for a verdict: `pass  acquire.p99<10ms  measured 4.1 ms (95 % 3.8–4.6)`.
pub fn verdict_word(verdict: &ThresholdVerdict) -> &'static str {
    verdict.judged().as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(expr: &str) -> Threshold {
        expr.parse().unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    #[test]
    fn bounds_are_held_in_the_figures_own_units() {
        assert_eq!(parse("acquire.p99<10ms").bound, 10_000.0);
        assert_eq!(parse("acquire.p99 < 250us").op, Op::Lt);
        assert_eq!(parse("acquire.p50<=1s").bound, 1_000_000.0);
        assert_eq!(parse("acquire.success>=99.9%").bound, 0.999);
        assert_eq!(parse("quorum.success>=0.99").bound, 0.99);
        assert_eq!(parse("violations==0").bound, 0.0);
        assert_eq!(parse("goodput.ratio>=0.95").op, Op::Ge);
    }

    #[test]
    fn a_bad_expression_names_what_is_wrong() {
        for (expr, says) in [
            ("acquire.p99", "no comparison"),
            ("acquire.p99=<10ms", "operator"),
            ("latency<10ms", "unknown figure 'latency'"),
            ("acquire.p99<10", "needs a unit"),
            ("acquire.success>=99.9", "percentage"),
            ("violations==zero", "'zero' is not a number"),
            ("goodput>=-1", "negative"),
            ("violations==0ms", "takes no unit"),
        ] {
            let err = expr.parse::<Threshold>().unwrap_err();
            assert!(err.contains(says) && err.contains(expr), "{expr}: {err}");
        }
    }

    #[test]
    fn a_verdict_is_taken_on_the_figure_and_flags_an_interval_across_the_bound() {
        let p99 = parse("acquire.p99<10ms");
        let clear = p99.judge(Some(Estimate {
            value: 4000.0,
            low: Some(3500.0),
            high: Some(4500.0),
        }));
        assert!(clear.passed && !clear.uncertain);
        let close = p99.judge(Some(Estimate {
            value: 9500.0,
            low: Some(8000.0),
            high: Some(12000.0),
        }));
        assert!(close.passed && close.uncertain);
        assert_eq!(verdict_word(&close), "unclear");
        let over = p99.judge(Some(Estimate::bare(11000.0)));
        assert!(!over.passed && !over.uncertain);
        let missing = p99.judge(None);
        assert!(!missing.passed);
    }
}
