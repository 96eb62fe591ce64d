//! The `scenarios` matrix's result (`kind: "scenarios"`): each row's verdict with its full run
//! result. Written by `scenarios --json`; not merged (its rows ran one after the other).

use serde::Serialize;

use super::header::Header;
use crate::faults::scenarios::Outcome;

#[derive(Debug, Clone, Serialize)]
pub struct ScenariosResult {
    #[serde(flatten)]
    pub header: Header,
    pub rows: Vec<Outcome>,
}
