//! `orch test` (SPEC §10): suites of cases, each a full run through the same engine as
//! `orch run`, `--jobs` at a time in one process sharing one provider pool and one gate on
//! calls in flight; results streamed as each run finishes (nothing kept but a line), then
//! the summary, JUnit and the exit code.

use std::collections::{HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use futures::StreamExt;
use regex::Regex;
use tokio::sync::Semaphore;

use super::providers;
use super::resolve_format;
use crate::cli::{TestArgs, TestFormat};
use crate::config::{self, load::locate_root, Config};
use crate::engine::{self, Budget, Engine, EngineParts};
use crate::exit::{CommandError, Exit};
use crate::grade::schema::Schemas;
use crate::plan::{self, Plan, PlanOptions, RouterStep, RoutingError};
use crate::provider::Providers;
use crate::report::events::Observers;
use crate::report::run::Report;
use crate::report::tree::Style;
use crate::sink::LineFile;
use crate::suite::file::Unchecked;
use crate::suite::outputs::{self, Named, Pending};
use crate::suite::results::{self, Line, Record, Resumed, Summary};
use crate::suite::{expect, junit, Case, Suite};

/// One config the suites run on, with the providers built for it.
struct Target {
    config: Arc<Config>,
    /// Its output schemas, compiled once for every case.
    schemas: Arc<Schemas>,
    providers: Providers,
}

/// One run to make: a case of a suite, and which of its repeats.
struct Job<'a> {
    suite: &'a Suite,
    case: &'a Case,
    target: &'a Target,
    plan: &'a Result<Plan, String>,
    repeat: u32,
}

/// Runs `orch test`.
pub fn test(args: TestArgs) -> Result<Exit> {
    outputs::apart(&named_files(&args)).map_err(CommandError::usage)?;
    // Checked first: a JUnit file that cannot be written stops the suite before it runs; what
    // it holds is replaced only at the end (a refused suite leaves it as it was).
    let junit = match &args.junit {
        Some(path) => Some(
            Pending::open(path)
                .map_err(|e| CommandError::usage(format!("cannot write JUnit to {}: {e}", path.display())))?,
        ),
        None => None,
    };
    if !args.merge.is_empty() {
        // Shards' files hold runs in the order they finished: the summary sorts them.
        let mut records = results::read(&args.merge).map_err(CommandError::usage)?;
        records.sort_by(|a, b| (&a.suite, &a.case_id, a.repeat).cmp(&(&b.suite, &b.case_id, b.repeat)));
        let summary = results::summarize(&records, args.pass_rate, 0);
        return finish(&summary, &args, junit);
    }
    let filter = match &args.filter {
        Some(f) => Some(Regex::new(f).map_err(|e| {
            CommandError::usage(format!(
                "--filter `{f}` is not a regular expression: {}",
                e.to_string().lines().last().unwrap_or("").trim_start_matches("error: ")
            ))
        })?),
        None => None,
    };
    let (suites, roots, configs) = load(&args)?;

    if let Some(p) = &args.replies.provider {
        for config in configs.values() {
            if !config.settings.providers.contains_key(p) {
                let known = config.settings.providers.keys().map(String::as_str);
                let hint = crate::config::diagnostic::suggestion(p, known);
                return Err(CommandError::usage(format!("unknown provider `{p}`{hint}")).into());
            }
        }
    }

    // Which runs: shard and filter first, then what `--resume` already holds.
    let resumed = match &args.resume {
        Some(path) => resumed(path)?,
        None => Resumed::default(),
    };
    let done: HashSet<(&str, &str, u32)> = resumed
        .records
        .iter()
        .map(|r| (r.suite.as_str(), r.case_id.as_str(), r.repeat))
        .collect();
    let mut skipped = 0;
    let mut selected: Vec<(usize, &Case)> = Vec::new();
    for (i, suite) in suites.iter().enumerate() {
        for case in &suite.cases {
            let in_shard = args.shard.is_none_or(|s| s.runs(&case.id));
            let wanted = filter.as_ref().is_none_or(|f| f.is_match(&case.id));
            if in_shard && wanted {
                selected.push((i, case));
            } else {
                skipped += 1;
            }
        }
    }

    // Plans, then providers per config (keys checked for every plan before any call).
    let plans: Vec<Result<Plan, String>> = selected
        .iter()
        .map(|(i, case)| plan_of(&configs[&roots[*i]], case))
        .collect::<Result<_, _>>()?;
    let options = args.replies.clone();
    let exporter = crate::trace::Exporter::start(args.replies.otlp.as_deref(), args.replies.otlp_content)
        .map_err(CommandError::usage)?;
    let mut targets: HashMap<PathBuf, Target> = HashMap::new();
    let mut recording: Option<Arc<LineFile>> = None;
    for (root, config) in &configs {
        let of_root: Vec<&Plan> = selected
            .iter()
            .zip(&plans)
            .filter(|((i, _), _)| &roots[*i] == root)
            .filter_map(|(_, p)| p.as_ref().ok())
            .collect();
        let (built, opened) = providers::build(config, &of_root, &options, recording.clone())?;
        recording = recording.or(opened);
        targets.insert(
            root.clone(),
            Target {
                config: config.clone(),
                schemas: Arc::new(Schemas::of(config)),
                providers: built,
            },
        );
    }
    let out_file = match (&args.resume, &args.results) {
        (Some(path), _) => Some(results::append_after(path, resumed.torn).map_err(CommandError::usage)?),
        (None, Some(path)) => Some(LineFile::append(path, "results").map_err(CommandError::usage)?),
        (None, None) => None,
    };

    let mut jobs: Vec<Job> = Vec::new();
    for ((i, case), plan) in selected.iter().zip(&plans) {
        let suite = &suites[*i];
        for repeat in 1..=args.repeat.unwrap_or(case.repeat) {
            if !done.contains(&(suite.name.as_str(), case.id.as_str(), repeat)) {
                jobs.push(Job {
                    suite,
                    case,
                    target: &targets[&roots[*i]],
                    plan,
                    repeat,
                });
            }
        }
    }

    let gate = Arc::new(Semaphore::new(
        configs
            .values()
            .map(|c| c.settings.limits.max_concurrency as usize)
            .min()
            .unwrap_or(8)
            .max(1),
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let progress = (std::io::stderr().is_terminal() && !args.quiet).then(|| {
        let bar = indicatif::ProgressBar::new(jobs.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} case runs {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let shard = args.shard.map(|s| s.to_string());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let signalled = std::sync::OnceLock::new();
    let mut records: Vec<Record> = runtime.block_on(async {
        let signal = super::run::interruption();
        let runs = futures::stream::iter(jobs.iter())
            .map(|job| run_job(job, &gate, args.replies.seed, stopped.clone()))
            .buffer_unordered(args.jobs as usize)
            // A run cut short by Ctrl-C is not a result: it is left for `--resume` to make.
            .filter(|(_, report)| std::future::ready(!report.metadata.interrupted))
            .map(|(record, report)| {
                if let Some(out) = &out_file {
                    let line = Line {
                        suite: &record.suite,
                        case_id: &record.case_id,
                        repeat: record.repeat,
                        shard: shard.clone(),
                        passed: record.passed,
                        failures: &record.failures,
                        duration_ms: record.duration_ms,
                        error: record.error.as_deref(),
                        report: Some(&report),
                    };
                    if let Some(text) = results::line_text(line) {
                        out.line(&text);
                    }
                }
                if let Some(bar) = &progress {
                    bar.inc(1);
                    bar.set_message(if record.passed { "" } else { "(some failed)" });
                }
                record
            })
            .collect::<Vec<Record>>();
        tokio::pin!(runs);
        tokio::select! {
            records = &mut runs => records,
            exit = signal => {
                let _ = signalled.set(exit);
                let _ = stop.send(true);
                runs.await
            }
        }
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    drop(runtime);
    super::export_traces(exporter);
    let interrupted = signalled.get().copied();

    // The summary covers every run of the results file when resuming, else this process's
    // runs; either way in suite order, never in the order runs finished.
    if let Some(path) = &args.resume {
        records = results::resume(path).map_err(CommandError::usage)?.records;
    }
    let rank: HashMap<(&str, &str), usize> = suites
        .iter()
        .flat_map(|s| s.cases.iter().map(move |c| (s.name.as_str(), c.id.as_str())))
        .zip(0..)
        .collect();
    records.sort_by(|a, b| {
        let at = |r: &Record| {
            rank.get(&(r.suite.as_str(), r.case_id.as_str()))
                .copied()
                .unwrap_or(usize::MAX)
        };
        (at(a), &a.suite, &a.case_id, a.repeat).cmp(&(at(b), &b.suite, &b.case_id, b.repeat))
    });
    let summary = results::summarize(&records, args.pass_rate, skipped);
    let unwritten: Vec<&str> = [out_file.as_ref(), recording.as_deref()]
        .into_iter()
        .flatten()
        .filter_map(LineFile::error)
        .collect();
    if let Some(exit) = interrupted {
        // The summary of what finished, then the signal's exit code (130 or 143).
        let _ = finish(&summary, &args, junit);
        return Err(CommandError {
            exit,
            message: "interrupted; the summary holds the case runs that finished (--resume runs the rest)".into(),
        }
        .into());
    }
    let exit = finish(&summary, &args, junit)?;
    if !unwritten.is_empty() {
        return Err(CommandError {
            exit: Exit::Failed,
            message: unwritten.join("; "),
        }
        .into());
    }
    Ok(exit)
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
    let inputs = args
        .suites
        .iter()
        .map(|p| ("SUITE", p))
        .chain(args.merge.iter().map(|p| ("--merge", p)));
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
    for (flag, path, writes) in single {
        if let Some(path) = path {
            files.push(Named { flag, path, writes });
        }
    }
    files
}

/// The suites, the config root of each, and each root's config, loaded once.
type Loaded = (Vec<Suite>, Vec<PathBuf>, HashMap<PathBuf, Arc<Config>>);

/// Reads every suite (and the config each runs on); every problem of every suite is printed
/// before the one `error:` line, and nothing runs.
fn load(args: &TestArgs) -> Result<Loaded, CommandError> {
    let mut suites = Vec::new();
    let mut roots = Vec::new();
    let mut configs: HashMap<PathBuf, Arc<Config>> = HashMap::new();
    let mut problems = 0;
    let mut stderr = std::io::stderr().lock();
    for path in &outputs::distinct_names(&args.suites).map_err(CommandError::usage)? {
        // A file that does not decode is said first: it needs no config to be wrong.
        let unchecked = match Unchecked::read(path) {
            Ok(unchecked) => unchecked,
            Err(diags) => {
                for d in diags.iter().filter(|d| d.is_error()) {
                    let _ = writeln!(stderr, "{d}");
                    problems += 1;
                }
                continue;
            }
        };
        let root = root_of(Some(&unchecked), args.config.as_deref());
        let config = match configs.get(&root) {
            Some(config) => config.clone(),
            None => {
                let (config, _) = config::load(&root).map_err(|e| CommandError::usage(e.to_string()))?;
                configs.entry(root.clone()).or_insert(Arc::new(config)).clone()
            }
        };
        match unchecked.check(&config) {
            Ok(suite) => {
                suites.push(suite);
                roots.push(root);
            }
            Err(diags) => {
                for d in diags.iter().filter(|d| d.is_error()) {
                    let _ = writeln!(stderr, "{d}");
                    problems += 1;
                }
            }
        }
    }
    if problems > 0 {
        return Err(CommandError::usage(format!(
            "the suite has {} (nothing ran)",
            crate::text::count(problems, "error")
        )));
    }
    Ok((suites, roots, configs))
}

/// The config root of a suite: `--config`, else the suite's own `config`, else
/// `ORCH_CONFIG` or the current directory.
pub fn root_of(suite: Option<&Unchecked>, flag: Option<&Path>) -> PathBuf {
    if flag.is_some() {
        return locate_root(flag);
    }
    suite.and_then(Unchecked::config).unwrap_or_else(|| locate_root(None))
}

/// How a case is planned (its departments and specialists; the router not asked yet).
fn options_of(config: &Config, case: &Case) -> PlanOptions {
    PlanOptions {
        departments: case.departments.clone(),
        specialists: case.specialists,
        router: RouterStep::wanted(config, &case.departments),
    }
}

/// The plan of a case; a routing failure is the run's (reported as `failed`), never orch's.
fn plan_of(config: &Config, case: &Case) -> Result<Result<Plan, String>, CommandError> {
    let options = options_of(config, case);
    match plan::build(config, &case.prompt, &options) {
        Ok(plan) => Ok(Ok(plan)),
        Err(e @ RoutingError::NoMatch) => Ok(Err(e.to_string())),
        Err(e) => Err(CommandError::usage(format!("case `{}`: {e}", case.id))),
    }
}

/// One case run: the same engine as `orch run`, its own budget, the shared gate.
async fn run_job(
    job: &Job<'_>,
    gate: &Arc<Semaphore>,
    seed: u64,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) -> (Record, Report) {
    let started = Instant::now();
    let report = match job.plan {
        // After Ctrl-C no case starts, whatever its plan.
        _ if *stopped.borrow() => {
            let mut report = Report::master_failed(&job.case.prompt, "interrupted");
            report.metadata.interrupted = true;
            report
        }
        Ok(_) => {
            let config = &job.target.config;
            let limits = &config.settings.limits;
            let budget = Budget::new(
                u64::from(limits.max_calls),
                limits.max_tokens,
                limits.max_concurrency as usize,
            )
            .with_max_usd(limits.max_cost_usd)
            .with_gate(gate.clone());
            let engine = Engine::new(EngineParts {
                run_id: crate::text::new_id("run"),
                config: config.clone(),
                schemas: job.target.schemas.clone(),
                providers: job.target.providers.clone(),
                budget,
                observer: Box::new(Observers(Vec::new())),
                seed,
            });
            let interrupt = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            engine::run_request(&engine, &job.case.prompt, options_of(config, job.case), interrupt).await
        }
        Err(why) => Report::master_failed(&job.case.prompt, why),
    };
    let failures = expect::failures(&job.case.expect, &report);
    let record = Record {
        suite: job.suite.name.clone(),
        case_id: job.case.id.clone(),
        repeat: job.repeat,
        passed: failures.is_empty(),
        failures,
        duration_ms: started.elapsed().as_millis() as u64,
        error: None,
    };
    (record, report)
}

/// Prints the summary (tree or JSON), writes `--junit`, and says how it went. A JUnit file
/// that fails to take its text is an error after the summary (exit 1).
fn finish(summary: &Summary, args: &TestArgs, junit: Option<Pending>) -> Result<Exit> {
    let junit_error = junit.and_then(|file| {
        let path = args
            .junit
            .as_deref()
            .map_or_else(String::new, |p| p.display().to_string());
        file.write(&junit::render(summary))
            .err()
            .map(|e| format!("cannot write JUnit to {path}: {e}"))
    });
    let mut out = super::stdout();
    match resolve_format(args.format, TestFormat::Tree, TestFormat::Json) {
        TestFormat::Json => super::write_json(&mut out, summary)?,
        TestFormat::Markdown => out.write_all(crate::pictures::markdown::suite(summary).as_bytes())?,
        TestFormat::Tree => {
            let style = Style::detect(std::io::stdout().is_terminal());
            let mut text = String::new();
            for c in &summary.cases {
                let mark = if c.passed { style.green("✓") } else { style.red("✗") };
                let runs = if c.runs > 1 {
                    format!(" ({} of {} runs passed)", c.passed_runs, c.runs)
                } else {
                    String::new()
                };
                text.push_str(&format!(
                    "{mark} {}/{}{runs}\n",
                    crate::text::printable(&c.suite),
                    crate::text::printable(&c.id)
                ));
                if !c.passed {
                    for f in &c.failures {
                        // A suite's own text is escaped before orch's colours are added.
                        text.push_str(&format!("    {}\n", style.dim(&crate::text::printable(f))));
                    }
                }
            }
            text.push_str(&format!("{} passed, {} failed", summary.passed, summary.failed));
            if summary.errors > 0 {
                text.push_str(&format!(", {} errors", summary.errors));
            }
            if summary.skipped > 0 {
                text.push_str(&format!(", {} skipped", summary.skipped));
            }
            writeln!(out, "{}", crate::text::printable_lines(&text))?;
        }
    }
    out.flush()?;
    if let Some(message) = junit_error {
        return Err(CommandError {
            exit: Exit::Failed,
            message,
        }
        .into());
    }
    if summary.failed > 0 || summary.errors > 0 {
        return Err(CommandError {
            exit: Exit::Failed,
            message: format!(
                "{} of {} cases failed",
                summary.failed + summary.errors,
                summary.cases.len()
            ),
        }
        .into());
    }
    Ok(Exit::Success)
}
