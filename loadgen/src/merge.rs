//! `merge`: one report from result files of several machines, by adding histograms and counts
//! (percentiles are recomputed from the sums, never averaged).

use std::path::Path;

use crate::error::LoadgenError;
use crate::render::json;
use crate::report::Report;

/// Reads one result file.
pub fn read(path: &Path) -> Result<Report, LoadgenError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadgenError::Usage(format!("{}: {e}", path.display())))?;
    json::parse(&text).map_err(|e| LoadgenError::Usage(format!("{}: {e}", path.display())))
}

/// Adds `parts` into one report: modes of the same fan-out add up; the header is the first
/// part's, listing every part in `merged_from`. Mutual exclusion is checked per part (the parts'
/// clocks are not comparable), so violations add up too. Applied faults of every part are
/// kept, in file order (their times are relative to each part's own mode start).
pub fn merge(parts: Vec<(String, Report)>) -> Result<Report, LoadgenError> {
    let mut iter = parts.into_iter();
    let (first_name, mut merged) = iter
        .next()
        .ok_or_else(|| LoadgenError::Usage("merge: no result files given".into()))?;
    let mut names = vec![first_name];
    for (name, part) in iter {
        if part.header.masters.len() != merged.header.masters.len() {
            return Err(LoadgenError::Usage(format!(
                "{name}: measured {} masters, {} measured {}: results of different setups do not add up",
                part.header.masters.len(),
                names[0],
                merged.header.masters.len()
            )));
        }
        for mode in part.modes {
            match merged.modes.iter_mut().find(|m| m.fanout == mode.fanout) {
                Some(mine) => mine.add(&mode),
                None => merged.modes.push(mode),
            }
        }
        merged.faults.extend(part.faults);
        merged.header.interrupted |= part.header.interrupted;
        merged.header.started_unix_s = merged.header.started_unix_s.min(part.header.started_unix_s);
        names.push(name);
    }
    merged.header.merged_from = names;
    Ok(merged)
}
