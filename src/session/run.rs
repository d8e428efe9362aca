//! One run, start to end: its files kept apart, the trace exporter, the tapes and the
//! journal opened, the providers built and wrapped, the observers, the runtime and the
//! signal handlers, the tool servers, the engine; then the servers stopped, the traces
//! flushed and the files that could not be written named.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use super::options::{ApprovalMode, ProgressFormat, RunOptions};
use crate::config::Config;
use crate::engine::{self, AnswerCalls, AnswerStream, Engine, EngineParts};
use crate::exit::Exit;
use crate::grade::Schemas;
use crate::plan::Plan;
use crate::record::{open_journal, Journal, Opened};
use crate::report::{EventLog, Observer, Observers, Report};
use crate::sink::LineFile;

use super::progress::Progress;
use super::progress_lines::ProgressLines;
use super::streamed::StreamedAnswer;
use super::{answers, approvals, conversation, plan_options, providers, setup, JournaledRun, SessionError};

/// How a run ended: its report, the signal that stopped it, and why output files failed.
pub struct Ran {
    /// The report.
    pub report: Report,
    /// The signal that stopped it, if one did.
    pub signal: Option<Exit>,
    /// Why each output file that failed (events, cassette, journal) could not be written.
    pub unwritten: Vec<String>,
    /// The answer as it was streamed to stdout (`--stream`), to print what it did not show.
    pub streamed: Option<Arc<StreamedAnswer>>,
}

/// Runs `prompt` on `config` along `plan`, as `args` say, its gated steps decided in
/// `mode`; `resumed` is the journal a resume read (`args.journal` names its file), whose
/// finished calls answer again. For a process that ends after it (`orch run`, `orch
/// resume`): its runtime is left to the kernel, never torn down.
pub fn run(
    config: Config,
    plan: &Plan,
    prompt: &str,
    args: &RunOptions,
    mode: ApprovalMode,
    resumed: Option<Journal>,
) -> Result<Ran, SessionError> {
    let options = plan_options(&config, &args.plan);
    let settings = settings_files(&config.root);
    crate::suite::files_apart(&named_files(args, &settings)).map_err(|e| SessionError::refused(e.to_string()))?;
    // Checked before any file is opened; started before the runtime (the exporter runs on
    // a thread of its own).
    let exporter = setup::exporter(&args.replies)?;
    let tapes = providers::tapes(&config, &[plan], &args.replies, None)?;
    // Opened after every check before a call: a refused run leaves no journal behind.
    let journal = journal(args, prompt, resumed)?;
    let providers = tapes.providers(&config, &args.replies, journal.as_ref())?;
    let config = Arc::new(config);
    let run_id = crate::text::new_id("run");
    let (observers, events, streamed) = watchers(&config, plan, args, &run_id, mode)?;

    let runtime = setup::runtime()?;
    let mut signalled = setup::signals(&runtime);
    let started = tokio::time::Instant::now();
    let tools = setup::run_servers(&config, plan, &options);
    let servers = runtime.block_on(setup::start_tools(&config, tools, &args.replies, signalled.as_mut()))?;
    let engine = Engine::new(EngineParts {
        run_id,
        config: config.clone(),
        schemas: Arc::new(Schemas::of(&config)),
        providers,
        budget: setup::budget(&config),
        observer: Box::new(observers),
        seed: args.replies.seed,
        tools: tapes.tool_host(servers.as_ref(), journal.as_ref()),
    })
    .since(started)
    .with_approver(approvals::approver(mode, journal.as_ref()))
    .with_answerer(answers::answerer(mode, &args.answers))
    .with_answer_stream(streamed.as_ref().map(|(stream, _)| stream.clone()));
    let signal = std::sync::OnceLock::new();
    let report = runtime.block_on(async {
        let interrupt = async {
            let _ = signal.set(signalled.await);
        };
        let report = engine::run_request(&engine, prompt, options, interrupt).await;
        // Stopped at the end of the run, also when a signal ended it.
        setup::stop_tools(servers.as_deref()).await;
        report
    });
    // Stops the progress bars (and closes the events file) before the report is printed.
    drop(engine);
    // Not torn down: the process ends after the report, so the kernel closes its hundreds of
    // idle connections at exit, and an abandoned schema check is not waited for.
    std::mem::forget(runtime);
    setup::run_over(exporter);

    let mut report = report;
    let turn = args
        .session
        .as_deref()
        .and_then(|file| conversation::record(file, &args.plan, &mut report));
    let written = journal.as_ref().map(|j| j.file.clone());
    let unwritten = [&events, &tapes.recording, &written]
        .into_iter()
        .flatten()
        .filter_map(|f| f.error().map(String::from))
        .chain(turn);
    Ok(Ran {
        report,
        signal: signal.get().copied(),
        unwritten: unwritten.collect(),
        streamed: streamed.map(|(_, answer)| answer),
    })
}

/// Opens `--journal`, if given: a new one begins with the run's line (its request, config
/// root and options); a resumed one is appended to.
fn journal(args: &RunOptions, prompt: &str, resumed: Option<Journal>) -> Result<Option<Opened>, SessionError> {
    let Some(path) = &args.journal else { return Ok(None) };
    let root = crate::config::locate_root(args.plan.config.as_deref());
    let root = std::path::absolute(&root).unwrap_or(root);
    let options = serde_json::to_value(JournaledRun::of(args)).unwrap_or_default();
    Ok(Some(open_journal(path, prompt, &root, options, resumed)?))
}

/// The files `run` reads and writes: no file it writes may be another it names (events
/// into the cassette, or over the settings file it just read).
fn named_files<'a>(args: &'a RunOptions, settings: &'a [PathBuf]) -> Vec<crate::suite::Named<'a>> {
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

/// The answer's stream given to the engine, and what stdout showed of it.
type Streaming = (AnswerStream, Arc<StreamedAnswer>);

/// The run's observers, its events file, and its answer's stream.
type Watchers = (Observers, Option<Arc<LineFile>>, Option<Streaming>);

/// Who watches the run: its observers, its events file, and the answer streamed to stdout.
fn watchers(
    config: &Config,
    plan: &Plan,
    args: &RunOptions,
    run_id: &str,
    mode: ApprovalMode,
) -> Result<Watchers, SessionError> {
    // The prompt owns the terminal: no progress bars drawn over its questions.
    let quiet = args.quiet || mode == ApprovalMode::Prompt;
    let limits = &config.settings.limits;
    let (observers, events, bars) = observers(args, run_id, quiet, (limits.max_cost_usd, limits.deadline))?;
    Ok((observers, events, answer_stream(config, plan, args, bars)))
}

/// The answer streamed to stdout, when `args.stream` asks for it (never under `--replay`,
/// whose replies come at once): the calls that write it stream to a [`StreamedAnswer`],
/// which clears the progress `bars` before its first piece.
fn answer_stream(config: &Config, plan: &Plan, args: &RunOptions, bars: Option<Arc<Progress>>) -> Option<Streaming> {
    if !args.stream || args.replies.replay.is_some() {
        return None;
    }
    let calls = AnswerCalls::of(config, plan);
    let before_first: Box<dyn Fn() + Send + Sync> = match bars {
        Some(bars) => Box::new(move || bars.make_way()),
        None => Box::new(|| {}),
    };
    let answer = Arc::new(StreamedAnswer::new(calls.heading(), before_first));
    let stream = AnswerStream {
        listener: answer.clone(),
        calls,
    };
    Some((stream, answer))
}

/// The run's observers, its events file, and its progress bars.
type Observed = (Observers, Option<Arc<LineFile>>, Option<Arc<Progress>>);

/// Who hears the run's events: `--events`' file (returned too, to check it was written) and
/// the progress on stderr unless `quiet`: JSON lines with `--progress jsonl`, else bars on a
/// terminal, whose run line shows `maxCostUsd` and the deadline (the bars are returned too,
/// to make way for a streamed answer).
fn observers(
    args: &RunOptions,
    run_id: &str,
    quiet: bool,
    (max_cost_usd, deadline): (f64, f64),
) -> Result<Observed, SessionError> {
    let mut observers: Vec<Box<dyn Observer>> = Vec::new();
    let events = match &args.events {
        Some(path) => Some(Arc::new(
            LineFile::create(path, "events").map_err(SessionError::refused)?,
        )),
        None => None,
    };
    if let Some(out) = &events {
        observers.push(Box::new(EventLog::new(run_id, out.clone())));
    }
    let mut bars = None;
    if args.progress == Some(ProgressFormat::Jsonl) && !quiet {
        observers.push(Box::new(ProgressLines::new()));
    } else if std::io::stderr().is_terminal() && !quiet {
        let progress = Arc::new(Progress::stderr(max_cost_usd, deadline));
        observers.push(Box::new(progress.clone()));
        bars = Some(progress);
    }
    Ok((Observers(observers), events, bars))
}
