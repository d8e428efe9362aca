//! `orch run`: plan, execute, print the report, and map it to an exit code.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use super::progress::Progress;
use super::setup;
use super::{load_config, make_plan, read_prompt, resolve_format};
use crate::cli::{ApprovalMode, RunArgs, RunFormat};
use crate::config::Config;
use crate::engine::{self, Engine, EngineParts};
use crate::exit::{CommandError, Exit, Hint};
use crate::grade::Schemas;
use crate::provider::{Journal, JournalProvider, JournalTools, Providers};
use crate::render::{write_run_tree, Style};
use crate::report::{DepartmentStatus, EventLog, Observer, Observers, Report, RunStatus};
use crate::sink::LineFile;
use crate::tools::ToolHost;

/// Runs the request and prints the report.
pub fn run(args: RunArgs) -> Result<Exit> {
    let prompt = read_prompt(&args.plan.prompt)?;
    let mode = super::approvals::mode(args.approvals, args.plan.prompt == "-", args.journal.is_some())?;
    execute(args, prompt, mode, None)
}

/// Runs `prompt` as `args` say, its gated steps decided in `mode`; `resumed` is the journal
/// a resume read (`args.journal` names its file), whose finished calls answer again.
pub(super) fn execute(args: RunArgs, prompt: String, mode: ApprovalMode, resumed: Option<Journal>) -> Result<Exit> {
    let config = configured(&args)?;
    setup::known_provider(&config, &args.replies)?;
    let options = super::plan_options(&config, &args.plan);
    let plan = planned(&config, &prompt, &args)?;
    let settings = settings_files(&config.root);
    crate::suite::files_apart(&named_files(&args, &settings)).map_err(CommandError::usage)?;
    // Checked before any file is opened; started before the runtime (the exporter runs on
    // a thread of its own).
    let exporter = setup::exporter(&args.replies)?;
    let mut built = super::providers::build(&config, &[&plan], &args.replies, None)?;
    // Opened after every check before a call: a refused run leaves no journal behind.
    let journal = super::journal::open(&args, &prompt, resumed)?;
    if let Some(j) = &journal {
        built.providers = journaled(built.providers, &config, j);
    }
    let config = Arc::new(config);
    let run_id = crate::text::new_id("run");
    // The prompt owns the terminal: no progress bars drawn over its questions.
    let quiet = args.quiet || mode == ApprovalMode::Prompt;
    let (observers, events) = observers(&args, &run_id, quiet)?;

    let runtime = setup::runtime()?;
    // The handlers are installed here, before the servers start and before the first call:
    // a signal never meets the default.
    let mut signalled = {
        let _entered = runtime.enter();
        Box::pin(setup::interruption())
    };
    let agents = setup::tool_agents(&config, &[&plan]);
    let servers = runtime.block_on(setup::start_tools(&config, &agents, &args.replies, signalled.as_mut()))?;
    let engine = Engine::new(EngineParts {
        run_id,
        config: config.clone(),
        schemas: Arc::new(Schemas::of(&config)),
        providers: built.providers.clone(),
        budget: setup::budget(&config),
        observer: Box::new(observers),
        seed: args.replies.seed,
        tools: built
            .tool_host(servers.as_ref())
            .map(|host| journaled_tools(host, journal.as_ref(), super::providers::result_budget(&config))),
    })
    .with_approver(super::approvals::approver(
        mode,
        journal.as_ref().map(|j| (j.file.clone(), &j.read)),
    ));
    let signal = std::sync::OnceLock::new();
    let report = runtime.block_on(async {
        let interrupt = async {
            let _ = signal.set(signalled.await);
        };
        let report = engine::run_request(&engine, &prompt, options, interrupt).await;
        // Stopped at the end of the run, also when a signal ended it.
        setup::stop_tools(servers.as_deref()).await;
        report
    });
    // Stops the progress bars (and closes the events file) before the report is printed.
    drop(engine);
    // A schema check the deadline abandoned may still be running: it is not waited for.
    runtime.shutdown_background();
    setup::export_traces(exporter);

    let written = journal.as_ref().map(|j| j.file.clone());
    let unwritten = [&events, &built.recording, &written]
        .into_iter()
        .flatten()
        .filter_map(|f| f.error().map(String::from));
    outcome(&report, &args, signal.get().copied(), unwritten.collect())
}

/// The run's plan. When the master fails (nothing matched, no fallback) it never retries,
/// but the report is still printed so scripts see `status: failed` and the reason.
fn planned(config: &Config, prompt: &str, args: &RunArgs) -> Result<crate::plan::Plan> {
    match make_plan(config, prompt, &args.plan) {
        Ok(plan) => Ok(plan),
        Err(e) if e.exit == Exit::Failed => {
            print_report(&Report::master_failed(prompt, &e.message), format(args))?;
            Err(anyhow::Error::from(e).context(Hint(crate::plan::NO_MATCH_HINT.into())))
        }
        Err(e) => Err(e.into()),
    }
}

/// The providers of a run with a journal: each answers from it, and appends to it.
fn journaled(providers: Providers, config: &Config, journal: &super::journal::Opened) -> Providers {
    providers.wrapped(|name, inner| {
        let kind = config
            .settings
            .providers
            .get(name)
            .map_or(crate::config::ProviderKind::Simulated, |p| p.kind);
        Arc::new(JournalProvider::new(
            inner,
            kind,
            journal.read.tape.clone(),
            journal.file.clone(),
        ))
    })
}

/// The tool host of a run, journaled when it has a journal (results kept cut at `max`).
fn journaled_tools(host: Arc<dyn ToolHost>, journal: Option<&super::journal::Opened>, max: usize) -> Arc<dyn ToolHost> {
    match journal {
        Some(j) => Arc::new(JournalTools::new(host, &j.read, j.file.clone(), max)),
        None => host,
    }
}

/// The config, with `--max-calls`, `--concurrency` and `--deadline` over its limits.
fn configured(args: &RunArgs) -> Result<Config, CommandError> {
    let mut config = load_config(&args.plan)?;
    let limits = &mut config.settings.limits;
    if let Some(n) = args.max_calls {
        limits.max_calls = n;
    }
    if let Some(n) = args.concurrency {
        limits.max_concurrency = n;
    }
    if let Some(d) = args.deadline {
        limits.deadline = d;
    }
    Ok(config)
}

/// The files `run` reads and writes: no file it writes may be another it names (events
/// into the cassette, or over the settings file it just read).
fn named_files<'a>(args: &'a RunArgs, settings: &'a [PathBuf]) -> Vec<crate::suite::Named<'a>> {
    let replies = &args.replies;
    let files = [
        ("--replay", replies.replay.as_deref(), false),
        ("--record", replies.record.as_deref(), true),
        ("--cache", replies.cache.as_deref(), true),
        ("--events", args.events.as_deref(), true),
        ("--journal", args.journal.as_deref(), true),
    ];
    files
        .into_iter()
        .filter_map(|(flag, path, writes)| {
            Some(crate::suite::Named {
                flag,
                path: path?,
                writes,
            })
        })
        .chain(settings.iter().map(|path| crate::suite::Named {
            flag: "--config",
            path,
            writes: false,
        }))
        .collect()
}

/// The settings file of a config root: the root itself when it is a file, else its
/// `orch.toml` / `orch.yaml`.
fn settings_files(root: &std::path::Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    [root.join("orch.toml"), root.join("orch.yaml")]
        .into_iter()
        .filter(|p| p.is_file())
        .collect()
}

/// Who hears the run's events: `--events`' file (returned too, to check it was written) and
/// the progress bars on a terminal unless `--quiet`.
fn observers(args: &RunArgs, run_id: &str, quiet: bool) -> Result<(Observers, Option<Arc<LineFile>>), CommandError> {
    let mut observers: Vec<Box<dyn Observer>> = Vec::new();
    let events = match &args.events {
        Some(path) => Some(Arc::new(LineFile::create(path, "events").map_err(CommandError::usage)?)),
        None => None,
    };
    if let Some(out) = &events {
        observers.push(Box::new(EventLog::new(run_id, out.clone())));
    }
    if std::io::stderr().is_terminal() && !quiet {
        observers.push(Box::new(Progress::stderr()));
    }
    Ok((Observers(observers), events))
}

/// Prints the report and says how the run went: its exit code, and on stderr why it is not
/// a success (`signal`: the signal that stopped it; `unwritten`: output files that failed).
fn outcome(report: &Report, args: &RunArgs, signal: Option<Exit>, unwritten: Vec<String>) -> Result<Exit> {
    // The exit code tells how the run went even when nobody reads the report to the end.
    if let Err(e) = print_report(report, format(args)) {
        if !crate::exit::is_broken_pipe(&e) {
            return Err(e);
        }
    }
    let mut exit = exit_for(report, args.min_quality);
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

/// The one `error:` line of a run that did not succeed.
pub(super) fn why_not_success(report: &Report, exit: Exit, min_quality: Option<f64>) -> Option<String> {
    match exit {
        Exit::Success => None,
        Exit::Interrupted | Exit::Terminated => Some("interrupted; the report holds what finished".into()),
        Exit::Failed => Some(
            report
                .error
                .clone()
                .unwrap_or_else(|| "unable to generate: every department failed".into()),
        ),
        Exit::Partial => {
            let not_ok = report
                .departments
                .iter()
                .filter(|d| d.status != DepartmentStatus::Success)
                .count();
            Some(match not_ok {
                // Every department succeeded: the run cut the master's summary.
                0 => "partial run: the master's summary was not written (see the report)".to_string(),
                n => format!(
                    "partial run: {n} of {} departments failed or were skipped (see the report)",
                    report.departments.len()
                ),
            })
        }
        Exit::BelowMinQuality => Some(format!(
            "overallQuality {} is below --min-quality {}",
            crate::text::fmt_score(report.overall_quality),
            crate::text::fmt_score(min_quality.unwrap_or_default())
        )),
        Exit::Paused => Some(waiting(report)),
        Exit::Usage => None,
    }
}

/// How many items a paused run left waiting: "paused: 1 item waits for a decision".
fn waiting(report: &Report) -> String {
    let n = report.pending.len();
    let verb = if n == 1 { "waits" } else { "wait" };
    format!("paused: {} {verb} for a decision", crate::text::count(n, "item"))
}

/// The exit code of a finished run: interrupted 130, failed 1, partial 4, paused 5, below
/// `--min-quality` 3, else 0 (a partial run is reported as partial even when its quality is low).
pub(super) fn exit_for(report: &Report, min_quality: Option<f64>) -> Exit {
    if report.metadata.interrupted {
        return Exit::Interrupted;
    }
    match report.status {
        RunStatus::Failed => Exit::Failed,
        RunStatus::Partial => Exit::Partial,
        RunStatus::Paused => Exit::Paused,
        RunStatus::Success if min_quality.is_some_and(|m| report.overall_quality < m) => Exit::BelowMinQuality,
        RunStatus::Success => Exit::Success,
    }
}

/// `--format`, else tree on a terminal and JSON otherwise.
fn format(args: &RunArgs) -> RunFormat {
    resolve_format(args.format, RunFormat::Tree, RunFormat::Json)
}

/// Prints a run's report in `format` (SPEC §14, §27): the JSON, the tree then the answer,
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
