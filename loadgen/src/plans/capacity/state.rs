//! The state of a search in progress, shared by its parts (the mode loop, [`super::step`],
//! [`super::noise`]).

use redlock_core::FanOut;

use super::request::{Capacity, Print, Searched};
use crate::engine::schedule::FaultSchedule;
use crate::engine::target::Target;
use crate::model::capacity::search::Phase;
use crate::model::lock::LockAlgorithm;
use crate::plans::coordinator::agent::Agent;
use crate::signals::Signals;

/// One search in progress and what it has measured so far.
pub(super) struct Searcher<'a, 'p> {
    pub capacity: &'a Capacity,
    pub target: &'a Target,
    pub agent: Option<&'a mut Agent>,
    /// The fault schedule every step runs under (`capacity --fault`).
    pub schedule: Option<&'a mut FaultSchedule>,
    /// Agents sharing each step's rate (1 without a coordinator).
    pub share: f64,
    pub signals: &'a Signals,
    pub print: &'a mut Print<'p>,
    pub printed_header: bool,
    pub searched: Searched,
}

/// A step to run: its mode, where it stands in the search and its rate (all agents').
pub(super) struct StepRun<'a> {
    pub label: &'a str,
    pub mode: (LockAlgorithm, FanOut),
    pub phase: Phase,
    pub rate: f64,
    /// Its number within its mode, from 1.
    pub number: u32,
    /// The step it repeats, when its interval straddled the objective.
    pub repeat_of: Option<u32>,
    /// Which run of its rate this is (0: the first).
    pub turn: u32,
}

/// What a step showed: whether it passed, whether an interval straddled the objective, and
/// whether a signal cut it short.
pub(super) struct Shown {
    pub passed: bool,
    pub straddles: bool,
    pub interrupted: bool,
}

/// A step of the search whose interval straddled the objective, and its runs so far.
#[derive(Debug, Clone, Copy)]
pub(super) struct Noisy {
    /// Where it is in this agent's steps and in all agents' merged steps.
    pub at: usize,
    pub at_all: usize,
    /// Its number within its mode.
    pub number: u32,
    pub phase: Phase,
    pub rate: f64,
    pub runs: u32,
    pub passed: u32,
    /// Repeats still allowed.
    pub left: u32,
}
