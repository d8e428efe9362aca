//! `orch report FILE [--html OUT]`: a saved run report or suite results file as one page.
//! A results file is read a line at a time (its size has no limit, its lines do); a run
//! report is one JSON document, read whole.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::cli::ReportArgs;
use crate::exit::{CommandError, Exit};
use crate::pictures::{html_report_page, ResultsPage};
use crate::read::{read_bounded, Unread};
use crate::suite::Lines;

/// The largest run report read (one document; results files are read by lines instead).
const MAX_REPORT_BYTES: u64 = 512 * 1024 * 1024;

/// Renders `args.file` to `--html OUT` or standard output.
pub fn report(args: ReportArgs) -> Result<Exit> {
    let page = match results_page(&args.file)? {
        Some(page) => page,
        None => report_page(&args.file)?,
    };
    match &args.html {
        Some(out) => std::fs::write(out, page)
            // A page that cannot be written is a failed write (1), as on standard output.
            .map_err(|e| CommandError::failed(format!("cannot write {}: {e}", out.display())))?,
        None => {
            let mut out = super::stdout();
            out.write_all(page.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(Exit::Success)
}

/// The page of a results file, or `None` when the file's first line is not a results line
/// (a run report, pretty or on one line, or no JSON at all: [`report_page`] says which).
fn results_page(path: &Path) -> Result<Option<String>, CommandError> {
    let shown = path.display();
    let mut lines = match Lines::open(path) {
        Ok(Some(lines)) => lines,
        Ok(None) => {
            return Err(CommandError::usage(format!(
                "cannot read {shown}: no such file or directory"
            )))
        }
        Err(e) => return Err(CommandError::usage(e)),
    };
    let mut page = ResultsPage::default();
    let mut first = true;
    while let Some((at, line)) = lines.next_line().map_err(CommandError::usage)? {
        let value = serde_json::from_str::<Value>(line);
        if std::mem::take(&mut first) && is_report(&value, line) {
            return Ok(None);
        }
        let value = value.map_err(|e| {
            CommandError::usage(format!(
                "{shown}:{}: neither a run report (`orch run --format json`) nor a results line (`orch test --results`): {e}",
                at.number
            ))
        })?;
        if value.get("caseId").is_none() {
            return Err(CommandError::usage(format!(
                "{shown}:{}: not a results line (no `caseId`)",
                at.number
            )));
        }
        page.add(&value);
    }
    Ok(Some(page.finish()))
}

/// Whether a file whose first line is `line` (parsed: `value`) holds a run report: one on
/// that line, or a document that opens there (pretty JSON opens with a lone `{`).
fn is_report(value: &serde_json::Result<Value>, line: &str) -> bool {
    match value {
        Ok(v) => v.get("runId").is_some() && v.get("caseId").is_none(),
        Err(_) => line.trim_start().starts_with('{'),
    }
}

/// The page of a run report: one JSON document, read whole.
fn report_page(path: &Path) -> Result<String, CommandError> {
    let shown = path.display().to_string();
    let bytes = read_bounded(path, MAX_REPORT_BYTES).map_err(|e| {
        CommandError::usage(match e {
            Unread::Io(e) => format!("cannot read {shown}: {e}"),
            Unread::Missing => format!("cannot read {shown}: no such file or directory"),
            _ => format!("{shown} is not a regular file of at most 512 MiB"),
        })
    })?;
    let text = String::from_utf8(bytes).map_err(|_| CommandError::usage(format!("{shown} is not UTF-8 text")))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(report) if report.get("runId").is_some() => Ok(html_report_page(&report)),
        // Pretty JSON opens with a lone `{`, which no results line is: a report cut short.
        Err(e) if text.lines().find(|l| !l.trim().is_empty()).map(str::trim) == Some("{") => {
            let what = e.to_string();
            let what = what.split(" at line ").next().unwrap_or_default().to_string();
            Err(CommandError::usage(format!(
                "{shown}:{}:{}: not a complete run report: {what}",
                e.line(),
                e.column().max(1)
            )))
        }
        Ok(_) => Err(CommandError::usage(format!(
            "{shown}: neither a run report (no `runId`) nor a results file"
        ))),
        Err(e) => Err(CommandError::usage(format!(
            "{shown}:{}: neither a run report (`orch run --format json`) nor a results line (`orch test --results`): {e}",
            e.line()
        ))),
    }
}
