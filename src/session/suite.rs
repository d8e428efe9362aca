//! The runs of `orch test`: the chosen cases planned, the providers built per config, the
//! servers started once for the whole suite, the case runs made through `suite`'s runner on
//! the same engine as `orch run`, and what ended them.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use super::options::TestOptions;
use crate::exit::Exit;
use crate::plan::Plan;
use crate::sink::LineFile;
use crate::suite::{self, Done, Loaded, Runner, Runs, Selection, Summary, Tally};
use crate::tools::{Servers, ToolHost};

use super::progress::CaseRuns;
use super::providers;
use super::setup::{self, CaseEngines};
use super::suite_batch::{self, Waved};
use super::suite_files::{results_file, resumed, warn_if_held};
use super::suite_picking::Picked;
use super::suite_plans::plan_cases;
use super::SessionError;

/// How the runs of the suites ended.
pub struct Ended {
    /// In suite order: every run of the results file when resuming, else this process's.
    pub summary: Summary,
    /// The signal's exit code, if one stopped the runs.
    pub interrupted: Option<Exit>,
    /// Why an output file (`--results`, `--record`) could not be written.
    pub unwritten: Vec<String>,
    /// A batch suite's line saying its batches are pending (nothing else was written).
    pub pending: Option<String>,
}

impl Ended {
    /// A batch suite whose batches are pending.
    fn pending(line: String) -> Self {
        Ended {
            summary: Tally::default().summary(1.0, 0),
            interrupted: None,
            unwritten: Vec::new(),
            pending: Some(line),
        }
    }
}

/// Selects, plans and runs the cases of the `loaded` suites that `filter` keeps; with
/// `--batch`, in waves over its state.
pub fn run_suites(args: &TestOptions, filter: Option<&regex::Regex>, loaded: &Loaded) -> Result<Ended, SessionError> {
    check_flags(args, loaded)?;
    let mut batch = suite_batch::open(args, loaded)?;
    let resumed = args.resume.as_deref().map(resumed).transpose()?.unwrap_or_default();
    let done = || Done::of(&resumed);
    let picked = Picked::read(args, loaded, filter)?;
    let chosen = picked.select(args, loaded, filter);
    warn_if_held(args, &loaded.suites, chosen);
    // The first walk of the chosen cases: each planned, one plan kept per footprint.
    let runs_of = |i: usize, case: &suite::Case| done().left(&loaded.suites[i], case, args.repeat).len();
    let planned = plan_cases(loaded, chosen.each(), runs_of)?;
    let plans = &planned.plans;
    let exporter = setup::exporter(&args.replies)?;
    let mut recording = None;
    let mut built_for = HashMap::new();
    let waves = batch.as_ref().map(|b| b.waves.clone());
    let targets = suite::targets(loaded, &planned.cases, plans, |config, plans| {
        let forced = planned.forced(&config.root, &args.variants);
        let opened = (recording.clone(), waves.clone());
        let (providers, tapes) = providers::build_batched(config, plans, &forced, &args.replies, opened)?;
        recording = recording.take().or(tapes.recording.clone());
        built_for.insert(config.root.clone(), tapes);
        Ok::<_, SessionError>(providers)
    })?;
    let out_file = outputs(args, &resumed, batch.as_mut(), &recording)?;
    let jobs = || {
        chosen.jobs(Runs {
            suites: &loaded.suites,
            plans: planned.each(),
            targets: loaded.roots.iter().map(|root| &targets[root]).collect(),
            repeat: args.repeat,
            done: done(),
        })
    };
    let runtime = setup::runtime()?;
    let mut signalled = setup::signals(&runtime);
    let servers = runtime.block_on(start_servers(
        loaded,
        &planned.cases,
        plans,
        &args.replies,
        signalled.as_mut(),
    ))?;
    let bar = CaseRuns::new(planned.runs, args.quiet, args.jobs, args.progress);
    let engine = case_engines(args, &built_for, &servers, batch.as_ref().map(|b| &b.waves));
    let finished = |record: &suite::Record| bar.finished(record);
    let runner = Runner {
        scope: None,
        engine: &engine,
        jobs: args.jobs as usize,
        gate: suite::gate(targets.values()),
        results: out_file.as_ref(),
        shard: args.shard,
        finished: &finished,
        detail: args.results_detail,
    };
    let waved = runtime.block_on(async {
        let ran = match &batch {
            None => Ok(Waved::Done(Box::new(runner.run(jobs(), signalled).await))),
            Some(b) => b.waves(&runner, jobs, signalled.as_mut()).await,
        };
        // Each server ran for the whole suite; stopped at its end, also when a signal ended it.
        setup::stop_each(&servers).await;
        ran
    });
    bar.clear();
    // A schema check the deadline abandoned may still be running: it is not waited for.
    runtime.shutdown_background();
    setup::run_over(exporter);
    let skipped = chosen.total() - planned.of_case.len();
    let mut unwritten = unwritten(&[out_file.as_ref(), recording.as_deref()]);
    unwritten.extend(batch.as_ref().and_then(|b| b.waves.state.error()).map(String::from));
    ended(args, waved?, (chosen, skipped), batch.as_ref(), unwritten)
}

/// How the runs ended: the summary (with a batch suite's counts, its results delivered),
/// or a batch suite's pending line.
fn ended(
    args: &TestOptions,
    waved: Waved,
    (chosen, skipped): (Selection, usize),
    batch: Option<&suite_batch::Batch>,
    unwritten: Vec<String>,
) -> Result<Ended, SessionError> {
    let (tally, interrupted) = match waved {
        Waved::Done(ran) => *ran,
        // A state that lost lines cannot be trusted to go on from: said, not pending.
        Waved::Pending(line) if unwritten.is_empty() => return Ok(Ended::pending(line)),
        Waved::Pending(_) => return Err(SessionError::failed(unwritten.join("; "))),
    };
    let mut summary = summary(args, tally, interrupted.is_some(), chosen, skipped)?;
    if let Some(b) = batch {
        summary.batch = Some(b.tallied());
        if interrupted.is_none() {
            b.deliver(args.results.as_deref())?;
        }
    }
    Ok(Ended {
        summary,
        interrupted,
        pending: None,
        unwritten,
    })
}

/// The file of `--results`, opened; none for a batch suite, which writes its results only
/// when every case run has finished (its `--record` cassette is emptied as each wave starts).
fn outputs(
    args: &TestOptions,
    resumed: &suite::Resumed,
    batch: Option<&mut suite_batch::Batch>,
    recording: &Option<Arc<LineFile>>,
) -> Result<Option<LineFile>, SessionError> {
    match batch {
        Some(b) => {
            if args.replies.record.is_some() {
                b.recording = recording.clone();
            }
            Ok(None)
        }
        None => results_file(args, resumed),
    }
}

/// What makes each case run: the engine, with each config's tool host.
fn case_engines(
    args: &TestOptions,
    built_for: &HashMap<PathBuf, providers::Tapes>,
    servers: &HashMap<PathBuf, Arc<Servers>>,
    waves: Option<&Arc<crate::batch::Waves>>,
) -> CaseEngines {
    // In a batch suite a tool call made in an earlier wave is answered from its state.
    let kept = |host: Arc<dyn ToolHost>| match waves {
        Some(w) => Arc::new(crate::batch::BatchTools::new(host, w.clone())) as Arc<dyn ToolHost>,
        None => host,
    };
    CaseEngines {
        seed: args.replies.seed,
        tools: (built_for.iter())
            .filter_map(|(root, tapes)| Some((root.clone(), kept(tapes.tool_host(servers.get(root), None)?))))
            .collect(),
        approvals: args.approvals,
        variants: args.variants.clone(),
        outer: None,
    }
}

/// Refuses the suites when a config's provider is unknown or unusable, or a `--variant`
/// names what no config has.
fn check_flags(args: &TestOptions, loaded: &Loaded) -> Result<(), SessionError> {
    for config in loaded.configs.values() {
        setup::known_provider(config, &args.replies)?;
    }
    super::variants::check_flags(loaded.configs.values().map(|c| &**c), &args.variants)
}

/// Why each output file (`--results`, `--record`) could not be written.
fn unwritten(files: &[Option<&LineFile>]) -> Vec<String> {
    files
        .iter()
        .flatten()
        .filter_map(|f| f.error())
        .map(String::from)
        .collect()
}

/// The summary of a suite's runs: every run of the results file when resuming (in suite
/// order), else `tally`'s; an `interrupted` one names the chosen cases not run.
fn summary(
    args: &TestOptions,
    mut tally: Tally,
    interrupted: bool,
    chosen: Selection,
    skipped: usize,
) -> Result<Summary, SessionError> {
    if let Some(path) = &args.resume {
        tally = Tally::default();
        let each = |record| {
            let _ = tally.add(record, suite::ResultsPlace::default(), usize::MAX);
        };
        suite::resumed_each(path, each).map_err(|e| SessionError::refused(e.to_string()))?;
        let all = (chosen.suites.iter()).flat_map(|s| s.each().map(move |c| (s.name.as_str(), c)));
        for (order, (suite, case)) in all.enumerate() {
            tally.place(suite, &case.id, order);
        }
    }
    let not_run = match interrupted {
        true => not_run(&tally, chosen),
        false => Vec::new(),
    };
    let mut summary = tally.summary(args.pass_rate, skipped);
    summary.not_run = not_run;
    Ok(summary)
}

/// Starts the MCP servers of each config that the chosen cases' plans use, once for the
/// whole suite (a config's servers concurrently, one config after another). On a failure,
/// those of the configs before are stopped.
pub async fn start_servers<F: std::future::Future<Output = Exit>>(
    loaded: &Loaded,
    cases: &[(usize, Arc<suite::Case>)],
    plans: &[crate::suite::CasePlan],
    replies: &super::options::ReplyOptions,
    mut interrupted: std::pin::Pin<&mut F>,
) -> Result<HashMap<PathBuf, Arc<Servers>>, SessionError> {
    let mut by_root: BTreeMap<&PathBuf, Vec<&Plan>> = BTreeMap::new();
    for ((i, _), plan) in cases.iter().zip(plans) {
        if let Ok(plan) = plan {
            by_root.entry(&loaded.roots[*i]).or_default().push(plan);
        }
    }
    let mut started = HashMap::new();
    for (root, plans) in by_root {
        let config = &loaded.configs[root];
        let agents = setup::tool_agents(config, &plans);
        match setup::start_tools(
            config,
            (agents, setup::ServerStart::BeforeRun),
            replies,
            interrupted.as_mut(),
        )
        .await
        {
            Ok(Some(servers)) => {
                started.insert(root.clone(), servers);
            }
            Ok(None) => {}
            Err(e) => {
                setup::stop_each(&started).await;
                return Err(e);
            }
        }
    }
    Ok(started)
}

/// The chosen cases an interrupted run has no result for, as `suite/id`.
fn not_run(tally: &Tally, chosen: Selection) -> Vec<String> {
    let suites = chosen.suites;
    (chosen.each().enumerate())
        .filter(|(order, (i, case))| !tally.has(*order, &suites[*i].name, &case.id))
        .map(|(_, (i, case))| format!("{}/{}", suites[i].name, case.id))
        .collect()
}
