//! A saved run report read back from its file, and telling one from a results file.

use std::path::Path;

use serde_json::Value;

use crate::read::{read_bounded, Unread};

/// The largest run report read (one document; results files are read by lines instead).
const MAX_REPORT_BYTES: u64 = 512 * 1024 * 1024;

/// Whether a file whose first line is `line` (parsed: `value`) holds a run report: one on
/// that line, or a document that opens there (pretty JSON opens with a lone `{`).
pub fn is_report(value: &serde_json::Result<Value>, line: &str) -> bool {
    match value {
        Ok(v) => v.get("runId").is_some() && v.get("caseId").is_none(),
        Err(_) => line.trim_start().starts_with('{'),
    }
}

/// A saved run report (`orch run --format json`): one JSON document, read whole; or why the
/// file is not one, in words that name it.
pub fn read_file(path: &Path) -> Result<Value, String> {
    let shown = path.display().to_string();
    let bytes = read_bounded(path, MAX_REPORT_BYTES).map_err(|e| match e {
        Unread::Io(e) => format!("cannot read {shown}: {e}"),
        Unread::Missing => format!("cannot read {shown}: no such file or directory"),
        _ => format!("{shown} is not a regular file of at most 512 MiB"),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{shown} is not UTF-8 text"))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(report) if report.get("runId").is_some() => Ok(report),
        // Pretty JSON opens with a lone `{`, which no results line is: a report cut short.
        Err(e) if text.lines().find(|l| !l.trim().is_empty()).map(str::trim) == Some("{") => {
            let what = crate::text::json_error_words(&e);
            Err(format!(
                "{shown}:{}:{}: not a complete run report: {what}",
                e.line(),
                e.column().max(1)
            ))
        }
        Ok(_) => Err(format!(
            "{shown}: neither a run report (no `runId`) nor a results file"
        )),
        Err(e) => Err(format!(
            "{shown}:{}: neither a run report (`orch run --format json`) nor a results line (`orch test --results`): {e}",
            e.line()
        )),
    }
}
