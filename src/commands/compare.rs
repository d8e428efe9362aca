//! `orch compare BASE CANDIDATE`: both results files read a line at a time, the
//! comparison printed in its format (and written to `--html`), and the exit code of
//! `--fail-on` (`significant` also fails when McNemar's test over the cases leans to
//! regressions).
//!
//! Decisions of our own: `--html` writes the page *and* the chosen format is printed
//! (as `orch test --junit` does), so one run both gates and leaves an artifact; a removed
//! or added case never fails the command (there is no base verdict to fall from); a file
//! with no case run is refused (exit 2) rather than compared as empty, so a suite that
//! never ran cannot pass the gate.

use std::io::{IsTerminal, Write};

use anyhow::Result;

use super::resolve_format;
use crate::cli::{CompareArgs, FailOn, TestFormat};
use crate::compare::{self, Comparison, Judging, Side};
use crate::exit::{CommandError, Exit};
use crate::read::is_stdin;
use crate::render::{compare_html, compare_markdown, compare_tree, mcnemar_line, write_comparison_json, Style};
use crate::suite::{files_apart, Named};

/// Compares `args.base` with `args.candidate`.
pub fn compare(args: CompareArgs) -> Result<Exit> {
    // The page written must not be a results file read: it would be destroyed.
    let named = [("BASE", &args.base, false), ("CANDIDATE", &args.candidate, false)]
        .into_iter()
        .chain(args.html.as_ref().map(|out| ("--html", out, true)))
        .map(|(flag, path, writes)| Named { flag, path, writes })
        .collect::<Vec<_>>();
    files_apart(&named).map_err(CommandError::usage)?;
    if is_stdin(&args.base) && is_stdin(&args.candidate) {
        return Err(
            CommandError::usage("standard input (`-`) can be read once: give BASE or CANDIDATE as a file").into(),
        );
    }
    let (base, candidate) = Side::read_both(&args.base, &args.candidate).map_err(CommandError::usage)?;
    let judging = Judging {
        pass_rate: args.pass_rate,
        alpha: args.alpha,
    };
    let comparison = compare::compare(base, candidate, judging);
    if let Some(out) = &args.html {
        std::fs::write(out, compare_html(&comparison))
            .map_err(|e| CommandError::usage(format!("cannot write {}: {e}", out.display())))?;
        // Say where the page went: the format asked is what stdout holds.
        say!("wrote {}", out.display());
    }
    let mut out = super::stdout();
    match resolve_format(args.format, TestFormat::Tree, TestFormat::Json) {
        TestFormat::Json => write_comparison_json(&mut out, &comparison)?,
        TestFormat::Markdown => out.write_all(compare_markdown(&comparison).as_bytes())?,
        TestFormat::Tree => {
            let style = Style::detect(std::io::stdout().is_terminal());
            writeln!(out, "{}", compare_tree(&comparison, style))?;
        }
    }
    out.flush()?;
    gate(&comparison, args.fail_on)
}

/// The exit of `--fail-on`: 1 with a line saying which regressions failed it, else 0.
fn gate(comparison: &Comparison, fail_on: FailOn) -> Result<Exit> {
    let all = comparison.regressions(false);
    let significant = comparison.regressions(true);
    let message = match fail_on {
        FailOn::Regression if all > 0 => format!(
            "{all} of {} cases regressed ({significant} significant at alpha {})",
            comparison.cases.len(),
            comparison.alpha
        ),
        FailOn::Significant if significant > 0 => format!(
            "{significant} of {} cases regressed significantly (p < {})",
            comparison.cases.len(),
            comparison.alpha
        ),
        FailOn::Significant if comparison.mcnemar.significant_regression(comparison.alpha) => {
            format!("{} (p < {})", mcnemar_line(&comparison.mcnemar), comparison.alpha)
        }
        _ => return Ok(Exit::Success),
    };
    Err(CommandError::failed(message).into())
}
