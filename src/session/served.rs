//! What `orch mcp`'s tools do, in-process: each call reads the config as it is now on disk
//! (an agent that edits the team sees its edits, as with the CLI), and runs through one
//! provider pool shared by every call: HTTP clients, rate limits, circuit breakers and the
//! gate of `limits.maxConcurrency`, as the cases of `orch test` share them. The pool is
//! rebuilt only when the config's providers, `[http]` or `maxConcurrency` change. Each run
//! has its own budget (`maxCalls`, `maxTokens`, `maxCostUsd`), as each case of a suite has.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use tokio::sync::Semaphore;

use super::options::{Approvals, McpApprovals, ReplyOptions, RequestOptions};
use super::variants::Forcings;
use super::{checked_prompt, make_plan, providers, SessionError};
use crate::config::{self, Config, Diagnostic};
use crate::plan::Plan;
use crate::provider::Providers;
use crate::report::Observer;
use crate::serve::{Answer, Asker, RunCall, Served};

/// The team of one config root, served.
#[derive(Clone)]
pub struct Team {
    pub(super) root: PathBuf,
    /// `--approvals` as a flag: how steps that need a person's approval are decided in
    /// served suites, and in served runs unless `prompt` asks the client;
    /// a served run never reads stdin (the protocol's) and never defers (no journal).
    pub(super) approvals: Approvals,
    pool: Arc<Mutex<Option<Pool>>>,
    /// What `validate` answers with: the diagnostics as `orch validate --format json` prints them.
    validation: Validation,
    /// The conversations of `run` calls with a `session`, in memory.
    pub(super) conversations: Arc<Mutex<super::served_conversations::Conversations>>,
    /// `--approvals` as given: `prompt` asks a run's items through elicitation.
    pub(super) asked_approvals: McpApprovals,
}

/// The answer of `validate`: a config's diagnostics as `orch validate --format json` prints
/// them, an error result with the words given when the config is not valid.
pub type Validation = fn(&[Diagnostic], Option<String>) -> Answer;

/// Providers and the gate on calls in flight, built for one shape of the config.
#[derive(Clone)]
pub(super) struct Pool {
    /// The settings it was built from (`Debug` of ordered maps: equal text, equal settings).
    shape: String,
    pub(super) providers: Providers,
    pub(super) gate: Arc<Semaphore>,
}

impl Team {
    /// The team at `root`, deciding approvals by `approvals`, its `validate` answered with
    /// `validation`.
    pub fn new(root: PathBuf, approvals: McpApprovals, validation: Validation) -> Self {
        Team {
            root,
            approvals: approvals.flag(),
            asked_approvals: approvals,
            pool: Arc::new(Mutex::new(None)),
            validation,
            conversations: Arc::default(),
        }
    }

    /// The config as it is now.
    pub(super) fn config(&self) -> Result<Config, SessionError> {
        let (mut config, _warnings) = config::load(&self.root).map_err(|e| SessionError::refused(e.to_string()))?;
        // The config's `routing.successRates`, as `orch run` applies it.
        config::learn_success_rates(&mut config, None).map_err(|e| SessionError::refused(e.to_string()))?;
        Ok(config)
    }

    /// The shared pool for `config`, built again only when its shape changed.
    pub(super) fn pool(&self, config: &Config) -> Result<Pool, SessionError> {
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
        let (providers, _) = providers::build(config, &[], &Forcings::NONE, &ReplyOptions::default(), None)?;
        let gate = Arc::new(Semaphore::new((settings.limits.max_concurrency as usize).max(1)));
        let built = Pool { shape, providers, gate };
        *pool = Some(built.clone());
        Ok(built)
    }

    /// `orch explain --format json`.
    fn explain_call(&self, prompt: String) -> Result<Plan, SessionError> {
        let prompt = checked_prompt(prompt)?;
        let mut config = self.config()?;
        let call = RunCall {
            prompt: prompt.clone(),
            departments: Vec::new(),
            specialists: Default::default(),
            assign: None,
            session: None,
        };
        super::assign_variants(&mut config, &prompt, &plan_args(&call).variants)?;
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

/// `orch run`'s planning flags for a call.
pub(super) fn plan_args(call: &RunCall) -> RequestOptions {
    RequestOptions {
        prompt: call.prompt.clone(),
        config: None,
        departments: call.departments.clone(),
        specialists: call.specialists,
        success_rates: None,
        variants: super::options::VariantOptions {
            assign: call.assign.clone(),
            forced: Vec::new(),
        },
        previous: None,
    }
}

/// A refusal's answer: its `error:` line.
pub(super) fn message(e: SessionError) -> Answer {
    Answer::error(e.to_string())
}

impl Served for Team {
    fn root(&self) -> &std::path::Path {
        &self.root
    }

    fn run(
        &self,
        call: RunCall,
        observer: Box<dyn Observer>,
        asker: Option<Asker>,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Answer> {
        Box::pin(self.run_call(call, observer, asker, stop))
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

    fn test(
        &self,
        suite: PathBuf,
        picking: crate::serve::TestPicking,
        stop: BoxFuture<'static, ()>,
    ) -> BoxFuture<'_, Answer> {
        let team = self.clone();
        // A suite's runner is single-task (its case runs interleave on one future): it runs
        // on a blocking thread of its own, the shared pool and gate with it.
        Box::pin(async move {
            let handle = tokio::runtime::Handle::current();
            let run = off_runtime(move || handle.block_on(team.suite(suite, &picking, stop)));
            run.await.unwrap_or_else(|failed| failed)
        })
    }
}

/// `work` on a blocking thread of its own, off the runtime's workers: loading a config reads
/// its files, and a suite's runner is single-task. A panic in it is the call's error result.
pub(super) async fn off_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, Answer> {
    let done = tokio::task::spawn_blocking(work).await;
    done.map_err(|e| Answer::error(format!("the call failed: {e}")))
}
