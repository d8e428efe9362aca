//! The providers a run (or a suite) calls: real ones over HTTP, wrapped to record, read a
//! cache through, or replaced to replay; built once, shared by every case of a suite.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cli::ReplyArgs;
use crate::config::{Agent, Config, ProviderKind};
use crate::exit::CommandError;
use crate::plan::Plan;
use crate::provider::{
    api_key, load_cache, load_cassette, Anthropic, Breakers, Cache, HttpClient, OpenAi, Provider, Providers, Recorder,
    Replayer, Simulated, Tape, ToolReplayer,
};
use crate::sink::LineFile;
use crate::tools::{Servers, ToolHost};

/// The providers of a run, the file it records to (`--record`, `--cache`), and the tapes
/// that answer its tool calls too.
pub struct Built {
    /// The providers, wrapped or replaced as the flags say.
    pub providers: Providers,
    /// The cassette or cache file being written, if any.
    pub recording: Option<Arc<LineFile>>,
    /// The cassette of `--replay`.
    replay: Option<Tape>,
    /// The file of `--cache`, as read before the run.
    cached: Option<Tape>,
    /// `maxToolResultBytes`: tool results are kept cut there, as the model sees them.
    max_result: usize,
}

impl Built {
    /// What answers the run's tool calls: the cassette under `--replay` (no server was
    /// started), else the started `servers`, recorded or read through as the providers are.
    pub fn tool_host(&self, servers: Option<&Arc<Servers>>) -> Option<Arc<dyn ToolHost>> {
        if let Some(tape) = &self.replay {
            return Some(Arc::new(ToolReplayer::new(tape.clone(), self.max_result)));
        }
        let live = Arc::clone(servers?) as Arc<dyn ToolHost>;
        Some(crate::provider::tool_host(
            live,
            self.cached.as_ref(),
            self.recording.as_ref(),
            self.max_result,
        ))
    }
}

/// Builds every provider the run may use: real ones over HTTP, wrapped to record or
/// replaced to replay. A key that a used provider needs but cannot find stops the run
/// here, before any call.
///
/// `opened` is a recording or cache file another config of the same suite run already
/// opened (it is shared, never opened twice).
pub fn build(
    config: &Config,
    plans: &[&Plan],
    args: &ReplyArgs,
    opened: Option<Arc<LineFile>>,
) -> Result<Built, CommandError> {
    let cassette = match &args.replay {
        Some(path) => Some(load_cassette(path).map_err(CommandError::usage)?),
        None => None,
    };
    let cached = match &args.cache {
        Some(path) => Some(load_cache(path).map_err(CommandError::usage)?),
        None => None,
    };
    if cassette.is_none() {
        for plan in plans {
            check_keys(config, plan, args)?;
        }
    }
    // Opened only now, after every pre-flight check: a refused run leaves the file as it was.
    let recording = match (&args.record, &args.cache) {
        _ if opened.is_some() => opened,
        (Some(path), _) => Some(Arc::new(
            LineFile::create(path, "the cassette").map_err(CommandError::usage)?,
        )),
        (None, Some(path)) => Some(Arc::new(
            LineFile::append(path, "the cache").map_err(CommandError::usage)?,
        )),
        (None, None) => None,
    };
    let mut by_name: HashMap<String, Arc<dyn Provider>> = HashMap::new();
    for (name, settings) in &config.settings.providers {
        let provider: Arc<dyn Provider> = if let Some(entries) = &cassette {
            Arc::new(Replayer::new(settings.kind, entries.clone()))
        } else {
            let http = || HttpClient::new(config.settings.http, settings.requests_per_minute);
            let live: Arc<dyn Provider> = match settings.kind {
                ProviderKind::Simulated => Arc::new(Simulated::new(args.seed)),
                ProviderKind::OpenAi => Arc::new(OpenAi::new(
                    settings,
                    http().map_err(|e| CommandError::usage(e.to_string()))?,
                )),
                ProviderKind::Anthropic => Arc::new(Anthropic::new(
                    settings,
                    http().map_err(|e| CommandError::usage(e.to_string()))?,
                )),
            };
            match (&recording, &cached) {
                (Some(out), Some(tape)) => Arc::new(Cache::new(live, settings.kind, tape.clone(), out.clone())),
                (Some(out), None) => Arc::new(Recorder::new(live, settings.kind, out.clone())),
                (None, _) => live,
            }
        };
        by_name.insert(name.clone(), provider);
    }
    let breakers = Breakers::new(
        config.settings.http.circuit_failures,
        crate::config::seconds(config.settings.http.circuit_cooldown),
    );
    Ok(Built {
        providers: Providers::new(by_name, args.provider.clone(), args.model.clone()).with_breakers(breakers),
        recording,
        replay: cassette,
        cached,
        max_result: result_budget(config),
    })
}

/// `maxToolResultBytes`: where a tool's result is cut before the model sees it.
pub(super) fn result_budget(config: &Config) -> usize {
    usize::try_from(config.settings.defaults.max_tool_result_bytes).unwrap_or(usize::MAX)
}

/// A key that a provider in use needs but cannot find stops the run before any call.
pub(super) fn check_keys(config: &Config, plan: &Plan, args: &ReplyArgs) -> Result<(), CommandError> {
    // Every provider of every chain: a missing key is not a failure that falls over.
    for agent in agents_in_use(config, plan) {
        for name in config.ladder_providers(agent, args.provider.as_deref()) {
            if let Some(settings) = config.settings.providers.get(&name) {
                if let Err(e) = api_key(settings.api_key_env.as_deref()) {
                    return Err(CommandError::usage(format!("provider `{name}` cannot be used: {e}")));
                }
            }
        }
    }
    Ok(())
}

/// Every agent the plan may call: heads, chosen specialists, the judge, the master.
fn agents_in_use<'a>(config: &'a Config, plan: &'a Plan) -> Vec<&'a Agent> {
    let mut ids: Vec<&str> = Vec::new();
    for d in &plan.departments {
        ids.push(&d.head);
        ids.extend(d.specialists.iter().map(|s| s.agent_id.as_str()));
    }
    if plan.llm_grading {
        ids.extend(config.settings.grading.judge.as_deref());
    }
    if plan.summary {
        ids.extend(config.settings.aggregation.master_agent.as_deref());
    }
    if let Some(router) = &plan.routing.router {
        ids.push(&router.agent_id);
    }
    ids.iter().filter_map(|id| config.agent(id)).collect()
}
