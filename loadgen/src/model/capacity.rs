//! A capacity search's result: every step (a full run result each) and the answer per fan-out
//! mode. JSON `kind: "capacity"`. Its parts: [`search`] picks each step's rate, [`slo`] says
//! whether a step met the objective, [`step`] holds a step and how noise decided it,
//! [`mod@answer`] words the answer, [`reproduce`] writes the command line of an answer.

pub mod answer;
pub mod reproduce;
pub mod search;
pub mod slo;
pub mod step;

use serde::{Deserialize, Serialize};

pub use self::answer::{answer, grouped, Answer, Range, Spread, Status};
pub use self::step::{NoiseVerdict, Step};
use super::header::Header;
use search::Plan;
use slo::Objective;

/// The whole search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    #[serde(flatten)]
    pub header: Header,
    pub objective: Objective,
    #[serde(rename = "search")]
    pub plan: Plan,
    /// What the search warned about before its first step (e.g. masters on this machine).
    #[serde(default)]
    pub warnings: Vec<String>,
    pub answers: Vec<Answer>,
    pub steps: Vec<Step>,
    /// `--fault`: the schedule every step ran under (specs as written; empty: none), and in
    /// the words the answers name it with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub faults_words: String,
    /// `--baseline`: the same search without the faults, measured first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Box<Baseline>>,
}

/// The search without faults that a search under faults is set beside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub answers: Vec<Answer>,
    pub steps: Vec<Step>,
}
