//! `orch test` (SPEC §10): the glue between the flags and `suite`. Suites loaded, cases
//! selected and planned, providers built per config; `suite`'s runner makes the runs through
//! the same engine as `orch run`; then the summary, JUnit and the exit code.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Result;

use super::progress::CaseRuns;
use super::setup::{self, CaseEngines};
use super::{providers, resolve_format};
use crate::cli::{TestArgs, TestFormat};
use crate::exit::{CommandError, Exit};
use crate::plan::Plan;
use crate::report::tree::Style;
use crate::sink::LineFile;
use crate::suite::load::{self, Loaded};
use crate::suite::outputs::{self, Named, Pending};
use crate::suite::results::{self, Resumed, Summary};
use crate::suite::runner::{self, Runner};
use crate::suite::selection::{self, Runs};
use crate::suite::{junit, order, target};

/// Runs `orch test`.
pub fn test(args: TestArgs) -> Result<Exit> {
    outputs::apart(&named_files(&args)).map_err(CommandError::usage)?;
    // Checked first: a JUnit file that cannot be written stops the suite before it runs; what
    // it holds is replaced only at the end (a refused suite leaves it as it was).
    let junit = args.junit.as_deref().map(open_junit).transpose()?;
    if !args.merge.is_empty() {
        let mut records = results::read(&args.merge).map_err(CommandError::usage)?;
        order::by_name(&mut records);
        return finish(&results::summarize(&records, args.pass_rate, 0), &args, junit);
    }
    let ended = run_suites(&args)?;
    if let Some(exit) = ended.interrupted {
        // The summary of what finished, then the signal's exit code (130 or 143).
        let _ = finish(&ended.summary, &args, junit);
        let message = "interrupted; the summary holds the case runs that finished (--resume runs the rest)".into();
        return Err(CommandError { exit, message }.into());
    }
    let exit = finish(&ended.summary, &args, junit)?;
    match ended.unwritten.is_empty() {
        true => Ok(exit),
        false => Err(CommandError {
            exit: Exit::Failed,
            message: ended.unwritten.join("; "),
        }
        .into()),
    }
}

/// How the runs of the suites ended.
struct Ended {
    /// In suite order: every run of the results file when resuming, else this process's.
    summary: Summary,
    /// The signal's exit code, if one stopped the runs.
    interrupted: Option<Exit>,
    /// Why an output file (`--results`, `--record`) could not be written.
    unwritten: Vec<String>,
}

/// Loads, selects, plans and runs the suites' cases.
fn run_suites(args: &TestArgs) -> Result<Ended> {
    let filter = (args.filter.as_deref().map(selection::filter).transpose()).map_err(CommandError::usage)?;
    let loaded = load_suites(args)?;
    for config in loaded.configs.values() {
        setup::known_provider(config, &args.replies)?;
    }
    let resumed = args.resume.as_deref().map(resumed).transpose()?.unwrap_or_default();
    let chosen = selection::select(&loaded.suites, args.shard, filter.as_ref());
    let plans: Vec<Result<Plan, String>> = (chosen.cases.iter())
        .map(|(i, case)| runner::plan_of(&loaded.configs[&loaded.roots[*i]], case))
        .collect::<Result<_, _>>()
        .map_err(CommandError::usage)?;
    let exporter = setup::exporter(&args.replies)?;
    let mut recording = None;
    let targets = target::targets(&loaded, &chosen.cases, &plans, |config, plans| {
        let (built, opened) = providers::build(config, plans, &args.replies, recording.clone())?;
        recording = recording.take().or(opened);
        Ok::<_, CommandError>(built)
    })?;
    let out_file = results_file(args, &resumed)?;
    let runs = Runs {
        suites: &loaded.suites,
        plans: &plans,
        targets: loaded.roots.iter().map(|root| &targets[root]).collect(),
        repeat: args.repeat,
        done: &resumed.records,
    };
    let jobs = chosen.jobs(&runs);
    let runtime = setup::runtime()?;
    let bar = CaseRuns::new(jobs.len(), args.quiet);
    let runner = Runner {
        engine: &CaseEngines {
            seed: args.replies.seed,
        },
        jobs: args.jobs as usize,
        gate: runner::gate(targets.values()),
        results: out_file.as_ref(),
        shard: args.shard,
        finished: &|record| bar.finished(record),
    };
    let (mut records, interrupted) = runtime.block_on(async { runner.run(&jobs, setup::interruption()).await });
    bar.clear();
    drop(runtime);
    setup::export_traces(exporter);
    if let Some(path) = &args.resume {
        records = results::resume(path).map_err(CommandError::usage)?.records;
    }
    order::in_suite_order(&mut records, &loaded.suites);
    let files = [out_file.as_ref(), recording.as_deref()];
    Ok(Ended {
        summary: results::summarize(&records, args.pass_rate, chosen.skipped),
        interrupted,
        unwritten: files
            .into_iter()
            .flatten()
            .filter_map(LineFile::error)
            .map(String::from)
            .collect(),
    })
}

/// The suites and their configs; every problem of every suite is printed before the one
/// `error:` line, and nothing runs.
fn load_suites(args: &TestArgs) -> Result<Loaded, CommandError> {
    load::load(&args.suites, args.config.as_deref()).map_err(|refused| {
        let mut stderr = std::io::stderr().lock();
        for d in &refused.problems {
            let _ = writeln!(stderr, "{d}");
        }
        CommandError::usage(refused.message)
    })
}

/// `--resume`'s file (appended after its last whole line) or `--results`'s, if given.
fn results_file(args: &TestArgs, resumed: &Resumed) -> Result<Option<LineFile>, CommandError> {
    let file = match (&args.resume, &args.results) {
        (Some(path), _) => results::append_after(path, resumed.torn),
        (None, Some(path)) => LineFile::append(path, "results"),
        (None, None) => return Ok(None),
    };
    file.map(Some).map_err(CommandError::usage)
}

/// `--junit`, checked writable before anything runs.
fn open_junit(path: &Path) -> Result<Pending, CommandError> {
    Pending::open(path).map_err(|e| CommandError::usage(format!("cannot write JUnit to {}: {e}", path.display())))
}

/// What the `--resume` file holds; a last line cut short (a run killed mid-line) is a
/// warning, and its case run runs again.
fn resumed(path: &Path) -> Result<Resumed, CommandError> {
    let resumed = results::resume(path).map_err(CommandError::usage)?;
    if let Some(at) = resumed.torn {
        let _ = writeln!(
            std::io::stderr(),
            "warning: {}:{}: the last line was cut short (a run killed while writing it); it is ignored and its case run runs again",
            crate::text::printable(&path.display().to_string()),
            at.number
        );
    }
    Ok(resumed)
}

/// Every file `orch test` is given, and whether it writes it.
fn named_files(args: &TestArgs) -> Vec<Named<'_>> {
    let replies = &args.replies;
    let inputs = (args.suites.iter().map(|p| ("SUITE", p))).chain(args.merge.iter().map(|p| ("--merge", p)));
    let mut files: Vec<Named> = inputs
        .map(|(flag, path)| Named {
            flag,
            path,
            writes: false,
        })
        .collect();
    let single = [
        ("--replay", &replies.replay, false),
        ("--record", &replies.record, true),
        ("--cache", &replies.cache, true),
        ("--resume", &args.resume, true),
        ("--results", &args.results, true),
        ("--junit", &args.junit, true),
    ];
    files.extend(single.into_iter().filter_map(|(flag, path, writes)| {
        Some(Named {
            flag,
            path: path.as_ref()?,
            writes,
        })
    }));
    files
}

/// Prints the summary, writes `--junit`, and says how it went. A JUnit file that fails to
/// take its text is an error after the summary (exit 1).
fn finish(summary: &Summary, args: &TestArgs, junit: Option<Pending>) -> Result<Exit> {
    let junit_error = junit.and_then(|file| {
        let path = args
            .junit
            .as_deref()
            .map_or_else(String::new, |p| p.display().to_string());
        let written = file.write(&junit::render(summary));
        written.err().map(|e| format!("cannot write JUnit to {path}: {e}"))
    });
    let mut out = super::stdout();
    match resolve_format(args.format, TestFormat::Tree, TestFormat::Json) {
        TestFormat::Json => super::write_json(&mut out, summary)?,
        TestFormat::Markdown => out.write_all(crate::pictures::markdown::suite(summary).as_bytes())?,
        TestFormat::Tree => {
            let style = Style::detect(std::io::stdout().is_terminal());
            writeln!(out, "{}", crate::suite::tree::summary_tree(summary, style))?;
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
