//! `orch report FILE [--html OUT]`: a saved run report or suite results file as one page.

use std::io::Write;

use anyhow::Result;
use serde_json::Value;

use crate::cli::ReportArgs;
use crate::config::load::{read_bounded, Unread};
use crate::exit::{CommandError, Exit};
use crate::pictures::html;

/// The largest file read (a results file of thousands of runs fits well under it).
const MAX_INPUT_BYTES: u64 = 512 * 1024 * 1024;

/// Renders `args.file` to `--html OUT` or standard output.
pub fn report(args: ReportArgs) -> Result<Exit> {
    let shown = args.file.display().to_string();
    let bytes = read_bounded(&args.file, MAX_INPUT_BYTES).map_err(|e| {
        CommandError::usage(match e {
            Unread::Io(e) => format!("cannot read {shown}: {e}"),
            Unread::Missing => format!("cannot read {shown}: no such file or directory"),
            _ => format!("{shown} is not a regular file of at most 512 MiB"),
        })
    })?;
    let text = String::from_utf8(bytes).map_err(|_| CommandError::usage(format!("{shown} is not UTF-8 text")))?;
    let page = match serde_json::from_str::<Value>(&text) {
        Ok(report) if report.get("runId").is_some() => html::report_page(&report),
        // Pretty JSON opens with a lone `{`, which no results line is: a report cut short.
        Err(e) if text.lines().find(|l| !l.trim().is_empty()).map(str::trim) == Some("{") => {
            let what = e.to_string();
            let what = what.split(" at line ").next().unwrap_or_default();
            return Err(CommandError::usage(format!(
                "{shown}:{}:{}: not a complete run report: {what}",
                e.line(),
                e.column().max(1)
            ))
            .into());
        }
        _ => {
            let mut lines = Vec::new();
            for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let value: Value = serde_json::from_str(line).map_err(|e| {
                    CommandError::usage(format!(
                        "{shown}:{}: neither a run report (`orch run --format json`) nor a results line (`orch test --results`): {e}",
                        i + 1
                    ))
                })?;
                if value.get("caseId").is_none() {
                    return Err(
                        CommandError::usage(format!("{shown}:{}: not a results line (no `caseId`)", i + 1)).into(),
                    );
                }
                lines.push(value);
            }
            html::results_page(&lines)
        }
    };
    match &args.html {
        Some(out) => std::fs::write(out, page)
            .map_err(|e| CommandError::usage(format!("cannot write {}: {e}", out.display())))?,
        None => {
            let mut out = super::stdout();
            out.write_all(page.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(Exit::Success)
}
