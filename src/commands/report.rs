//! `orch report FILE [--format tree|markdown|text|json] [--html OUT]`: a saved run report
//! printed again in the format asked, or a run report or suite results file as
//! one page. A results file is read a line at a time (its size has no limit, its
//! lines do); a run report is one JSON document, read whole.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use crate::cli::{ReportArgs, ReportFormat, RunFormat};
use crate::exit::{CommandError, Exit};
use crate::render::{html_report_page, ResultsPage};
use crate::report::{Report, Saved};
use crate::suite::Lines;

/// Prints `args.file` in `--format`, and writes its page to `--html OUT` (saying so on
/// stderr), or to standard output when neither is given.
pub fn report(args: ReportArgs) -> Result<Exit> {
    let page = match results_page(&args.file, args.format)? {
        Some(page) => page,
        None => {
            let report = crate::report::read_file(&args.file).map_err(CommandError::usage)?;
            if let Some(format) = args.format {
                print_run(&args.file, &report, format)?;
            }
            if args.format.is_some() && args.html.is_none() {
                return Ok(Exit::Success);
            }
            let view = Saved::<Value>::deserialize(&report).map_err(|e| {
                CommandError::usage(format!("{}: not a run report orch can read: {e}", args.file.display()))
            })?;
            html_report_page(&view)
        }
    };
    match &args.html {
        Some(out) => {
            std::fs::write(out, page)
                // A page that cannot be written is a failed write (1), as on standard output.
                .map_err(|e| CommandError::failed(format!("cannot write {}: {e}", out.display())))?;
            say!("wrote {}", out.display());
        }
        None if args.format.is_some() => {}
        None => {
            let mut out = super::stdout();
            out.write_all(page.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(Exit::Success)
}

/// A saved run report printed in `format`: read back through the report's own type, so
/// what cannot be read says so (exit 2) instead of printing an empty run.
fn print_run(path: &Path, report: &Value, format: ReportFormat) -> Result<()> {
    let format = match format {
        ReportFormat::Json => {
            let mut out = super::stdout();
            super::write_json(&mut out, report)?;
            out.flush()?;
            return Ok(());
        }
        ReportFormat::Tree => RunFormat::Tree,
        ReportFormat::Markdown => RunFormat::Markdown,
        ReportFormat::Text => RunFormat::Text,
    };
    let run = Report::deserialize(report)
        .map_err(|e| CommandError::usage(format!("{}: not a run report orch can read: {e}", path.display())))?;
    super::run::print_report(&run, format)
}

/// The page of a results file, or `None` when the file's first line is not a results line
/// (a run report, pretty or on one line, or no JSON at all: [`crate::report::read_file`] says which).
/// With `--format json` each line is printed as it is read; any other format needs a run
/// report (exit 2).
fn results_page(path: &Path, format: Option<ReportFormat>) -> Result<Option<String>, CommandError> {
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
    let mut out = super::stdout();
    while let Some((at, line)) = lines.next_line().map_err(CommandError::usage)? {
        let value = serde_json::from_str::<Value>(line);
        if std::mem::take(&mut first) {
            if crate::report::is_report(&value, line) {
                return Ok(None);
            }
            if let Some(f) = format.filter(|f| *f != ReportFormat::Json) {
                let f = format!("{f:?}").to_lowercase();
                let what = match value.as_ref().ok().and_then(|v| v.get("caseId")) {
                    Some(_) => "is a results file",
                    None => "is not a run report",
                };
                return Err(CommandError::usage(format!(
                    "{shown} {what}: `--format {f}` needs a run report (`orch run --format json`)"
                )));
            }
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
        if format == Some(ReportFormat::Json) {
            let mut bytes = serde_json::to_vec(&value).map_err(|e| CommandError::failed(e.to_string()))?;
            bytes.push(b'\n');
            out.write_all(&bytes).map_err(|e| CommandError::failed(e.to_string()))?;
        }
        let view = Saved::<Value>::deserialize(&value).map_err(|e| {
            CommandError::usage(format!("{shown}:{}: not a results line orch can read: {e}", at.number))
        })?;
        page.add(&view);
    }
    if first {
        return Err(CommandError::usage(format!(
            "{shown} is empty: neither a run report (`orch run --format json`) nor a results file (`orch test --results`)"
        )));
    }
    out.flush().map_err(|e| CommandError::failed(e.to_string()))?;
    Ok(Some(page.finish()))
}
