//! `compare`: results of `run`, `merge` or `collect` set side by side against the first one
//! (A). What differs in their configurations comes first; then each headline figure of each
//! mode both measured, with B − A, the 95 % interval of that difference and a verdict. Results
//! of separate commands are taken as independent (their resamples paired draw by draw,
//! [`super::uncertainty`]); results one `compare --run` measured in turns are paired repeat by
//! repeat, so what the machine does between repeats moves both sides and cancels.

use serde::{Deserialize, Serialize};

use super::estimates::{figure_of, resample, HEADLINE};
use super::report::Report;
use super::threshold::{JudgedThreshold, Threshold};
use super::uncertainty::{Estimate, Order, Resampled};

/// What a difference's interval says, in the direction that is better for the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    NoClearDifference,
    TooShort,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoClearDifference => "no clear difference",
            Verdict::TooShort => "too short to say",
        }
    }
}

/// One configuration key whose value differs between the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigDifference {
    pub key: String,
    /// Its value in each result, in the order given.
    pub values: Vec<String>,
    /// It changes the workload's shape (refused without `--allow-different`).
    pub shape: bool,
}

/// One figure of one mode: A against one B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureComparison {
    /// The B result (its file name).
    pub result: String,
    pub mode: String,
    pub figure: String,
    pub a: Estimate,
    pub b: Estimate,
    /// B − A with its 95 % interval.
    pub difference: Estimate,
    /// B ÷ A with its 95 % interval (absent when A is 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Estimate>,
    pub verdict: Verdict,
}

/// A compared result whose generator waited for a core much of the time: its figures moved
/// with the machine's other work, which no interval of one run covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyMachine {
    /// The result (its file name) and mode.
    pub result: String,
    pub mode: String,
    /// Share of its ready time the generator waited for a core.
    pub wait_share: f64,
}

/// The whole comparison (`compare --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareResult {
    /// Always "compare".
    pub kind: String,
    /// The results compared, A first (file names).
    pub results: Vec<String>,
    pub config_diff: Vec<ConfigDifference>,
    pub figures: Vec<FigureComparison>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<JudgedThreshold>,
    /// Results measured on a busy machine (then a verdict may be the machine's, not the
    /// configuration's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busy_machine: Vec<BusyMachine>,
    /// Results measured once (not `run --repeat`): their intervals hold the noise within the
    /// run, not what moves between two runs of the same command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub single_runs: Vec<String>,
    /// `compare --run`: the results were measured in turns by one command, this many repeats
    /// each (A B, B A, A B, …), and each difference and ratio is Student's t over the repeats'
    /// own differences and ratios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleaved_repeats: Option<u32>,
}

/// How the compared results were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairing {
    /// By separate commands (files): independent of each other.
    Apart,
    /// In turns by one `compare --run` command, this many repeats each.
    InTurns(u32),
}

/// Configuration keys that do not change what is measured, only for how long or from where.
const NOT_SHAPE: &[&str] = &["command_line", "duration_s", "warmup_s", "seed", "repeat"];

/// What differs between the results' configurations (the number of masters included).
pub fn config_diff(results: &[(String, Report)]) -> Vec<ConfigDifference> {
    let configs: Vec<serde_json::Map<String, serde_json::Value>> = results
        .iter()
        .map(|(_, r)| {
            let mut c = match serde_json::to_value(&r.config) {
                Ok(serde_json::Value::Object(map)) => map,
                _ => serde_json::Map::new(),
            };
            c.insert("masters".into(), r.masters.len().into());
            c
        })
        .collect();
    let Some(first) = configs.first() else {
        return Vec::new();
    };
    first
        .keys()
        .filter_map(|key| {
            let values: Vec<String> = configs
                .iter()
                .map(|c| c.get(key).map_or("(absent)".into(), |v| v.to_string()))
                .collect();
            values
                .iter()
                .any(|v| *v != values[0])
                .then(|| ConfigDifference {
                    key: key.clone(),
                    values,
                    shape: !NOT_SHAPE.contains(&key.as_str()),
                })
        })
        .collect()
}

/// Compares every later result with the first, mode by mode (modes matched by label).
pub fn compare(
    results: &[(String, Report)],
    thresholds: &[Threshold],
    pairing: Pairing,
) -> CompareResult {
    let in_turns = matches!(pairing, Pairing::InTurns(_));
    let mut figures = Vec::new();
    let mut verdicts = Vec::new();
    if let Some(((_, a), rest)) = results.split_first() {
        for (name, b) in rest {
            for ma in &a.modes {
                let Some(mb) = b.modes.iter().find(|m| m.label() == ma.label()) else {
                    continue;
                };
                for f in HEADLINE {
                    let (Some(ra), Some(rb)) = (resample(ma, f.name), resample(mb, f.name)) else {
                        continue;
                    };
                    let (Some(ea), Some(eb)) = (figure_of(ma, f.name), figure_of(mb, f.name))
                    else {
                        continue;
                    };
                    // In turns, repeat r of B ran beside repeat r of A; a repeat missing on
                    // one side (a stopped run) leaves the pairs unmatched: then independent.
                    let paired = |d: Option<Resampled>| d.filter(|_| in_turns);
                    let difference = paired(rb.paired_difference(&ra))
                        .unwrap_or_else(|| rb.difference(&ra))
                        .estimate();
                    let ratio = match paired(rb.paired_ratio(&ra)) {
                        Some(r) => Some(r),
                        None => rb.ratio(&ra),
                    };
                    let verdict = match Order::of(&difference, 0.0) {
                        Order::Higher if f.higher_is_better => Verdict::Better,
                        Order::Lower if !f.higher_is_better => Verdict::Better,
                        Order::Higher | Order::Lower => Verdict::Worse,
                        Order::NoClearDifference => Verdict::NoClearDifference,
                        Order::TooShort => Verdict::TooShort,
                    };
                    figures.push(FigureComparison {
                        result: name.clone(),
                        mode: ma.label().into(),
                        figure: f.name.into(),
                        a: ea,
                        b: eb,
                        difference,
                        ratio: ratio.map(|r| r.estimate()),
                        verdict,
                    });
                }
            }
            for t in thresholds {
                verdicts.extend(judge(t, name, a, b, &figures));
            }
        }
    }
    CompareResult {
        kind: "compare".into(),
        results: results.iter().map(|(name, _)| name.clone()).collect(),
        config_diff: config_diff(results),
        figures,
        thresholds: verdicts,
        busy_machine: busy_machine(results),
        single_runs: results
            .iter()
            .filter(|(_, r)| r.config.repeat < 2)
            .map(|(name, _)| name.clone())
            .collect(),
        interleaved_repeats: match pairing {
            Pairing::InTurns(n) => Some(n),
            Pairing::Apart => None,
        },
    }
}

/// Every mode of every result whose generator waited for a core past
/// [`crate::model::generator::CPU_CONTENDED`].
fn busy_machine(results: &[(String, Report)]) -> Vec<BusyMachine> {
    results
        .iter()
        .flat_map(|(name, r)| {
            r.modes.iter().filter_map(move |m| {
                Some(BusyMachine {
                    result: name.clone(),
                    mode: m.label().into(),
                    wait_share: crate::model::generator::contended(m)?,
                })
            })
        })
        .collect()
}

/// A threshold on one B: a `.ratio` figure on B ÷ A, any other figure on B itself; per mode.
fn judge(
    t: &Threshold,
    name: &str,
    a: &Report,
    b: &Report,
    figures: &[FigureComparison],
) -> Vec<JudgedThreshold> {
    a.modes
        .iter()
        .filter_map(|ma| b.modes.iter().find(|m| m.label() == ma.label()))
        .map(|mb| {
            let measured = match t.figure.strip_suffix(".ratio") {
                Some(base) => figures
                    .iter()
                    .find(|f| f.result == name && f.mode == mb.label() && f.figure == base)
                    .and_then(|f| f.ratio),
                None => figure_of(mb, &t.figure),
            };
            JudgedThreshold {
                mode: format!("{name} {}", mb.label()),
                verdict: t.judge(measured),
            }
        })
        .collect()
}
