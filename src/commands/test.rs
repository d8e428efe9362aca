//! `orch test`: the glue between the flags and `suite`. Suites loaded, cases
//! selected and planned, providers built per config; `suite`'s runner makes the runs through
//! the same engine as `orch run`; then the summary, JUnit and the exit code.

use std::io::Write;

use anyhow::Result;

use super::resolve_format;
use super::test_summary::finish;
use crate::cli::{TestArgs, TestFormat};
use crate::exit::{CommandError, Exit};
use crate::session::{self, named_files, open_junit, TestOptions};
use crate::suite::{self, Loaded};

/// Runs `orch test`.
pub fn test(args: TestArgs) -> Result<Exit> {
    let format = resolve_format(args.format, TestFormat::Tree, TestFormat::Json);
    let args = TestOptions::from(args);
    suite::files_apart(&named_files(&args)).map_err(CommandError::usage)?;
    // Checked first: a JUnit file that cannot be written stops the suite before it runs; what
    // it holds is replaced only at the end (a refused suite leaves it as it was).
    let junit = args
        .junit
        .as_deref()
        .map(open_junit)
        .transpose()
        .map_err(CommandError::from)?;
    if !args.merge.is_empty() {
        let summary = suite::merge(&args.merge, args.pass_rate).map_err(CommandError::usage)?;
        return finish(&summary, format, args.junit.as_deref(), junit);
    }
    let filter = (args.filter.as_deref().map(suite::case_filter).transpose()).map_err(CommandError::usage)?;
    let loaded = load_suites(&args)?;
    if args.estimate {
        let estimate = session::estimate_suites(&args, filter.as_ref(), &loaded).map_err(CommandError::from)?;
        write_estimate(&estimate, format)?;
        return Ok(Exit::Success);
    }
    let ended = session::run_suites(&args, filter.as_ref(), &loaded).map_err(CommandError::from)?;
    if let Some(line) = &ended.pending {
        // Nothing on stdout, nothing written: the next invocation goes on.
        say!("{line}");
        return Ok(Exit::BatchesPending);
    }
    if let Some(exit) = ended.interrupted {
        // The summary of what finished, then the signal's exit code (130 or 143).
        let _ = finish(&ended.summary, format, args.junit.as_deref(), junit);
        let message = "interrupted; the summary holds the case runs that finished (--resume runs the rest)".into();
        return Err(CommandError { exit, message }.into());
    }
    let exit = finish(&ended.summary, format, args.junit.as_deref(), junit)?;
    match ended.unwritten.is_empty() {
        true => Ok(exit),
        false => Err(CommandError {
            exit: Exit::Failed,
            message: ended.unwritten.join("; "),
        }
        .into()),
    }
}

/// The suites and their configs; every problem of every suite is printed before the one
/// `error:` line, and nothing runs.
fn load_suites(args: &TestOptions) -> Result<Loaded, CommandError> {
    suite::load(&args.suites, args.config.as_deref(), args.success_rates.as_deref()).map_err(|refused| {
        let mut stderr = std::io::stderr().lock();
        for d in &refused.problems {
            let _ = writeln!(stderr, "{d}");
        }
        CommandError::usage(refused.message)
    })
}

/// `--estimate`'s totals: JSON, or a line of words for people.
fn write_estimate(estimate: &session::Estimate, format: TestFormat) -> Result<()> {
    let mut out = super::stdout();
    match format {
        TestFormat::Json => super::write_json(&mut out, estimate)?,
        TestFormat::Tree | TestFormat::Markdown => {
            let cost = estimate.max_cost_usd.map_or(
                "unknown (a model has no price or no output cap)".into(),
                crate::text::fmt_usd,
            );
            writeln!(
                out,
                "{} ({}): {} to {} calls, {}; at most {cost}",
                crate::text::count(estimate.cases, "case"),
                crate::text::count(estimate.runs, "run"),
                estimate.min_calls,
                estimate.max_calls,
                crate::text::count(estimate.judge_calls, "judging call"),
            )?;
        }
    }
    out.flush()?;
    Ok(())
}
