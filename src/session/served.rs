//! What `orch mcp`'s tools do, in-process: each call reads the config as it is now on disk
//! (an agent that edits the team sees its edits, as with the CLI), and runs through one
//! provider pool shared by every call: HTTP clients, rate limits, circuit breakers and the
//! gate of `limits.maxConcurrency`, as the cases of `orch test` share them. The pool is
//! rebuilt only when the config's providers, `[http]` or `maxConcurrency` change. Each run
//! has its own budget (`maxCalls`, `maxTokens`, `maxCostUsd`), as each case of a suite has.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::sync::Semaphore;

use super::setup::{self, CaseEngines};
use super::{checked_prompt, exit_for, make_plan, plan_options, providers, why_not_success, SessionError};
use crate::cli::{Approvals, PlanArgs, ReplyArgs};
use crate::config::{self, Config, Diagnostic};
use crate::engine::{self, Engine, EngineParts};
use crate::exit::Exit;
use crate::grade::Schemas;
use crate::plan::Plan;
use crate::provider::Providers;
use crate::report::{Observer, Report};
use crate::serve::{Answer, RunCall, Served};
use crate::suite::{Case, Loaded};
use crate::tools::ToolHost;

/// The team of one config root, served.
#[derive(Clone)]
pub struct Team {
    root: PathBuf,
    /// `--approvals`: how steps that need a person's approval are decided in served runs
    /// and suites (SPEC §16, §19): by the flag alone; a served run never prompts (stdin is
    /// the protocol's) and never defers (no journal to resume from).
    approvals: Approvals,
    pool: Arc<Mutex<Option<Pool>>>,
    /// What `validate` answers with: the diagnostics as `orch validate --format json` prints them.
    validation: Validation,
}

/// The answer of `validate`: a config's diagnostics as `orch validate --format json` prints
/// them, an error result with the words given when the config is not valid.
pub type Validation = fn(&[Diagnostic], Option<String>) -> Answer;

/// Providers and the gate on calls in flight, built for one shape of the config.
#[derive(Clone)]
struct Pool {
    /// The settings it was built from (`Debug` of ordered maps: equal text, equal settings).
    shape: String,
    providers: Providers,
    gate: Arc<Semaphore>,
}

impl Team {
    /// The team at `root`, deciding approvals by `approvals`, its `validate` answered with
    /// `validation`.
    pub fn new(root: PathBuf, approvals: Approvals, validation: Validation) -> Self {
        Team {
            root,
            approvals,
            pool: Arc::new(Mutex::new(None)),
            validation,
        }
    }

    /// The config as it is now.
    fn config(&self) -> Result<Config, SessionError> {
        let (mut config, _warnings) = config::load(&self.root).map_err(|e| SessionError::refused(e.to_string()))?;
        // The config's `routing.successRates`, as `orch run` applies it.
        config::learn_success_rates(&mut config, None).map_err(|e| SessionError::refused(e.to_string()))?;
        Ok(config)
    }

    /// The shared pool for `config`, built again only when its shape changed.
    fn pool(&self, config: &Config) -> Result<Pool, SessionError> {
        let settings = &config.settings;
        let shape = format!(
            "{:?} {:?} {}",
            settings.providers, settings.http, settings.limits.max_concurrency
        );
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = pool.as_ref().filter(|p| p.shape == shape) {
            return Ok(p.clone());
        }
        // Keys are checked per call, against the plan that call runs.
        let (providers, _) = providers::build(config, &[], &ReplyArgs::default(), None)?;
        let gate = Arc::new(Semaphore::new((settings.limits.max_concurrency as usize).max(1)));
        let built = Pool { shape, providers, gate };
        *pool = Some(built.clone());
        Ok(built)
    }

    /// Everything a served run needs before its first call, or the answer that refuses it.
    fn prepare(&self, call: &RunCall) -> Result<(Config, Plan, Pool), Answer> {
        let prompt = checked_prompt(call.prompt.clone()).map_err(message)?;
        let config = self.config().map_err(message)?;
        let args = plan_args(call);
        let plan = match make_plan(&config, &prompt, &args) {
            Ok(plan) => plan,
            // As `orch run` prints it: the master's failed report, then the reason.
            Err(SessionError::Failed(why)) => {
                return Err(Answer::failed_with(&Report::master_failed(&prompt, &why), why))
            }
            Err(e) => return Err(message(e)),
        };
        let pool = self.pool(&config).map_err(message)?;
        providers::check_keys(&config, &plan, &ReplyArgs::default()).map_err(message)?;
        Ok((config, plan, pool))
    }

    /// One served run, start to report.
    async fn run_call(&self, call: RunCall, observer: Box<dyn Observer>, stop: BoxFuture<'static, ()>) -> Answer {
        let team = self.clone();
        let prepared = off_runtime(move || {
            let prepared = team.prepare(&call);
            (call, prepared)
        });
        let (call, (config, plan, pool)) = match prepared.await {
            Ok((call, Ok(prepared))) => (call, prepared),
            Ok((_, Err(answer))) | Err(answer) => return answer,
        };
        let options = plan_options(&config, &plan_args(&call));
        // The run's own servers: started before its first call, stopped at its end.
        let agents = setup::tool_agents(&config, &[&plan]);
        // A cancel (or the server stopping) while they start gives the start up too.
        let stop = stop.shared();
        let stopped = std::pin::pin!(stop.clone().map(|()| Exit::Interrupted));
        let servers = match setup::start_tools(&config, &agents, &ReplyArgs::default(), stopped).await {
            Ok(servers) => servers,
            Err(e) => return message(e),
        };
        let config = Arc::new(config);
        let engine = Engine::new(EngineParts {
            run_id: crate::text::new_id("run"),
            config: config.clone(),
            schemas: Arc::new(Schemas::of(&config)),
            providers: pool.providers,
            budget: setup::budget(&config).with_gate(pool.gate),
            observer,
            seed: 0,
            tools: servers.clone().map(|s| s as Arc<dyn ToolHost>),
        })
        .with_approver(Arc::new(setup::flag(self.approvals)));
        let report = engine::run_request(&engine, &call.prompt, options, stop).await;
        setup::stop_tools(servers.as_deref()).await;
        // The observer goes with the engine: the progress notifications end here.
        drop(engine);
        let exit = exit_for(&report, None);
        match why_not_success(&report, exit, None) {
            None => Answer::json(&report),
            Some(why) => Answer::failed_with(&report, why),
        }
    }

    /// `orch explain --format json`.
    fn explain_call(&self, prompt: String) -> Result<Plan, SessionError> {
        let prompt = checked_prompt(prompt)?;
        let config = self.config()?;
        let call = RunCall {
            prompt: prompt.clone(),
            departments: Vec::new(),
            specialists: Default::default(),
        };
        make_plan(&config, &prompt, &plan_args(&call))
    }

    /// `orch validate --format json` (exit 2, an error result, when the config has errors).
    fn validate_call(&self) -> Answer {
        let diagnostics = config::diagnose(&self.root);
        if let Some(missing) = diagnostics.iter().find(|d| d.is_missing_config()) {
            return Answer::error(missing.message.clone());
        }
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        let why = (errors > 0).then(|| {
            let counts = [(errors, "error"), (diagnostics.len() - errors, "warning")];
            let [e, w] = counts.map(|(n, what)| crate::text::count(n, what));
            format!("the config is not valid: {e}, {w}")
        });
        (self.validation)(&diagnostics, why)
    }
}

impl Team {
    /// `orch test --config ROOT SUITE --format json`: the suite's cases on the served config
    /// (the served root wins over the suite's own `config`, as `--config` does), `--jobs 4`,
    /// through the shared pool and gate. A failing case makes it an error result.
    async fn suite(&self, path: PathBuf, stop: BoxFuture<'static, ()>) -> Answer {
        let loaded = match self.load_suite(path) {
            Ok(loaded) => loaded,
            Err(answer) => return answer,
        };
        let chosen = crate::suite::select(&loaded.suites, None, None);
        let plans = match checked_plans(&loaded, &chosen.cases) {
            Ok(plans) => plans,
            Err(answer) => return answer,
        };
        let mut pool = None;
        let targets = crate::suite::targets(&loaded, &chosen.cases, &plans, |config, _| {
            let built = self.pool(config)?;
            pool = Some(built.clone());
            Ok::<Providers, SessionError>(built.providers)
        });
        let (targets, Some(pool)) = (match targets {
            Ok(targets) => (targets, pool),
            Err(e) => return message(e),
        }) else {
            return Answer::error("the suite names no config");
        };
        let runs = crate::suite::Runs {
            suites: &loaded.suites,
            plans: &plans,
            targets: loaded.roots.iter().map(|root| &targets[root]).collect(),
            repeat: None,
            done: &[],
        };
        let jobs = chosen.jobs(&runs);
        // The suite's servers: started once before its first call, stopped at its end.
        let never = std::pin::pin!(std::future::pending::<Exit>());
        let servers =
            match super::suite::start_servers(&loaded, &chosen.cases, &plans, &ReplyArgs::default(), never).await {
                Ok(servers) => servers,
                Err(e) => return message(e),
            };
        let tools = (servers.iter())
            .map(|(root, s)| (root.clone(), Arc::clone(s) as Arc<dyn ToolHost>))
            .collect();
        let runner = crate::suite::Runner {
            engine: &CaseEngines {
                seed: 0,
                tools,
                approvals: self.approvals,
            },
            jobs: 4,
            gate: pool.gate,
            results: None,
            shard: None,
            finished: &|_| {},
        };
        let (mut records, interrupted) = runner.run(&jobs, stop).await;
        setup::stop_each(&servers).await;
        if interrupted.is_some() {
            return Answer::error("interrupted: the client cancelled the call");
        }
        crate::suite::in_suite_order(&mut records, &loaded.suites);
        summarized(&records, chosen.skipped)
    }

    /// The suite at `path` under the config root, or its problems (each at
    /// file:line:column, then the refusal) as the tool's error.
    fn load_suite(&self, path: PathBuf) -> Result<Loaded, Answer> {
        crate::suite::load(std::slice::from_ref(&path), Some(&self.root), None).map_err(|refused| {
            let lines = refused.problems.iter().map(ToString::to_string);
            Answer::error(lines.chain([refused.message]).collect::<Vec<_>>().join("\n"))
        })
    }
}

/// The summary of a suite's records (`skipped` cases not chosen): the tool's result, an
/// error result when a case failed.
fn summarized(records: &[crate::suite::Record], skipped: usize) -> Answer {
    let summary = crate::suite::summarize(records, 1.0, skipped);
    match summary.failed + summary.errors {
        0 => Answer::json(&summary),
        failed => Answer::failed_with(&summary, format!("{failed} of {} cases failed", summary.cases.len())),
    }
}

/// The plans of a suite's chosen cases, checked as `orch test` checks them before any call:
/// an unknown department, an agent with tools or a missing key refuses the whole suite.
fn checked_plans(loaded: &Loaded, cases: &[(usize, &Case)]) -> Result<Vec<Result<Plan, String>>, Answer> {
    let config_of = |i: usize| &loaded.configs[&loaded.roots[i]];
    let plans: Vec<Result<Plan, String>> = (cases.iter())
        .map(|(i, case)| crate::suite::plan_of(config_of(*i), case))
        .collect::<Result<_, _>>()
        .map_err(Answer::error)?;
    for ((i, _), plan) in cases.iter().zip(&plans) {
        let Ok(plan) = plan else { continue };
        providers::check_keys(config_of(*i), plan, &ReplyArgs::default()).map_err(message)?;
    }
    Ok(plans)
}

/// `orch run`'s planning flags for a call.
fn plan_args(call: &RunCall) -> PlanArgs {
    PlanArgs {
        prompt: call.prompt.clone(),
        config: None,
        departments: call.departments.clone(),
        specialists: call.specialists,
        success_rates: None,
    }
}

/// A refusal's answer: its `error:` line.
fn message(e: SessionError) -> Answer {
    Answer::error(e.to_string())
}

impl Served for Team {
    fn root(&self) -> &std::path::Path {
        &self.root
    }

    fn run(&self, call: RunCall, observer: Box<dyn Observer>, stop: BoxFuture<'static, ()>) -> BoxFuture<'_, Answer> {
        Box::pin(self.run_call(call, observer, stop))
    }

    fn explain(&self, prompt: String) -> BoxFuture<'_, Answer> {
        let team = self.clone();
        let answer = off_runtime(move || {
            team.explain_call(prompt)
                .map_or_else(message, |plan| Answer::json(&plan))
        });
        Box::pin(async { answer.await.unwrap_or_else(|failed| failed) })
    }

    fn validate(&self) -> BoxFuture<'_, Answer> {
        let team = self.clone();
        Box::pin(async {
            off_runtime(move || team.validate_call())
                .await
                .unwrap_or_else(|failed| failed)
        })
    }

    fn test(&self, suite: PathBuf, stop: BoxFuture<'static, ()>) -> BoxFuture<'_, Answer> {
        let team = self.clone();
        // A suite's runner is single-task (its case runs interleave on one future): it runs
        // on a blocking thread of its own, the shared pool and gate with it.
        Box::pin(async move {
            let handle = tokio::runtime::Handle::current();
            let run = off_runtime(move || handle.block_on(team.suite(suite, stop)));
            run.await.unwrap_or_else(|failed| failed)
        })
    }
}

/// `work` on a blocking thread of its own, off the runtime's workers: loading a config reads
/// its files, and a suite's runner is single-task. A panic in it is the call's error result.
async fn off_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, Answer> {
    let done = tokio::task::spawn_blocking(work).await;
    done.map_err(|e| Answer::error(format!("the call failed: {e}")))
}
