//! What every session sets up alike around the engine: the `--provider` flag
//! checked, the trace exporter, the async runtime, the signal handlers, a run's budget from
//! the config's limits, and the engine of each case run of a suite.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::LocalBoxFuture;

use super::options::ReplyOptions;
use crate::config::{Agent, Config};
use crate::engine::{self, Budget, Engine, EngineParts};
use crate::exit::Exit;
use crate::plan::Plan;
use crate::report::{Observers, Report};
use crate::suite::{CaseEngine, CaseRun, JudgeReplies, JudgeRun};
use crate::tools::{Servers, ToolHost};
use crate::trace::Exporter;

use super::SessionError;

/// Refuses `--provider NAME` when the config knows no such provider (with a suggestion).
pub fn known_provider(config: &Config, replies: &ReplyOptions) -> Result<(), SessionError> {
    let Some(p) = &replies.provider else { return Ok(()) };
    if config.settings.providers.contains_key(p) {
        return Ok(());
    }
    let known = config.settings.providers.keys().map(String::as_str);
    let hint = crate::config::suggestion(p, known);
    Err(SessionError::refused(format!("unknown provider `{p}`{hint}")))
}

/// The agents of the `plans` whose tools a run may call ([`crate::plan::tool_agents`], the
/// rule `explain` lists servers by), in config order, each once.
pub fn tool_agents<'c>(config: &'c Config, plans: &[&Plan]) -> Vec<&'c Agent> {
    let ids: std::collections::BTreeSet<&str> = plans
        .iter()
        .flat_map(|p| crate::plan::tool_agents(config, &p.departments, &p.routing))
        .map(|a| a.id.as_str())
        .collect();
    config.agents.iter().filter(|a| ids.contains(a.id.as_str())).collect()
}

/// When a run's MCP servers start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerStart {
    /// All together before the first LLM call; one that fails stops the command (exit 2).
    BeforeRun,
    /// Each when the first agent that uses it is about to call its model; one that fails
    /// fails that agent's attempts. For runs whose departments are chosen while they run.
    OnFirstNeed,
}

/// The servers of one run of `plan`: the agents whose tools it may call, and when their
/// servers start (on first need when its departments are chosen while it runs, see
/// [`crate::plan::chosen_while_running`]).
pub fn run_servers<'c>(
    config: &'c Config,
    plan: &Plan,
    options: &crate::plan::PlanOptions,
) -> (Vec<&'c Agent>, ServerStart) {
    let when = match crate::plan::chosen_while_running(config, &plan.request, options, &plan.routing) {
        true => ServerStart::OnFirstNeed,
        false => ServerStart::BeforeRun,
    };
    (tool_agents(config, &[plan]), when)
}

/// Makes the MCP servers `agents` use: started concurrently before the first LLM call, or
/// started on first need (`when`); none under `--replay` (its cassette answers) or when no
/// agent has tools. A server that fails before the run is the command's `error:` line
/// (exit 2); a signal meanwhile stops what started and the command.
pub async fn start_tools<F>(
    config: &Config,
    (agents, when): (Vec<&Agent>, ServerStart),
    replies: &ReplyOptions,
    interrupted: std::pin::Pin<&mut F>,
) -> Result<Option<Arc<Servers>>, SessionError>
where
    F: std::future::Future<Output = Exit>,
{
    if replies.replay.is_some() || agents.is_empty() {
        return Ok(None);
    }
    let servers = Servers::planned(config, &agents);
    if when == ServerStart::OnFirstNeed {
        return Ok(Some(Arc::new(servers)));
    }
    let failed = tokio::select! {
        started = within_deadline(config, servers.start_all()) => match started {
            Ok(()) => return Ok(Some(Arc::new(servers))),
            Err(e) => SessionError::refused(e.unwrap_or_else(|| servers.late(config.settings.limits.deadline))),
        },
        exit = interrupted => SessionError::Stopped {
            exit,
            message: "interrupted while starting mcp servers".into(),
        },
    };
    servers.stop_all().await;
    Err(failed)
}

/// `start` within the config's deadline (`limits.deadline`, `--deadline`; none when 0): its
/// error, or `None` when the deadline passed first.
async fn within_deadline(
    config: &Config,
    start: impl std::future::Future<Output = Result<(), crate::tools::StartError>>,
) -> Result<(), Option<crate::tools::StartError>> {
    let secs = config.settings.limits.deadline;
    if secs <= 0.0 {
        return start.await.map_err(Some);
    }
    match tokio::time::timeout(crate::config::seconds(secs), start).await {
        Ok(started) => started.map_err(Some),
        Err(_) => Err(None),
    }
}

/// Stops the servers (stdin closed, the group killed after 2 s), if any were started.
pub async fn stop_tools(servers: Option<&Servers>) {
    if let Some(servers) = servers {
        servers.stop_all().await;
    }
}

/// Stops the servers of every config of a suite (see [`stop_tools`]), concurrently.
pub async fn stop_each(servers: &HashMap<PathBuf, Arc<Servers>>) {
    futures::future::join_all(servers.values().map(|s| s.stop_all())).await;
}

/// The exporter of `--otlp`, if asked for. Started before the runtime: it runs on a thread
/// of its own.
pub fn exporter(replies: &ReplyOptions) -> Result<Option<Exporter>, SessionError> {
    Exporter::start(replies.otlp.as_deref(), replies.otlp_content).map_err(|e| SessionError::refused(e.to_string()))
}

/// What follows a run or a suite once its runtime is done: its traces exported, and the
/// default action of SIGINT and SIGTERM back ([`default_signals`]) for the writes left.
pub fn run_over(exporter: Option<Exporter>) {
    export_traces(exporter);
    default_signals();
}

/// Flushes exported traces; a failure is one `warning:` line on stderr (even with
/// `--quiet`), never the run's failure.
pub fn export_traces(exporter: Option<Exporter>) {
    if let Some(warning) = exporter.and_then(Exporter::finish) {
        let _ = writeln!(std::io::stderr(), "warning: {}", crate::text::printable(&warning));
    }
}

/// The runtime runs and suites are made on: one thread. The engine is one future (its
/// departments and calls joined, never spawned), so worker threads added no parallelism,
/// only a hand-over between threads at every request and reply (hyper's connection tasks
/// ran on the workers, the engine on the calling thread): two wake-ups a call, measured as
/// about half of orch's CPU on a wide fan-out. Schema checks of large replies and reads of
/// the terminal still run off this thread (`spawn_blocking`).
pub fn runtime() -> Result<tokio::runtime::Runtime, SessionError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SessionError::Runtime)
}

/// The runtime `orch mcp` serves on: one worker a core. A server has several clients' runs,
/// their connections and its session sweeper going at once, each run on a blocking thread of
/// its own ([`runtime`]'s one-thread reasoning holds for one engine, not for a server).
pub fn server_runtime() -> Result<tokio::runtime::Runtime, SessionError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(SessionError::Runtime)
}

/// The budget of one run: the config's `limits` (calls, tokens, calls in flight, cost).
pub fn budget(config: &Config) -> Budget {
    let limits = &config.settings.limits;
    Budget::new(
        u64::from(limits.max_calls),
        limits.max_tokens,
        limits.max_concurrency as usize,
    )
    .with_max_usd(limits.max_cost_usd)
}

/// The engine of each case run of `orch test`: the same engine as `orch run`, its own
/// budget from the limits, every call through the runner's shared gate, and the MCP
/// servers of its config (started once for the whole suite).
pub struct CaseEngines {
    /// Seed of the simulated provider.
    pub seed: u64,
    /// What answers the tool calls of each config's runs, by config root.
    pub tools: HashMap<PathBuf, Arc<dyn ToolHost>>,
    /// How gated steps are decided: a suite never asks nor waits.
    pub approvals: super::options::Approvals,
    /// `--assign` and `--variant`, checked against every config.
    pub variants: super::options::VariantOptions,
    /// A budget over every run and judging that each engine's calls also count against
    /// (`orch optimize`'s caps); none for a suite.
    pub outer: Option<Arc<Budget>>,
}

impl CaseEngines {
    /// An engine for one case run (or its judging) on `target` with `config`: its own run id,
    /// the config's budget behind the suite's `gate`, no observer.
    fn engine(
        &self,
        config: &Arc<Config>,
        (schemas, providers): (&Arc<crate::grade::Schemas>, &crate::provider::Providers),
        gate: Arc<tokio::sync::Semaphore>,
        tools: Option<Arc<dyn ToolHost>>,
    ) -> Engine {
        Engine::new(EngineParts {
            run_id: crate::text::new_id("run"),
            config: config.clone(),
            schemas: schemas.clone(),
            providers: providers.clone(),
            budget: budget(config).with_gate(gate).within(self.outer.clone()),
            observer: Box::new(Observers(Vec::new())),
            seed: self.seed,
            tools,
        })
    }
}

impl CaseEngine for CaseEngines {
    fn run<'a>(&'a self, run: CaseRun<'a>) -> LocalBoxFuture<'a, Report> {
        let config = &super::variants::for_case(&run.target.config, run.prompt, &self.variants, run.variants);
        let tools = self.tools.get(&config.root).cloned();
        let engine = self
            .engine(config, (&run.target.schemas, &run.target.providers), run.gate, tools)
            .with_approver(Arc::new(flag(self.approvals)))
            .with_answerer(super::answers::answerer(
                super::options::ApprovalMode::Deny,
                run.answers,
            ));
        Box::pin(async move { engine::run_request(&engine, run.prompt, run.options, run.interrupt).await })
    }

    fn judge<'a>(&'a self, run: JudgeRun<'a>) -> LocalBoxFuture<'a, JudgeReplies> {
        // The judging comes after the run: an engine of its own, with the config's budget.
        let target = (&run.target.schemas, &run.target.providers);
        let engine = self.engine(&run.target.config, target, run.gate, None);
        Box::pin(async move { engine::ask_about_answer(&engine, run.judge, run.prompt, run.schema).await })
    }
}

/// The engine's flag for `--approvals allow|deny` of `orch test` and `orch mcp`.
pub fn flag(approvals: super::options::Approvals) -> engine::Flag {
    match approvals {
        super::options::Approvals::Allow => engine::Flag::Allow,
        super::options::Approvals::Deny => engine::Flag::Deny,
    }
}

/// [`interruption`] on `runtime`, its handlers installed now: called before the servers
/// start and before the first call, so that a signal never meets the default.
pub fn signals(runtime: &tokio::runtime::Runtime) -> std::pin::Pin<Box<impl std::future::Future<Output = Exit>>> {
    let _entered = runtime.enter();
    Box::pin(interruption())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM with the exit code each means. The handlers are
/// installed when this is called (`ctrl_c()` alone would install one only when first
/// polled), so call it on the runtime, before the first call.
#[cfg(unix)]
pub fn interruption() -> impl std::future::Future<Output = Exit> {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    async fn received(signal: Option<Signal>) {
        match signal {
            Some(mut s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    let interrupt = signal(SignalKind::interrupt()).ok();
    let terminate = signal(SignalKind::terminate()).ok();
    async move {
        tokio::select! {
            _ = received(interrupt) => Exit::Interrupted,
            _ = received(terminate) => Exit::Terminated,
        }
    }
}

/// Gives SIGINT and SIGTERM back their default action (the process ends) once the run is
/// over and only its output is left to write: a reader that stops reading would otherwise
/// hold orch, deaf to Ctrl-C and `timeout`, for as long as it waits. Call it before the
/// final writes, after the run's own files are closed.
#[cfg(unix)]
pub fn default_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: setting a standard signal's disposition to SIG_DFL installs no handler
        // and touches no memory of ours; the run that listened for these signals is over.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
}

/// See the Unix version: elsewhere Ctrl-C keeps the runtime's handling.
#[cfg(not(unix))]
pub fn default_signals() {}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
pub fn interruption() -> impl std::future::Future<Output = Exit> {
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        Exit::Interrupted
    }
}
