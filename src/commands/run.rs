//! `orch run`: the config and the plan, a session that runs them, the report printed and
//! mapped to an exit code.

use std::io::{IsTerminal, Write};

use anyhow::Result;

use super::resolve_format;
use crate::cli::{RunArgs, RunFormat};
use crate::config::Config;
use crate::exit::{CommandError, Exit, Hint};
use crate::record::Journal;
use crate::render::{write_run_tree, Style};
use crate::report::Report;
use crate::session::{self, exit_for, make_plan, waiting, why_not_success, ApprovalMode, RunOptions};

/// Runs the request and prints the report.
pub fn run(mut args: RunArgs) -> Result<Exit> {
    args.choose_streaming().map_err(CommandError::usage)?;
    let format = resolve_format(args.format, RunFormat::Tree, RunFormat::Json);
    let options = RunOptions::from(args);
    let prompt = super::read_prompt(&options.plan.prompt)?;
    let mode = session::approval_mode(options.approvals, options.plan.prompt == "-", options.journal.is_some())
        .map_err(CommandError::from)?;
    execute(options, format, prompt, mode, None)
}

/// Runs `prompt` as `args` say, its report printed in `format`, its gated steps decided in
/// `mode`; `resumed` is the journal a resume read (`args.journal` names its file), whose
/// finished calls answer again.
pub(super) fn execute(
    mut args: RunOptions,
    format: RunFormat,
    prompt: String,
    mode: ApprovalMode,
    resumed: Option<Journal>,
) -> Result<Exit> {
    let mut config = session::run_config(&args).map_err(CommandError::from)?;
    session::assign_variants(&mut config, &prompt, &args.plan.variants).map_err(CommandError::from)?;
    args.plan.previous = session::previous_turn(args.session.as_deref()).map_err(CommandError::from)?;
    session::known_provider(&config, &args.replies).map_err(CommandError::from)?;
    let plan = planned(&config, &prompt, &args, format)?;
    let ran = session::run(config, &plan, &prompt, &args, mode, resumed).map_err(CommandError::from)?;
    let printed = match &ran.streamed {
        Some(streamed) => print_rest(&ran.report, streamed),
        None => print_report(&ran.report, format),
    };
    outcome(&ran.report, &args, printed, ran.signal, ran.unwritten)
}

/// Prints what the streamed answer did not show of the report's answer, after all it did.
fn print_rest(report: &Report, streamed: &session::StreamedAnswer) -> Result<()> {
    let rest = streamed.rest_of(report).map_err(super::named)?;
    let mut out = super::stdout();
    out.write_all(rest.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The run's plan. When the master fails (nothing matched, no fallback) it never retries,
/// but the report is still printed so scripts see `status: failed` and the reason.
fn planned(config: &Config, prompt: &str, args: &RunOptions, format: RunFormat) -> Result<crate::plan::Plan> {
    match make_plan(config, prompt, &args.plan).map_err(CommandError::from) {
        Ok(plan) => Ok(plan),
        Err(e) if e.exit == Exit::Failed => {
            print_report(&Report::master_failed(prompt, &e.message), format)?;
            Err(anyhow::Error::from(e).context(Hint(crate::plan::NO_MATCH_HINT.into())))
        }
        Err(e) => Err(e.into()),
    }
}

/// Prints the report and says how the run went: its exit code, and on stderr why it is not
/// a success (`signal`: the signal that stopped it; `unwritten`: output files that failed).
fn outcome(
    report: &Report,
    args: &RunOptions,
    printed: Result<()>,
    signal: Option<Exit>,
    unwritten: Vec<String>,
) -> Result<Exit> {
    // The exit code tells how the run went even when nobody reads the report to the end.
    if let Err(e) = printed {
        if !crate::exit::is_broken_pipe(&e) {
            return Err(e);
        }
    }
    // Said even with --quiet: without it a head's fixed score reads as a grade.
    for warning in crate::report::ungraded_warnings(report) {
        say!("warning: {}", crate::text::printable(&warning));
    }
    let mut exit = exit_for(report, args.min_quality);
    if report.status == crate::report::RunStatus::NeedsInput {
        let message = crate::session::needs_input(report, args.journal.as_deref());
        return Err(CommandError { exit, message }.into());
    }
    if exit == Exit::Paused {
        let file = args
            .journal
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        return Err(CommandError {
            exit,
            message: format!(
                "{}; list them with `orch approve {file}`, decide with `orch approve {file} ID…|--all [--deny]`, then `orch resume {file}`",
                waiting(report)
            ),
        }
        .into());
    }
    if exit == Exit::Interrupted && signal == Some(Exit::Terminated) {
        exit = Exit::Terminated;
    }
    // An output file that could not be written is not a success either.
    let why = why_not_success(report, exit, args.min_quality)
        .into_iter()
        .chain(unwritten)
        .collect::<Vec<_>>();
    if exit == Exit::Success && !why.is_empty() {
        exit = Exit::Failed;
    }
    // A router that chose nothing, with nothing the keywords matched: what to change.
    let unmatched = report.error.as_deref() == Some(&crate::plan::RoutingError::NoMatch.to_string());
    match why.is_empty() {
        // Every non-zero exit says why on stderr, after the report on stdout.
        false => {
            let error = anyhow::Error::from(CommandError {
                exit,
                message: why.join("; "),
            });
            match unmatched {
                true => Err(error.context(Hint(crate::plan::NO_MATCH_HINT.into()))),
                false => Err(error),
            }
        }
        true => Ok(exit),
    }
}

/// Prints a run's report in `format`: the JSON, the tree then the answer,
/// the Markdown summary, or the answer alone (nothing when the run has none).
pub(super) fn print_report(report: &Report, format: RunFormat) -> Result<()> {
    let mut out = super::stdout();
    let terminal = std::io::stdout().is_terminal();
    match format {
        RunFormat::Json => {
            super::write_json(&mut out, report)?;
        }
        RunFormat::Tree => write_run_tree(report, Style::detect(terminal), &mut out)?,
        RunFormat::Markdown => out.write_all(crate::render::markdown_run(report).as_bytes())?,
        RunFormat::Text => {
            if let Some(answer) = crate::report::answer(report) {
                // Newlines and tabs as written; every other control character escaped, on a
                // pipe too: a file of the answer is shown on a terminal later.
                out.write_all(crate::text::printable_text(&answer).as_bytes())?;
            }
        }
    }
    out.flush()?;
    Ok(())
}
