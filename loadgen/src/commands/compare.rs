//! `redlock-loadgen compare A.json B.json [...]`: results side by side with a verdict per
//! figure ([`crate::model::comparison`]), as text, `--json` and `--html`.

use std::path::Path;

use crate::cli::CompareArgs;
use crate::error::LoadgenError;
use crate::model::comparison::compare;
use crate::model::document::{self, Document};
use crate::model::report::Report;
use crate::render::compare as render;

pub fn command(args: CompareArgs) -> Result<(), LoadgenError> {
    let mut results = Vec::new();
    for path in &args.inputs {
        let name = path.display().to_string();
        match document::read(path)? {
            Document::Run(report) => results.push((name, *report)),
            other => {
                return Err(LoadgenError::Usage(format!(
                    "{name} is a {} result; compare takes results of run, merge or collect",
                    other.kind()
                )))
            }
        }
    }
    let result = compare(&results, &args.thresholds);
    let shape: Vec<String> = result
        .config_diff
        .iter()
        .filter(|d| d.shape)
        .map(|d| format!("{} ({})", d.key, d.values.join(" vs ")))
        .collect();
    if !shape.is_empty() && !args.allow_different {
        return Err(LoadgenError::Usage(format!(
            "the workloads differ in shape: {}; pass --allow-different to compare them anyway",
            shape.join(", ")
        )));
    }
    print!("{}", render::text(&result));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&result)
            .map_err(|e| LoadgenError::Failed(format!("comparison as JSON: {e}")))?;
        write(path, &text)?;
    }
    if let Some(path) = &args.html {
        let reports: Vec<(&str, &Report)> = results.iter().map(|(n, r)| (n.as_str(), r)).collect();
        let page = crate::render::html::compare_page(&result, &reports)
            .map_err(|e| LoadgenError::Failed(format!("compare --html: {e}")))?;
        write(path, &page)?;
    }
    crate::commands::run::check_thresholds(&result.thresholds)
}

fn write(path: &Path, contents: &str) -> Result<(), LoadgenError> {
    std::fs::write(path, contents)
        .map_err(|e| LoadgenError::Failed(format!("cannot write {}: {e}", path.display())))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
