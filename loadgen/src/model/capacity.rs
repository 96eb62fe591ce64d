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
}
