//! The providers a run (or a suite) calls: real ones over HTTP, wrapped to record, read a
//! cache through, or replaced to replay; built once, shared by every case of a suite.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::options::ReplyOptions;
use crate::batch::Batched;
use crate::config::{Agent, Assigned, Config, ProviderKind};
use crate::plan::{variants_may_give, Plan};
use crate::provider::{api_key, Anthropic, Breakers, HttpClient, Ollama, OpenAi, Provider, Providers, Simulated};
use crate::record::{load_cache, load_cassette, Opened, Stack, Tape};
use crate::sink::LineFile;
use crate::tools::{Servers, ToolHost};

use super::variants::Forcings;
use super::SessionError;

/// The tapes of a run: the cassette it replays, the cache it reads, and the file it records
/// to (`--record`, `--cache`); what its providers and tool host are wrapped in.
pub struct Tapes {
    /// The cassette or cache file being written, if any.
    pub recording: Option<Arc<LineFile>>,
    /// The cassette of `--replay`.
    replay: Option<Tape>,
    /// The file of `--cache`, as read before the run.
    cached: Option<Tape>,
    /// `maxToolResultBytes`: tool results are kept cut there, as the model sees them.
    max_result: usize,
    /// The waves of a batch suite (`--batch`): its `openai` and `anthropic` providers are
    /// wrapped to answer from its state and park the rest.
    batch: Option<Arc<crate::batch::Waves>>,
}

impl Tapes {
    /// The stack of the run's wrappers, `journal` outermost (see [`Stack`]).
    fn stack<'a>(&'a self, journal: Option<&'a Opened>) -> Stack<'a> {
        Stack {
            replay: self.replay.as_ref(),
            cached: self.cached.as_ref(),
            out: self.recording.as_ref(),
            journal,
            max_result: self.max_result,
        }
    }

    /// What answers the run's tool calls: the cassette under `--replay` (no server was
    /// started), else the started `servers`, wrapped as the providers are.
    pub fn tool_host(&self, servers: Option<&Arc<Servers>>, journal: Option<&Opened>) -> Option<Arc<dyn ToolHost>> {
        let live = servers.map(|s| Arc::clone(s) as Arc<dyn ToolHost>);
        self.stack(journal).tools(live)
    }

    /// Every provider the run may use: real ones over HTTP (or the cassette of `--replay` in
    /// their place), wrapped in the tape and `journal`.
    pub fn providers(
        &self,
        config: &Config,
        args: &ReplyOptions,
        journal: Option<&Opened>,
    ) -> Result<Providers, SessionError> {
        let stack = self.stack(journal);
        let mut by_name: HashMap<String, Arc<dyn Provider>> = HashMap::new();
        for (name, settings) in &config.settings.providers {
            let live = || -> Result<Arc<dyn Provider>, SessionError> {
                let http = || {
                    HttpClient::new(config.settings.http, settings.requests_per_minute)
                        .map_err(|e| SessionError::refused(e.to_string()))
                };
                Ok(match settings.kind {
                    ProviderKind::Simulated => Arc::new(Simulated::new(args.seed)),
                    ProviderKind::OpenAi => Arc::new(OpenAi::new(settings, http()?)),
                    ProviderKind::Anthropic => Arc::new(Anthropic::new(settings, http()?)),
                    ProviderKind::Ollama => {
                        Arc::new(Ollama::new(settings, http()?, (args.seed != 0).then_some(args.seed)))
                    }
                })
            };
            let live = || match &self.batch {
                Some(waves) if matches!(settings.kind, ProviderKind::OpenAi | ProviderKind::Anthropic) => {
                    let tools = tool_agents(config);
                    Ok(Arc::new(Batched::new(live()?, settings, waves.clone(), tools)) as Arc<dyn Provider>)
                }
                _ => live(),
            };
            by_name.insert(name.clone(), stack.provider(settings.kind, live)?);
        }
        let breakers = Breakers::new(
            config.settings.http.circuit_failures,
            crate::config::seconds(config.settings.http.circuit_cooldown),
        );
        Ok(Providers::new(by_name, args.provider.clone(), args.model.clone()).with_breakers(breakers))
    }
}

/// The tapes of a run, read and opened: the cassette of `--replay`, the cache, and the file
/// recorded to. A key that a used provider needs but cannot find stops the run here,
/// before any call (and before the recording is opened). Each agent of a run was given its
/// variant already, so nothing else is forced.
pub fn tapes(
    config: &Config,
    plans: &[&Plan],
    args: &ReplyOptions,
    opened: Option<Arc<LineFile>>,
) -> Result<Tapes, SessionError> {
    forced_tapes(config, plans, &Forcings::NONE, args, opened)
}

/// [`tapes`] for plans whose agents' variants are given as each case runs, `forced` those
/// the cases may be forced to. `opened` is a recording or cache file another config of the
/// same suite run already opened (it is shared, never opened twice).
fn forced_tapes(
    config: &Config,
    plans: &[&Plan],
    forced: &Forcings,
    args: &ReplyOptions,
    opened: Option<Arc<LineFile>>,
) -> Result<Tapes, SessionError> {
    let replay = args
        .replay
        .as_deref()
        .map(load_cassette)
        .transpose()
        .map_err(SessionError::refused)?;
    let cached = args
        .cache
        .as_deref()
        .map(load_cache)
        .transpose()
        .map_err(SessionError::refused)?;
    if replay.is_none() {
        for plan in plans {
            check_keys(config, plan, forced, args)?;
        }
    }
    // Opened only now, after every pre-flight check: a refused run leaves the file as it was.
    let recording = match (&args.record, &args.cache) {
        _ if opened.is_some() => opened,
        (Some(path), _) => Some(Arc::new(
            LineFile::create(path, "the cassette").map_err(SessionError::refused)?,
        )),
        (None, Some(path)) => Some(Arc::new(
            LineFile::append(path, "the cache").map_err(SessionError::refused)?,
        )),
        (None, None) => None,
    };
    Ok(Tapes {
        recording,
        replay,
        cached,
        max_result: result_budget(config),
        batch: None,
    })
}

/// The providers of a run without a journal, and its tapes (see [`forced_tapes`]).
pub fn build(
    config: &Config,
    plans: &[&Plan],
    forced: &Forcings,
    args: &ReplyOptions,
    opened: Option<Arc<LineFile>>,
) -> Result<(Providers, Tapes), SessionError> {
    let tapes = forced_tapes(config, plans, forced, args, opened)?;
    Ok((tapes.providers(config, args, None)?, tapes))
}

/// [`build`] for a batch suite: its `openai` and `anthropic` providers answer from
/// `waves`' state and park the rest.
pub fn build_batched(
    config: &Config,
    plans: &[&Plan],
    forced: &Forcings,
    args: &ReplyOptions,
    opened: (Option<Arc<LineFile>>, Option<Arc<crate::batch::Waves>>),
) -> Result<(Providers, Tapes), SessionError> {
    let mut tapes = forced_tapes(config, plans, forced, args, opened.0)?;
    tapes.batch = opened.1;
    Ok((tapes.providers(config, args, None)?, tapes))
}

/// The agents of `config` with tools (`maxToolCalls` > 0): in a batch suite their calls
/// are made live.
fn tool_agents(config: &Config) -> Arc<std::collections::BTreeSet<String>> {
    let with_tools = config.agents.iter().filter(|a| config.max_tool_calls(a) > 0);
    Arc::new(with_tools.map(|a| a.id.clone()).collect())
}

/// Every provider of `config`, live and unwrapped: nothing recorded, replayed or cached
/// (`orch doctor`'s probes). Keys are not checked here.
pub fn unrecorded(config: &Config) -> Result<Providers, SessionError> {
    let tapes = Tapes {
        recording: None,
        replay: None,
        cached: None,
        max_result: result_budget(config),
        batch: None,
    };
    tapes.providers(config, &ReplyOptions::default(), None)
}

/// `maxToolResultBytes`: where a tool's result is cut before the model sees it.
fn result_budget(config: &Config) -> usize {
    usize::try_from(config.settings.defaults.max_tool_result_bytes).unwrap_or(usize::MAX)
}

/// A key that a provider in use needs but cannot find stops the run before any call;
/// `forced`: the variants the run may be forced to.
pub(super) fn check_keys(
    config: &Config,
    plan: &Plan,
    forced: &Forcings,
    args: &ReplyOptions,
) -> Result<(), SessionError> {
    // Every provider of every chain: a missing key is not a failure that falls over.
    let in_use = agents_in_use(config, plan).into_iter();
    for agent in in_use.flat_map(|agent| as_runs_may_give(agent, forced)) {
        for name in config.ladder_providers(&agent, args.provider.as_deref()) {
            if let Some(settings) = config.settings.providers.get(&name) {
                if let Err(e) = api_key(settings.api_key_env.as_deref()) {
                    return Err(SessionError::refused(format!("provider `{name}` cannot be used: {e}")));
                }
            }
        }
    }
    Ok(())
}

/// `agent` as a run may give it: as assigned; not yet assigned (a suite's cases are each
/// assigned theirs as they run), as each variant it may be given (a disabled one only when
/// `forced`).
fn as_runs_may_give<'a>(agent: &'a Agent, forced: &Forcings) -> Vec<Cow<'a, Agent>> {
    if agent.variant.is_some() || agent.variants.is_empty() {
        return vec![Cow::Borrowed(agent)];
    }
    variants_may_give(agent, |name| forced.names(&agent.id, name))
        .map(|name| {
            let mut varied = agent.clone();
            varied.as_variant(Assigned {
                name: name.to_string(),
                slot: 0,
                forced: true,
            });
            Cow::Owned(varied)
        })
        .collect()
}

/// Every agent the plan may call: heads, chosen specialists, the judge, the master.
pub(super) fn agents_in_use<'a>(config: &'a Config, plan: &'a Plan) -> Vec<&'a Agent> {
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
