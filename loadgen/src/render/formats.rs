//! Every file a command writes, one writer per format with the same signature: the result in
//! ([`Written`]), the file's text out, or why it could not be made. The output manager
//! (`crate::commands::output`) writes each format asked for through [`FORMATS`], so a new
//! format is its writer plus one entry here, and a new command writes through the manager.

pub use super::written::{Of, Written};
use crate::model::percentiles::Percentiles;

/// One format's writer.
pub type Writer = fn(&Written<'_>, &Percentiles) -> Result<String, String>;

/// A file format: the flag that asks for it, the results it is made of, its writer.
#[derive(Debug)]
pub struct Format {
    pub flag: &'static str,
    pub kinds: &'static [Of],
    pub write: Writer,
}

const MEASURED: &[Of] = &[Of::Run, Of::Sweep, Of::Capacity];
const ALL: &[Of] = &[Of::Run, Of::Sweep, Of::Capacity, Of::Compare, Of::Scenarios];

/// Every format, in the order they are written.
pub const FORMATS: [Format; 5] = [
    Format {
        flag: "--json",
        kinds: ALL,
        write: super::json::write,
    },
    Format {
        flag: "--csv",
        kinds: MEASURED,
        write: super::csv::write,
    },
    Format {
        flag: "--plot",
        kinds: &[Of::Run, Of::Capacity],
        write: super::plot::write,
    },
    Format {
        flag: "--hlog",
        kinds: &[Of::Run],
        write: super::hlog::write,
    },
    Format {
        flag: "--html",
        kinds: ALL,
        write: super::html::write,
    },
];

impl Format {
    /// Why `command` (a result of `kind`) cannot write this format, naming who can.
    pub fn refusal(&self, command: &str, kind: Of) -> Option<String> {
        if self.kinds.contains(&kind) {
            return None;
        }
        let who: Vec<&str> = self.kinds.iter().map(|k| k.as_str()).collect();
        Some(format!(
            "{command} does not write {} (results of {} do)",
            self.flag,
            who.join(" and ")
        ))
    }
}
