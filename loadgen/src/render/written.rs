//! What a writer is handed: a result of any kind a command writes files of (the writers, one
//! per format, are listed in [`super::formats`]).

use crate::model::capacity::CapacityResult;
use crate::model::comparison::CompareResult;
use crate::model::report::Report;
use crate::model::scenarios::ScenariosResult;
use crate::model::sweep::SweepResult;

/// A result a command writes files of.
#[derive(Debug, Clone, Copy)]
pub enum Written<'a> {
    Run(&'a Report),
    Sweep(&'a SweepResult),
    Capacity(&'a CapacityResult),
    /// `compare`'s result, with each side's result by name (the HTML page draws them).
    Compare(&'a CompareResult, &'a [(&'a str, &'a Report)]),
    Scenarios(&'a ScenariosResult),
}

/// The kinds of result a file can be written of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Of {
    Run,
    Sweep,
    Capacity,
    Compare,
    Scenarios,
}

impl Of {
    pub fn as_str(self) -> &'static str {
        match self {
            Of::Run => "run",
            Of::Sweep => "sweep",
            Of::Capacity => "capacity",
            Of::Compare => "compare",
            Of::Scenarios => "scenarios",
        }
    }
}

impl Written<'_> {
    pub fn kind(&self) -> Of {
        match self {
            Written::Run(_) => Of::Run,
            Written::Sweep(_) => Of::Sweep,
            Written::Capacity(_) => Of::Capacity,
            Written::Compare(..) => Of::Compare,
            Written::Scenarios(_) => Of::Scenarios,
        }
    }
}

/// The error of a writer handed a result its format does not take (refused up front by
/// `Format::refusal`, so only a caller's mistake reaches it).
pub fn not_taken(flag: &str, written: &Written<'_>) -> String {
    format!(
        "{flag} is not written for a {} result",
        written.kind().as_str()
    )
}
