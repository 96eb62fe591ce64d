//! `compare`: results of `run`, `merge` or `collect` set side by side against the first one
//! (A). What differs in their configurations comes first; then each headline figure of each
//! mode both measured, with B − A, the 95 % interval of that difference and a verdict. Results
//! of separate commands are taken as independent (their resamples paired draw by draw,
//! [`super::uncertainty`]); results one `compare --run` measured in turns are paired repeat by
//! repeat, so what the machine does between repeats moves both sides and cancels.

use serde::{Deserialize, Serialize};

use super::catalog::{self, Figure};
use super::estimates::{figure_of, resample};
use super::gate::{Gate, GatePolicy};
use super::mode::ModeStats;
use super::report::Report;
use super::threshold::{JudgedThreshold, Threshold};
use super::uncertainty::{Estimate, Order, Resampled};

/// What a difference's interval says, in the direction that is better for the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    /// The interval is clear of 0 but not wholly beyond the noise band: a difference too small
    /// to act on ([`Judging::noise_band`]).
    WithinNoise,
    NoClearDifference,
    TooShort,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within the noise band",
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
    /// Its label: B, or B1, B2, … ([`side_label`]).
    #[serde(default)]
    pub side: String,
    pub mode: String,
    pub figure: String,
    pub a: Estimate,
    pub b: Estimate,
    /// B's mode, when it is not `mode` (set against A's by `--pair-modes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_mode: Option<String>,
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
    /// The result (its file name), its label ([`side_label`]) and mode.
    pub result: String,
    #[serde(default)]
    pub side: String,
    pub mode: String,
    /// Share of its ready time the generator waited for a core.
    pub wait_share: f64,
}

/// The whole comparison (`compare --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareResult {
    /// Always "compare".
    pub kind: String,
    /// [`COMPARE_SCHEMA_VERSION`] (absent in files written before it was recorded).
    #[serde(default)]
    pub schema_version: u32,
    /// What the thresholds mean for the exit status (absent when none was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Gate>,
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
    /// Modes of different names set against each other because the user asked
    /// (`--pair-modes`); modes of the same name are paired without saying.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paired_modes: Vec<PairedModes>,
    /// The noise band the verdicts were read with, a share of A's value (`--noise-threshold`;
    /// 0 in files written before it existed).
    #[serde(default)]
    pub noise_band: f64,
}

/// How the comparison judges: the thresholds with their gate policy, and the noise band of
/// the figures' verdicts.
#[derive(Debug, Clone, Copy)]
pub struct Judging<'a> {
    pub thresholds: &'a [Threshold],
    pub policy: GatePolicy,
    /// Better or worse only beyond ± this share of A's value ([`Verdict::WithinNoise`]).
    pub noise_band: f64,
}

/// The default noise band (`--noise-threshold`): 2 %, criterion's default.
pub const DEFAULT_NOISE_BAND: f64 = 0.02;

/// The version of `compare --json`'s layout.
pub const COMPARE_SCHEMA_VERSION: u32 = 1;

/// How result `i` of `n` is called: A, then B (or B1, B2, … when there are several). Results
/// are told apart by position: two sides may have the same name (the same command twice).
pub fn side_label(i: usize, n: usize) -> String {
    match i {
        0 => "A".into(),
        _ if n == 2 => "B".into(),
        _ => format!("B{i}"),
    }
}

/// A B's only mode set against A's only mode of another name (`--pair-modes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedModes {
    /// The B result (its file name) and its label.
    pub result: String,
    pub side: String,
    pub a_mode: String,
    pub b_mode: String,
}

/// The modes of one B set against A's: (A's mode, B's mode).
pub type ModePairs = Vec<(String, String)>;

/// For each later side, its modes set against A's: those of the same name; with
/// `pair_single`, A's only mode against a side's only mode when the names differ. Each side
/// is (how it is called, the labels of its modes), A first. A side that shares no mode with A
/// and cannot be paired is an error naming every side's modes: a comparison of nothing is
/// never a report.
pub fn pair_modes(
    sides: &[(String, Vec<String>)],
    pair_single: bool,
) -> Result<Vec<ModePairs>, String> {
    let Some(((_, a_modes), rest)) = sides.split_first() else {
        return Ok(Vec::new());
    };
    let mut pairs = Vec::new();
    let mut unmatched = Vec::new();
    for (name, modes) in rest {
        let shared = a_modes.iter().filter(|m| modes.contains(m));
        let common: ModePairs = shared.map(|m| (m.clone(), m.clone())).collect();
        let singles = match (a_modes.as_slice(), modes.as_slice()) {
            ([a], [b]) => Some((a.clone(), b.clone())),
            _ => None,
        };
        match singles {
            _ if !common.is_empty() => pairs.push(common),
            Some(pair) if pair_single => pairs.push(vec![pair]),
            _ => unmatched.push(name.as_str()),
        }
    }
    if unmatched.is_empty() {
        return Ok(pairs);
    }
    let measured = |(name, modes): &(String, Vec<String>)| match modes.as_slice() {
        [] => format!("{name}: no mode"),
        _ => format!("{name}: {}", modes.join(", ")),
    };
    let measured: Vec<String> = sides.iter().map(measured).collect();
    let hint = if sides.iter().all(|(_, modes)| modes.len() == 1) {
        "pass --pair-modes to set A's only mode against each side's only mode"
    } else {
        "--pair-modes pairs sides that measure one mode each; otherwise give the sides a mode \
         in common (the same --fanout and --lock)"
    };
    Err(format!(
        "nothing to compare: {} share(s) no mode with A (modes are matched by name; {}); {hint}",
        unmatched.join(", "),
        measured.join("; ")
    ))
}

/// How the compared results were measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairing {
    /// By separate commands (files): independent of each other.
    Apart,
    /// In turns by one `compare --run` command, this many repeats each.
    InTurns(u32),
}

/// Configuration keys that do not change what is measured, only for how long or from where;
/// and the fan-outs and lock algorithms, which name the modes: modes are compared by name,
/// or paired as the user asks ([`pair_modes`]).
const NOT_SHAPE: &[&str] = &[
    "command_line",
    "duration_s",
    "warmup_s",
    "seed",
    "repeat",
    "fanouts",
    "locks",
];

/// What differs between the results' configurations (the number of masters included).
pub fn config_diff(results: &[(String, Report)]) -> Vec<ConfigDifference> {
    let config = |(_, r): &(String, Report)| {
        let mut c = match serde_json::to_value(&r.config) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        c.insert("masters".into(), r.masters.len().into());
        c
    };
    let configs: Vec<_> = results.iter().map(config).collect();
    let Some(first) = configs.first() else {
        return Vec::new();
    };
    let differs = |key: &String| {
        let value =
            |c: &serde_json::Map<_, _>| c.get(key).map_or("(absent)".into(), |v| v.to_string());
        let values: Vec<String> = configs.iter().map(value).collect();
        values
            .iter()
            .any(|v| *v != values[0])
            .then(|| ConfigDifference {
                key: key.clone(),
                values,
                shape: !NOT_SHAPE.contains(&key.as_str()),
            })
    };
    first.keys().filter_map(differs).collect()
}

/// Compares every later result with the first, mode by mode: `pairs[i]` are the modes of
/// result `i + 1` set against A's ([`pair_modes`]).
pub fn compare(
    results: &[(String, Report)],
    pairs: &[ModePairs],
    judging: Judging,
    pairing: Pairing,
) -> CompareResult {
    let in_turns = match pairing {
        Pairing::InTurns(n) => Some(n),
        Pairing::Apart => None,
    };
    let n = results.len();
    let name = |(name, _): &(String, Report)| name.clone();
    let single_runs = results.iter().filter(|(_, r)| r.config.repeat < 2);
    let mut figures = Vec::new();
    let mut verdicts = Vec::new();
    let mut paired_modes = Vec::new();
    if let Some(((_, a), rest)) = results.split_first() {
        for (i, ((name, b), modes)) in rest.iter().zip(pairs).enumerate() {
            let side = side_label(i + 1, n);
            for (label_a, label_b) in modes {
                let (Some(ma), Some(mb)) = (a.mode(label_a), b.mode(label_b)) else {
                    continue;
                };
                let b_mode = (label_a != label_b).then_some(label_b.as_str());
                paired_modes.extend(b_mode.map(|b_mode| PairedModes {
                    result: name.clone(),
                    side: side.clone(),
                    a_mode: label_a.clone(),
                    b_mode: b_mode.into(),
                }));
                let b_side = ((name.as_str(), side.as_str()), mb, b_mode);
                figures.extend(catalog::headlines().filter_map(|f| {
                    compare_figure(f, ma, b_side, (in_turns.is_some(), judging.noise_band))
                }));
            }
            for t in judging.thresholds {
                verdicts.extend(judge(t, &side, (a, b), modes, &figures));
            }
        }
    }
    CompareResult {
        kind: "compare".into(),
        results: results.iter().map(name).collect(),
        config_diff: config_diff(results),
        figures,
        schema_version: COMPARE_SCHEMA_VERSION,
        gate: Gate::of(&verdicts, judging.policy),
        thresholds: verdicts,
        busy_machine: busy_machine(results),
        single_runs: single_runs.map(name).collect(),
        interleaved_repeats: in_turns,
        paired_modes,
        noise_band: judging.noise_band,
    }
}

/// One headline figure of A's mode `ma` against B's mode (`name`, its mode, and that mode's
/// name where it is not A's); `None` when either side lacks the figure. Differences are paired
/// turn by turn when measured `in_turns`; a verdict of better or worse needs the interval
/// beyond `noise_band` × A.
fn compare_figure(
    f: &Figure,
    ma: &ModeStats,
    ((name, side), mb, b_mode): ((&str, &str), &ModeStats, Option<&str>),
    (in_turns, noise_band): (bool, f64),
) -> Option<FigureComparison> {
    let (ra, rb) = (resample(ma, f.name)?, resample(mb, f.name)?);
    let (ea, eb) = (figure_of(ma, f.name)?, figure_of(mb, f.name)?);
    // In turns, repeat r of B ran beside repeat r of A; a repeat missing on one side (a
    // stopped run) leaves the pairs unmatched: then independent.
    let paired = |d: Option<Resampled>| d.filter(|_| in_turns);
    let difference = paired(rb.paired_difference(&ra)).unwrap_or_else(|| rb.difference(&ra));
    let difference = difference.estimate();
    let ratio = paired(rb.paired_ratio(&ra)).or_else(|| rb.ratio(&ra));
    let a = ea.value.abs();
    let band = if f.banded { noise_band * a } else { 0.0 };
    let verdict = verdict_of(&difference, band, f.higher_is_better);
    Some(FigureComparison {
        result: name.into(),
        side: side.into(),
        mode: ma.label().into(),
        figure: f.name.into(),
        a: ea,
        b: eb,
        b_mode: b_mode.map(str::to_string),
        difference,
        ratio: ratio.map(|r| r.estimate()),
        verdict,
    })
}

/// The verdict on B − A: better or worse when its interval lies wholly beyond ± `band`,
/// within the noise band when it is clear of 0 but not of the band.
fn verdict_of(difference: &Estimate, band: f64, higher_is_better: bool) -> Verdict {
    let order = Order::of(difference, 0.0);
    let beyond_band = match (order, difference.interval()) {
        (Order::Higher, Some((low, _))) => low > band,
        (Order::Lower, Some((_, high))) => high < -band,
        _ => false,
    };
    match order {
        Order::Higher | Order::Lower if !beyond_band => Verdict::WithinNoise,
        Order::Higher if higher_is_better => Verdict::Better,
        Order::Lower if !higher_is_better => Verdict::Better,
        Order::Higher | Order::Lower => Verdict::Worse,
        Order::NoClearDifference => Verdict::NoClearDifference,
        Order::TooShort => Verdict::TooShort,
    }
}

/// Every mode of every result whose generator waited for a core past
/// [`crate::model::generator::CPU_CONTENDED`].
fn busy_machine(results: &[(String, Report)]) -> Vec<BusyMachine> {
    let n = results.len();
    let modes = results
        .iter()
        .enumerate()
        .flat_map(|(i, (name, r))| r.modes.iter().map(move |m| (name, side_label(i, n), m)));
    let busy = |(name, side, m): (&String, String, &ModeStats)| {
        Some(BusyMachine {
            result: name.clone(),
            side,
            mode: m.label().into(),
            wait_share: crate::model::generator::contended(m)?,
        })
    };
    modes.filter_map(busy).collect()
}

/// A threshold on one B (`side`): a `.ratio` figure on B ÷ A, any other figure on B itself;
/// per pair of modes (named by B's label and mode, and A's mode where they differ).
fn judge(
    t: &Threshold,
    side: &str,
    (a, b): (&Report, &Report),
    pairs: &ModePairs,
    figures: &[FigureComparison],
) -> Vec<JudgedThreshold> {
    pairs
        .iter()
        .filter_map(|(label_a, label_b)| {
            a.mode(label_a)?;
            Some((label_a, b.mode(label_b)?))
        })
        .map(|(label_a, mb)| {
            let measured = match t.figure.strip_suffix(".ratio") {
                Some(base) => {
                    let of = |f: &&FigureComparison| {
                        (&*f.side, &f.mode, &*f.figure) == (side, label_a, base)
                    };
                    figures.iter().find(of).and_then(|f| f.ratio)
                }
                None => figure_of(mb, &t.figure),
            };
            let mode = match mb.label() {
                same if same == label_a => same.to_string(),
                other => format!("{other} against A's {label_a}"),
            };
            JudgedThreshold {
                mode: format!("{side} {mode}"),
                verdict: t.judge(measured),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str, modes: &[&str]) -> (String, Vec<String>) {
        (name.into(), modes.iter().map(|m| m.to_string()).collect())
    }

    fn same(modes: &[&str]) -> ModePairs {
        modes
            .iter()
            .map(|m| (m.to_string(), m.to_string()))
            .collect()
    }

    #[test]
    fn modes_meet_by_name_and_single_modes_only_when_asked() {
        let a = side("A", &["sequential", "concurrent"]);
        let b = side("B", &["concurrent"]);
        assert_eq!(
            pair_modes(&[a.clone(), b], false),
            Ok(vec![same(&["concurrent"])])
        );
        let (one, other) = (side("A", &["concurrent"]), side("B", &["single"]));
        let refused = pair_modes(&[one.clone(), other.clone()], false).unwrap_err();
        assert!(refused.contains("B share(s) no mode with A"), "{refused}");
        assert!(refused.contains("A: concurrent; B: single"), "{refused}");
        assert!(refused.contains("pass --pair-modes"), "{refused}");
        let paired = vec![vec![("concurrent".to_string(), "single".to_string())]];
        assert_eq!(pair_modes(&[one, other.clone()], true), Ok(paired));
        // Several modes a side: no pairing by position, whatever is asked.
        let refused = pair_modes(&[a, other, side("B2", &[])], true).unwrap_err();
        assert!(refused.contains("B, B2 share(s) no mode"), "{refused}");
        assert!(refused.contains("B2: no mode"), "{refused}");
        assert!(refused.contains("one mode each"), "{refused}");
    }

    #[test]
    fn better_or_worse_only_beyond_the_noise_band() {
        let diff = |low: f64, high: f64| Estimate {
            value: (low + high) / 2.0,
            low: Some(low),
            high: Some(high),
        };
        // A is 1,000: a 2 % band is ±20.
        let band = DEFAULT_NOISE_BAND * 1000.0;
        assert_eq!(verdict_of(&diff(25.0, 60.0), band, true), Verdict::Better);
        assert_eq!(verdict_of(&diff(25.0, 60.0), band, false), Verdict::Worse);
        assert_eq!(
            verdict_of(&diff(5.0, 30.0), band, true),
            Verdict::WithinNoise
        );
        assert_eq!(
            verdict_of(&diff(-30.0, -5.0), band, true),
            Verdict::WithinNoise
        );
        assert_eq!(verdict_of(&diff(-60.0, -25.0), band, true), Verdict::Worse);
        assert_eq!(
            verdict_of(&diff(-5.0, 30.0), band, true),
            Verdict::NoClearDifference
        );
        // Without a band any clear difference counts.
        assert_eq!(verdict_of(&diff(5.0, 30.0), 0.0, true), Verdict::Better);
        assert_eq!(
            verdict_of(&Estimate::bare(3.0), band, true),
            Verdict::TooShort
        );
    }
}
