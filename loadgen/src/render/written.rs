//! What a writer is handed: a result of any kind a command writes files of (the writers, one
//! per format, are listed in [`super::formats`]).

use crate::model::capacity::CapacityResult;
use crate::model::header::Kind;
use crate::model::report::Report;
use crate::model::sweep::SweepResult;

/// A result a command writes files of.
#[derive(Debug, Clone, Copy)]
pub enum Written<'a> {
    Run(&'a Report),
    Sweep(&'a SweepResult),
    Capacity(&'a CapacityResult),
}

impl Written<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Written::Run(_) => Kind::Run,
            Written::Sweep(_) => Kind::Sweep,
            Written::Capacity(_) => Kind::Capacity,
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
