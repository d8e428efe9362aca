//! The end of `orch test`: the summary printed in its format, `--junit` written, and the
//! exit code.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Result;

use crate::cli::TestFormat;
use crate::exit::{CommandError, Exit};
use crate::render::{write_junit, write_summary_tree, Style};
use crate::suite::{Pending, Summary};

/// Prints the summary in `format`, writes `--junit` (`junit`, to `junit_path`), and says how
/// it went. A JUnit file that fails to take its text is an error after the summary (exit 1).
pub fn finish(
    summary: &Summary,
    format: TestFormat,
    junit_path: Option<&Path>,
    junit: Option<Pending>,
) -> Result<Exit> {
    let junit_error = junit.and_then(|file| {
        let path = junit_path.map_or_else(String::new, |p| p.display().to_string());
        let written = file.write_with(|out| write_junit(summary, out));
        written.err().map(|e| format!("cannot write JUnit to {path}: {e}"))
    });
    let mut out = super::stdout();
    match format {
        TestFormat::Json => super::write_json(&mut out, summary)?,
        TestFormat::Markdown => out.write_all(crate::render::markdown_suite(summary).as_bytes())?,
        TestFormat::Tree => {
            let style = Style::detect(std::io::stdout().is_terminal());
            // A line a case: through a buffer, not a write a line.
            let mut lines = std::io::BufWriter::with_capacity(64 << 10, &mut out);
            write_summary_tree(summary, style, &mut lines)?;
            lines.flush()?;
        }
    }
    out.flush()?;
    let failed = summary.failed + summary.errors;
    let message = match junit_error {
        Some(message) => message,
        None if failed > 0 => format!("{failed} of {} cases failed", summary.cases.len()),
        None => return Ok(Exit::Success),
    };
    Err(CommandError {
        exit: Exit::Failed,
        message,
    }
    .into())
}
